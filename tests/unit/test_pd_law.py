"""Unit tier: the one PD law (numpy and torch, hand-computed), the one gain constructor (training specs and the
export's groups give the same chain parameters, G1 and Panda), kp written once in the export (round trip of both
layouts), and the quaternion order helpers of the SRBD boundary."""

from __future__ import annotations

import math

import numpy as np
import pytest

from realgap.actuators.models import clip_box, pd_torque
from realgap.actuators.params import JointParams
from realgap.actuators.spec import resolve_joint_specs
from realgap.envs.format.groups import ActuatorGroup
from realgap.envs.format.schema import MetadataError
from realgap.envs.robots import G1
from realgap.envs.robots.g1 import G1_ACTUATORS
from realgap.envs.robots.panda import PANDA_ACTUATORS
from realgap.envs.srbd.dynamics import quat_to_matrix, wxyz_from_xyzw, xyzw_from_wxyz

pytestmark = pytest.mark.unit

G1_JOINTS = list(G1.joint_names)
KNEE = G1_JOINTS.index("left_knee_joint")
PANDA_JOINTS = [f"joint{i}" for i in range(1, 8)] + ["finger_joint1", "finger_joint2"]

# kp = [100, 50] N·m/rad, kd = [2, 1] N·m·s/rad; q* = [0.5, -0.2], q = [0.4, 0]; q̇* = [0, 1], q̇ = [1, 0.5];
# τ_ff = [1, -1]: τ = [100·0.1 + 2·(0 − 1) + 1, 50·(−0.2) + 1·(1 − 0.5) − 1] = [9, −10.5] N·m
CASE = {"q_target": [0.5, -0.2], "qd_target": [0.0, 1.0], "q": [0.4, 0.0], "qd": [1.0, 0.5], "tau_ff": [1.0, -1.0]}
GAINS = {"kp": [100.0, 50.0], "kd": [2.0, 1.0]}


def test_pd_law_numpy_by_hand():
    a = {k: np.array(v) for k, v in CASE.items()}
    tau = pd_torque(**a, kp=np.array(GAINS["kp"]), kd=np.array(GAINS["kd"]))
    np.testing.assert_allclose(tau, [9.0, -10.5], rtol=0, atol=1e-12)
    no_ff = pd_torque(a["q_target"], a["qd_target"], a["q"], a["qd"], 100.0, 2.0)  # scalar gains, no feed-forward
    np.testing.assert_allclose(no_ff, [100 * 0.1 - 2.0, 100 * -0.2 + 2 * 0.5], atol=1e-12)  # [8, −19]
    # the simulator's order: PD first, then the box at the motor's peak torque (here 8 N·m: [9, −10.5] → [8, −8])
    np.testing.assert_allclose(clip_box(tau, np.array([8.0, 8.0])), [8.0, -8.0])


def test_pd_law_torch_by_hand_matches_numpy():
    torch = pytest.importorskip("torch")
    a = {k: torch.tensor([v], dtype=torch.float64) for k, v in CASE.items()}  # (E=1, J=2)
    tau = pd_torque(**a, kp=torch.tensor(GAINS["kp"], dtype=torch.float64), kd=np.array(GAINS["kd"]))
    assert isinstance(tau, torch.Tensor) and tau.shape == (1, 2)
    np.testing.assert_allclose(tau.numpy(), [[9.0, -10.5]], atol=1e-12)


@pytest.mark.parametrize(
    ("joints", "actuators", "in_chain"), [(G1_JOINTS, G1_ACTUATORS, False), (PANDA_JOINTS, PANDA_ACTUATORS, True)]
)
def test_the_export_group_builds_the_training_chains_parameters(joints, actuators, in_chain):
    specs = resolve_joint_specs(joints, actuators)
    trained = JointParams.from_specs(specs)
    group = ActuatorGroup.from_specs("g", joints, specs, friction_in_chain=in_chain)
    for g in (group, ActuatorGroup.from_dict(group.to_dict(0.005))):  # in memory, and read back from its JSON form
        exported = g.joint_params()
        for name in ("kp", "kd", "peak_torque", "no_load_speed", "coulomb_friction", "viscous_friction"):
            np.testing.assert_array_equal(getattr(exported, name), getattr(trained, name), err_msg=name)
        if in_chain:
            np.testing.assert_array_equal(exported.friction_velocity_scale, trained.friction_velocity_scale)
        for name in ("velocity_limit", "position_filter_hz", "torque_filter_hz", "transmission_stiffness"):
            got = getattr(exported, name)  # None: the export has no stage, the spec's value must be the neutral inf
            np.testing.assert_array_equal(
                np.full(len(joints), math.inf) if got is None else got, getattr(trained, name)
            )
    assert group.kp[3] == specs[3].kp > 0


def test_from_columns_turns_none_into_inf_and_refuses_unknown_fields():
    columns = {**GAINS, "peak_torque": [5, 6], "no_load_speed": [None, 3.0], "coulomb_friction": [0, 0]}
    p = JointParams.from_columns(columns | {"viscous_friction": [0, 0], "friction_velocity_scale": [1, 1]})
    np.testing.assert_array_equal(p.no_load_speed, [math.inf, 3.0])
    assert p.velocity_limit is None and p.kp.dtype == np.float64
    with pytest.raises(ValueError, match="no field"):
        JointParams.from_columns({"kq": [1.0]})


def _g1_group() -> ActuatorGroup:
    return ActuatorGroup.from_specs("g1", G1_JOINTS, resolve_joint_specs(G1_JOINTS, G1_ACTUATORS), False)


def test_export_writes_kp_once_and_reads_every_layout():
    group = _g1_group()
    written = group.to_dict(0.005)
    assert all("gains" not in s for s in written["datasheet"]["specs"].values())  # G1 specs: PD gains, left out
    assert len(written["kp"]) == len(G1_JOINTS)
    once = ActuatorGroup.from_dict(written)
    assert once == group and once.written_gain_conflicts == ()  # the specs get their gains back in memory
    twice = {**written, "datasheet": group.datasheet}  # an older export: the specs repeat kp/kd
    assert ActuatorGroup.from_dict(twice) == group and ActuatorGroup.from_dict(twice).written_gain_conflicts == ()
    with pytest.raises(MetadataError, match="gives no kp"):
        ActuatorGroup.from_dict({k: v for k, v in written.items() if k not in ("kp", "kd")})


def test_two_different_kp_values_are_named():
    twice = {**_g1_group().to_dict(0.005), "datasheet": _g1_group().datasheet}
    twice["kp"] = [250.0 if j == KNEE else v for j, v in enumerate(twice["kp"])]  # the knee's spec says 300
    conflicts = list(ActuatorGroup.from_dict(twice).written_gain_conflicts)
    assert conflicts == ["actuators.groups[g1].kp of left_knee_joint is 250.0 but its datasheet spec gives 300.0"]


def test_bandwidth_gains_stay_in_the_datasheet():
    group = ActuatorGroup.from_specs("panda", PANDA_JOINTS, resolve_joint_specs(PANDA_JOINTS, PANDA_ACTUATORS), True)
    specs = group.to_dict(0.005)["datasheet"]["specs"].values()
    assert all("natural_freq_hz" in s["gains"] for s in specs)  # not kp: the joint's inertia turns them into kp


def test_quaternion_order_helpers():
    s = math.sqrt(0.5)
    yaw90_wxyz = np.array([s, 0.0, 0.0, s])  # +90° about z
    np.testing.assert_array_equal(xyzw_from_wxyz(yaw90_wxyz), [0.0, 0.0, s, s])
    np.testing.assert_array_equal(wxyz_from_xyzw(xyzw_from_wxyz(yaw90_wxyz)), yaw90_wxyz)
    batch = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])  # (E, 4) rows, as Isaac Lab hands them over
    np.testing.assert_array_equal(wxyz_from_xyzw(batch), [[4.0, 1.0, 2.0, 3.0], [8.0, 5.0, 6.0, 7.0]])
    # body x axis → world y, body y → world −x; a non-unit quaternion is normalized first
    np.testing.assert_allclose(quat_to_matrix(2.0 * yaw90_wxyz), [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)
    np.testing.assert_array_equal(quat_to_matrix(np.array([1.0, 0, 0, 0])), np.eye(3))
