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
    check_physics_step,
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


# --- optional stages: speed limit, filters, compliant transmission with backlash ----------------------------------

_STAGES = dict(
    enforce_velocity_limit=True,
    position_filter_hz=30.0,
    torque_filter_hz=80.0,
    transmission_stiffness=400.0,
    transmission_damping=0.5,
    backlash=0.005,
    motor_inertia=0.015,
    link_inertia=0.1,
)


@pytest.mark.unit
def test_stage_fields_round_trip_and_default_off():
    s = _spec(**_STAGES)
    assert ActuatorSpec.from_dict(s.to_dict()) == s
    plain = _spec()
    assert (plain.enforce_velocity_limit, plain.torque_filter_hz, plain.transmission_stiffness) == (False, None, None)
    assert plain.backlash == 0.0
    legacy = {k: v for k, v in plain.to_dict().items() if k not in _STAGES or k == "link_inertia"}
    assert ActuatorSpec.from_dict(legacy) == plain  # dicts written before these fields still load
    # J_m defaults to the reflected inertia (0.02 kg·m²) when the transmission is compliant
    assert _spec(transmission_stiffness=400.0, link_inertia=0.1).transmission_motor_inertia == pytest.approx(0.02)


@pytest.mark.unit
def test_solver_armature_leaves_out_the_motor_inertia_the_chain_integrates():
    # reflected N²·I_m = 10²·2e-4 = 0.02 kg·m². Rigid: all of it is the simulator's armature. Compliant: J_m is a
    # state of the chain behind the spring, so the simulator gets 0.02 − J_m: 0.02 − 0.015 = 0.005 kg·m², and 0 when
    # J_m defaults to the whole reflected inertia (counting it twice would make the joint 0.02 kg·m² heavier).
    assert _spec().solver_armature == pytest.approx(0.02)
    assert _spec(**_STAGES).solver_armature == pytest.approx(0.005)
    assert _spec(transmission_stiffness=400.0, link_inertia=0.1).solver_armature == 0.0
    given = _spec(armature=0.03, gearbox=None, transmission_stiffness=400.0, link_inertia=0.1, motor_inertia=0.03)
    assert given.solver_armature == 0.0


@pytest.mark.unit
@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        (dict(backlash=-0.001, transmission_stiffness=400.0, link_inertia=0.1), r"backlash \[rad\] must be >= 0"),
        (dict(backlash=math.nan, transmission_stiffness=400.0, link_inertia=0.1), r"backlash \[rad\]"),
        (dict(backlash=0.01), r"backlash \[rad\] needs transmission_stiffness"),
        (dict(transmission_damping=1.0), r"transmission_damping .* needs transmission_stiffness"),
        (dict(motor_inertia=0.01), r"motor_inertia .* needs transmission_stiffness"),
        (dict(transmission_stiffness=-5.0, link_inertia=0.1), r"transmission_stiffness \[N·m/rad\] must be > 0"),
        (dict(transmission_stiffness=math.inf, link_inertia=0.1), r"transmission_stiffness"),
        (dict(transmission_stiffness=400.0), r"link_inertia \[kg·m²\] must be > 0 with transmission_stiffness"),
        (dict(transmission_stiffness=400.0, link_inertia=0.1, transmission_damping=-1.0), r"transmission_damping"),
        (dict(transmission_stiffness=400.0, link_inertia=0.1, motor_inertia=0.0), r"motor_inertia \[kg·m²\]"),
        (
            dict(transmission_stiffness=400.0, link_inertia=0.1, motor_inertia=0.025),
            r"motor_inertia \[kg·m²\] must not exceed the reflected inertia \(0.02 kg·m²\)",
        ),
        (dict(torque_filter_hz=0.0), r"torque_filter_hz \[Hz\] must be > 0"),
        (dict(position_filter_hz=math.inf), r"position_filter_hz \[Hz\] must be > 0"),
        (dict(enforce_velocity_limit=1), r"enforce_velocity_limit must be a bool"),
    ],
)
def test_bad_stage_fields_raise_naming_field(overrides, field):
    with pytest.raises(ValueError, match=field):
        _spec(**overrides)


@pytest.mark.unit
def test_check_physics_step_refuses_nyquist_and_unstable_stiffness():
    # dt = 5 ms: Nyquist 100 Hz. The motor is integrated implicitly in the spring, so a link at least as heavy as the
    # motor (J_l = 0.1 >= J_m = 0.015) is stable at any stiffness; a lighter one (J_l = 0.005) binds:
    # 1/J_l − 1/J_m = 200 − 66.667 = 133.333; with c = 0.5: k_max = (4/133.333 − 2·c·dt)/dt² = (0.03 − 0.005)/2.5e-5
    # = 1000 N·m/rad; 400 passes (margin (400·2.5e-5 + 0.005)·133.333/4 = 0.5).
    check_physics_step([_spec(**_STAGES)], 5e-3)
    check_physics_step([_spec(**{**_STAGES, "transmission_stiffness": 1e6})], 5e-3)  # heavy link: no bound
    with pytest.raises(ValueError, match=r"'test': torque_filter_hz \[Hz\] .* 100 Hz .* got 100.0"):
        check_physics_step([_spec(**{**_STAGES, "torque_filter_hz": 100.0})], 5e-3)
    with pytest.raises(ValueError, match=r"'test': position_filter_hz \[Hz\] .* got 150.0"):
        check_physics_step([_spec(**{**_STAGES, "position_filter_hz": 150.0})], 5e-3)
    light = {**_STAGES, "link_inertia": 0.005}
    check_physics_step([_spec(**light)], 5e-3)
    with pytest.raises(ValueError, match=r"\[N·m/rad\] 1100.0 .* 1.083 >= 1 .* need k < 1000 N·m/rad"):
        check_physics_step([_spec(**{**light, "transmission_stiffness": 1100.0})], 5e-3)
    check_physics_step([_spec(**{**light, "transmission_stiffness": 990.0})], 5e-3)
    # The PD closes on the motor (J_m = 0.015): (kp·dt² + 2·kd·dt)/(4·J_m) with kp = 50, kd = 7: (0.00125 + 0.07)/0.06
    # = 1.19 -> refused; the bound kd < (4·J_m − kp·dt²)/(2·dt) = (0.06 − 0.00125)/0.01 = 5.875.
    with pytest.raises(ValueError, match=r"closes on the motor .* 1.188 >= 1; need kd < 5.875"):
        check_physics_step([_spec(**{**_STAGES, "gains": PDGains(kp=50.0, kd=7.0)})], 5e-3)
