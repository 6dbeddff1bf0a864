"""The format's words for an action term (``realgap.envs.format.terms``) and the export's use of them: a term that
cannot describe itself is refused naming its class, a setting the format has no words for naming the term."""

import pytest
import torch

from realgap.envs.export.actions import ExportError, describe_term
from realgap.envs.format import terms

pytestmark = pytest.mark.unit


def test_float32_values_are_written_as_their_shortest_decimal():
    assert terms.f32(float(torch.tensor(0.312, dtype=torch.float32))) == 0.312  # not 0.31200000643730164
    assert terms.per_joint(0.25, 3) == [0.25, 0.25, 0.25]
    assert terms.per_joint(torch.tensor([[0.5, 1.5], [9.0, 9.0]]), 2) == [0.5, 1.5]  # env 0's row
    assert terms.optional_per_joint(None, 2) == [None, None]


def test_joint_position_offset_words_and_parameters():
    clip = torch.tensor([[[-1.0, 1.0], [-float("inf"), float("inf")]]])  # (E=1, n=2, 2); an infinite bound is null
    d = terms.joint_position_offset(("a", "b"), 0.5, torch.tensor([[0.1, -0.2]]), clip, None, ramp_s=0.0)
    assert d["type"] == "joint_position_offset" and d["joint_names"] == ("a", "b") and d["feed_forward"] is None
    assert d["params"] == {
        "scale": [0.5, 0.5],
        "offset": [0.1, -0.2],
        "clip_min": [-1.0, None],
        "clip_max": [1.0, None],
    }
    assert d["equation"].endswith("qd_target[j] = 0; tau_ff[j] = 0")
    ramped = terms.joint_position_offset(("a",), 1.0, 0.0, None, terms.gravity_feed_forward("torch"), ramp_s=1.0)
    assert ramped["params"]["ramp_s"] == 1.0 and "ramp_s" in ramped["equation"]
    assert "tau_ff[j] = g(q)[j] (feed_forward)" in ramped["equation"] and ramped["feed_forward"]["source"] == "torch"


class _Described:
    action_dim = 1

    def __init__(self, clipped: bool) -> None:
        self.clipped = clipped

    def export_description(self) -> dict:
        return terms.binary_joint_position(
            ("f1", "f2"), torch.tensor([0.04, 0.04]), torch.tensor([0.0, 0.0]), self.clipped
        )


def test_describe_term_adds_the_name_and_slice():
    term = describe_term("gripper", _Described(clipped=False), start=6)
    assert (term.name, term.type, term.start, term.stop) == ("gripper", "binary_joint_position", 6, 7)
    assert term.params == {"open": [0.04, 0.04], "close": [0.0, 0.0], "threshold": 0.0}


def test_a_setting_without_words_is_refused_naming_the_term():
    with pytest.raises(ExportError, match="action term 'gripper': a clipped binary action is not part of the format"):
        describe_term("gripper", _Described(clipped=True), start=0)


def test_a_term_class_that_cannot_describe_itself_is_refused_naming_it():
    class JointVelocityAction:  # a class without export_description(), e.g. one of Isaac Lab's own
        action_dim = 3

    with pytest.raises(ExportError, match="'arm' is a JointVelocityAction, .* no export_description"):
        describe_term("arm", JointVelocityAction(), start=0)


def test_relative_pose_commands_only():
    controller = {"command_type": "position", "use_relative_mode": True, "ik_method": "dls", "ik_params": None}
    with pytest.raises(terms.TermDescriptionError, match="command_type 'position'"):
        terms.ee_pose_delta(("j",), "hand", None, 1.0, 0.0, 3, controller, None)
