"""Unit tier: the metadata's two queries every consumer shares: a per-joint array of an actuator-group field in the
order a caller asks for (:meth:`PolicyMetadata.joint_array`), and whether an export is a balance export
(:attr:`PolicyMetadata.is_balance`), on hand-made metadata and on the shipped exports."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from test_deploy import MDP, g1_metadata, g1_robot, joint_pos_term

from realgap.envs.format import MetadataError, PolicyMetadata, load_metadata
from realgap.envs.format.metadata import Actions, ActuatorGroup, ObsTerm
from realgap.envs.format.observations import TERM_INFO

pytestmark = pytest.mark.unit
POLICIES = Path(__file__).resolve().parents[2] / "configs" / "policies"
NAMES = ("a", "b", "c")


def _group(name: str, joints: tuple[str, ...], peak: tuple[float, ...], armature: tuple[float, ...]) -> ActuatorGroup:
    n = len(joints)
    return ActuatorGroup(
        name=name,
        joint_names=joints,
        kp=(10.0,) * n,
        kd=(1.0,) * n,
        peak_torque=peak,
        no_load_speed=(None,) * n,
        continuous_torque=peak,
        velocity_limit=(20.0,) * n,
        armature=armature,
        coulomb_friction=(0.0,) * n,
        viscous_friction=(0.0,) * n,
        friction_velocity_scale=None,
        friction_applied_by="simulator",
        command_delay_s=(0.0, 0.0),
    )


def three_joints(**changes) -> PolicyMetadata:
    """Joints a, b, c; group "legs" drives b then a (another order than the export's), group "arm" drives c."""
    quantity, units, frame = TERM_INFO["joint_pos_rel"]
    obs = ObsTerm("joint_pos", "policy", f"{MDP}:joint_pos_rel", 0, 3, quantity, units, frame, joint_names=NAMES)
    groups = (_group("legs", ("b", "a"), (139.0, 88.0), (0.02, 0.01)), _group("arm", ("c",), (25.0,), (0.003,)))
    return g1_metadata(
        joint_names=NAMES,
        joint_types=("hinge",) * 3,
        default_joint_pos=(0.0,) * 3,
        default_joint_vel=(0.0,) * 3,
        joint_pos_lower=(None,) * 3,
        joint_pos_upper=(None,) * 3,
        actions=Actions((joint_pos_term(NAMES, (0.0,) * 3),), None),
        actuator_groups=groups,
        observations=(obs,),
        obs_dim=3,
        **changes,
    )


def test_joint_array_follows_the_exports_joint_order_or_the_callers():
    meta = three_joints()
    np.testing.assert_array_equal(meta.joint_array("peak_torque"), [88.0, 139.0, 25.0])  # a (legs 2nd), b, c
    np.testing.assert_array_equal(meta.joint_array("armature"), [0.01, 0.02, 0.003])
    np.testing.assert_array_equal(meta.joint_array("peak_torque", ["c", "a"]), [25.0, 88.0])  # a robot's own order
    assert meta.joint_array("kp").dtype == np.float64 and meta.joint_array("kp", []).shape == (0,)


def test_joint_array_refuses_a_joint_no_group_drives_and_a_field_that_is_not_per_joint():
    meta = three_joints()
    with pytest.raises(MetadataError, match=r"no actuator group of Realgap-Balance-G1-v0 drives joints \['z'\]"):
        meta.joint_array("peak_torque", ["a", "z"])
    with pytest.raises(MetadataError, match=r"'friction_applied_by' is not a per-joint group array"):
        meta.joint_array("friction_applied_by")


def test_joint_array_on_a_shipped_export_reads_the_datasheet_by_name():
    meta = load_metadata(POLICIES / "balance_g1")
    peak = meta.joint_array("peak_torque")
    group, i = meta.group_of("left_knee_joint")
    assert peak[meta.joint_names.index("left_knee_joint")] == group.peak_torque[i] == 139.0  # the 7520-22 drive


def test_a_balance_export_has_a_floating_base_and_no_scene():
    from realgap.envs.eval.suite.schema import task_of

    meta = three_joints()
    assert meta.is_balance and task_of(meta) == "balance"  # the G1's robot facts: floating base, no scene
    welded = three_joints(robot=replace(g1_robot(), fixed_base=True))
    assert not welded.is_balance  # a fixed base cannot fall
    assert task_of(welded) == "fixed base, no scene"  # no suite's task: the suite's task check refuses it


@pytest.mark.parametrize(
    ("folder", "balance"),
    [
        ("balance_g1", True),
        ("balance_g1_70min", True),
        ("balance_g1_symmetry", True),
        ("grasp_franka", False),  # fixed base, scene facts
        ("grasp_franka_hand", False),
    ],
)
def test_is_balance_on_the_shipped_exports(folder: str, balance: bool):
    from realgap.envs.eval.suite.schema import task_of

    meta = load_metadata(POLICIES / folder)
    assert meta.is_balance is balance and task_of(meta) == ("balance" if balance else "grasp")
    assert ("Balance" in meta.task) is balance  # the task-name test it replaces agrees on every shipped export
