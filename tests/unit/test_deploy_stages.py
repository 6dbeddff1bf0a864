"""The chain's optional stages in the export metadata and the deploy runtime (issue 19, deliverable 4), no simulator:
the stages round-trip through the schema and load, an old export loads unchanged, the runtime's chain runs the drive
stages for simulated robots only and the command filter everywhere, and unrealizable stages are refused by name.

The staged group is the G1's with the 7520-22 spec (hip roll and knee joints) given every stage: speed cut-off,
command low-pass 20 Hz, current loop 30 Hz, transmission k = 1000 N·m/rad, c = 0.5 N·m·s/rad, backlash 0.01 rad,
J_m = the reflected inertia 0.0251 kg·m² (so the simulator's armature there is 0).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from test_deploy import KNEE, NAMES, POSE, StateRobot, g1_metadata

from realgap.actuators.chain import ActuatorChain, ChainStages, ChainTiming
from realgap.actuators.spec import resolve_joint_specs
from realgap.envs.deploy import DeployRuntime, MetadataMismatchError, ZeroPolicy
from realgap.envs.deploy.runtime import runtime_stages
from realgap.envs.format import MetadataError, PolicyMetadata
from realgap.envs.format.metadata import ActuatorGroup, load_metadata
from realgap.envs.format.stages import STAGE_RULES
from realgap.envs.robots.g1 import G1_ACTUATORS

pytestmark = pytest.mark.unit

N = len(NAMES)
STAGED = [i for i, j in enumerate(NAMES) if j.endswith(("hip_roll_joint", "knee_joint"))]  # the 7520-22 joints
ALL_ON = ChainStages(velocity_limit=True, position_filter=True, torque_filter=True, transmission=True)


def staged_specs():
    stages = dict(
        enforce_velocity_limit=True,
        position_filter_hz=20.0,
        torque_filter_hz=30.0,
        transmission_stiffness=1000.0,
        transmission_damping=0.5,
        backlash=0.01,
    )
    specs = {k: replace(s, **stages) if s.name == "g1_7520_22" else s for k, s in G1_ACTUATORS.items()}
    return resolve_joint_specs(NAMES, specs)


def staged_metadata() -> PolicyMetadata:
    group = ActuatorGroup.from_specs("g1", NAMES, staged_specs(), friction_in_chain=False)
    return g1_metadata(actuator_groups=(group,))


def test_stages_round_trip_through_the_schema_and_load():
    meta = staged_metadata()
    data = json.loads(meta.to_json())  # validated against the schema again by from_dict
    assert PolicyMetadata.from_dict(data) == meta
    stages = data["actuators"]["groups"][0]["stages"]
    assert stages["applied_by"] == STAGE_RULES
    assert stages["torque_filter_hz"][KNEE] == 30.0 and stages["torque_filter_hz"][0] is None  # null: ideal loop
    assert stages["velocity_cutoff"] == [i in STAGED for i in range(N)]
    assert stages["backlash"][KNEE] == 0.01 and stages["motor_inertia"][0] == 0.0  # 0 where rigid
    spec = staged_specs()[KNEE]
    assert meta.actuator_groups[0].armature[KNEE] == pytest.approx(0.0)  # N²·I_m − J_m: the chain integrates J_m
    assert stages["motor_inertia"][KNEE] == spec.reflected_inertia


def test_the_exported_chain_is_the_training_chain_bit_for_bit():
    # the training chain (from the specs) and the one rebuilt from the metadata give identical torques
    timing = ChainTiming(0.005)
    group = staged_metadata().actuator_groups[0]
    trained = ActuatorChain.from_specs(staged_specs(), timing, 1, generator=np.random.default_rng(1))
    rebuilt = ActuatorChain(
        group.joint_params(), timing, 1, delay_steps=group.delay_steps(0.005), generator=np.random.default_rng(1)
    )
    assert trained.stages == rebuilt.stages == ALL_ON
    rng = np.random.default_rng(0)
    for _ in range(20):
        q, qd, q_target = (rng.normal(size=(1, N)) for _ in range(3))
        a = trained.compute(q_target, np.zeros((1, N)), q, qd)
        b = rebuilt.compute(q_target, np.zeros((1, N)), q, qd)
        np.testing.assert_array_equal(a.tau_applied, b.tau_applied)


def test_an_old_export_loads_unchanged():
    meta = load_metadata("configs/policies/balance_g1")
    raw = json.loads(open("configs/policies/balance_g1/policy.json").read())
    (group,) = meta.actuator_groups
    assert group.stages is None and group.trained_stages == ChainStages()
    old = raw["actuators"]["groups"][0]
    # no field added or changed, except that kp/kd are written once: the datasheet specs' PD gains (equal to the
    # group's, checked on load) are left out
    specs = {name: {k: v for k, v in spec.items() if k != "gains"} for name, spec in old["datasheet"]["specs"].items()}
    assert group.to_dict(meta.rates.sim_dt) == {**old, "datasheet": {**old["datasheet"], "specs": specs}}
    params = group.joint_params()
    assert params.torque_filter_hz is None and params.transmission_stiffness is None  # the chain of before
    for simulated in (True, False):
        robot = StateRobot()
        robot.simulated = simulated
        runtime = DeployRuntime(meta, robot, ZeroPolicy(meta.action_dim), command_delay=False)
        assert runtime.chains[0][1].stages == ChainStages()


def test_runtime_applies_drive_stages_for_simulated_robots_and_the_command_filter_everywhere():
    assert runtime_stages(ALL_ON, simulated=True) == ALL_ON
    assert runtime_stages(ALL_ON, simulated=False) == ChainStages(position_filter=True)
    meta = staged_metadata()
    for simulated, want in ((True, ALL_ON), (False, ChainStages(position_filter=True))):
        robot = StateRobot()
        robot.simulated = simulated
        runtime = DeployRuntime(meta, robot, ZeroPolicy(N), command_delay=False)
        assert runtime.chains[0][1].stages == want
        runtime.step()
        assert np.isfinite(robot.sent[-1][1]).all()


class StepPolicy:
    """Zero action for the first policy step, then 0.4 on the knee (its target moves by 0.25·0.4 = 0.1 rad)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, obs):
        self.calls += 1
        a = np.zeros(N, dtype=np.float32)
        a[KNEE] = 0.4 if self.calls > 1 else 0.0
        return a


def test_position_robot_gets_the_command_filter():
    robot = StateRobot(mode="position")  # a real robot with its own servos, 5 ms control period
    runtime = DeployRuntime(staged_metadata(), robot, StepPolicy())
    runtime.step()
    runtime.step()
    beta = math.exp(-2 * math.pi * 20.0 * 0.005)  # 20 Hz corner at the robot's 5 ms control period: 0.533
    q_sent = robot.sent[4][1]  # first control period after the step of the target
    assert q_sent[KNEE] == pytest.approx(POSE[KNEE] + 0.1 - beta * 0.1)
    assert q_sent[0] == POSE[0]  # joints without a filter get their target unchanged


def _edited(edit) -> dict:
    data = json.loads(staged_metadata().to_json())
    edit(data["actuators"]["groups"][0])
    return data


def _set(field: str, i: int, value):
    def edit(group):
        group["stages"][field][i] = value

    return edit


def _stiff(group):
    group["stages"]["transmission_stiffness"] = [
        None if v is None else 5000.0 for v in group["stages"]["transmission_stiffness"]
    ]
    for spec in group["datasheet"]["specs"].values():
        if spec["transmission_stiffness"] is not None:  # on a link lighter than the motor the stiffness binds
            spec["transmission_stiffness"], spec["link_inertia"] = 5000.0, 0.001


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_set("torque_filter_hz", KNEE, 100.0), "torque_filter_hz [Hz] must be below the Nyquist rate 1/(2·dt) = 100"),
        (_set("position_filter_hz", KNEE, 150.0), "position_filter_hz [Hz] must be below the Nyquist rate"),
        (_set("backlash", KNEE, -0.01), "backlash [rad]"),
        (_set("backlash", 0, 0.01), "backlash only with a finite stiffness"),  # a rigid joint has no play
        (_set("transmission_damping", KNEE, -1.0), "transmission_damping [N·m·s/rad]"),
        (_stiff, "transmission_stiffness [N·m/rad] 5000.0 makes the elastic joint unstable"),
    ],
)
def test_unrealizable_stages_are_refused_by_name(edit, message):
    with pytest.raises(MetadataError, match="stages cannot be realized at the training physics step 0.005 s") as err:
        PolicyMetadata.from_dict(_edited(edit))
    assert message in str(err.value) and "'g1'" in str(err.value)


def test_command_filter_above_a_position_robots_nyquist_rate_is_refused():
    robot = StateRobot(dt=0.02, mode="position")  # 25 Hz Nyquist rate; the filter is 20 Hz -> fine
    DeployRuntime(staged_metadata(), robot, ZeroPolicy(N))
    group = ActuatorGroup.from_specs(
        "g1", NAMES, [replace(s, position_filter_hz=30.0) for s in staged_specs()], friction_in_chain=False
    )
    with pytest.raises(MetadataMismatchError, match="command filter: .*position_filter_hz .*25 Hz"):
        DeployRuntime(g1_metadata(actuator_groups=(group,)), robot, ZeroPolicy(N))
