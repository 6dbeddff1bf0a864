"""ActuatorSpec: reflected inertia, gains from bandwidth, validation messages, serialisation, joint resolution."""

import math
from dataclasses import replace

import pytest

from realgap.actuators import (
    ActuatorSpec,
    BandwidthGains,
    Gearbox,
    PDGains,
    check_explicit_stability,
    resolve_joint_specs,
)

pytestmark = pytest.mark.unit


def _spec(**overrides) -> ActuatorSpec:
    base = dict(
        name="test",
        joint_names_expr=("j.*",),
        peak_torque=20.0,
        continuous_torque=8.0,
        velocity_limit=10.0,
        gains=PDGains(kp=50.0, kd=1.0),
        gearbox=Gearbox.single(ratio=10.0, rotor_inertia=2e-4),
    )
    base.update(overrides)
    return ActuatorSpec(**base)


@pytest.mark.unit
def test_reflected_inertia_single_stage():
    # N²·I_m = 10² · 2e-4 = 0.02 kg·m²
    gb = Gearbox.single(ratio=10.0, rotor_inertia=2e-4)
    assert gb.ratio == 10.0
    assert gb.reflected_inertia == pytest.approx(0.02, rel=1e-12)


@pytest.mark.unit
def test_reflected_inertia_two_stage():
    # ratios (3, 4), inertias rotor 1e-4, after stage 1 2e-4, output 5e-4:
    # 1e-4·(3·4)² + 2e-4·4² + 5e-4·1 = 0.0144 + 0.0032 + 0.0005 = 0.0181 kg·m²; total ratio 12
    gb = Gearbox(stage_ratios=(3.0, 4.0), stage_inertias=(1e-4, 2e-4, 5e-4))
    assert gb.ratio == pytest.approx(12.0)
    assert gb.reflected_inertia == pytest.approx(0.0181, rel=1e-12)


@pytest.mark.unit
def test_reflected_inertia_unitree_5020_equals_mjlab_value():
    # 5020: ratios 1 + 46/18 = 3.5556, 1 + 56/16 = 4.5 (product 16.0):
    # 0.139e-4·16² + 0.017e-4·4.5² + 0.169e-4 = 3.5584e-3 + 3.4425e-5 + 1.69e-5 = 3.609725e-3 kg·m²
    gb = Gearbox(stage_ratios=(1 + 46 / 18, 1 + 56 / 16), stage_inertias=(0.139e-4, 0.017e-4, 0.169e-4))
    assert gb.reflected_inertia == pytest.approx(3.609725e-3, rel=1e-9)


@pytest.mark.unit
def test_gains_from_bandwidth():
    # J = 0.01, f = 10 Hz, ζ = 2: ω = 20π = 62.8319 rad/s; kp = J·ω² = 39.4784; kd = 2ζJω = 2.51327
    s = _spec(gains=BandwidthGains(10.0, 2.0), gearbox=None, armature=0.01)
    assert s.kp == pytest.approx(0.01 * (20 * math.pi) ** 2)
    assert s.kd == pytest.approx(2 * 2.0 * 0.01 * 20 * math.pi)
    # "total" adds the link inertia: J = 0.01 + 0.03 = 0.04 -> kp = 0.04·ω² = 157.914
    s_total = replace(s, gains=BandwidthGains(10.0, 2.0, inertia="total"), link_inertia=0.03)
    assert s_total.kp == pytest.approx(0.04 * (20 * math.pi) ** 2)
    # explicit margin of the bandwidth rule on J alone: (ω·dt)²/4 + ζ·ω·dt at dt = 5 ms = 0.02467 + 0.62832
    wdt = 20 * math.pi * 0.005
    assert s.explicit_stability_margin(0.005) == pytest.approx(wdt**2 / 4 + 2.0 * wdt)


@pytest.mark.unit
@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        (dict(gearbox=Gearbox.single(10.0, 2e-4), continuous_torque=25.0), "continuous_torque"),
        (dict(peak_torque=-1.0), "peak_torque"),
        (dict(velocity_limit=0.0), "velocity_limit"),
        (dict(coulomb_friction=-0.1), "coulomb_friction"),
        (dict(viscous_friction=-0.1), "viscous_friction"),
        (dict(friction_velocity_scale=0.0), "friction_velocity_scale"),
        (dict(latency_range_s=(0.02, 0.01)), "latency_range_s max"),
        (dict(latency_range_s=(-0.01, 0.01)), "latency_range_s min"),
        (dict(no_load_speed=0.0), "no_load_speed"),
        (dict(link_inertia=-1e-3), "link_inertia"),
        (dict(armature=0.01), "gearbox/armature"),
        (dict(gearbox=None), "gearbox/armature"),
        (dict(gearbox=None, armature=-0.01), "armature"),
        (dict(joint_names_expr=("(",)), "joint_names_expr"),
    ],
)
def test_bad_spec_raises_naming_field(overrides, field):
    with pytest.raises(ValueError, match=field.replace("(", r"\(")) as err:
        _spec(**overrides)
    assert "test" in str(err.value)  # names the spec too


@pytest.mark.unit
@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: Gearbox(stage_ratios=(10.0,), stage_inertias=(-1e-4, 0.0)), r"stage_inertias\[0\]"),
        (lambda: Gearbox(stage_ratios=(4.0, 0.0), stage_inertias=(1e-4, 0.0, 0.0)), r"stage_ratios\[1\]"),
        (lambda: Gearbox(stage_ratios=(4.0,), stage_inertias=(1e-4,)), "stage_inertias"),
        (lambda: PDGains(kp=-1.0, kd=1.0), "kp"),
        (lambda: PDGains(kp=1.0, kd=-1.0), "kd"),
        (lambda: BandwidthGains(natural_freq_hz=0.0, damping_ratio=1.0), "natural_freq_hz"),
        (lambda: BandwidthGains(natural_freq_hz=5.0, damping_ratio=-1.0), "damping_ratio"),
    ],
)
def test_bad_parts_raise_naming_field(build, field):
    with pytest.raises(ValueError, match=field):
        build()


@pytest.mark.unit
def test_check_explicit_stability_names_the_unstable_spec():
    # kd = 10 on J = 0.01 at 5 ms (went NaN when measured on the G1): ρ = (300·2.5e-5 + 2·10·0.005)/0.04 = 2.69
    bad = _spec(name="hot", gains=PDGains(300.0, 10.0), gearbox=None, armature=0.01)
    good = _spec(name="cool", gains=PDGains(300.0, 2.0), gearbox=None, armature=0.01)  # ρ = 0.0275/0.04 = 0.6875
    check_explicit_stability([good], 0.005)
    with pytest.raises(ValueError, match="'hot'.*margin 2.68") as err:
        check_explicit_stability([good, bad], 0.005)
    assert "cool" not in str(err.value)
    # friction slope f_c/v_s counts as damping: 0.3/0.01 = 30 N·m·s/rad makes "cool" unstable too
    sticky = replace(good, coulomb_friction=0.3, friction_velocity_scale=0.01)
    with pytest.raises(ValueError, match="friction slope=30"):
        check_explicit_stability([sticky], 0.005)
    check_explicit_stability([sticky], 0.005, include_friction=False)


@pytest.mark.unit
def test_to_dict_round_trip():
    for s in (_spec(), _spec(gains=BandwidthGains(8.0, 1.5, "total"), link_inertia=0.2, no_load_speed=30.0)):
        assert ActuatorSpec.from_dict(s.to_dict()) == s


@pytest.mark.unit
def test_resolve_joint_specs():
    legs = _spec(name="legs", joint_names_expr=(".*_knee", ".*_hip"))
    arms = _spec(name="arms", joint_names_expr=(".*_elbow",))
    got = resolve_joint_specs(["l_knee", "r_elbow", "r_hip"], {"legs": legs, "arms": arms})
    assert [s.name for s in got] == ["legs", "arms", "legs"]
    with pytest.raises(ValueError, match="'neck' matches 0"):
        resolve_joint_specs(["neck"], {"legs": legs})
    with pytest.raises(ValueError, match="'l_knee' matches 2"):
        resolve_joint_specs(["l_knee"], {"legs": legs, "all": _spec(name="all", joint_names_expr=(".*",))})
