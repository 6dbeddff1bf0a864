"""Unit tests of the DR profile schema and the shipped profiles (realgap.envs.dr.profile, configs/dr/*.yaml)."""

import dataclasses

import pytest
import torch
import yaml

from realgap.envs.dr.inertia import BodyInertia, box_inertia_c, consistency_mask
from realgap.envs.dr.inertia_sampling import sample_inertia
from realgap.envs.dr.profile import (
    ContactSolrefGroup,
    DRProfile,
    InertiaGroup,
    check_timeconst_range,
    list_dr_profiles,
    load_dr_profile,
    parse_dr_profile,
)

SHIPPED = ("none", "nominal", "grasp_nominal", "wide", "grasp_wide")
# Priority order (largest expected sim-to-real error first): payload, link inertia, joint friction, actuator
# gains/saturation, command delay, contact friction, contact geometry, initial object pose (+ pushes for balance).
PRIORITY = (
    "payload",
    "link_inertia",
    "joint_friction",
    "actuator",
    "command_delay_s",
    "contact_friction",
    "contact_geometry",
    "initial_pose",
    "push",
)


SOLREF = {"asset": "robot", "bodies": ".*_ankle_roll_link", "timeconst_s": [0.01, 0.04], "dampratio": [0.5, 1.5]}


def minimal(**overrides) -> dict:
    data = {
        "name": "test",
        "description": "a test profile",
        "task": None,
        "payload": [],
        "link_inertia": [],
        "joint_friction": [],
        "actuator": [],
        "command_delay_s": [0.0, 0.0],
        "contact_friction": [],
        "contact_geometry": [],
        "initial_pose": [],
        "push": None,
    }
    data.update(overrides)
    return data


def error_of(data: dict) -> str:
    with pytest.raises(ValueError) as info:
        parse_dr_profile(data, "test.yaml")
    return str(info.value)


@pytest.mark.unit
def test_shipped_profiles_load_validate_and_round_trip():
    assert set(SHIPPED) <= set(list_dr_profiles())
    for name in SHIPPED:
        profile = load_dr_profile(name)
        assert profile.name == name
        assert parse_dr_profile(profile.to_dict()) == profile
        assert parse_dr_profile(yaml.safe_load(yaml.safe_dump(profile.to_dict()))) == profile  # run-folder copy
    field_names = [f.name for f in dataclasses.fields(DRProfile)]
    # the optional sections come last (fields with a default); their terms follow dr_actuator / dr_contact_friction
    assert tuple(field_names[3:]) == (
        *PRIORITY,
        "actuator_stages",
        "contact_solref",
        "actuator_model",
        "holding_drive_fraction",
        "width_curriculum",
    )


@pytest.mark.unit
def test_none_profile_randomizes_nothing():
    profile = load_dr_profile("none")
    groups = [getattr(profile, f) for f in (*PRIORITY, "contact_solref") if f not in ("command_delay_s", "push")]
    assert all(g == () for g in groups) and profile.command_delay_s == (0.0, 0.0) and profile.push is None


@pytest.mark.unit
def test_actuator_model_defaults_to_the_chain_and_names_one_of_three():
    assert parse_dr_profile(minimal()).actuator_model == "chain"  # absent: the explicit chain
    assert {n: load_dr_profile(n).actuator_model for n in list_dr_profiles() if n.startswith("ablation_")}.items() >= {
        ("ablation_a", "implicit_pd"),
        ("ablation_b", "chain_no_delay"),
        ("ablation_g1_c", "chain"),
    }
    for model in ("chain", "chain_no_delay", "implicit_pd"):
        profile = parse_dr_profile(minimal(actuator_model=model))
        assert parse_dr_profile(yaml.safe_load(yaml.safe_dump(profile.to_dict()))).actuator_model == model
    message = error_of(minimal(actuator_model="ideal"))
    assert message == (
        "test.yaml.actuator_model: expected one of ['chain', 'chain_no_delay', 'implicit_pd'], got 'ideal'"
    )


@pytest.mark.unit
def test_shipped_inertia_groups_sample_consistent_bodies():
    # A 2 kg box (0.1 x 0.2 x 0.3 m, CoM offset 5 cm) stands in for any matched link or object.
    mass = torch.full((256,), 2.0, dtype=torch.float64)
    size = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64).expand(256, 3)
    body = BodyInertia(
        mass, torch.tensor([0.05, 0.0, 0.0], dtype=torch.float64).expand(256, 3), box_inertia_c(mass, size)
    )
    for name in SHIPPED:
        profile = load_dr_profile(name)
        for group in profile.payload + profile.link_inertia:
            sample = sample_inertia(body, group.randomization(), torch.Generator().manual_seed(0))
            assert bool(consistency_mask(sample, rtol=0.0).all()), (name, group)
    nominal, wide = load_dr_profile("nominal"), load_dr_profile("wide")
    assert nominal.push is not None and wide.push is not None
    assert wide.push.velocity_mps[0][1] > nominal.push.velocity_mps[0][1]  # wide is wider than nominal


@pytest.mark.unit
def test_unknown_keys_are_rejected_listing_the_known_ones():
    message = error_of(minimal(pushes=None))
    assert "unknown key(s) ['pushes']" in message and "'push'" in message and "'payload'" in message
    group = {"asset": "robot", "bodies": ".*", "mass_scal": [0.9, 1.1]}
    message = error_of(minimal(link_inertia=[group]))
    assert "test.yaml.link_inertia[0]: unknown key(s) ['mass_scal']" in message and "'mass_scale'" in message
    message = error_of(minimal(push={"interval_s": [1, 2], "velocity_mps": {"x": [0, 1], "w": [0, 1]}}))
    assert "unknown key(s) ['w']" in message and "['x', 'y', 'z']" in message


@pytest.mark.unit
@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"command_delay_s": [0.02, 0.01]}, "command_delay_s: lo 0.02 > hi 0.01 s"),
        ({"command_delay_s": [-0.01, 0.01]}, "command_delay_s: lo -0.01 s must be >= 0"),
        ({"actuator": [{"asset": "robot", "joints": ".*", "kp_scale": [0.0, 1.1]}]}, "kp_scale: lo 0 must be > 0"),
        ({"actuator": [{"asset": "robot", "joints": ".*", "kd_scale": [-1, 1]}]}, "kd_scale: lo -1 must be > 0"),
        ({"link_inertia": [{"asset": "robot", "bodies": ".*", "mass_scale": [1.2, 0.8]}]}, "lo 1.2 > hi 0.8"),
        ({"payload": [{"asset": "robot", "bodies": "torso", "payload_mass_kg": [-1, 1]}]}, "lo -1 kg must be >= 0"),
        ({"joint_friction": [{"asset": "robot", "joints": ".*", "coulomb_nm": [-0.1, 0.3]}]}, "N·m must be >= 0"),
        ({"contact_geometry": [{"asset": "object", "bodies": ".*", "size_scale": [0, 1]}]}, "must be > 0"),
        ({"contact_friction": [{"asset": "robot", "bodies": "foot("}]}, "invalid regex 'foot('"),
        ({"contact_friction": [{"asset": "robot", "bodies": ".*"}]}, "missing required key 'friction'"),
        ({"payload": [{"asset": "robot", "bodies": [], "payload_mass_kg": [0, 1]}]}, "non-empty list of regexes"),
        ({"link_inertia": [{"asset": "robot", "bodies": ".*", "com_moved_fraction": 0}]}, "in (0, 1]"),
        ({"push": {"interval_s": [0.0, 1.0]}}, "interval_s: lo 0 s must be > 0"),
        ({"task": "walk"}, "expected one of ['balance', 'grasp'] or null"),
        ({"payload": {"asset": "robot"}}, "expected a list of groups"),
        ({"initial_pose": [{"asset": "object", "yaw_rad": [-1]}]}, "expected a range [lo, hi]"),
        ({"contact_solref": [SOLREF | {"timeconst_s": [0.04, 0.02]}]}, "contact_solref[0].timeconst_s: lo 0.04 > hi"),
        ({"contact_solref": [SOLREF | {"timeconst_s": [0.0, 0.02]}]}, "timeconst_s: lo 0 s must be > 0"),
        ({"contact_solref": [SOLREF | {"dampratio": [-0.5, 1.0]}]}, "contact_solref[0].dampratio: lo -0.5 must be > 0"),
        ({"contact_solref": [SOLREF | {"dampratio": [1.2, 0.8]}]}, "dampratio: lo 1.2 > hi 0.8"),
        ({"contact_solref": [SOLREF | {"dampratio": [0.5, float("inf")]}]}, "range bounds must be finite"),
        ({"contact_solref": [SOLREF | {"timeconst_s": 0.02}]}, "timeconst_s: expected a range [lo, hi], got 0.02"),
        ({"contact_solref": [{"asset": "robot", "bodies": ".*"}]}, "randomizes nothing; give at least one of"),
        ({"contact_solref": [SOLREF | {"stiffness": [1, 2]}]}, "unknown key(s) ['stiffness']"),
    ],
)
def test_invalid_profiles_are_rejected_with_reason(overrides, fragment):
    message = error_of(minimal(**overrides))
    assert message.startswith("test.yaml") and fragment in message, message


@pytest.mark.unit
def test_missing_sections_and_unknown_names():
    data = minimal()
    del data["joint_friction"]
    assert "missing required key 'joint_friction'" in error_of(data)
    with pytest.raises(ValueError) as info:
        load_dr_profile("nominall")
    assert "unknown DR profile 'nominall'" in str(info.value) and "'grasp_nominal'" in str(info.value)


@pytest.mark.unit
def test_load_by_path_and_duplicate_keys(tmp_path):
    path = tmp_path / "mine.yaml"
    data = minimal(link_inertia=[{"asset": "robot", "bodies": ".*", "mass_scale": [0.9, 1.1]}])
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    profile = load_dr_profile(path)
    assert profile.link_inertia == (InertiaGroup(asset="robot", bodies=(".*",), mass_scale=(0.9, 1.1)),)
    assert profile.link_inertia[0].randomization().stretch == (1.0, 1.0)  # omitted field = not randomized
    path.write_text(yaml.safe_dump(data) + "push: null\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"duplicate key\(s\) \['push'\]"):
        load_dr_profile(str(path))


@pytest.mark.unit
def test_contact_solref_is_optional_round_trips_and_keeps_left_out_keys():
    assert parse_dr_profile(minimal()).contact_solref == ()  # absent: shipped profiles stay valid
    profile = parse_dr_profile(minimal(contact_solref=[SOLREF, {"asset": "robot", "bodies": "x", "dampratio": [1, 2]}]))
    first, second = profile.contact_solref
    assert first == ContactSolrefGroup("robot", (".*_ankle_roll_link",), (0.01, 0.04), (0.5, 1.5))
    assert second.timeconst_s is None and second.dampratio == (1.0, 2.0)  # left out: each collider keeps its own
    assert "timeconst_s" not in profile.to_dict()["contact_solref"][1]
    assert parse_dr_profile(yaml.safe_load(yaml.safe_dump(profile.to_dict()))) == profile


@pytest.mark.unit
def test_timeconst_under_two_physics_steps_is_refused_naming_the_step():
    # dt = 5 ms: MuJoCo clamps a time constant under 2 * 0.005 = 0.01 s up to 0.01 s
    check_timeconst_range("p: contact_solref[0].timeconst_s", (0.01, 0.04), 0.005)  # exactly 2 dt: accepted
    check_timeconst_range("p: contact_solref[0].timeconst_s", (0.0099999998, 0.04), 0.005)  # float32 0.01
    with pytest.raises(ValueError) as info:
        check_timeconst_range("p: contact_solref[0].timeconst_s", (0.008, 0.04), 0.005)
    message = str(info.value)
    assert message.startswith("p: contact_solref[0].timeconst_s: lo 0.008 s is shorter than 2 physics steps"), message
    assert "dt = 0.005 s" in message and "lo >= 0.01 s" in message


@pytest.mark.unit
def test_docs_contact_solref_example_parses():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "randomization.md").read_text(encoding="utf-8")
    block = next(b.split("\n", 1)[1] for b in text.split("```")[1::2] if b.startswith("yaml\ncontact_solref:"))
    profile = parse_dr_profile(minimal(**yaml.safe_load(block)), "docs/randomization.md")
    (group,) = profile.contact_solref
    check_timeconst_range("docs", group.timeconst_s, 0.005)  # admissible at the tasks' 5 ms step
