"""Deploy runtime without a simulator: import isolation, metadata round trip and schema, refusals, observations,
action terms, the actuator chain on the torque path, the position path, and an ONNX graph (built with ``onnx``, no
torch) end to end. The format itself (old files, the shipped exports, the hash rule, the CLI) is in
tests/unit/test_policy_format.py.

The metadata here is constructed from the G1 facts (robot module, datasheets, default rates) with the balance task's
observation layout; tests/sim/test_export_metadata.py checks the same layout against the live Isaac Lab env.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from realgap.actuators.spec import resolve_joint_specs
from realgap.envs.deploy import (
    DeployRuntime,
    ImuState,
    JointState,
    MetadataMismatchError,
    ObservationBuilder,
    Robot,
    UnsupportedActionError,
    UnsupportedObservationError,
    ZeroPolicy,
)
from realgap.envs.deploy.actions import ActionMapper
from realgap.envs.deploy.observations import Readings
from realgap.envs.format import MetadataError, PolicyMetadata, load_policy
from realgap.envs.format.description import HASH_RULE
from realgap.envs.format.metadata import Actions, ActionTerm, ActuatorGroup, ObsTerm, RobotInfo
from realgap.envs.format.observations import TERM_INFO
from realgap.envs.rates import RateSpec
from realgap.envs.robots.g1 import G1, G1_ACTUATORS

pytestmark = pytest.mark.unit

NAMES = G1.joint_names
N = len(NAMES)  # 29
POSE = tuple(G1.default_pose())
KNEE = NAMES.index("left_knee_joint")  # spec g1_7520_22: kp 300, kd 5, peak 139 N·m, no-load speed 20 rad/s
MDP = "isaaclab.envs.mdp.observations"
HASH = "ab" * 32
QUAT = (1.0, 0.0, 0.0, 0.0)
SIMULATOR = {
    "engine": "test",
    "versions": {},
    "physics_dt": 0.005,
    "gravity_w": [0.0, 0.0, -9.81],
    "solver": {},
    "ground": {"type": "plane", "height_m": 0.0, "static_friction": 1.0, "dynamic_friction": 1.0, "restitution": 0.0},
    "contacts": {},
    "robot_model": [],
}


def g1_robot(sha256: str = HASH) -> RobotInfo:
    """The G1's robot facts: description package and path, root body, start pose on the ground, training spawn."""
    description = {
        "format": "mjcf",
        "distribution": G1.distribution,
        "version": "0.4.0",
        "import_package": G1.package,
        "locate": "importlib.import_module(import_package).asset_path() / path",
        "path": G1.mjcf_relpath,
        "licence": G1.licence,
        "sha256": sha256,
        "hash_rule": HASH_RULE,
        "files": [{"path": "g1.xml", "sha256": HASH}],
    }
    return RobotInfo("g1", description, False, "pelvis", (0.0, 0.0, 0.757), QUAT, (0.0, 0.0, 0.767), QUAT, 0.0)


def joint_pos_term(names=NAMES, pose=POSE, start: int = 0, scale: float = 0.25, clip=(-1.0, 1.0)) -> ActionTerm:
    n = len(names)
    params = {"scale": [scale] * n, "offset": list(pose), "clip_min": [clip[0]] * n, "clip_max": [clip[1]] * n}
    return ActionTerm(
        "joint_pos",
        "joint_position_offset",
        start,
        start + n,
        names,
        params,
        "q_target = clip(offset + scale * a, clip_min, clip_max)",
        "rad",
    )


def g1_metadata(rates: RateSpec | None = None, raw_clip: float | None = None, **changes) -> PolicyMetadata:
    """Balance-task-shaped metadata: obs = ang vel 3 | gravity 3 | joint pos 29 | joint vel 29 | last action 29."""
    group = ActuatorGroup.from_specs("g1", NAMES, resolve_joint_specs(NAMES, G1_ACTUATORS), friction_in_chain=False)
    terms, pos = [], 0
    for name, func, dim in [
        ("base_ang_vel", "base_ang_vel", 3),
        ("projected_gravity", "projected_gravity", 3),
        ("joint_pos", "joint_pos_rel", N),
        ("joint_vel", "joint_vel_rel", N),
        ("actions", "last_action", N),
    ]:
        joints = NAMES if func.startswith("joint") else None
        quantity, units, frame = TERM_INFO[func]
        terms.append(
            ObsTerm(name, "policy", f"{MDP}:{func}", pos, pos + dim, quantity, units, frame, joint_names=joints)
        )
        pos += dim
    fields = dict(
        task="Realgap-Balance-G1-v0",
        robot=g1_robot(),
        joint_names=NAMES,
        joint_types=("hinge",) * N,
        default_joint_pos=POSE,
        default_joint_vel=(0.0,) * N,
        joint_pos_lower=(None,) * N,
        joint_pos_upper=(None,) * N,
        actions=Actions((joint_pos_term(),), raw_clip),
        actuator_groups=(group,),
        rates=rates or RateSpec(200, 200, 50),
        observations=tuple(terms),
        obs_dim=pos,
        imu_body="pelvis",
        simulator=SIMULATOR,
        training={"git": {"commit": "0" * 40}},
    )
    return PolicyMetadata(**(fields | changes))


class StateRobot(Robot):
    """A robot that is only a state: it records what it is sent and does not move (our interface, no simulator)."""

    simulated = False

    def __init__(self, names=NAMES, dt: float = 0.005, mode: str = "torque", description_hash: str | None = None):
        self._names, self._dt, self.command_mode, self._hash = tuple(names), dt, mode, description_hash
        self.q, self.qd = np.array(POSE[: len(names)]), np.zeros(len(names))
        self.imu = ImuState(np.zeros(3), np.array([0.0, 0.0, -1.0]))
        self.sent: list[tuple] = []
        self.steps = 0

    joint_names = property(lambda self: self._names)
    control_dt = property(lambda self: self._dt)
    description_hash = property(lambda self: self._hash)

    def read_joints(self) -> JointState:
        return JointState(self.q.copy(), self.qd.copy())

    def read_imu(self) -> ImuState:
        return self.imu

    def send_torques(self, tau):
        self.sent.append(("torque", np.array(tau)))

    def send_joint_targets(self, q_target, qd_target, kp, kd):
        self.sent.append(("position", np.array(q_target), np.array(kp), np.array(kd)))

    def step(self):
        self.steps += 1


# -- isolation -------------------------------------------------------------------------------------------------------
def _loaded(modules: list[str]) -> list[str]:
    heavy = (
        "torch",
        "isaaclab",
        "isaaclab_newton",
        "isaaclab_rl",
        "warp",
        "newton",
        "pxr",
        "isaacsim",
        "omni",
        "mujoco",
    )
    code = (
        f"import importlib, sys\nfor m in {modules!r}: importlib.import_module(m)\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return eval(out.stdout.strip().splitlines()[-1])


def test_runtime_imports_neither_torch_nor_isaac_lab_nor_a_simulator():
    modules = [
        "realgap.envs.deploy",
        "realgap.envs.deploy.runtime",
        "realgap.envs.run.deploy",
        "realgap.scripts.deploy",
        "onnxruntime",
        "jsonschema",
    ]
    assert _loaded(modules) == []
    # the MuJoCo test robot and the episode loop add MuJoCo, and nothing else heavy
    assert _loaded(["realgap.envs.deploy.mujoco_robot", "realgap.envs.deploy.episode"]) == ["mujoco"]


# -- metadata --------------------------------------------------------------------------------------------------------
def test_metadata_round_trips_through_json_and_follows_the_schema():
    meta = g1_metadata(raw_clip=4.0)
    data = json.loads(meta.to_json())
    assert data["format"] == "realgap.policy/2"
    back = PolicyMetadata.from_dict(data)  # validates against configs/schema/policy.schema.json first
    assert back == meta
    (group,) = data["actuators"]["groups"]
    knee = group["joint_names"].index("left_knee_joint")
    assert (group["kp"][knee], group["kd"][knee], group["peak_torque"][knee]) == (300.0, 5.0, 139.0)
    assert group["armature"][knee] == pytest.approx(0.025101925)  # 7520-22: 0.489e-4·22.5² + 0.109e-4·5² + 0.738e-4
    # latency 0-10 ms at 5 ms physics steps: 0-2 steps; a robot adds none
    assert group["command_delay"]["range_physics_steps"] == [0, 2] and group["command_delay"]["robot_value_s"] == 0
    # friction applied by the simulator: Coulomb 0.3 N·m as joint frictionloss, no tanh velocity scale
    assert group["friction"]["applied_by"] == "simulator" and group["friction"]["velocity_scale"] is None
    assert group["friction"]["coulomb"][knee] == 0.3 and "frictionloss" in group["friction"]["equation"]
    assert data["actions"]["raw_clip"] == 4.0 and data["actions"]["terms"][0]["params"]["clip_max"][0] == 1.0


def test_unbounded_limits_are_null_not_strings():
    meta = g1_metadata(actions=Actions((joint_pos_term(clip=(None, None)),)))
    text = meta.to_json()
    assert '"inf"' not in text and "Infinity" not in text
    params = json.loads(text)["actions"]["terms"][0]["params"]
    assert set(params["clip_min"]) == {None} and set(params["clip_max"]) == {None}
    q = ActionMapper(meta)
    target = np.zeros(N)
    q.apply(np.full(N, 100.0, dtype=np.float32), target)
    np.testing.assert_allclose(target, np.array(POSE) + 25.0)  # no clip at all


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(format="other/9"), "field 'format' is 'other/9'"),
        (lambda d: d["observations"]["terms"][1].update(start=4, stop=6), "previous term ends at 3"),
        (lambda d: d["observations"].update(dim=94), "obs_dim is 94"),
        (lambda d: d["actions"]["terms"][0]["joint_names"].__setitem__(0, "tail_joint"), "tail_joint"),
        (lambda d: d["rates"].update(decimation=5), "decimation"),
        (lambda d: d.pop("joints"), "'joints' is a required property"),
        (lambda d: d["actions"]["terms"][0]["params"].update(scale="x"), r"\$.actions.terms\[0\].params.scale"),
        (lambda d: d["actions"]["terms"][0]["params"]["scale"].pop(), "params.scale: 28 values for 29 joints"),
        (lambda d: d["actions"]["terms"][0].update(type="teleport"), r"\$.actions.terms\[0\].type"),
        (lambda d: d["actuators"]["groups"][0]["kp"].pop(), "'g1'.kp: 28 values for 29 joints"),
        (lambda d: d["actuators"]["groups"][0]["command_delay"].update(range_physics_steps=[0, 3]), "range_physics"),
        (lambda d: d["actuators"]["groups"][0]["friction"].update(applied_by="firmware"), "applied_by"),
        (lambda d: d["robot"]["description"].update(sha256="abc"), r"\$.robot.description.sha256"),
        (lambda d: d["robot"]["start_pose"].pop("root_pos_w"), r"\$.robot.start_pose"),
        (lambda d: d["observations"]["terms"][0].update(noise={"cfg": {}}), r"\$.observations.terms\[0\].noise"),
    ],
)
def test_malformed_metadata_is_refused_with_the_field_named(edit, message):
    data = json.loads(g1_metadata().to_json())
    edit(data)
    with pytest.raises((MetadataError, ValueError), match=message):
        PolicyMetadata.from_dict(data)


# -- refusals: metadata vs robot -------------------------------------------------------------------------------------
def _refusal(robot: Robot, meta: PolicyMetadata | None = None) -> str:
    with pytest.raises(MetadataMismatchError) as err:
        DeployRuntime(meta or g1_metadata(), robot, ZeroPolicy(N))
    return str(err.value)


def test_wrong_joint_count_is_refused():
    msg = _refusal(StateRobot(names=NAMES[:-1]))
    assert "joint count: the policy drives 29 joints, the robot has 28" in msg


def test_wrong_joint_names_are_refused():
    names = ("left_hip_pitch",) + NAMES[1:]
    msg = _refusal(StateRobot(names=names))
    assert "joint names: missing on the robot ['left_hip_pitch_joint'], unknown to the policy ['left_hip_pitch']" in msg


def test_wrong_joint_order_is_refused():
    names = list(NAMES)
    names[3], names[9] = names[9], names[3]  # swap the knees
    msg = _refusal(StateRobot(names=names))
    assert "joint order differs at 2 positions" in msg
    assert "#3: policy 'left_knee_joint', robot 'right_knee_joint'" in msg


def test_control_period_not_dividing_the_policy_period_is_refused():
    # 3 ms does not divide the 20 ms policy period (ratio 6.67)
    msg = _refusal(StateRobot(dt=0.003, mode="position"))
    assert "control period 0.003 s does not divide the policy period 0.02 s" in msg


def test_torque_robot_off_the_training_physics_rate_is_refused():
    # 2.5 ms divides 20 ms, but the chain counts delays and servo periods in 5 ms physics steps
    msg = _refusal(StateRobot(dt=0.0025, mode="torque"))
    assert "must step at the training physics rate 200 Hz" in msg and "every 0.0025 s" in msg
    # a position-servo robot at 400 Hz is fine: 8 control periods per policy step
    assert DeployRuntime(g1_metadata(), StateRobot(dt=0.0025, mode="position"), ZeroPolicy(N)).steps_per_policy == 8


def test_other_robot_description_is_refused():
    msg = _refusal(StateRobot(description_hash="cd" * 32))
    assert "robot description: sha256 cdcdcdcdcdcd… differs from the training description abababababab…" in msg


def test_all_mismatches_are_listed_at_once():
    msg = _refusal(StateRobot(names=NAMES[:-1], dt=0.003))
    assert "joint count" in msg and "does not divide" in msg


# -- observations and actions ----------------------------------------------------------------------------------------
def test_observation_layout_from_readings():
    meta = g1_metadata()
    q = np.array(POSE) + 0.01 * np.arange(N)
    qd = -0.1 * np.arange(N)
    last = np.linspace(-1, 1, N).astype(np.float32)
    readings = Readings(JointState(q, qd), ImuState(np.array([0.1, -0.2, 0.3]), np.array([0.0, 0.6, -0.8])), last)
    obs = ObservationBuilder(meta).build(readings)
    assert obs.shape == (93,) and obs.dtype == np.float32
    np.testing.assert_allclose(obs[0:3], [0.1, -0.2, 0.3], atol=1e-7)
    np.testing.assert_allclose(obs[3:6], [0.0, 0.6, -0.8], atol=1e-7)
    np.testing.assert_allclose(obs[6:35], 0.01 * np.arange(N), atol=1e-6)  # joint_pos_rel = q − default
    np.testing.assert_allclose(obs[35:64], qd, atol=1e-6)  # joint_vel_rel, default velocity 0
    np.testing.assert_allclose(obs[64:93], last)


def test_observation_scale_and_clip_follow_isaac_lab_order():
    # Isaac Lab: clip first, then scale. ang vel (3, -5, 0.5) clipped to ±2 then ×0.25 -> (0.5, -0.5, 0.125)
    meta = g1_metadata()
    term = replace(meta.observations[0], clip=(-2.0, 2.0), scale=0.25)
    builder = ObservationBuilder(meta, [term])
    readings = Readings(
        JointState(np.zeros(N), np.zeros(N)), ImuState(np.array([3.0, -5.0, 0.5]), np.zeros(3)), np.zeros(N)
    )
    np.testing.assert_allclose(builder.build(readings)[:3], [0.5, -0.5, 0.125])


@pytest.mark.parametrize(
    ("term", "message"),
    [
        (ObsTerm("base_lin_vel", "policy", f"{MDP}:base_lin_vel", 0, 3), "base_lin_vel"),
        (ObsTerm("mine", "policy", "my_task.mdp:secret", 0, 3), "my_task.mdp:secret"),
        (ObsTerm("gyro", "policy", f"{MDP}:base_ang_vel", 0, 5, history_length=2), r"\(2 frames: 6\) but spans 5"),
        (ObsTerm("gyro", "policy", f"{MDP}:base_ang_vel", 0, 3, delay_lag=(0, 2)), "delay_lag"),
        (ObsTerm("gyro", "policy", f"{MDP}:base_ang_vel", 0, 4), "computes 3 values on the robot but spans 4"),
    ],
)
def test_unsupported_observation_terms_are_refused(term, message):
    with pytest.raises(UnsupportedObservationError, match=message):
        ObservationBuilder(g1_metadata(), [term])


def test_an_observation_history_is_oldest_first_and_filled_by_the_first_sample_after_a_reset():
    """history_length 3: the first build repeats its sample 3 times (Isaac Lab's buffer on its first append), later
    builds shift left and append; reset() starts over."""
    meta = g1_metadata()
    term = replace(meta.observations[0], stop=9, history_length=3)
    builder = ObservationBuilder(meta, [term])

    def gyro(x):
        imu = ImuState(np.array([x, -x, 0.0]), np.zeros(3))
        return Readings(JointState(np.zeros(N), np.zeros(N)), imu, np.zeros(N))

    np.testing.assert_allclose(builder.build(gyro(1.0))[:9], [1, -1, 0] * 3)
    np.testing.assert_allclose(builder.build(gyro(2.0))[:9], [1, -1, 0, 1, -1, 0, 2, -2, 0])
    np.testing.assert_allclose(builder.build(gyro(3.0))[:9], [1, -1, 0, 2, -2, 0, 3, -3, 0])
    np.testing.assert_allclose(builder.build(gyro(4.0))[:9], [2, -2, 0, 3, -3, 0, 4, -4, 0])
    builder.reset()
    np.testing.assert_allclose(builder.build(gyro(5.0))[:9], [5, -5, 0] * 3)


def test_joint_position_term_is_offset_plus_scaled_action_then_clipped():
    mapper = ActionMapper(g1_metadata())
    a = np.zeros(N)
    a[KNEE], a[0] = 1.0, -0.4  # knee 0.669 + 0.25 = 0.919 rad; hip pitch -0.312 - 0.1 = -0.412 rad
    a[NAMES.index("left_elbow_joint")] = 3.0  # 0.6 + 0.75 = 1.35 -> clipped to the target bound 1.0 rad
    q = np.zeros(N)
    mapper.apply(a, q)
    assert q[KNEE] == pytest.approx(0.919, abs=1e-9) and q[0] == pytest.approx(-0.412, abs=1e-9)
    assert q[NAMES.index("left_elbow_joint")] == 1.0


ARM, FINGERS = tuple(f"joint{i}" for i in range(1, 8)), ("finger_joint1", "finger_joint2")


def panda_metadata(actions: Actions) -> PolicyMetadata:
    """Grasp-shaped metadata on the Panda's 9 joints: obs = joint pos 9 | last action."""
    from realgap.envs.robots.panda import PANDA_ACTUATORS

    names = ARM + FINGERS
    group = ActuatorGroup.from_specs("panda", names, resolve_joint_specs(names, PANDA_ACTUATORS), False)
    obs = (
        ObsTerm("joint_pos", "policy", f"{MDP}:joint_pos_rel", 0, 9, *TERM_INFO["joint_pos_rel"], joint_names=names),
        ObsTerm("actions", "policy", f"{MDP}:last_action", 9, 9 + actions.dim, *TERM_INFO["last_action"]),
    )
    robot = replace(
        g1_robot(),
        name="panda",
        fixed_base=True,
        root_body="link0",
        start_root_pos=(0.0, 0.0, 0.0),
        spawn_root_pos=(0.0, 0.0, 0.0),
        start_clearance_m=None,
    )
    return g1_metadata(
        task="Realgap-Grasp-Franka-v0",
        robot=robot,
        joint_names=names,
        joint_types=("hinge",) * 7 + ("slide",) * 2,
        default_joint_pos=(0.0,) * 7 + (0.04, 0.04),
        default_joint_vel=(0.0,) * 9,
        joint_pos_lower=(None,) * 9,
        joint_pos_upper=(None,) * 9,
        actions=actions,
        actuator_groups=(group,),
        observations=obs,
        obs_dim=9 + actions.dim,
        imu_body="link0",
    )


def arm_and_gripper(arm: ActionTerm) -> Actions:
    """A grasp-shaped action vector: an arm term, then the 1-D binary gripper (a < 0 closes to 0 m, else 0.04 m)."""
    gripper = ActionTerm(
        "gripper",
        "binary_joint_position",
        arm.stop,
        arm.stop + 1,
        FINGERS,
        {"open": [0.04, 0.04], "close": [0.0, 0.0], "threshold": 0.0},
        "q_target = close if a[start] < threshold else open",
        "m",
    )
    return Actions((arm, gripper))


def test_several_action_terms_map_their_slices():
    pose = (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785)
    actions = arm_and_gripper(joint_pos_term(ARM, pose, scale=0.5, clip=(None, None)))
    assert actions.dim == 8 and actions.joint_names == ARM + FINGERS
    meta = panda_metadata(actions)
    assert PolicyMetadata.from_dict(meta.to_dict()) == meta
    q = np.zeros(len(meta.joint_names))
    mapper = ActionMapper(meta)
    mapper.apply(np.array([0.2, 0, 0, 0, 0, 0, 0, -0.1]), q)
    assert q[0] == pytest.approx(0.1) and q[3] == pytest.approx(-2.356) and list(q[7:9]) == [0.0, 0.0]  # closed
    mapper.apply(np.array([0, 0, 0, 0, 0, 0, 0, 0.0]), q)
    assert list(q[7:9]) == [0.04, 0.04]  # a >= 0 opens


def test_terms_the_runtime_cannot_run_are_refused_by_name_and_type():
    ik = ActionTerm(
        "arm",
        "ee_pose_delta",
        0,
        6,
        ARM,
        {
            "body": "hand",
            "body_offset": {"pos": [0.0, 0.0, 0.1034], "quat_wxyz": list(QUAT)},
            "frame": "root",
            "command": "pose increment",
            "scale": [0.02] * 3 + [0.1] * 3,
            "offset": [0.0] * 6,
            "ik": {"method": "pinv", "params": {"lambda_val": 0.05}},
            "rate": "every physics step",
        },
        "dq = J^+ e",
        "m, rad",
    )
    meta = panda_metadata(arm_and_gripper(ik))
    assert PolicyMetadata.from_dict(meta.to_dict()) == meta  # the format describes it; the runtime refuses to run it
    # the runtime runs ee_pose_delta with the training's DLS law only (tests/unit/test_grasp_deploy.py)
    with pytest.raises(
        UnsupportedActionError,
        match="action term 'arm' \\(ee_pose_delta\\): the runtime cannot run "
        "method='pinv' \\(runs 'dls'\\); command_type=None",
    ):
        ActionMapper(meta)
    ff = {"type": "gravity", "source": "pinocchio", "model": "URDF", "equation": "g(q)"}
    gravity = replace(joint_pos_term(), feed_forward=ff)
    with pytest.raises(UnsupportedActionError, match="'joint_pos' .* feed-forward torque \\(gravity from pinocchio"):
        ActionMapper(g1_metadata(actions=Actions((gravity,))))


@pytest.mark.parametrize(
    ("changes", "message"),
    [({"stop": N - 1}, "spans \\[0, 28\\) = 28 entries"), ({"type": "warp_drive"}, "type 'warp_drive' is not one of")],
)
def test_inconsistent_action_terms_are_refused(changes, message):
    with pytest.raises(MetadataError, match=message):
        replace(joint_pos_term(), **changes)


def test_action_terms_must_tile_the_action_vector():
    with pytest.raises(MetadataError, match="starts at 1, the previous ends at 0"):
        Actions((joint_pos_term(start=1),))


# -- command paths ---------------------------------------------------------------------------------------------------
class ConstantPolicy:
    def __init__(self, action):
        self.action = np.asarray(action, dtype=np.float32)

    def __call__(self, obs):
        return self.action


def test_torque_path_is_the_training_pd_with_its_envelope():
    robot = StateRobot()
    action = np.zeros(N, dtype=np.float32)
    action[KNEE] = 0.4  # target = default + 0.1 rad
    robot.qd[KNEE] = 0.0
    runtime = DeployRuntime(g1_metadata(), robot, ConstantPolicy(action), command_delay=False)
    runtime.step()
    assert runtime.steps_per_policy == 4 and robot.steps == 4 and len(robot.sent) == 4
    tau = robot.sent[0][1]
    assert tau[KNEE] == pytest.approx(300.0 * 0.1)  # kp·(q* − q), qd = 0
    assert np.abs(np.delete(tau, KNEE)).max() == pytest.approx(0.0, abs=1e-9)  # the rest sit on their targets
    # 1 rad error asks 300 N·m; moving at +10 rad/s the 7520-22 envelope allows 139·(1 − 10/20) = 69.5 N·m
    robot.q[KNEE] -= 1.0
    robot.qd[KNEE] = 10.0
    runtime.control()
    assert robot.sent[-1][1][KNEE] == pytest.approx(69.5)


def test_simulated_robots_get_the_training_command_delay():
    robot = StateRobot()
    robot.simulated = True
    runtime = DeployRuntime(g1_metadata(), robot, ZeroPolicy(N), seed=3)
    ((_, chain),) = runtime.chains
    assert (chain.delay.min_steps, chain.delay.max_steps) == (0, 2)  # 0-10 ms at 5 ms steps
    real = DeployRuntime(g1_metadata(), StateRobot(), ZeroPolicy(N))
    assert real.chains[0][1].delay.max_steps == 0  # a real bus brings its own latency


def test_raw_clip_bounds_the_action_and_the_last_action_observation():
    robot = StateRobot()
    action = np.zeros(N, dtype=np.float32)
    action[KNEE] = 9.0  # beyond the raw clip 4: the env saw 4, so does the last_action term
    runtime = DeployRuntime(g1_metadata(raw_clip=4.0), robot, ConstantPolicy(action), command_delay=False)
    assert runtime.step()[KNEE] == 4.0
    obs = runtime.observations.build(Readings(robot.read_joints(), robot.read_imu(), runtime.last_action))
    assert obs[64 + KNEE] == 4.0
    assert runtime.q_target[KNEE] == pytest.approx(min(POSE[KNEE] + 0.25 * 4.0, 1.0))


def test_chain_friction_is_applied_for_simulated_robots_only():
    # training with friction in the chain: tau_f = -(0.3 · tanh(qd / 2.0)) on every joint (G1 specs: v_s = 2 rad/s)
    group = ActuatorGroup.from_specs("g1", NAMES, resolve_joint_specs(NAMES, G1_ACTUATORS), friction_in_chain=True)
    assert group.friction_velocity_scale[KNEE] == 2.0
    meta = g1_metadata(actuator_groups=(group,))
    torques = {}
    for simulated in (True, False):
        robot = StateRobot()
        robot.simulated = simulated
        robot.qd[KNEE] = 1.0
        DeployRuntime(meta, robot, ZeroPolicy(N), command_delay=False).step()
        torques[simulated] = robot.sent[0][1][KNEE]
    assert torques[False] == pytest.approx(-5.0 * 1.0)  # kd·(0 − qd) only: a real gearbox brings its own friction
    assert torques[True] == pytest.approx(-5.0 - 0.3 * np.tanh(1.0 / 2.0))


def test_other_imu_body_is_refused():
    robot = StateRobot()
    robot.imu_body = "torso_link"
    assert "IMU: the policy reads the IMU of body 'pelvis', the robot's is on 'torso_link'" in _refusal(robot)


def test_position_path_sends_targets_and_training_gains():
    robot = StateRobot(dt=0.01, mode="position")  # 100 Hz servo: 2 control periods per 20 ms policy step
    action = np.full(N, 0.2, dtype=np.float32)
    runtime = DeployRuntime(g1_metadata(), robot, ConstantPolicy(action))
    runtime.step()
    assert len(robot.sent) == 2
    _, q_target, kp, kd = robot.sent[-1]
    np.testing.assert_allclose(q_target, np.clip(np.array(POSE) + 0.05, -1.0, 1.0))
    assert (kp[KNEE], kd[KNEE]) == (300.0, 5.0)
    assert (kp[NAMES.index("left_ankle_pitch_joint")], kd[NAMES.index("left_ankle_pitch_joint")]) == (300.0, 2.0)


def test_non_finite_action_is_not_sent():
    robot = StateRobot()
    runtime = DeployRuntime(g1_metadata(), robot, ConstantPolicy(np.full(N, np.nan)))
    with pytest.raises(FloatingPointError, match="non-finite"):
        runtime.step()
    assert robot.sent == []


def test_onnx_graph_with_embedded_metadata_runs_end_to_end(tmp_path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from realgap.envs.export.writer import seal

    meta = g1_metadata()
    # actions = W·obs + b with W picking −joint_pos_rel (a pure "return to default" policy), built without torch
    weight = np.zeros((93, N), dtype=np.float32)
    weight[6 + np.arange(N), np.arange(N)] = -1.0
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["obs", "W", "b"], ["actions"])],
        "g",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [1, 93])],
        [helper.make_tensor_value_info("actions", TensorProto.FLOAT, [1, N])],
        [numpy_helper.from_array(weight, "W"), numpy_helper.from_array(np.full(N, 0.1, np.float32), "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 10
    model.metadata_props.add(key="realgap_metadata", value=meta.to_json())
    onnx.save_model(model, str(tmp_path / "policy.onnx"))
    (tmp_path / "policy.json").write_text(meta.to_json())
    seal(tmp_path)  # the integrity digest every loader checks, as an export writes it
    loaded, policy = load_policy(tmp_path)
    assert loaded == meta
    robot = StateRobot()
    robot.q[KNEE] += 0.2
    runtime = DeployRuntime(loaded, robot, policy, command_delay=False)
    action = runtime.step()
    assert action[KNEE] == pytest.approx(-0.2 + 0.1, abs=1e-6) and action[0] == pytest.approx(0.1, abs=1e-6)
    # target = default + 0.25·(−0.1) relative to the default; the knee sits 0.2 above its default
    assert robot.sent[0][1][KNEE] == pytest.approx(300.0 * (0.25 * -0.1 - 0.2), abs=1e-4)


def test_model_based_grasp_terms_follow_the_schema_and_are_refused_by_name():
    """Computed torque and Cartesian impedance (needing M(q), C·q̇, g(q), J): described, schema-valid, refused."""
    from realgap.envs.format.schema import validate

    limited = {
        "scale": [0.5] * 7,
        "offset": [0.0] * 7,
        "clip_min": [None] * 7,
        "clip_max": [None] * 7,
        "max_velocity": [1.6] * 7,
        "max_acceleration": [10.0] * 7,
    }
    ct = ActionTerm(
        "arm",
        "joint_computed_torque",
        0,
        7,
        ARM,
        limited | {"kp": 400.0, "kd": 40.0, "model": "the simulated robot's M, C, g"},
        "tau = M(q) (kp (s - q) - kd qd) + C(q, qd) qd + g(q)",
        "N·m",
    )
    imp = ActionTerm(
        "arm",
        "ee_impedance",
        0,
        6,
        ARM,
        {
            "body": "hand",
            "body_offset": {"pos": [0.0, 0.0, 0.1034], "quat_wxyz": list(QUAT)},
            "position_scale": 0.05,
            "orientation_scale": 0.05,
            "stiffness": [1000.0] * 3 + [50.0] * 3,
            "damping_ratio": [2.5] * 3 + [0.5] * 3,
            "nullspace": {"control": "position"},
            "model": "sim",
        },
        "tau = J^T (Kx e - Dx xd) + g(q) + tau_null",
        "N·m",
    )
    for term in (ct, imp):
        meta = panda_metadata(arm_and_gripper(term))
        assert PolicyMetadata.from_dict(meta.to_dict()) == meta
        validate(meta.to_dict(), "policy.json")
        with pytest.raises(UnsupportedActionError, match=f"action term 'arm' has type '{term.type}'"):
            ActionMapper(meta)


def test_the_following_error_bound_is_optional_checked_and_schema_valid():
    """``max_following_error`` (the motion generator's bound): absent (older exports), per joint with null entries
    (no bound) or numbers: valid; the wrong count is refused by name."""
    from realgap.envs.format.schema import validate

    limited = {
        "scale": [0.5] * 7,
        "offset": [0.0] * 7,
        "clip_min": [None] * 7,
        "clip_max": [None] * 7,
        "max_velocity": [1.6] * 7,
        "max_acceleration": [10.0] * 7,
    }
    for extra in ({}, {"max_following_error": [0.12] * 4 + [0.14] * 3}, {"max_following_error": [None] * 7}):
        term = ActionTerm("arm", "joint_position_rate_limited", 0, 7, ARM, limited | extra, "s follows q*", "rad")
        meta = panda_metadata(arm_and_gripper(term))
        assert PolicyMetadata.from_dict(meta.to_dict()) == meta
        validate(meta.to_dict(), "policy.json")
    with pytest.raises(MetadataError, match="max_following_error: 3 values for 7 joints"):
        ActionTerm(
            "arm",
            "joint_position_rate_limited",
            0,
            7,
            ARM,
            limited | {"max_following_error": [0.1] * 3},
            "s follows q*",
            "rad",
        )


def test_a_ramp_into_the_nominal_pose_starts_at_the_default_pose_and_restarts_at_reset():
    """``ramp_s`` (the balance task's RampedJointPositionAction): the offset moves linearly from the default pose to
    the term's offset over ``ramp_s`` after the start, counted in policy steps, and again after a reset."""
    nominal = tuple(p + 0.3 for p in POSE)
    term = joint_pos_term(pose=nominal, clip=(None, None))
    ramped = replace(term, params={**term.params, "ramp_s": 0.1})  # 5 policy steps at 50 Hz
    mapper = ActionMapper(g1_metadata(actions=Actions((ramped,))))
    q, a, seen = np.zeros(N), np.zeros(N), []
    for _ in range(7):
        mapper.apply(a, q)
        seen.append(q - np.asarray(POSE))
    np.testing.assert_allclose(np.array(seen)[:, 0], [0.0, 0.06, 0.12, 0.18, 0.24, 0.3, 0.3], atol=1e-12)
    mapper.reset()
    mapper.apply(a + 1.0, q)
    np.testing.assert_allclose(q, np.asarray(POSE) + 0.25, atol=1e-12)  # the start pose plus scale * a
    plain = ActionMapper(g1_metadata(actions=Actions((term,))))
    plain.apply(a, q)
    np.testing.assert_allclose(q, nominal)  # without ramp_s: the offset from the first step
    for bad in (-0.1, "1 s", None):
        with pytest.raises(MetadataError, match="ramp_s must be a finite number of seconds >= 0"):
            replace(term, params={**term.params, "ramp_s": bad})
