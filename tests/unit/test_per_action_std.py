"""Per-joint initial exploration std (RealgapRunner's ``actor_init_std_by_joint``): which actions it sets, and what
it refuses."""

import pytest
import torch

from realgap.envs.robots.g1 import G1_JOINT_NAMES
from realgap.envs.run.runner import per_action_std

pytestmark = pytest.mark.unit


def test_sets_only_the_matched_joints():
    names = list(G1_JOINT_NAMES)
    base = torch.full((len(names),), 0.1)
    std = per_action_std(names, base, {".*_hip_pitch_joint": 0.3, "waist_pitch_joint": 0.25})
    for i, name in enumerate(names):
        expected = 0.3 if name.endswith("_hip_pitch_joint") else 0.25 if name == "waist_pitch_joint" else 0.1
        assert std[i].item() == pytest.approx(expected), name
    assert torch.all(base == 0.1)  # the input is not changed in place


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"no_such_joint": 0.3}, "Not all regular expressions are matched"),
        ({".*_hip_pitch_joint": 0.0}, "must be > 0"),
        ({".*_hip_pitch_joint": 0.3, "left_hip_.*": 0.2}, "Multiple matches"),
    ],
)
def test_refuses_what_would_train_silently_otherwise(overrides, message):
    names = list(G1_JOINT_NAMES)
    with pytest.raises(ValueError, match=message):
        per_action_std(names, torch.full((len(names),), 0.1), overrides)


def test_refuses_a_name_count_that_is_not_the_action_count():
    with pytest.raises(ValueError, match="joint names for"):
        per_action_std(["a", "b"], torch.full((3,), 0.1), {"a": 0.2})


def test_action_joint_names_follow_the_action_terms_and_refuse_non_joint_terms():
    from types import SimpleNamespace

    from realgap.envs.run.runner import action_joint_names

    def env(*terms):
        by_name = {f"t{i}": t for i, t in enumerate(terms)}
        manager = SimpleNamespace(active_terms=list(by_name), get_term=by_name.__getitem__)
        return SimpleNamespace(unwrapped=SimpleNamespace(action_manager=manager))

    arm = SimpleNamespace(_joint_names=["a1", "a2"], action_dim=2)
    gripper = SimpleNamespace(_joint_names=["g"], action_dim=1)
    assert action_joint_names(env(arm, gripper)) == ["a1", "a2", "g"]
    ee_increment = SimpleNamespace(action_dim=6)  # an end-effector pose increment commands no joint per action
    with pytest.raises(ValueError, match="does not command one joint per action"):
        action_joint_names(env(ee_increment, gripper))
