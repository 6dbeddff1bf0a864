"""The evaluation's input rules, called directly (scripts/evaluate.py only parses and prints)."""

from pathlib import Path

import pytest

from realgap.envs.eval.robustness.evaluation import (
    EvalRequest,
    check_compliant_alone,
    choose_factors,
    parse_heatmap,
    resolve_inputs,
    summary_lines,
)

pytestmark = pytest.mark.unit
AVAILABLE = ["payload_kg", "push_mps", "command_delay_s", "backlash_rad"]


def test_factors_default_to_every_available_one_and_are_checked():
    assert choose_factors(None, AVAILABLE, "T") == AVAILABLE
    assert choose_factors("push_mps,payload_kg", AVAILABLE, "T") == ["push_mps", "payload_kg"]
    with pytest.raises(ValueError, match=r"factors \['object_mass_scale'\] are not available for T"):
        choose_factors("object_mass_scale", AVAILABLE, "T")
    with pytest.raises(ValueError):  # not a factor at all
        choose_factors("gravity", AVAILABLE, "T")


def test_compliant_factors_are_swept_alone_once_a_stand_in_is_built():
    check_compliant_alone(["backlash_rad"], {"hip_roll_knee": (1200.0, 0.5)})
    check_compliant_alone(["backlash_rad", "push_mps"], {})  # the robot is compliant already: one robot for both
    with pytest.raises(ValueError, match=r"\['backlash_rad'\] build the joints compliant.*\['push_mps'\]"):
        check_compliant_alone(["backlash_rad", "push_mps"], {"hip_roll_knee": (1200.0, 0.5)})


@pytest.mark.parametrize(
    ("text", "factors", "axes"),
    [
        (None, ["push_mps", "payload_kg"], ("push_mps", "payload_kg")),  # both swept: the default heatmap
        (None, ["push_mps"], None),
        ("none", ["push_mps", "payload_kg"], None),
        ("payload_kg,push_mps", ["push_mps", "payload_kg"], ("payload_kg", "push_mps")),
    ],
)
def test_heatmap_axes(text, factors, axes):
    assert parse_heatmap(text, factors) == axes


@pytest.mark.parametrize("text", ["push_mps", "push_mps,push_mps", "push_mps,command_delay_s"])
def test_a_heatmap_needs_two_different_swept_factors(text):
    with pytest.raises(ValueError, match="--heatmap needs two different factors"):
        parse_heatmap(text, ["push_mps", "payload_kg"])


def test_inputs_are_checked_before_anything_is_built(tmp_path):
    with pytest.raises(ValueError, match="give at least one --checkpoint or --policy, or --zero_action"):
        resolve_inputs(EvalRequest())
    task, policies, out = resolve_inputs(EvalRequest(zero_action=True, out=str(tmp_path / "o")))
    assert task == "Realgap-Balance-G1-Play-v0" and policies == {"zero action": None} and out == tmp_path / "o"
    with pytest.raises(ValueError, match="2 --label for 0 --checkpoint/--policy"):
        resolve_inputs(EvalRequest(zero_action=True, label=["a", "b"]))
    assert not any(tmp_path.iterdir())


def test_the_summary_names_each_policy_and_factor():
    reference = {"zero action": {"success_ci95": [0.1, 0.4], "success_rate": 0.25, "episodes": 8}}
    factors = {"push_mps": {"policies": {"zero action": [{"value": 0.5, "success_rate": 0.5}]}}}
    report = {"success": "survival to the time-out", "wall_s": 1.5, "reference": reference, "factors": factors}
    assert summary_lines(report, Path("o"), 2) == [
        "[realgap] zero action: survival=0.250 (95 % CI 0.100-0.400, 8 episodes) under the task's own draws "
        "(reference)",
        "[realgap]             push_mps  0.5:0.50",
        "[realgap] wrote o/report.json and 2 plots in 1.5 s",
    ]
