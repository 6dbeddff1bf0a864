"""Sim tier: the absolute joint-position interfaces of the grasp task run through the motion generator
(``actuators/motion.py``, libfranka's limitRate): the largest and the most erratic commands the policy can send move
the arm, yet no joint crosses the speed the Franka's reflex forbids."""

import pytest
import torch

pytestmark = pytest.mark.sim

LIMITS = torch.tensor([2.175] * 4 + [2.61] * 3)


@pytest.fixture(scope="module")
def pos_env():
    from conftest import build_env

    with build_env("Realgap-Grasp-Franka-v0", num_envs=2, seed=3, events__reset_arm=None) as env:
        yield env


def _run(env, actions):
    """Step ``actions`` (one row per step, applied to env 0; env 1 holds); the peak |q̇| per arm joint of env 0."""
    env.reset()
    robot = env.scene["robot"]
    q0 = robot.data.joint_pos.torch[0, :7].clone()
    peak = torch.zeros(7)
    for a in actions:
        act = torch.zeros(2, env.action_manager.total_action_dim)
        act[0, :7] = a
        env.step(act)
        assert not bool(env.termination_manager.get_term("joint_speed_reflex").any())
        peak = torch.maximum(peak, robot.data.joint_vel.torch[0, :7].abs())
    return peak, (robot.data.joint_pos.torch[0, :7] - q0).abs()


def test_a_full_scale_step_moves_the_arm_within_its_speed_limits(pos_env):
    term = pos_env.action_manager.get_term("arm")
    assert term._limited
    act = torch.tensor([5.0, 5.0, -5.0, 5.0, 5.0, 5.0, 5.0])  # clip_actions: 2.5 rad away from the ready pose
    peak, moved = _run(pos_env, [act] * 50)  # 1 s
    assert float(moved[0]) > 1.0  # joint 1 travelled most of the way at close to its limit
    assert bool((peak < LIMITS).all()), f"peak speeds {peak.tolist()}"
    assert bool((peak[[0, 4]] > 0.6 * LIMITS[[0, 4]]).all()), "the setpoint is not using its speed range"


def test_bang_bang_noise_never_trips_the_reflex(pos_env):
    gen = torch.Generator().manual_seed(0)
    acts = [5.0 * torch.sign(torch.randn(7, generator=gen)) for _ in range(100)]  # ±2.5 rad every 20 ms, 2 s
    peak, _ = _run(pos_env, acts)
    assert bool((peak < LIMITS).all()), f"peak speeds {peak.tolist()}"


def test_the_setpoint_stays_within_its_following_error_bound(pos_env):
    """The bound (tasks/grasp/actions.py SETPOINT_MAX_FOLLOWING_ERROR) reaches the env: under full-scale commands the
    setpoint never runs further from the measured joint than δ plus one physics step of the joint's own motion."""
    term = pos_env.action_manager.get_term("arm")
    bound = term.max_following_error[0]
    torch.testing.assert_close(bound, torch.tensor([0.12] * 4 + [0.14] * 3))
    robot = pos_env.scene["robot"]
    pos_env.reset()
    worst = torch.zeros(7)
    for k in range(40):
        act = torch.zeros(2, pos_env.action_manager.total_action_dim)
        act[0, :7] = 5.0 if k < 20 else -5.0  # full scale one way, then the other
        pos_env.step(act)
        worst = torch.maximum(worst, (term.setpoint[0] - robot.data.joint_pos.torch[0, :7]).abs())
    step = LIMITS * pos_env.physics_dt  # the joint moves after the setpoint's last update
    assert bool((worst <= bound + step + 1e-6).all()), f"lag {worst.tolist()} against {bound.tolist()}"
    assert float(worst.max()) > 0.05  # the commands did open a lag: the check had something to check
