"""Unit tier: the randomization width (ranges narrowed about their midpoints), the level rule shared by the curricula,
and the profile's ``width_curriculum`` section."""

import dataclasses

import pytest
import torch

pytestmark = pytest.mark.unit


def test_narrow_keeps_the_midpoint_and_scales_the_half_width():
    from realgap.envs.dr.width import narrow

    assert narrow(0.8, 1.2, 1.0) == (0.8, 1.2)
    assert narrow(0.8, 1.2, 0.0) == pytest.approx((1.0, 1.0))
    assert narrow(2.0, 3.5, 0.5) == pytest.approx((2.375, 3.125))  # a range that excludes the datasheet's 1
    lo, hi = narrow(torch.tensor([0.0, 1.0]), torch.tensor([2.0, 1.0]), 0.25)
    assert torch.allclose(lo, torch.tensor([0.75, 1.0])) and torch.allclose(hi, torch.tensor([1.25, 1.0]))
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match=r"width must be in \[0, 1\]"):
            narrow(0.0, 1.0, bad)


def test_narrow_steps_rounds_inward_to_whole_steps():
    from realgap.envs.dr.width import narrow_steps

    assert narrow_steps(0, 4, 1.0) == (0, 4)
    assert narrow_steps(0, 4, 0.0) == (2, 2)
    assert narrow_steps(0, 4, 0.5) == (1, 3)
    assert narrow_steps(0, 3, 0.0) == (1, 2)  # no whole middle step: the two middle ones
    assert narrow_steps(1, 4, 0.4) == (2, 3)
    assert narrow_steps(2, 2, 0.3) == (2, 2)


def test_narrow_randomization_narrows_every_range_and_keeps_the_rest():
    from realgap.envs.dr.inertia_sampling import InertiaRandomization
    from realgap.envs.dr.width import narrow_randomization

    r = InertiaRandomization(
        mass_scale=(0.8, 1.2),
        com_shift_m=((-0.02, 0.02), (0.0, 0.0), (-0.01, 0.03)),
        com_moved_fraction=0.3,
        payload_mass_kg=(0.0, 3.0),
        payload_random_rotation=True,
    )
    assert narrow_randomization(r, 1.0) is r
    mid = narrow_randomization(r, 0.0)
    assert mid.mass_scale == pytest.approx((1.0, 1.0)) and mid.payload_mass_kg == pytest.approx((1.5, 1.5))
    assert mid.com_shift_m[2] == pytest.approx((0.01, 0.01)) and mid.com_moved_fraction == 0.3
    assert mid.payload_random_rotation is True
    half = narrow_randomization(r, 0.5)
    assert half.mass_scale == pytest.approx((0.9, 1.1)) and half.com_shift_m[0] == pytest.approx((-0.01, 0.01))


def test_a_narrowed_draw_uses_the_same_generator_state_and_stays_inside():
    from realgap.envs.dr.events import draw_columns
    from realgap.envs.dr.sampling import make_generator

    lo, hi = torch.tensor([0.5, 2.0]), torch.tensor([1.5, 3.5])
    full = draw_columns(lo, hi, 1000, make_generator(3, "cpu"))
    assert torch.equal(draw_columns(lo, hi, 1000, make_generator(3, "cpu"), 1.0), full)
    quarter = draw_columns(lo, hi, 1000, make_generator(3, "cpu"), 0.25)
    mid = 0.5 * (lo + hi)
    assert torch.allclose(quarter - mid, 0.25 * (full - mid), atol=1e-6)  # the same draw, scaled toward the middle
    assert bool(((quarter - mid).abs() <= 0.25 * 0.5 * (hi - lo) + 1e-6).all())
    assert torch.allclose(draw_columns(lo, hi, 5, make_generator(3, "cpu"), 0.0), mid.expand(5, 2))


def test_level_controller_moves_by_its_rule():
    from realgap.envs.dr.width import LevelController

    c = LevelController(step=0.25, promote=0.8, demote=0.5, min_episodes=10)
    assert c.update(6, 6) == 0.0  # not enough episodes yet
    assert c.update(4, 3) == 0.25  # 9 of 10 survived
    assert c.update(10, 6) == 0.25  # between demote and promote: stays
    assert c.update(10, 4) == 0.0  # below demote
    assert c.update(10, 1) == 0.0  # floored at 0
    for _ in range(6):
        c.update(10, 10)
    assert c.level == 1.0  # capped at 1
    with pytest.raises(ValueError, match="survived <= ended"):
        c.update(3, 4)
    for kwargs in (dict(step=0.0), dict(promote=0.4), dict(min_episodes=0)):
        with pytest.raises(ValueError, match="a curriculum needs"):
            LevelController(**(dict(step=0.1, promote=0.8, demote=0.5, min_episodes=1) | kwargs))


def test_a_survival_curriculum_refuses_an_unknown_signal_before_touching_the_env():
    from realgap.envs.dr.curriculum import SurvivalCurriculum
    from realgap.envs.dr.width import LevelController

    control = LevelController(step=0.1, promote=0.8, demote=0.5, min_episodes=1)
    with pytest.raises(ValueError, match=r"signal 'reward': expected one of \['survival', 'success'\]"):
        SurvivalCurriculum(None, None, control, "reward")  # a subclass passing its own signal, not the profile's


def test_profile_width_curriculum_parses_round_trips_and_refuses_bad_values():
    from realgap.envs.dr.profile import WidthCurriculumSpec, load_dr_profile, parse_dr_profile

    wide = load_dr_profile("wide")
    assert wide.width_curriculum is None and "width_curriculum" not in wide.to_dict()
    spec = {"start_width": 0.0, "step": 0.1, "promote": 0.8, "demote": 0.5, "min_episodes": 256}
    data = wide.to_dict() | {"width_curriculum": spec}
    parsed = parse_dr_profile(data, "w.yaml")
    assert parsed.width_curriculum == WidthCurriculumSpec(0.0, 0.1, 0.8, 0.5, 256, "survival")  # the default signal
    with pytest.raises(ValueError, match=r"signal: expected one of \['survival', 'success'\], got 'reward'"):
        WidthCurriculumSpec(0.0, 0.1, 0.8, 0.5, 256, "reward")  # built in code, as the curriculum term builds it
    success = parse_dr_profile(data | {"width_curriculum": spec | {"signal": "success"}}, "w.yaml")
    assert success.width_curriculum.signal == "success" and parse_dr_profile(success.to_dict()) == success
    assert parse_dr_profile(parsed.to_dict()) == parsed
    for key, value, match in (
        ("start_width", 1.0, "no curriculum"),
        ("start_width", -0.1, r"in \[0, 1\]"),
        ("min_episodes", 0, "whole number >= 1"),
        ("min_episodes", 2.5, "whole number >= 1"),
        ("demote", 0.9, "a curriculum needs"),
        ("step", True, r"in \[0, 1\]"),
        ("signal", "reward", r"one of \['survival', 'success'\]"),
    ):
        with pytest.raises(ValueError, match=f"w.yaml.width_curriculum.*{match}"):
            parse_dr_profile(data | {"width_curriculum": spec | {key: value}}, "w.yaml")
    with pytest.raises(ValueError, match="unknown key"):
        parse_dr_profile(data | {"width_curriculum": spec | {"end_width": 0.5}}, "w.yaml")
    assert dataclasses.replace(parsed, width_curriculum=None) == wide


def test_wide_curriculum_is_wide_with_a_curriculum():
    from realgap.envs.dr.profile import load_dr_profile

    wide, lever = load_dr_profile("wide"), load_dr_profile("wide_curriculum")
    assert lever.width_curriculum is not None and lever.width_curriculum.start_width == 0.0
    same = dataclasses.replace(lever, name=wide.name, description=wide.description, width_curriculum=None)
    assert same == wide  # every section copied unchanged


def test_grasp_wide_curriculum_is_grasp_wide_with_a_success_curriculum():
    from realgap.envs.dr.profile import load_dr_profile

    wide, lever = load_dr_profile("grasp_wide"), load_dr_profile("grasp_wide_curriculum")
    spec = lever.width_curriculum
    assert (spec.start_width, spec.signal, lever.task) == (0.0, "success", "grasp")
    assert spec.demote < spec.promote < 0.8  # below the training success the chain without randomization ends at
    same = dataclasses.replace(lever, name=wide.name, description=wide.description, width_curriculum=None)
    assert same == wide  # every section copied unchanged


def test_nominal_holding_is_nominal_with_a_holding_drive():
    from realgap.envs.dr.profile import load_dr_profile, parse_dr_profile

    nominal, lever = load_dr_profile("nominal"), load_dr_profile("nominal_holding")
    assert lever.holding_drive_fraction == 0.25
    same = dataclasses.replace(lever, name=nominal.name, description=nominal.description, holding_drive_fraction=None)
    assert same == nominal
    with pytest.raises(ValueError, match=r"holding_drive_fraction: expected a number in \[0, 1\]"):
        parse_dr_profile(lever.to_dict() | {"holding_drive_fraction": 1.5}, "h.yaml")
