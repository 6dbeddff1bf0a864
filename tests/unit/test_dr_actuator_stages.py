"""Unit tier: the ``actuator_stages`` section of DR profiles -- parsing, the physics-step checks it shares with the
actuator chain, the compliant stand-in and the per-env draws (no simulator)."""

import math

import pytest
import torch

from realgap.envs.dr.profile import load_dr_profile, parse_dr_profile
from realgap.envs.dr.stages import STAGE_FIELDS, check_stage_ranges, sample_stages, stage_param_value, with_transmission
from realgap.envs.robots.g1 import G1_ACTUATORS, G1_COMPLIANT_TRANSMISSION
from realgap.envs.robots.panda import PANDA_ACTUATORS, PANDA_COMPLIANT_TRANSMISSION

pytestmark = pytest.mark.unit
DT = 0.005  # the G1 tasks' physics step: Nyquist 1/(2·dt) = 100 Hz


def _profile(*groups):
    data = load_dr_profile("none").to_dict() | {"actuator_stages": list(groups)}
    return parse_dr_profile(data, "test.yaml")


def _error(*groups) -> str:
    with pytest.raises(ValueError) as info:
        _profile(*groups)
    return str(info.value)


def _group(**fields):
    return {"asset": "robot", "joints": ".*_knee_joint"} | fields


def test_absent_section_is_identity_and_round_trips():
    for name in ("none", "nominal", "wide", "grasp_nominal"):  # shipped before the section existed
        profile = load_dr_profile(name)
        assert profile.actuator_stages == () and parse_dr_profile(profile.to_dict()) == profile
    data = load_dr_profile("none").to_dict()
    del data["actuator_stages"]  # optional top-level key: absent = every chain as its specs built it
    assert parse_dr_profile(data).actuator_stages == ()
    group = _profile(_group(backlash_rad=[0.0, 0.002])).actuator_stages[0]
    assert group.ranges() == {"backlash_rad": (0.0, 0.002)}  # a field left out stays untouched (None)
    assert group.torque_filter_hz is None and "torque_filter_hz" not in group.ranges()
    example = load_dr_profile("actuator_stages")
    assert parse_dr_profile(example.to_dict()) == example and example.task == "balance"


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"backlash_rad": [-0.001, 0.002]}, "test.yaml.actuator_stages[0].backlash_rad: lo -0.001 rad must be >= 0"),
        ({"torque_filter_hz": [0.0, 50.0]}, "test.yaml.actuator_stages[0].torque_filter_hz: lo 0 Hz must be > 0"),
        ({"position_filter_hz": [60.0, 30.0]}, "position_filter_hz: lo 60 > hi 30 Hz"),
        ({"speed_limit_scale": [0.0, 1.0]}, "speed_limit_scale: lo 0 must be > 0"),
        ({"transmission_stiffness_scale": [-1.0, 1.0]}, "transmission_stiffness_scale: lo -1 must be > 0"),
        ({"backlash_deg": [0.0, 0.1]}, "unknown key(s) ['backlash_deg']"),
        ({}, "the group randomizes nothing; give at least one of ['torque_filter_hz'"),
    ],
)
def test_bad_values_are_refused_by_name(fields, fragment):
    message = _error(_group(**fields))
    assert fragment in message, message


def test_physics_step_checks_name_the_field_and_the_limit():
    knee_rigid = G1_ACTUATORS["hip_roll_knee"]
    knee = with_transmission(G1_ACTUATORS, G1_COMPLIANT_TRANSMISSION, DT)["hip_roll_knee"]
    where = "p: actuator_stages[0]"
    check_stage_ranges({"torque_filter_hz": (40.0, 99.0), "speed_limit_scale": (0.5, 1.0)}, [knee_rigid], DT, where)
    with pytest.raises(
        ValueError,
        match=r"^p: actuator_stages\[0\]\.torque_filter_hz \[40, 120\] Hz: .*"
        r"torque_filter_hz \[Hz\] must be below the Nyquist rate 1/\(2·dt\) = 100 Hz",
    ):
        check_stage_ranges({"torque_filter_hz": (40.0, 120.0)}, [knee_rigid], DT, where)
    with pytest.raises(ValueError, match=r"position_filter_hz \[30, 100\] Hz: .*Nyquist"):  # at the rate: refused
        check_stage_ranges({"position_filter_hz": (30.0, 100.0)}, [knee_rigid], DT, where)
    with pytest.raises(ValueError, match=r"backlash_rad \[0, 0.002\] rad: spec 'g1_7520_22' is built rigid"):
        check_stage_ranges({"backlash_rad": (0.0, 0.002)}, [knee_rigid], DT, where)
    # Stand-in knee: k = 1200 N·m/rad, c = 0.5, J_m = 0.025102 (7520-22 reflected), J_l = 0.0289 kg·m² >= J_m: the
    # motor integrated implicitly in the spring is stable at any stiffness scale.
    assert knee.solver_armature == 0.0  # the chain integrates the whole reflected inertia behind the spring
    check_stage_ranges({"backlash_rad": (0.0, 0.01), "transmission_stiffness_scale": (0.5, 20.0)}, [knee], DT, where)
    with pytest.raises(ValueError, match=r"g1_2x5020_ankle.*unstable.*need transmission_damping < "):  # light link
        with_transmission(G1_ACTUATORS, {"ankles": (1200.0, 0.5)}, DT)


def test_panda_wrist_stand_in_is_bounded_by_its_light_link():
    # Joint 7: J_m = armature 0.1, J_l = 0.0061 kg·m², c = 0.2: k < (4/(1/0.0061 − 1/0.1) − 2·0.2·0.005)/0.005² =
    # (4/153.93 − 0.002)/2.5e-5 = 959.4 N·m/rad, i.e. a scale below 1.599 of the 600 N·m/rad stand-in.
    wrist = with_transmission(PANDA_ACTUATORS, PANDA_COMPLIANT_TRANSMISSION, DT)
    assert [g for g, s in wrist.items() if s.transmission_stiffness is not None] == ["joint5", "joint6", "joint7"]
    assert all(wrist[g].solver_armature == 0.0 for g in ("joint5", "joint6", "joint7"))
    check_stage_ranges({"transmission_stiffness_scale": (0.25, 1.5)}, [wrist["joint7"]], DT, "p")
    with pytest.raises(ValueError, match=r"'panda_joint7'.*960.0 makes the elastic joint unstable.*need k < 959.4"):
        check_stage_ranges({"transmission_stiffness_scale": (0.25, 1.6)}, [wrist["joint7"]], DT, "p")
    with pytest.raises(ValueError, match=r"'panda_joint2'.*closes on the motor"):  # kp sized on the heavy link
        with_transmission(PANDA_ACTUATORS, {"joint2": (600.0, 0.2)}, DT)


def test_draws_stay_in_range_reproduce_per_seed_and_scale_their_reference():
    lo, hi = torch.tensor([40.0, 10.0, 90.0]), torch.tensor([90.0, 10.0, 95.0])  # a fixed column in the middle
    bounds = {"torque_filter_hz": (lo, hi), "backlash_rad": (torch.zeros(3), torch.full((3,), 0.003))}

    def draw(seed):
        return sample_stages(bounds, 64, torch.Generator().manual_seed(seed))

    a, b, c = draw(1), draw(1), draw(2)
    assert list(a) == [n for n in STAGE_FIELDS if n in bounds]  # fixed draw order: reproducible for any bounds order
    for name in bounds:
        assert a[name].shape == (64, 3) and torch.equal(a[name], b[name]) and not torch.equal(a[name], c[name])
        assert bool((a[name] >= bounds[name][0]).all() and (a[name] <= bounds[name][1]).all())
    assert bool((a["torque_filter_hz"][:, 1] == 10.0).all()) and a["torque_filter_hz"][:, 0].std() > 5.0
    velocity = torch.tensor([20.0, 32.0, 30.0])  # datasheet velocity limits, rad/s
    scale = torch.full((2, 3), 0.5)
    assert torch.equal(stage_param_value("speed_limit_scale", scale, velocity), torch.tensor([[10.0, 16.0, 15.0]] * 2))
    assert stage_param_value("backlash_rad", scale, None) is scale  # absolute values are written as drawn
    assert STAGE_FIELDS["transmission_stiffness_scale"].param == "transmission_stiffness" and math.isfinite(DT)
