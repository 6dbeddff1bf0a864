"""A NaN injected into one env's physics state: that env is terminated (counted as non_finite_state) and reset, the
others keep standing, and nothing non-finite reaches the policy (observations and rewards stay finite)."""

import pytest
import torch

pytestmark = pytest.mark.sim


def test_nan_in_one_env_resets_it_and_spares_the_others():
    from conftest import build_env

    from realgap.envs.sim.nan_guard import FiniteVecEnv

    with build_env("Realgap-Balance-G1-Play-v0", num_envs=4, seed=2, events__push=None) as env:
        vec = FiniteVecEnv(env)
        vec.get_observations()
        robot = env.scene["robot"]
        act = torch.zeros(4, 29)
        for _ in range(10):
            vec.step(act)
        # inject: env 1's joint velocities become NaN
        qd = robot.data.joint_vel.torch.clone()
        qd[1] = float("nan")
        robot.write_joint_state_to_sim_index(position=robot.data.joint_pos.torch.clone(), velocity=qd)
        obs, rew, dones, extras = vec.step(act)
        assert bool(env.termination_manager.get_term("non_finite_state")[1])
        assert dones.tolist() == [False, True, False, False]
        assert torch.isfinite(obs["policy"]).all() and torch.isfinite(rew).all()
        # the reset env is clean again and every env keeps running finite and standing for 1 s
        for _ in range(50):
            obs, rew, dones, extras = vec.step(act)
            assert torch.isfinite(obs["policy"]).all() and torch.isfinite(rew).all()
            assert not dones.any()
        assert torch.isfinite(robot.data.joint_vel.torch).all()
        assert (robot.data.root_pos_w.torch[:, 2] > 0.7).all()
        assert extras["log"]["Guard/non_finite_values"] == 0.0  # the termination caught it before the wrapper had to
