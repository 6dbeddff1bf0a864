"""Unit tier: the runtime's ee_pose_delta term (rotation helpers, the DLS law on the export's MJCF kinematics) and
what the runtime refuses for the grasp export: an IK configuration it does not implement, a missing object pose
source, a position robot that does not compensate gravity. MuJoCo kinematics only (no stepping)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.unit
EXPORT = Path(__file__).resolve().parents[2] / "configs/policies/grasp_franka"


def test_rotation_helpers_match_hand_computed_values():
    from realgap.envs.deploy.kinematics import quat_from_rotvec, quat_mul, rotate, rotvec_from_quat

    q = quat_from_rotvec(np.array([0.0, 0.0, np.pi / 2]))  # 90° about z: (cos 45°, 0, 0, sin 45°)
    np.testing.assert_allclose(q, [np.sqrt(0.5), 0.0, 0.0, np.sqrt(0.5)], atol=1e-12)
    np.testing.assert_allclose(rotate(q, np.array([1.0, 0.0, 0.0])), [0.0, 1.0, 0.0], atol=1e-12)  # x → y
    np.testing.assert_allclose(rotvec_from_quat(-q), [0.0, 0.0, np.pi / 2], atol=1e-12)  # w < 0: same rotation
    np.testing.assert_allclose(rotvec_from_quat(quat_mul(q, q)), [0.0, 0.0, np.pi], atol=1e-12)  # 180°
    np.testing.assert_array_equal(quat_from_rotvec(np.full(3, 1e-8)), [1.0, 0.0, 0.0, 0.0])  # below eps: identity


@pytest.fixture(scope="module")
def meta():
    from realgap.envs.deploy import load_metadata

    return load_metadata(EXPORT / "policy.json")


def test_dls_iterations_reach_the_commanded_pose(meta):
    """q ← q + dq with the exported law, repeated, drives the TCP to p + d (the law converges: λ = 0.05 only damps)."""
    from realgap.envs.deploy.actions import ActionMapper

    mapper = ActionMapper(meta)
    ik = mapper.ik["arm"]
    q = np.asarray(meta.default_joint_pos, dtype=np.float64).copy()
    p0, _ = ik.pose(q)
    target, tau = q.copy(), np.zeros(9)
    a = np.array([1.0, -1.0, 0.5, 0.0, 0.0, 1.0, 1.0])  # 1 cm, -1 cm, 0.5 cm; 0.02 rad about z; gripper open
    mapper.apply(a, target, q)
    for _ in range(30):
        mapper.track(q, target, tau)
        q = target.copy()
    p, quat = ik.pose(q)
    np.testing.assert_allclose(p - p0, [0.01, -0.01, 0.005], atol=1e-5)
    assert list(target[7:]) == [0.04, 0.04]
    g = mapper.kinematics.gravity(q)
    assert abs(g[1]) > 1.0 and abs(g[0]) < 1e-9  # joint 2 carries the arm; joint 1's axis is vertical


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda p: p["ik"].update(method="pinv"), "method='pinv' \\(runs 'dls'\\)"),
        (lambda p: p["ik"]["controller"].update(use_relative_mode=False), "use_relative_mode=False"),
        (lambda p: p["ik"]["controller"].update(orientation_weight=[1, 1, 0]), "orientation_weight=\\[1, 1, 0\\]"),
        (lambda p: p["ik"]["controller"].update(joint_limit_avoidance_gain=0.5), "joint_limit_avoidance_gain=0.5"),
        (lambda p: p["ik"]["params"].update(lambda_val=-1), "lambda_val=-1"),
    ],
)
def test_ik_configurations_the_runtime_does_not_implement_are_refused(meta, edit, message):
    import copy

    from realgap.envs.deploy.task_space import UnsupportedIkError, check_ik_params

    term = meta.actions.terms[0]
    params = copy.deepcopy(dict(term.params))
    check_ik_params("arm", params, term.feed_forward)  # the shipped export's own configuration runs
    edit(params)
    with pytest.raises(UnsupportedIkError, match=f"action term 'arm' \\(ee_pose_delta\\).*{message}"):
        check_ik_params("arm", params, term.feed_forward)
    with pytest.raises(UnsupportedIkError, match="feed_forward type 'inertia'"):
        check_ik_params("arm", dict(term.params), {"type": "inertia"})


def test_grasp_without_an_object_pose_source_is_refused(meta):
    from realgap.envs.deploy import DeployRuntime, ZeroPolicy
    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.deploy.objects import MissingObjectPoseError

    robot = MujocoRobot.for_policy(meta)  # the bare Panda: no object, no ObjectPose
    with pytest.raises(MissingObjectPoseError, match="observes the object .*object_pos_b.*give the runtime an Object"):
        DeployRuntime(meta, robot, ZeroPolicy(meta.action_dim))


def test_a_position_robot_must_compensate_gravity_for_the_ik_term(meta):
    from realgap.envs.deploy import DeployRuntime, ImuState, JointState, MetadataMismatchError, Robot, ZeroPolicy
    from realgap.envs.deploy.objects import ObjectPose

    class PositionPanda(Robot, ObjectPose):  # construction only: the refusal comes before any command
        command_mode, compensates = "position", False

        joint_names = property(lambda self: meta.joint_names)
        control_dt = property(lambda self: 0.02)

        def read_joints(self) -> JointState:
            return JointState(np.asarray(meta.default_joint_pos), np.zeros(9))

        def read_imu(self) -> ImuState:
            return ImuState(np.zeros(3), np.array([0.0, 0.0, -1.0]))

        def read_object_pose(self) -> tuple[np.ndarray, np.ndarray]:
            return np.array([0.5, 0.0, 0.02]), np.array([1.0, 0.0, 0.0, 0.0])

        def step(self) -> None:
            pass

    with pytest.raises(MetadataMismatchError, match="\\['arm'\\] add the gravity torque g\\(q\\).*gravity_compensated"):
        DeployRuntime(meta, PositionPanda(), ZeroPolicy(meta.action_dim))
    robot = PositionPanda()
    robot.gravity_compensated = True
    runtime = DeployRuntime(meta, robot, ZeroPolicy(meta.action_dim))
    assert runtime.actions.tracks and runtime.steps_per_policy == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "--robot franka runs one episode on --hostname ADDRESS"),
        (["--hostname", "127.0.0.1", "--episodes", "2"], "--robot franka runs one episode"),
        (["--hostname", "127.0.0.1", "--gripper_force_n", "500"], "--gripper_force_n must be in \\(0, 140\\] N"),
        (["--hostname", "127.0.0.1", "--gripper_force_n", "nan"], "--gripper_force_n must be in \\(0, 140\\] N"),
        (["--hostname", "127.0.0.1", "--watchdog_s", "0"], "--watchdog_s must be a finite number > 0"),
    ],
)
def test_franka_cli_refuses_bad_flags_before_connecting(argv, message):
    from realgap.envs.run.deploy import main

    with pytest.raises(ValueError, match=message):
        main(["--policy", str(EXPORT), "--robot", "franka", *argv])


def test_driver_clamps_to_the_intersection_of_the_panda_and_fr3_limits(meta):
    """The FR3 limits in the driver are the ones franky-sim's fr3.xml ships; the driver's bounds are the tighter of
    those and the export's (Panda) limits."""
    import re

    from realgap.envs.deploy.drivers.franka import FR3_LIMITS

    franky_sim = pytest.importorskip("franky_sim", reason="needs the franka extra")
    xml = (Path(franky_sim.__file__).parent / "assets" / "fr3.xml").read_text()
    found = [re.search(rf'name="fr3_joint{i}"[^>]*\srange="([^"]+)"', xml, re.S) for i in range(1, 8)]
    ranges = [tuple(float(v) for v in m.group(1).split()) for m in found]
    assert tuple(r[0] for r in ranges) == FR3_LIMITS[0] and tuple(r[1] for r in ranges) == FR3_LIMITS[1]
    lo = np.maximum(np.array(meta.joint_pos_lower[:7]), FR3_LIMITS[0])
    assert lo[5] == pytest.approx(0.5445) and lo[0] == pytest.approx(-2.7437)  # the FR3's joint 6 and 1 are tighter
