"""Sim tier: every action space of the grasp task builds on the CPU with 2 envs, steps without NaN and records its
actuator model and rates; each low-level model does what it claims with a zero action (position PD sags under gravity,
gravity compensation removes the sag, the torque / velocity / IK interfaces hold still); pinocchio's g(q), which the
gravity-compensated variants use, equals the simulator's gravity bias; an unknown action-space name lists the known
ones."""

import pytest
import torch

from realgap.tasks.grasp import ACTION_SPACE_IDS

pytestmark = pytest.mark.sim

STEPS = 25  # 0.5 s at 50 Hz


def test_unknown_action_space_lists_the_known_ones():
    from realgap.tasks.grasp.agent_cfg import grasp_ppo_cfg
    from realgap.tasks.grasp.env_cfg import grasp_env_cfg

    for make in (grasp_env_cfg, grasp_ppo_cfg):
        with pytest.raises(ValueError, match="unknown grasp action space 'joint_admittance'") as err:
            make("joint_admittance")
        for name in ACTION_SPACE_IDS:
            assert name in str(err.value)


def test_every_action_space_has_an_id_a_ppo_cfg_and_its_actuator_model():
    from realgap.envs.rates import RateSpec
    from realgap.tasks.grasp.actions import ACTION_SPACES
    from realgap.tasks.grasp.agent_cfg import grasp_ppo_cfg
    from realgap.tasks.grasp.env_cfg import RATES, grasp_env_cfg

    assert set(ACTION_SPACE_IDS) == set(ACTION_SPACES)
    for name in ACTION_SPACES:
        cfg = grasp_env_cfg(name)
        info = cfg.action_space_info
        assert info["name"] == name and len(info["low_level"]) > 20
        assert RateSpec.from_dict(info["rates"]) == RATES  # physics 200 Hz, control 200 Hz, policy 50 Hz
        assert grasp_ppo_cfg(name).experiment_name == f"grasp_franka_{name}"
        gains = cfg.scene.robot.actuators["panda"].specs["joint2"]["gains"]
        if name in ("joint_torque", "computed_torque", "cartesian_impedance"):  # torque pass-through: no arm PD
            assert gains == {"kp": 0.0, "kd": 0.0}
        elif name == "joint_vel":  # velocity servo: damping only
            assert gains["kp"] == 0.0 and gains["kd"] > 0.0
        else:  # the datasheet's bandwidth gains (10 Hz, ζ = 2 on the total inertia)
            assert gains == {"natural_freq_hz": 10.0, "damping_ratio": 2.0, "inertia": "total"}
        # the gripper keeps its PD in every variant
        assert cfg.scene.robot.actuators["panda"].specs["fingers"]["gains"]["inertia"] == "total"


@pytest.fixture(scope="module", params=list(ACTION_SPACE_IDS))
def variant(request):
    from conftest import build_env

    # no arm reset noise: every variant starts at rest in the default pose, so "holds still" is measurable
    with build_env(ACTION_SPACE_IDS[request.param], num_envs=2, seed=3, events__reset_arm=None) as env:
        yield request.param, env


def test_builds_steps_and_holds_what_its_model_claims(variant):
    from isaaclab_newton.physics import NewtonManager

    from realgap.envs.sim.mjwarp import EXACT_BOX_BOX_FLAGS
    from realgap.tasks.grasp.mdp import tcp_pos_w

    name, env = variant
    assert NewtonManager._solver.mj_model.nu == 0  # no MJCF servo left under realgap's actuators
    # the object rests on the table: box-box by the exact routine in the engine the env built (envs/sim/mjwarp.py)
    assert NewtonManager._solver.mjw_model.opt.disableflags & EXACT_BOX_BOX_FLAGS
    obs, _ = env.reset()
    robot = env.scene["robot"]
    dim = env.action_manager.total_action_dim
    assert dim == (7 if name in ("ee_pose_delta", "cartesian_impedance") else 8)  # arm (6-D TCP or 7 joints) + gripper
    # joints 9 + 9, TCP 3, object position 3 + quaternion 4, object − TCP 3, last action
    assert obs["policy"].shape == (2, 31 + dim)
    q0, tcp0 = robot.data.joint_pos.torch.clone(), tcp_pos_w(env).clone()
    act = torch.zeros(2, dim)
    act[:, -1] = 1.0  # gripper open
    for _ in range(STEPS):
        obs, rew, terminated, truncated, _ = env.step(act)
        assert torch.isfinite(obs["policy"]).all() and torch.isfinite(rew).all()
        assert not terminated.any()
    arm_err = (robot.data.joint_pos.torch - q0)[:, :7].abs()
    if name == "joint_pos":
        # PD without gravity compensation sags: joint 4 carries 22 N·m at the ready pose, Kp = 920 N·m/rad → 0.024 rad
        assert 0.015 < float(arm_err[:, 3].min()) < 0.035
    else:
        # every other interface holds the pose: gravity compensated (pd_gravity, vel, IK; torque too, but with no
        # damping at all it keeps the few mrad/s it picks up while the first command is delayed, ~0.01 rad in 0.5 s;
        # without g(q) joint 4 would fall by radians) or a target integrated from the measured start (delta: its
        # sag is the same PD sag as joint_pos)
        bound = {"joint_pos_delta": 0.035, "joint_torque": 0.02}.get(name, 0.005)
        assert float(arm_err.max()) < bound, f"{name}: arm drifted {arm_err.max():.4f} rad with a zero action"
    if name in ("ee_pose_delta", "cartesian_impedance"):
        assert float((tcp_pos_w(env) - tcp0).norm(dim=-1).max()) < 0.005  # m
    if name == "joint_pd_gravity":
        _check_pinocchio_gravity_matches_the_simulator(env)
    if name == "ee_pose_delta":
        _check_fingers_close_at_the_hands_speed(env, act)


def _check_fingers_close_at_the_hands_speed(env, act):
    """Closing on nothing (the object lies 30 cm below the open fingers): each finger moves at no more than the Franka
    Hand's 0.05 m/s (tasks/grasp/hand.py; the idealised hand closed at up to 0.79 m/s), and it does move: after
    0.2 s (10 policy steps) the finger has travelled more than half of the 0.01 m its setpoint covered (the finger PD
    trails its setpoint by a few millimetres at that speed)."""
    robot = env.scene["robot"]
    fingers = [robot.joint_names.index(j) for j in ("finger_joint1", "finger_joint2")]
    start = robot.data.joint_pos.torch[:, fingers].clone()
    act = act.clone()
    act[:, -1] = -1.0  # close
    peak = 0.0
    for _ in range(10):
        env.step(act)
        peak = max(peak, float(robot.data.joint_vel.torch[:, fingers].abs().max()))
    travelled = start - robot.data.joint_pos.torch[:, fingers]
    assert peak <= 0.05 * 1.05, f"a finger moved at {peak:.3f} m/s, past the hand's 0.05 m/s"
    # the export carries the speed per finger joint (what the runtime and the driver run)
    described = env.action_manager.get_term("gripper").export_description()
    assert described["params"]["speed"] == [0.05, 0.05] and len(described["joint_names"]) == 2
    assert float(travelled.min()) > 0.005, travelled


def _check_pinocchio_gravity_matches_the_simulator(env):
    """g(q) from pinocchio on example-robot-data's URDF (what the variants use) vs Newton's inverse dynamics of the
    simulated Menagerie model, at the simulated pose: equal within 0.5 % of the largest torque."""
    from realgap.tasks.grasp.action_terms import PandaGravity

    robot = env.scene["robot"]
    g_pin = PandaGravity(robot.joint_names)(robot.data.joint_pos.torch)
    g_sim = robot.data.gravity_compensation_forces.torch[:, robot.num_base_dofs :]
    assert float(g_pin[:, 3].abs().min()) > 15.0  # joint 4 carries ~22 N·m: the comparison is not trivially zero
    assert torch.allclose(g_pin, g_sim, atol=5e-3 * float(g_sim.abs().max()))
