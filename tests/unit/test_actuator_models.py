"""Stateless actuator math: PD step response, torque envelope (property tests), friction, explicit stability bound."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from realgap.actuators import (
    clip_box,
    clip_torque_speed,
    explicit_pd_stability_margin,
    friction_torque,
    pd_torque,
    torque_speed_bounds,
)

pytestmark = pytest.mark.unit


def _underdamped_step(t: np.ndarray, amplitude: float, wn: np.ndarray, zeta: np.ndarray) -> np.ndarray:
    """x(t) = A·[1 − e^{−ζωn t}(cos ωd t + ζ/√(1−ζ²) sin ωd t)], ωd = ωn·√(1−ζ²), from x(0) = ẋ(0) = 0."""
    wd = wn * np.sqrt(1 - zeta**2)
    decay = np.exp(-zeta * wn * t)
    return amplitude * (1 - decay * (np.cos(wd * t) + zeta / np.sqrt(1 - zeta**2) * np.sin(wd * t)))


@pytest.mark.unit
def test_pd_step_response_matches_second_order_closed_form():
    # Three envs, one joint each, per-env (E, J) gains on inertias J:
    #   env0: J=0.05, kp=20, kd=0.3 -> ωn = √(20/0.05) = 20 rad/s, ζ = 0.3/(2√(20·0.05)) = 0.15
    #   env1: J=0.02, kp=50, kd=0.4 -> ωn = 50 rad/s,                ζ = 0.4/(2√(50·0.02)) = 0.20
    #   env2: J=0.20, kp=80, kd=2.0 -> ωn = 20 rad/s,                ζ = 2.0/(2√(80·0.2))  = 0.25
    inertia = np.array([[0.05], [0.02], [0.20]])
    kp = np.array([[20.0], [50.0], [80.0]])
    kd = np.array([[0.3], [0.4], [2.0]])
    wn, zeta = np.sqrt(kp / inertia)[:, 0], (kd / (2 * np.sqrt(kp * inertia)))[:, 0]
    np.testing.assert_allclose(wn, [20.0, 50.0, 20.0])
    np.testing.assert_allclose(zeta, [0.15, 0.20, 0.25])
    step, dt, n = 0.5, 2e-4, 5000  # 1 s; semi-implicit Euler error ~ ωn·dt·A/2 = 2.5e-3 rad << 2 % of 0.5 rad
    q, qd = np.zeros((3, 1)), np.zeros((3, 1))
    target, zero = np.full((3, 1), step), np.zeros((3, 1))
    history = np.empty((n, 3))
    for k in range(n):
        tau = pd_torque(target, zero, q, qd, kp, kd)
        qd = qd + dt * tau / inertia
        q = q + dt * qd
        history[k] = q[:, 0]
    t = dt * np.arange(1, n + 1)[:, None]
    expected = _underdamped_step(t, step, wn[None], zeta[None])
    assert np.abs(history - expected).max() < 0.02 * step


@pytest.mark.unit
def test_pd_torque_hand_values_and_feed_forward():
    # τ = kp(q* − q) + kd(q̇* − q̇) + τ_ff = 100·(0.3 − 0.1) + 2·(1.0 − (−0.5)) + 4 = 20 + 3 + 4 = 27 N·m
    tau = pd_torque(
        np.array([[0.3]]), np.array([[1.0]]), np.array([[0.1]]), np.array([[-0.5]]), 100.0, 2.0, np.array([[4.0]])
    )
    assert tau[0, 0] == pytest.approx(27.0)


@pytest.mark.unit
def test_torque_speed_bounds_hand_values():
    # τ_peak = 10 N·m, ω_0 = 20 rad/s.
    # q̇ = 10:  τ_hi = 10·(1 − 0.5) = 5;          τ_lo = max(10·(−1.5), −10) = −10 (full braking)
    # q̇ = 30:  τ_hi = max(10·(1 − 1.5), 0) = 0;  τ_lo = −10
    # q̇ = −5:  τ_hi = min(10·1.25, 10) = 10;     τ_lo = 10·(−1 + 0.25) = −7.5
    lo, hi = torque_speed_bounds(np.array([[10.0, 30.0, -5.0]]), 10.0, 20.0)
    np.testing.assert_allclose(hi, [[5.0, 0.0, 10.0]])
    np.testing.assert_allclose(lo, [[-10.0, -10.0, -7.5]])
    # clip: 8 -> 5 (motoring limited), −12 -> −10 (box), −9 at q̇=−5 -> −7.5
    tau = clip_torque_speed(np.array([[8.0, -12.0, -9.0]]), np.array([[10.0, 30.0, -5.0]]), 10.0, 20.0)
    np.testing.assert_allclose(tau, [[5.0, -10.0, -7.5]])


def _envelope_case():
    """(E, J), torque, velocity and per-env parameters for the property tests."""
    return st.tuples(st.integers(1, 4), st.integers(1, 5)).flatmap(
        lambda shape: st.tuples(
            arrays(np.float64, shape, elements=st.floats(-1e3, 1e3)),  # τ request, N·m
            arrays(np.float64, shape, elements=st.floats(-100.0, 100.0)),  # q̇, rad/s
            arrays(np.float64, shape, elements=st.floats(0.1, 200.0)),  # τ_peak, N·m (per env and joint)
            arrays(np.float64, shape, elements=st.one_of(st.floats(0.5, 60.0), st.just(math.inf))),  # ω_0
        )
    )


def _reference_bounds(qd: float, peak: float, w0: float) -> tuple[float, float]:
    """Scalar envelope written independently of the library: stall line for motoring, full braking."""
    line = peak * (1.0 - abs(qd) / w0)
    motoring = min(peak, max(0.0, line))
    if qd >= 0:
        return -peak, motoring
    return -motoring, peak


@pytest.mark.unit
@pytest.mark.parametrize("backend", ["numpy", "torch"])
@settings(max_examples=60, deadline=None)
@given(case=_envelope_case())
def test_torque_never_leaves_envelope(backend, case):
    tau, qd, peak, w0 = case
    conv = (lambda a: torch.from_numpy(a)) if backend == "torch" else (lambda a: a)
    out_ts = np.asarray(clip_torque_speed(conv(tau), conv(qd), conv(peak), conv(w0)))
    out_box = np.asarray(clip_box(conv(tau), conv(peak)))
    assert np.all(np.abs(out_box) <= peak)
    for i, j in np.ndindex(tau.shape):
        lo, hi = _reference_bounds(qd[i, j], peak[i, j], w0[i, j])
        tol = 1e-9 * peak[i, j]
        assert lo - tol <= out_ts[i, j] <= hi + tol
        if lo + tol < tau[i, j] < hi - tol:  # inside: untouched
            assert out_ts[i, j] == tau[i, j]
        # motoring power never exceeds the stall line: τ·q̇ > 0 => |τ| <= τ_peak·(1 − |q̇|/ω_0)
        if out_ts[i, j] * qd[i, j] > 0:
            assert abs(out_ts[i, j]) <= peak[i, j] * (1 - abs(qd[i, j]) / w0[i, j]) + tol


@pytest.mark.unit
def test_friction_torque_values_and_direction():
    # τ_f = −(f_c·tanh(q̇/v_s) + f_v·q̇); f_c = 0.5, f_v = 0.1, v_s = 0.2
    # q̇ = 0.2 -> −(0.5·tanh(1) + 0.02) = −(0.380797 + 0.02) = −0.400797;  q̇ = 0 -> 0;  q̇ = −4 -> +(0.5·tanh(20)+0.4)
    qd = np.array([[0.2, 0.0, -4.0]])
    tau = friction_torque(qd, 0.5, 0.1, 0.2)
    np.testing.assert_allclose(tau, [[-0.400797, 0.0, 0.9]], atol=1e-6)
    assert np.all(tau * qd <= 0)  # always opposes motion


@pytest.mark.unit
def test_numpy_and_torch_functions_agree():
    rng = np.random.default_rng(3)
    a = {k: rng.normal(size=(4, 6)) for k in ("qt", "qdt", "q", "qd", "ff")}
    kp, kd = rng.uniform(1, 100, 6), rng.uniform(0.1, 5, (4, 6))
    peak, w0 = rng.uniform(1, 50, 6), rng.uniform(1, 30, (4, 6))
    t = {k: torch.from_numpy(v) for k, v in a.items()}
    tau_np = pd_torque(a["qt"], a["qdt"], a["q"], a["qd"], kp, kd, a["ff"])
    tau_t = pd_torque(t["qt"], t["qdt"], t["q"], t["qd"], torch.from_numpy(kp), torch.from_numpy(kd), t["ff"])
    np.testing.assert_allclose(tau_t.numpy(), tau_np, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        clip_torque_speed(tau_t, t["qd"], peak, w0).numpy(),
        clip_torque_speed(tau_np, a["qd"], peak, w0),
        rtol=1e-12,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        friction_torque(t["qd"], 0.3, 0.1, 0.5).numpy(), friction_torque(a["qd"], 0.3, 0.1, 0.5), rtol=1e-12, atol=1e-12
    )


def _simulate_pd(inertia: float, kp: float, kd: float, dt: float, steps: int) -> float:
    """Semi-implicit Euler of J·q̈ = −kp·q − kd·q̇ from q = 1; returns max |q| over the last 50 steps."""
    q, v, tail = 1.0, 0.0, []
    for k in range(steps):
        v += dt * (-kp * q - kd * v) / inertia
        q += dt * v
        if k >= steps - 50:
            tail.append(abs(q))
    return max(tail)


@pytest.mark.unit
def test_explicit_stability_margin_predicts_blow_up():
    # J = 0.01 kg·m², kp = 100 N·m/rad, dt = 5 ms: ρ = (kp·dt² + 2·kd·dt)/(4J) = (0.0025 + 0.01·kd)/0.04.
    # kd = 3.35 -> ρ = 0.9 (stable); kd = 4.15 -> ρ = 1.1 (unstable).
    assert explicit_pd_stability_margin(100.0, 3.35, 0.01, 0.005) == pytest.approx(0.9)
    assert explicit_pd_stability_margin(100.0, 4.15, 0.01, 0.005) == pytest.approx(1.1)
    assert _simulate_pd(0.01, 100.0, 3.35, 0.005, 600) < 1e-3
    assert _simulate_pd(0.01, 100.0, 4.15, 0.005, 600) > 1e3
    # went NaN when measured on the G1: kd = 10 on armature 0.01 at 5 ms: ρ = (300·2.5e-5 + 0.1)/0.04 = 2.6875
    assert explicit_pd_stability_margin(300.0, 10.0, 0.01, 0.005) == pytest.approx(2.6875)
