"""Sim tier: the grasp task ends an episode as the real arm would -- a joint crossing its velocity limit trips the
Franka's reflex -- and a NaN in one env's object or robot state terminates and resets that env only (counted as
non_finite_*), never reaching the policy; the staged lift reward pays nothing without a pinch."""

import pytest
import torch

pytestmark = pytest.mark.sim


@pytest.fixture(scope="module")
def torque_env():
    from conftest import build_env

    # joint torques: a large command spins joint 1 past its 2.175 rad/s limit within a few policy steps
    # the speed-margin penalty (a lever: the Levers variant, off until set) on, to check it against its formula on the
    # same motion
    with build_env(
        "Realgap-Grasp-Franka-JointTorque-Levers-v0",
        num_envs=2,
        seed=1,
        events__reset_arm=None,
        rewards__speed_margin__weight=-1.0,
    ) as env:
        yield env


def test_joint_speed_reflex_ends_only_the_speeding_env(torque_env):
    from realgap.envs.sim.managers import curriculum_term

    env = torque_env
    env.reset()
    robot = env.scene["robot"]
    act = torch.zeros(2, env.action_manager.total_action_dim)
    act[0, 0] = 5.0  # env 0: +50 N·m on joint 1 (torque scale 10 N·m per unit), env 1: hold
    tripped = None
    for step in range(50):
        speed = robot.data.joint_vel.torch[:, 0].abs().clone()
        _, _, terminated, _, _ = env.step(act)
        reflex = env.termination_manager.get_term("joint_speed_reflex")
        if bool(reflex.any()):
            tripped = step
            assert reflex.tolist() == [True, False] and terminated.tolist() == [True, False]
            break
        assert float(speed[0]) <= 2.175 + 1e-6  # never past the limit without tripping
    assert tripped is not None, "50 N·m on joint 1 never reached 2.175 rad/s in 1 s"
    # the training log counts it: the one ended episode was the reflex's (reflex_rate, a violation), not a success
    metrics = curriculum_term(env, "metrics")
    assert metrics.reflex_rate == 1.0 and metrics.success_rate == 0.0
    # the reset env is back at rest: the reflex does not fire again on the next step
    env.step(torch.zeros_like(act))
    assert not bool(env.termination_manager.get_term("joint_speed_reflex").any())


def test_speed_margin_penalty_grows_from_its_onset_to_one_per_joint_at_the_limit(torque_env):
    env = torque_env
    env.reset()
    robot = env.scene["robot"]
    cfg = env.reward_manager.get_term_cfg("speed_margin")
    limits = torch.tensor([2.175] * 4 + [2.61] * 3)
    act = torch.zeros(2, env.action_manager.total_action_dim)
    act[0, 0] = 0.5  # env 0: 5 N·m on joint 1 spins it up to its limit over many steps, env 1 holds
    seen = []
    for _ in range(100):
        env.step(act)
        if bool(env.termination_manager.get_term("joint_speed_reflex").any()):
            break
        value = cfg.func(env, **cfg.params)
        ratio = robot.data.joint_vel.torch[:, :7].abs() / limits
        want = ((ratio - 0.7).clamp(min=0.0) / 0.3).square().sum(dim=-1)
        torch.testing.assert_close(value, want)
        seen.append(float(ratio[0, 0]))
        assert float(value[1]) == 0.0  # holding: nothing near the limit
    assert max(seen) > 0.7 and any(r < 0.7 for r in seen)  # the motion crossed the onset before the reflex
    assert "speed_margin" in env.reward_manager.active_terms


def test_a_speed_limit_naming_no_joint_is_refused_with_the_joints(torque_env):
    from realgap.tasks.grasp.joint_speed import _speed_limits

    _, ids, limits = _speed_limits(torque_env, {"limits_rad_s": {"joint[1-4]": 2.175, "joint[5-7]": 2.61}}, "t")
    assert ids.tolist() == list(range(7)) and limits.tolist() == pytest.approx([2.175] * 4 + [2.61] * 3)
    with pytest.raises(ValueError, match=r"joint_speed_margin: no joint matches 'elbow\.\*' \(joints: \["):
        _speed_limits(torque_env, {"limits_rad_s": {"elbow.*": 1.0}}, "joint_speed_margin")


def test_nan_in_the_object_resets_that_env_and_is_counted(torque_env):
    from realgap.envs.sim.nan_guard import FiniteVecEnv

    env = torque_env
    vec = FiniteVecEnv(env)
    vec.get_observations()
    act = torch.zeros(2, env.action_manager.total_action_dim)
    vec.step(act)
    obj = env.scene["object"]
    pose = obj.data.root_link_pose_w.torch.clone()
    pose[1, 0] = float("nan")
    obj.write_root_pose_to_sim_index(root_pose=pose)
    obs, rew, dones, extras = vec.step(act)
    assert env.termination_manager.get_term("non_finite_object").tolist() == [False, True]
    assert dones.tolist() == [False, True]
    assert torch.isfinite(obs["policy"]).all() and torch.isfinite(rew).all()
    for _ in range(10):
        obs, rew, dones, _ = vec.step(act)
        assert torch.isfinite(obs["policy"]).all() and not dones.any()
    assert torch.isfinite(obj.data.root_link_pose_w.torch).all()


def test_staged_lift_pays_nothing_without_a_pinch(torque_env):
    from realgap.tasks.grasp.mdp import lift_while_pinched

    env = torque_env
    env.reset()
    env.step(torch.zeros(2, env.action_manager.total_action_dim))
    obj = env.scene["object"]
    pose = obj.data.root_link_pose_w.torch.clone()
    pose[:, 2] += 0.05  # the object 5 cm up (in the air, not held)
    obj.write_root_pose_to_sim_index(root_pose=pose)
    env.scene.update(0.0)
    grasp = env.reward_manager.get_term_cfg("grasp").func
    grasp.pinch_now[:] = torch.tensor([True, False])
    value = lift_while_pinched(env, lift_target_m=0.10)
    torch.testing.assert_close(value, torch.tensor([0.5, 0.0]), atol=0.02, rtol=0.0)  # 5 cm of 10 cm while pinched


def test_the_reflex_sees_every_physics_step_not_only_the_policy_step(torque_env):
    """The actuator keeps each joint's peak |q̇| over the physics steps between two policy steps (a real Franka checks
    every controller cycle); the reflex term reads and clears it."""
    from isaaclab.utils.types import ArticulationActions

    env = torque_env
    env.reset()
    robot = env.scene["robot"]
    zero_action = torch.zeros(2, env.action_manager.total_action_dim)
    env.step(zero_action)  # past the episode's first policy step, where only the speed at its end counts
    env.step(zero_action)
    actuator = next(a for a in robot.actuators.values() if hasattr(a, "pop_peak_speed"))
    actuator.pop_peak_speed()
    q = robot.data.joint_pos.torch[:, actuator.joint_indices].clone()
    zero = torch.zeros_like(q)
    for v in (1.0, 3.0, 0.5):  # three physics steps: joint 1 at 1, 3, then 0.5 rad/s (3 is past its 2.175 limit)
        qd = zero.clone()
        qd[0, 0] = v
        actuator.compute(ArticulationActions(joint_positions=q, joint_velocities=zero, joint_efforts=zero), q, qd)
    peak = actuator.pop_peak_speed()
    assert float(peak[0, 0]) == 3.0 and float(peak[1].abs().max()) == 0.0
    assert float(actuator.pop_peak_speed().abs().max()) == 0.0  # cleared by the read
    for v in (3.0, 0.5):
        qd = zero.clone()
        qd[0, 0] = v
        actuator.compute(ArticulationActions(joint_positions=q, joint_velocities=zero, joint_efforts=zero), q, qd)
    term = env.termination_manager.get_term_cfg("joint_speed_reflex")
    # at rest now (the robot never moved), yet the 3 rad/s of a physics step in between trips the reflex of env 0
    assert term.func(env, **term.params).tolist() == [True, False]
    env.reset()
