"""RateSpec: derived steps, rejection of bad ratios, serialisation, YAML profiles, hand-off to the actuator chain."""

import pytest

from realgap.actuators import ChainTiming
from realgap.envs.rates import RATES_DIR, RateSpec, load_rate_profile

pytestmark = pytest.mark.unit


@pytest.mark.unit
def test_default_rates_derive_steps():
    # 200 / 200 / 50 Hz: sim_dt = 5 ms, servo every physics step, decimation 200/50 = 4, policy_dt = 20 ms
    r = RateSpec(200, 200, 50)
    assert (r.sim_dt, r.servo_period_steps, r.decimation) == (0.005, 1, 4)
    assert r.policy_dt == pytest.approx(0.02)
    # 1000 / 500 / 50 Hz: servo every 2 physics steps, decimation 20, control_dt 2 ms
    r = RateSpec(1000, 500, 50, "interpolate")
    assert (r.servo_period_steps, r.decimation, r.control_dt) == (2, 20, 0.002)


@pytest.mark.unit
def test_float_rounding_is_tolerated():
    # 1/0.005 = 200.00000000000003 Hz in floating point; 1/0.02 = 50.0
    r = RateSpec(1 / 0.005, 1 / 0.005, 1 / 0.02)
    assert r.decimation == 4 and r.servo_period_steps == 1


@pytest.mark.unit
@pytest.mark.parametrize(
    ("rates", "message"),
    [
        ((200, 150, 50), r"physics_hz \(200 Hz\) / control_hz \(150 Hz\) = 1.33333 is not a whole number"),
        ((200, 200, 60), r"control_hz \(200 Hz\) / policy_hz \(60 Hz\) = 3.33333 is not a whole number"),
        ((200, 400, 50), r"control_hz \(400 Hz\) exceeds physics_hz \(200 Hz\)"),
        ((200, 100, 200), r"policy_hz \(200 Hz\) exceeds control_hz \(100 Hz\)"),
        ((0, 100, 50), "physics_hz must be a finite rate > 0"),
        ((200, 200, float("nan")), "policy_hz must be a finite rate > 0"),
    ],
)
def test_bad_rates_raise(rates, message):
    with pytest.raises(ValueError, match=message):
        RateSpec(*rates)


@pytest.mark.unit
def test_bad_target_mode_raises():
    with pytest.raises(ValueError, match="target_mode"):
        RateSpec(200, 200, 50, "linear")  # type: ignore[arg-type]


@pytest.mark.unit
def test_dict_round_trip_and_consistency_checks():
    r = RateSpec(400, 200, 50, "interpolate")
    d = r.to_dict()
    assert d == {
        "physics_hz": 400,
        "control_hz": 200,
        "policy_hz": 50,
        "target_mode": "interpolate",
        "sim_dt": 0.0025,
        "decimation": 8,
        "servo_period_steps": 2,
    }
    assert RateSpec.from_dict(d) == r
    with pytest.raises(ValueError, match="decimation=4 disagrees"):
        RateSpec.from_dict({**d, "decimation": 4})
    with pytest.raises(ValueError, match="unknown keys"):
        RateSpec.from_dict({**d, "policy_rate": 50})
    with pytest.raises(ValueError, match="missing keys"):
        RateSpec.from_dict({"physics_hz": 200, "control_hz": 200})


@pytest.mark.unit
def test_yaml_profiles_load(tmp_path):
    assert load_rate_profile("default") == RateSpec(200, 200, 50, "hold")
    for path in sorted(RATES_DIR.glob("*.yaml")):
        assert isinstance(load_rate_profile(path), RateSpec)
    bad = tmp_path / "bad.yaml"
    bad.write_text("physics_hz: 200\ncontrol_hz: 120\npolicy_hz: 40\n")
    with pytest.raises(ValueError, match="bad.yaml.*is not a whole number"):
        load_rate_profile(bad)
    with pytest.raises(FileNotFoundError, match="available: .*default"):
        load_rate_profile("no_such_profile")


@pytest.mark.unit
def test_chain_timing_from_rates():
    t = ChainTiming.from_rates(load_rate_profile("servo_100hz"))
    assert (t.physics_dt, t.decimation, t.servo_period_steps, t.target_mode) == (0.005, 4, 2, "hold")
