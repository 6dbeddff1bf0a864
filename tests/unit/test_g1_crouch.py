"""The G1's crouch (robot facts, the nominal pose of the balance task's crouch lever) recomputed from the MJCF by MuJoCo
kinematics: the whole-body CoM as far ahead of the ankles as in the stance, soles flat, the pelvis and CoM heights
quoted, and servo targets that hold it against the static joint torques; and the balance task's stance term, which
measures the deviation from whatever pose the action's offset names."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from realgap.envs.robots.g1 import (
    G1,
    G1_ACTUATORS,
    G1_CROUCH_JOINT_POS,
    G1_CROUCH_ROOT_HEIGHT,
    G1_CROUCH_TARGETS,
    G1_DEFAULT_JOINT_POS,
    G1_FOOT_BODIES,
    G1_ROOT_HEIGHT,
)

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def g1():
    mujoco = pytest.importorskip("mujoco")
    model = mujoco.MjModel.from_xml_path(str(G1.mjcf_path()))
    return mujoco, model, mujoco.MjData(model)


def _value(table: dict[str, float], name: str) -> float:
    hits = [v for pattern, v in table.items() if re.fullmatch(pattern, name)]
    assert len(hits) <= 1, name
    return hits[0] if hits else 0.0


def _pose(g1, table):
    """Set the G1 upright at the origin in ``table``'s joint pose; (whole-body CoM, mean ankle position, lowest sole
    sphere z)."""
    mujoco, m, d = g1
    d.qpos[:] = 0.0
    d.qpos[3] = 1.0
    for j in range(1, m.njnt):
        d.qpos[m.jnt_qposadr[j]] = _value(table, m.joint(j).name)
    d.qvel[:] = 0.0
    mujoco.mj_forward(m, d)
    feet = [m.body(b).id for b in G1_FOOT_BODIES]
    spheres = [g for g in range(m.ngeom) if m.geom_bodyid[g] in feet and m.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE]
    sole_z = min(d.geom_xpos[g][2] - m.geom_size[g][0] for g in spheres)
    return d.subtree_com[0].copy(), np.mean([d.xpos[f] for f in feet], axis=0), sole_z


def test_crouch_keeps_the_com_over_the_feet_and_is_as_low_as_quoted(g1):
    com0, ankle0, sole0 = _pose(g1, G1_DEFAULT_JOINT_POS)
    com, ankle, sole = _pose(g1, G1_CROUCH_JOINT_POS)
    assert -sole0 == pytest.approx(G1_ROOT_HEIGHT, abs=1e-3)
    assert -sole == pytest.approx(G1_CROUCH_ROOT_HEIGHT, abs=1e-3)
    assert (com - ankle)[0] == pytest.approx((com0 - ankle0)[0], abs=1e-3)  # 3.2 cm ahead of the ankles in both
    assert com[2] - sole == pytest.approx(0.532, abs=2e-3) and com0[2] - sole0 == pytest.approx(0.669, abs=2e-3)
    # soles flat: hip + knee + ankle pitch as in the stance (the pelvis is upright in both)
    legs = ("_hip_pitch_joint", "_knee_joint", "_ankle_pitch_joint")
    assert sum(_value(G1_CROUCH_JOINT_POS, ".*" + j) for j in legs) == pytest.approx(
        sum(_value(G1_DEFAULT_JOINT_POS, ".*" + j) for j in legs), abs=2e-3
    )
    # within the joint ranges
    _, m, _ = g1
    for j in range(1, m.njnt):
        lo, hi = m.jnt_range[j]
        assert lo < _value(G1_CROUCH_JOINT_POS, m.joint(j).name) < hi, m.joint(j).name


def test_crouch_targets_hold_the_pose_against_the_static_joint_torques(g1):
    """q_target = q + tau / kp, tau the actuator torque that holds the pose with each sole carrying half the weight,
    vertically under the CoM: the PD servos then settle in the crouch rather than below it."""
    mujoco, m, d = g1
    com, _, sole = _pose(g1, G1_CROUCH_JOINT_POS)
    weight = m.body_subtreemass[0] * 9.81
    tau = d.qfrc_bias.copy()
    for foot in G1_FOOT_BODIES:
        b = m.body(foot).id
        jac = np.zeros((3, m.nv))
        mujoco.mj_jac(m, d, jac, None, np.array([com[0], d.xpos[b][1], sole]), b)
        tau -= jac.T @ np.array([0.0, 0.0, weight / 2])
    assert np.abs(tau[:6]).max() < 0.1  # the assumed contact forces balance the robot
    kp = {j: s.gains.kp for s in G1_ACTUATORS.values() for j in s.joint_names_expr}
    for j in range(1, m.njnt):
        name = m.joint(j).name
        if not any(name.endswith(s) for s in ("_hip_pitch_joint", "_knee_joint", "_ankle_pitch_joint")):
            assert _value(G1_CROUCH_TARGETS, name) == _value(G1_CROUCH_JOINT_POS, name), name
            continue
        gain = _value(kp, name)
        expected = _value(G1_CROUCH_JOINT_POS, name) + tau[m.jnt_dofadr[j]] / gain
        assert _value(G1_CROUCH_TARGETS, name) == pytest.approx(expected, abs=2e-3), name
    assert _value(G1_CROUCH_TARGETS, "left_knee_joint") < _value(G1_CROUCH_JOINT_POS, "left_knee_joint") - 0.05


def test_stance_term_measures_the_deviation_from_the_actions_offset():
    from realgap.tasks.balance.mdp import nominal_pose_deviation_l1

    q = torch.tensor([[0.1, -0.2, 0.3], [0.0, 0.0, 0.0]])
    term = SimpleNamespace(_joint_ids=[2, 0], _offset=torch.tensor([[0.5, 0.1], [0.0, 0.1]]))
    env = SimpleNamespace(
        action_manager=SimpleNamespace(get_term=lambda name: {"joint_pos": term}[name]),
        scene={"robot": SimpleNamespace(data=SimpleNamespace(joint_pos=SimpleNamespace(torch=q)))},
    )
    assert torch.allclose(nominal_pose_deviation_l1(env), torch.tensor([0.2 + 0.0, 0.0 + 0.1]))
    term._offset = 0.0  # Isaac Lab keeps a float offset as a float
    assert torch.allclose(nominal_pose_deviation_l1(env), torch.tensor([0.4, 0.0]))
    with pytest.raises(KeyError):
        nominal_pose_deviation_l1(env, action_name="other")
