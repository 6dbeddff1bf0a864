"""Sim tier: the balance env builds on the CPU with 4 envs, has the documented shapes, stays finite, and a hard push
makes the fall termination fire."""

import pytest
import torch

pytestmark = pytest.mark.sim

TASK = "Realgap-Balance-G1-v0"


@pytest.fixture(scope="module")
def env():
    from conftest import build_env

    with build_env(TASK, num_envs=4, seed=1) as e:
        yield e


def test_shapes_and_no_hidden_servos(env):
    from isaaclab_newton.physics import NewtonManager

    obs, _ = env.reset()
    # policy: ang vel 3 + gravity 3 + joint pos 29 + joint vel 29 + last action 29 = 93
    assert obs["policy"].shape == (4, 93)
    # critic: + base lin vel 3 + base height 1 = 97
    assert obs["critic"].shape == (4, 97)
    assert env.action_manager.total_action_dim == 29
    # the MJCF's kp=500 position servos must be gone: realgap's explicit actuators add no MuJoCo actuator
    assert NewtonManager._solver.mj_model.nu == 0
    robot = env.scene["robot"]
    assert robot.num_joints == 29
    # armature = reflected rotor inertia N²·I_m of the 7520-22 knee: 0.025101925 kg·m² (mjlab / Unitree numbers)
    knee = robot.joint_names.index("left_knee_joint")
    assert float(robot.data.joint_armature.torch[0, knee]) == pytest.approx(0.025101925, rel=1e-5)


def test_zero_action_stays_finite_and_standing(env):
    env.reset()
    robot = env.scene["robot"]
    act = torch.zeros(env.num_envs, 29)
    for _ in range(50):  # 1 s
        obs, rew, terminated, truncated, _ = env.step(act)
        assert torch.isfinite(obs["policy"]).all() and torch.isfinite(rew).all()
    # the default stance is held: pelvis near 0.757 m (within 3 cm), no fall in the first second
    assert (robot.data.root_pos_w.torch[:, 2] - 0.757).abs().max() < 0.03
    assert not terminated.any()


def test_hard_push_triggers_fall_termination(env):
    env.reset()
    robot = env.scene["robot"]
    env_ids = torch.tensor([0, 1], device=env.device)
    vel = robot.data.root_vel_w.torch[env_ids].clone()
    vel[:, 0] += 3.0  # a 3 m/s shove (100 N·s on 33 kg): no stance can absorb it
    robot.write_root_velocity_to_sim_index(root_velocity=vel, env_ids=env_ids)
    fell = torch.zeros(env.num_envs, dtype=torch.bool)
    act = torch.zeros(env.num_envs, 29)
    for _ in range(100):  # 2 s
        _, _, terminated, _, _ = env.step(act)
        fell |= terminated.cpu()
        fall_terms = env.termination_manager.get_term("fall_height") | env.termination_manager.get_term("fall_tilt")
        assert bool((fall_terms == terminated).all())  # only falls terminate here (no time-out within 2 s)
    assert fell[0] and fell[1]
    assert not fell[2] and not fell[3]  # the unpushed envs keep standing
