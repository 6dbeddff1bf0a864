"""An export evaluated in an env whose action terms differ only in the nominal pose or scale of a joint-position term
(``envs/export/actions.py:action_map``): the export's joint targets reach the env's terms unchanged; anything else is
refused by name."""

from __future__ import annotations

import re

import numpy as np
import pytest

from realgap.envs.deploy.actions import Actions, ActionTerm
from realgap.envs.export.actions import ExportError, action_map

pytestmark = pytest.mark.unit

NAMES = ("hip", "knee", "ankle")
GRIPPER = ActionTerm("gripper", "binary_joint_position", 3, 4, ("finger",), {"open": [0.04], "close": [0.0],
                     "threshold": 0.0}, "q_target = close if a < threshold else open", "m")  # fmt: skip


def term(offset, scale, clip=(-2.0, 2.0), name="joint_pos") -> ActionTerm:
    params = {"scale": list(scale), "offset": list(offset), "clip_min": [clip[0]] * 3, "clip_max": [clip[1]] * 3}
    return ActionTerm(name, "joint_position_offset", 0, 3, NAMES, params, "q = clip(offset + scale * a)", "rad")


def _pattern_value(table: dict[str, float], joint: str) -> float:
    return next((v for pattern, v in table.items() if re.fullmatch(pattern, joint)), 0.0)


def targets(t: ActionTerm, a: np.ndarray) -> np.ndarray:
    return t.array("offset") + t.array("scale") * a


def test_identical_terms_need_no_map():
    t = term([-0.3, 0.7, -0.4], [0.07, 0.12, 0.04])
    assert action_map(Actions((t, GRIPPER)), Actions((t, GRIPPER))) is None


def test_another_nominal_pose_and_scale_reach_the_same_targets():
    crouch = term([-0.84, 1.58, -0.82], [0.07, 0.12, 0.04])
    stance = term([-0.31, 0.67, -0.36], [0.05, 0.10, 0.08])
    gain, shift = action_map(Actions((crouch, GRIPPER)), Actions((stance, GRIPPER)))
    rng = np.random.default_rng(0)
    for a in rng.uniform(-4, 4, size=(5, 4)):
        a_env = gain * a + shift
        np.testing.assert_allclose(targets(stance, a_env[:3]), targets(crouch, a[:3]), atol=1e-12)
        assert a_env[3] == a[3]  # the gripper term is the same in both: passed through
    np.testing.assert_allclose(targets(stance, shift[:3]), crouch.array("offset"))  # a = 0 holds the crouch


@pytest.mark.parametrize(
    "other,match",
    [
        (term([0, 0, 0], [1, 1, 1], clip=(-1.0, 1.0)), "differs from the env's beyond its scale and offset"),
        (term([0, 0, 0], [1, 1, 1], name="legs"), "are not the env's"),
        (term([0, 0, 0], [0, 1, 1]), "scale has zeros"),
    ],
)
def test_other_differences_are_refused(other, match):
    with pytest.raises(ExportError, match=match):
        action_map(Actions((term([0.1, 0.1, 0.1], [1, 1, 1]), GRIPPER)), Actions((other, GRIPPER)))
    gripper = ActionTerm("gripper", "binary_joint_position", 3, 4, ("finger",), {"open": [0.05], "close": [0.0],
                         "threshold": 0.0}, "q_target = close if a < threshold else open", "m")  # fmt: skip
    t = term([0, 0, 0], [1, 1, 1])
    with pytest.raises(ExportError, match="'gripper'"):
        action_map(Actions((t, GRIPPER)), Actions((t, gripper)))


def test_stance_metadata_makes_the_zero_action_hold_the_tasks_stance():
    """On MuJoCo the baseline of an export trained around another nominal pose is the task's zero action (the stance),
    as in Isaac Lab; for an export of the task as defined nothing changes."""
    from dataclasses import replace
    from pathlib import Path

    from realgap.envs.deploy import load_metadata
    from realgap.envs.deploy.sim2sim import stance_metadata
    from realgap.envs.robots.g1 import G1_CROUCH_TARGETS

    meta = load_metadata(Path(__file__).resolve().parents[2] / "configs" / "policies" / "balance_g1" / "policy.onnx")
    assert stance_metadata(meta) is meta
    (t,) = meta.actions.terms
    crouch_pose = [_pattern_value(G1_CROUCH_TARGETS, j) for j in t.joint_names]
    crouched_term = replace(t, params={**t.params, "offset": crouch_pose})
    crouched = replace(meta, actions=replace(meta.actions, terms=(crouched_term,)))
    assert crouched.actions.terms[0].params["offset"] != t.params["offset"]
    back = stance_metadata(crouched)
    assert back.actions == meta.actions and back.joint_names == meta.joint_names
