"""Sim tier: a DR profile applied in ``startup`` mode draws each env's bodies and gains once, and resets keep them."""

import pytest
import torch

pytestmark = pytest.mark.sim

TASK = "Realgap-Balance-G1-v0"


def test_startup_mode_draws_once_per_env():
    from realgap.envs.dr.apply import apply_dr_profile
    from realgap.envs.dr.inertia import check_consistency, default_rtol
    from realgap.envs.dr.sampling import body_from_flat
    from realgap.envs.run.factory import load_cfgs, make_env, simulation

    env_cfg, _ = load_cfgs(TASK, "cpu", 4, 11)
    apply_dr_profile(env_cfg, "nominal", task=TASK, mode="startup")
    assert env_cfg.events.dr_link_inertia.mode == "startup"
    assert env_cfg.events.dr_command_delay.mode == "reset"  # delays are always drawn per episode
    with simulation(env_cfg):
        env = make_env(TASK, env_cfg)
        try:
            env.reset()
            robot = env.scene["robot"]
            mass = robot.data.body_mass.torch.clone()
            kp = list(robot.actuators.values())[0].chain.params.kp.clone()
            torso = robot.body_names.index("torso_link")
            assert mass[:, torso].unique().numel() == 4  # drawn per env at startup
            for _ in range(2):
                env._reset_idx(torch.arange(4))
            assert torch.equal(robot.data.body_mass.torch, mass)  # resets keep the startup draw
            assert torch.equal(list(robot.actuators.values())[0].chain.params.kp, kp)
            data = robot.data
            body = body_from_flat(data.body_mass.torch, data.body_com_pos_b.torch, data.body_inertia.torch)
            check_consistency(body, default_rtol(torch.float32), robot.body_names, "randomized G1 link")
        finally:
            env.close()
