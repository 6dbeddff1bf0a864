"""Current-loop / command low-pass and the drive's speed-limit cut-off: step response, reset, identity, refusals."""

import math

import numpy as np
import pytest
import torch

from realgap.actuators import LowPass, check_cutoff, clip_velocity_limit, lowpass_decay

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("f_c", [5.0, 40.0, 150.0])
def test_step_response_reaches_63_percent_at_the_time_constant(f_c):
    # dt = 1 ms; τ_c = 1/(2π·f_c): 31.8 ms, 3.98 ms, 1.06 ms. Unit step applied after one step at 0.
    # y[k] = 1 − β^k with β = exp(−2π·f_c·dt), so y crosses 1 − e⁻¹ = 0.632 at k·dt = τ_c (within one step).
    dt, tau_c = 1e-3, 1.0 / (2.0 * math.pi * f_c)
    lp = LowPass(num_envs=2)
    lp.step(np.zeros((2, 3)), lowpass_decay(f_c, dt))
    beta = lowpass_decay(np.full(3, f_c), dt)
    ys = [lp.step(np.ones((2, 3)), beta)[0, 0] for _ in range(200)]
    k = next(i + 1 for i, y in enumerate(ys) if y >= 1.0 - math.exp(-1.0))
    assert abs(k * dt - tau_c) <= dt
    np.testing.assert_allclose(ys[:5], 1.0 - np.exp(-2 * np.pi * f_c * dt) ** np.arange(1, 6), rtol=1e-12)


def test_infinite_cutoff_is_the_identity_bit_for_bit():
    # β = exp(−inf) = 0: y = x + 0·(y_prev − x) == x exactly, per joint, next to a filtered joint.
    rng = np.random.default_rng(0)
    lp = LowPass(num_envs=4)
    beta = lowpass_decay(np.array([np.inf, 20.0]), 1e-3)
    assert beta[0] == 0.0
    for k in range(5):
        x = rng.normal(size=(4, 2)) * 100
        y = lp.step(x, beta)
        np.testing.assert_array_equal(y[:, 0], x[:, 0])
        assert k == 0 or np.all(y[:, 1] != x[:, 1])  # the first step after construction has no past to lag


def test_reset_forgets_only_the_reset_envs_past():
    # After reset of env 1 its next output is its input (no lag from the last episode); env 0 keeps filtering.
    beta = lowpass_decay(10.0, 1e-3)
    lp = LowPass(num_envs=2)
    lp.step(torch.zeros(2, 1, dtype=torch.float64), beta)
    lp.reset([1])
    y = lp.step(torch.ones(2, 1, dtype=torch.float64), beta)
    assert y[1, 0].item() == 1.0
    assert y[0, 0].item() == pytest.approx(1.0 - beta)
    y = lp.step(torch.full((2, 1), 2.0, dtype=torch.float64), beta)
    assert y[1, 0].item() == pytest.approx(2.0 - beta)  # filtering again from 1 toward 2


@pytest.mark.parametrize("bad", [0.0, -3.0, math.nan, 500.0, 800.0])
def test_cutoff_at_or_above_nyquist_or_not_positive_is_refused(bad):
    # dt = 1 ms: Nyquist 1/(2·dt) = 500 Hz; 500 itself is refused, 499 and inf pass.
    with pytest.raises(ValueError, match=r"knee: torque_filter_hz \[Hz\] must be"):
        check_cutoff(np.array([100.0, bad]), 1e-3, "knee", "torque_filter_hz")
    check_cutoff(np.array([499.0, np.inf]), 1e-3, "knee", "torque_filter_hz")


def test_nyquist_message_names_value_and_limit():
    with pytest.raises(ValueError, match=r"Nyquist rate 1/\(2·dt\) = 100 Hz .* got 120.0"):
        check_cutoff(120.0, 5e-3, "ActuatorSpec 'hip'", "position_filter_hz")


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_speed_limit_cuts_only_torque_that_pushes_further_past_the_limit(backend):
    # v_max = 2 rad/s. Rows: q̇ = 3 (past +limit), −3 (past −limit), 1 (inside); columns τ = +5, −5.
    # Past +limit: +5 -> 0 (would accelerate further), −5 kept (brakes). Past −limit: mirrored. Inside: unchanged.
    qd = np.array([[3.0, 3.0], [-3.0, -3.0], [1.0, 1.0]])
    tau = np.array([[5.0, -5.0], [5.0, -5.0], [5.0, -5.0]])
    expected = np.array([[0.0, -5.0], [5.0, 0.0], [5.0, -5.0]])
    if backend == "torch":
        qd, tau = torch.as_tensor(qd), torch.as_tensor(tau)
    out = clip_velocity_limit(tau, qd, np.array([2.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(out), expected)
    np.testing.assert_array_equal(np.asarray(clip_velocity_limit(tau, qd, math.inf)), np.asarray(tau))


def test_speed_limit_is_passive_on_a_driven_inertia():
    # A constant +10 N·m on J = 0.1 accelerates at 100 rad/s² until the cut-off at 2 rad/s; from there the drive
    # gives zero torque whenever q̇ > 2, so q̇ never exceeds 2 + one step of acceleration (100·1e-3 = 0.1 rad/s).
    qd, dt = np.zeros((1, 1)), 1e-3
    peak = 0.0
    for _ in range(500):
        qd = qd + dt * clip_velocity_limit(np.full((1, 1), 10.0), qd, 2.0) / 0.1
        peak = max(peak, float(qd[0, 0]))
    assert 2.0 <= peak <= 2.1 + 1e-12
