"""Sim tier: the balance env builds on the CPU with 4 envs, has the documented shapes, stays finite, and a hard push
is charged by the base-velocity penalty and makes the fall termination fire."""

import pytest
import torch

pytestmark = pytest.mark.sim

TASK = "Realgap-Balance-G1-Levers-v0"  # the standing task plus the lever terms tested below (at weight 0)


def _whole_body_com(robot) -> tuple[torch.Tensor, torch.Tensor]:
    """Mass-weighted centre of mass and its velocity in the world frame, (E, 3) each."""
    mass = robot.data.body_mass.torch[..., None]
    com = (robot.data.body_com_pos_w.torch * mass).sum(1) / mass.sum(1)
    return com, (robot.data.body_com_lin_vel_w.torch * mass).sum(1) / mass.sum(1)


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
    env.step(act)
    # the base-velocity penalty is its equation, weight · |v_xy|² (weight -4), on the state the step ended in
    terms = [dict(env.reward_manager.get_active_iterable_terms(i)) for i in range(env.num_envs)]
    penalty = torch.tensor([t["base_lin_vel"][0] for t in terms])
    v_xy = robot.data.root_lin_vel_w.torch[:, :2].cpu()
    assert torch.allclose(penalty, -4.0 * (v_xy**2).sum(dim=1), rtol=1e-5, atol=1e-7)
    assert (penalty[:2] < -20.0).all() and (penalty[2:] > -0.1).all()  # ~3 m/s on the shoved envs, ~0 on the others
    for _ in range(99):  # 2 s with the step above
        _, _, terminated, _, _ = env.step(act)
        fell |= terminated.cpu()
        fall_terms = env.termination_manager.get_term("fall_height") | env.termination_manager.get_term("fall_tilt")
        assert bool((fall_terms == terminated).all())  # only falls terminate here (no time-out within 2 s)
    assert fell[0] and fell[1]
    assert not fell[2] and not fell[3]  # the unpushed envs keep standing


def _settle(env):
    """Reset and hold the stance for 0.5 s with the zero action; the robot."""
    env.reset()
    act = torch.zeros(env.num_envs, 29)
    for _ in range(25):
        env.step(act)
    return env.scene["robot"]


def _add_root_velocity(env, robot, dv: torch.Tensor) -> None:
    """The same state with the root (and so every body) ``dv`` faster (m/s, world), kinematics brought up to date."""
    vel = robot.data.root_vel_w.torch.clone()
    vel[:, :3] += dv
    robot.write_root_velocity_to_sim_index(root_velocity=vel)
    env.sim.forward()
    robot.update(0.0)


def test_capture_point_moves_by_the_push_over_omega(env):
    from realgap.tasks.balance.mdp import capture_point_offset_l2

    robot = _settle(env)
    feet = env.reward_manager.get_term_cfg("capture_point").params["feet_cfg"]
    standing = capture_point_offset_l2(env, feet_cfg=feet).sqrt()
    assert bool((standing < 0.06).all()), standing  # ξ over the feet (the CoM sits a few cm ahead of the ankles)
    # the same state with every body 0.4 m/s faster along y (a lateral push): ξ moves by 0.4 / ω, ω = sqrt(g / c_z)
    com_z = _whole_body_com(robot)[0][:, 2]
    shift = 0.4 / torch.sqrt(9.81 / com_z)
    _add_root_velocity(env, robot, torch.tensor([0.0, 0.4, 0.0]))
    pushed = capture_point_offset_l2(env, feet_cfg=feet).sqrt()
    assert bool((pushed > shift - standing - 0.01).all() and (pushed < shift + standing + 0.01).all()), (pushed, shift)


def test_capture_point_target_moves_forward_along_the_pelvis_heading(env):
    from isaaclab.utils.math import quat_apply

    from realgap.tasks.balance.mdp import capture_point_offset_l2

    robot = _settle(env)  # each env faces its own random yaw
    feet = env.reward_manager.get_term_cfg("capture_point").params["feet_cfg"]
    offsets = torch.linspace(-0.05, 0.10, 151)
    cost = torch.stack([capture_point_offset_l2(env, feet_cfg=feet, forward_offset=float(d)) for d in offsets])
    # the cost is least where the target meets ξ's own offset ahead of the ankles' middle, along the heading
    forward = quat_apply(robot.data.root_quat_w.torch, torch.tensor([[1.0, 0.0, 0.0]]).repeat(env.num_envs, 1))[:, :2]
    forward = forward / forward.norm(dim=1, keepdim=True)
    com, com_vel = _whole_body_com(robot)
    capture = com[:, :2] + com_vel[:, :2] / torch.sqrt(9.81 / com[:, 2:3])
    ankles = robot.data.body_link_pos_w.torch[:, feet.body_ids, :2].mean(dim=1)
    ahead = ((capture - ankles) * forward).sum(-1)
    torch.testing.assert_close(offsets[cost.argmin(dim=0)], ahead, atol=0.002, rtol=0.0)
    assert bool((ahead > -0.05).all() and (ahead < 0.1).all()), ahead  # inside the swept range: a real minimum


def test_support_polygon_holds_the_standing_capture_point_and_a_backward_push_leaves_it(env):
    from isaaclab.utils.math import quat_apply

    from realgap.envs.robots.g1 import G1_SOLE_POINTS_B
    from realgap.tasks.balance.mdp import capture_point_margin, capture_point_outside_support

    robot = _settle(env)
    params = env.reward_manager.get_term_cfg("capture_support").params
    standing = capture_point_outside_support(env, **params)
    assert bool((standing == 0).all()), standing  # standing still, ξ lies between the soles
    # ... with a margin of the heel or toe line, whichever is nearer: the sole is 17 cm long, ξ a few cm off its middle
    margin = capture_point_margin(env, **env.reward_manager.get_term_cfg("capture_margin").params)
    assert bool(((margin > 0.05) & (margin <= 0.085 + 0.005)).all()), margin
    # a 0.6 m/s backward push (each env faces its own random yaw): ξ moves 0.6 / ω ≈ 0.17 m back, behind the heels,
    # which sit 5 cm behind the ankles; with the feet flat the distance is how far ξ lies behind the heel line
    forward = quat_apply(robot.data.root_quat_w.torch, torch.tensor([[1.0, 0.0, 0.0]]).repeat(env.num_envs, 1))
    forward[:, 2] = 0.0
    forward = forward / forward.norm(dim=1, keepdim=True)
    _add_root_velocity(env, robot, -0.6 * forward)
    com, com_vel = _whole_body_com(robot)
    capture = com[:, :2] + com_vel[:, :2] / torch.sqrt(9.81 / com[:, 2:3])
    ankles = robot.data.body_link_pos_w.torch[:, params["feet_cfg"].body_ids, :2]
    heel = (ankles * forward[:, None, :2]).sum(-1).min(dim=1).values + min(p[0] for p in G1_SOLE_POINTS_B)
    expected = heel - (capture * forward[:, :2]).sum(-1)
    pushed = capture_point_outside_support(env, **params)
    assert bool((expected > 0.02).all()), expected  # behind the heels in every env (its CoM offset varies by env)
    torch.testing.assert_close(pushed, expected, atol=0.015, rtol=0.0)
    # outside, the margin is minus that distance
    torch.testing.assert_close(capture_point_margin(env, **params), -pushed, atol=1e-6, rtol=0.0)
    # a step is needed now, but both feet are still flat on the ground: neither step reward pays (the dense one only
    # the soles' sub-millimetre difference in ground penetration, of its 4 cm cap)
    single = env.reward_manager.get_term_cfg("step_when_needed")
    assert bool((single.func(env, **single.params) == 0).all())
    lift = env.reward_manager.get_term_cfg("lift_when_needed")
    assert bool((lift.func(env, **lift.params) < 0.01).all())
