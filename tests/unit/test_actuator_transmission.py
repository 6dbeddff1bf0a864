"""Compliant transmission with backlash: two-mass resonance, dead-band width, contact, rigid identity, stability."""

import math

import numpy as np
import pytest
import torch

from realgap.actuators import (
    ElasticTransmission,
    deadzone,
    elastic_stability_margin,
    transmission_torque,
    two_mass_resonance,
)

pytestmark = pytest.mark.unit


def _free_free(k, c, jm, jl, dt, steps, delta0=0.01):
    """Motor and link free (τ_m = 0), spring pre-deflected by delta0; the link integrated here (semi-implicit Euler)."""
    tr = ElasticTransmission(num_envs=1, physics_dt=dt)
    q, qd = np.zeros((1, 1)), np.zeros((1, 1))
    tr.set_state(np.full((1, 1), delta0), np.zeros((1, 1)))
    deltas = []
    for _ in range(steps):
        tau_link = tr.step(np.zeros((1, 1)), q, qd, k, c, 0.0, jm)
        qd = qd + dt * tau_link / jl
        q = q + dt * qd
        deltas.append(float(tr.motor_position[0, 0] - q[0, 0]))
    return np.array(deltas)


def test_free_free_two_mass_resonance_matches_theory():
    # J_m = 0.02, J_l = 0.08, k = 200: ω_n = √(200·(50 + 12.5)) = 111.80 rad/s (17.79 Hz, period 56.2 ms).
    # dt = 0.1 ms (ω·dt = 0.011: semi-implicit Euler's frequency error ω²dt²/24 ≈ 5e-6). Undamped, 0.5 s ≈ 8.9
    # periods; frequency from the linearly interpolated zero crossings of δ = θ_m − q.
    k, jm, jl, dt = 200.0, 0.02, 0.08, 1e-4
    omega = two_mass_resonance(k, jm, jl)
    assert omega == pytest.approx(111.803, rel=1e-4)
    d = _free_free(k, 0.0, jm, jl, dt, 5000)
    i = np.nonzero(np.sign(d[:-1]) != np.sign(d[1:]))[0]
    t = (i + d[i] / (d[i] - d[i + 1])) * dt
    measured = math.pi / np.mean(np.diff(t))  # zero crossings every half period
    assert measured == pytest.approx(omega, rel=0.02)
    assert abs(d).max() == pytest.approx(0.01, rel=1e-3)  # undamped: the amplitude is kept


def test_stability_margin_is_the_real_boundary():
    # The motor is integrated implicitly in the spring, the link explicitly: stable iff
    # ρ = (k·dt² + 2·c·dt)·(1/J_l − 1/J_m)/4 < 1. A link lighter than the motor binds: J_m = 0.08, J_l = 0.02,
    # 1/J_l − 1/J_m = 50 − 12.5 = 37.5; at dt = 5 ms, c = 0: k < 4/(37.5·dt²) = 4266.7 N·m/rad.
    assert elastic_stability_margin(4266.6667, 0.0, 0.08, 0.02, 5e-3) == pytest.approx(1.0, rel=1e-6)
    assert abs(_free_free(0.9 * 4266.67, 0.0, 0.08, 0.02, 5e-3, 2000)).max() < 0.1  # bounded oscillation
    with np.errstate(over="ignore", invalid="ignore"):
        assert not (abs(_free_free(1.1 * 4266.67, 0.0, 0.08, 0.02, 5e-3, 2000)) < 1e3).all()  # explodes
    # A link at least as heavy as the motor: no bound. The explicit scheme (ρ = k·dt²/(4μ), μ = 0.016) failed at
    # k = 2560 N·m/rad; the implicit motor holds 100 times that.
    assert elastic_stability_margin(1e6, 1.0, 0.02, 0.08, 5e-3) == 0.0
    assert abs(_free_free(256000.0, 0.0, 0.02, 0.08, 5e-3, 2000)).max() <= 0.01 + 1e-12


def _knee_under_pd(dt: float, seconds: float, on_motor: bool) -> list[float]:
    """The G1 stand-in knee (kp 300, kd 5; k = 1200, c = 0.5; J_m = 0.0251, the light link J_l = 0.0289) driven to
    0.1 rad from rest, no gravity; the PD reads the motor (the drive's encoder) or the link. Returns q per step."""
    k, c, jm, jl, kp, kd = 1200.0, 0.5, 0.0251, 0.0289, 300.0, 5.0
    tr = ElasticTransmission(num_envs=1, physics_dt=dt)
    q, qd = np.zeros((1, 1)), np.zeros((1, 1))
    trace = []
    for _ in range(round(seconds / dt)):
        th, thd = tr.motor_state(q, qd, k) if on_motor else (q, qd)
        tau_m = np.clip(kp * (0.1 - th) - kd * thd, -139.0, 139.0)
        tau_link = tr.step(tau_m, q, qd, k, c, 0.0, jm)
        qd = qd + dt * tau_link / jl
        q = q + dt * qd
        trace.append(float(q[0, 0]))
    return trace


def test_pd_on_the_motor_holds_a_light_link_at_the_physics_step():
    # At dt = 5 ms the collocated PD settles on the 0.1 rad target (θ_m = q = target, no gravity) within 1 s; the
    # earlier scheme (explicit motor, PD on the link) left this joint in a limit cycle of ±0.2 rad.
    trace = _knee_under_pd(5e-3, 2.0, on_motor=True)
    assert max(abs(x - 0.1) for x in trace[200:]) < 1e-3


def test_pd_on_the_link_through_the_spring_is_unstable_even_finely_integrated():
    # Why the PD closes on the motor: the same joint with the PD on the link position, integrated at dt = 0.1 ms
    # (ω_n·dt = 0.03, far inside every numerical bound), never settles: a physical limit cycle of the non-collocated
    # loop (measured: q between −0.16 and 0.36 rad over the last second), not an integration artefact.
    trace = _knee_under_pd(1e-4, 3.0, on_motor=False)
    assert max(abs(x - 0.1) for x in trace[-10000:]) > 0.05
    assert all(math.isfinite(x) and abs(x) < 10 for x in trace)  # bounded by the torque limit: a cycle, no blow-up


def test_deadzone_and_unilateral_contact():
    # b = 0.1: δ = 0.05 inside -> 0 whatever δ̇; δ = 0.15 -> k·0.05 = 5 (k = 100) + c·δ̇; a flank never pulls:
    # δ = 0.15 with δ̇ = −10, c = 1 gives 5 − 10 < 0 -> 0. Mirror on the −b flank. b = 0: the plain spring–damper.
    delta = np.array([[0.05, 0.15, 0.15, -0.15, 0.15]])
    ddot = np.array([[3.0, 1.0, -10.0, 1.0, -10.0]])
    b = np.array([0.1, 0.1, 0.1, 0.1, 0.0])
    out = transmission_torque(delta, ddot, 100.0, 1.0, b)
    np.testing.assert_allclose(out, [[0.0, 6.0, 0.0, -4.0, 15.0 - 10.0]])
    np.testing.assert_array_equal(deadzone(delta, 0.0), delta)


def test_slow_reversal_shows_the_configured_dead_band_width():
    # Motor driven by its own stiff servo along a slow triangle (±0.1 rad/s, 2 s each way); the link (J_l = 0.1) has
    # a viscous load c_l = 1 (time constant J_l/c_l = 0.1 s) so it settles against the driving flank after each
    # reversal instead of coasting through the gap. In steady motion the flank carries c_l·v = 0.1 N·m, a deflection
    # of 2e-4 rad at k = 500, so the hysteresis δ_forward − δ_backward = 2·b + 2·c_l·v/k = 0.04 + 4e-4 rad for
    # b = 0.02 rad, less 2·v·dt = 2e-4 rad: the motor, implicit in the spring, meets the link where it stood at the
    # start of each step (semi-implicit Euler's one-step lag). Inside the band the link feels exactly zero torque.
    b, k, c, jm, jl, c_l, dt, v = 0.02, 500.0, 2.0, 0.01, 0.1, 1.0, 1e-3, 0.1
    tr = ElasticTransmission(num_envs=1, physics_dt=dt)
    q, qd = np.zeros((1, 1)), np.zeros((1, 1))
    fwd, bwd, inside = [], [], []
    for n in range(4000):
        t = n * dt
        ref, ref_v = (v * t, v) if t < 2.0 else (v * (4.0 - t), -v)
        th = q if tr.motor_position is None else tr.motor_position
        thd = qd if tr.motor_velocity is None else tr.motor_velocity
        tau_m = 50.0 * (ref - th) + 1.0 * (ref_v - thd)
        delta = float((th - q)[0, 0])
        tau_link = tr.step(tau_m, q, qd, k, c, b, jm)
        if abs(delta) < b and tr.motor_position is not None and n > 0:
            inside.append(float(tau_link[0, 0]))
        qd = qd + dt * (tau_link - c_l * qd) / jl
        q = q + dt * qd
        d = float((tr.motor_position - q)[0, 0])
        (fwd if 1.0 < t < 2.0 else bwd if 3.0 < t < 4.0 else []).append(d)
    width = np.mean(fwd) - np.mean(bwd)
    assert width - 2 * c_l * v / k + 2 * v * dt == pytest.approx(2 * b, rel=1e-3)
    assert inside and all(x == 0.0 for x in inside)  # the reversal crossed the band, transmitting nothing


def test_rigid_joint_passes_the_motor_torque_bit_for_bit():
    # k = inf on joint 0 (rigid), finite on joint 1, torch float32.
    tr = ElasticTransmission(num_envs=3, physics_dt=1e-3)
    gen = torch.Generator().manual_seed(0)
    k = torch.tensor([math.inf, 300.0])
    for _ in range(10):
        tau, q, qd = (torch.randn(3, 2, generator=gen) for _ in range(3))
        out = tr.step(tau, q, qd, k, torch.tensor([0.0, 1.0]), torch.tensor([0.0, 0.01]), torch.tensor([0.0, 0.05]))
        assert torch.equal(out[:, 0], tau[:, 0])
        assert torch.isfinite(out).all()


def test_reset_seats_the_motor_in_static_equilibrium():
    # First step (and the first after reset) transmits exactly τ_m: δ0 = τ_m/k + b·sign(τ_m) -> k·(δ0 − b) = τ_m.
    tr = ElasticTransmission(num_envs=2, physics_dt=1e-3)
    q, qd = np.zeros((2, 1)), np.zeros((2, 1))
    args = (400.0, 0.5, 0.02, 0.05)
    np.testing.assert_allclose(tr.step(np.array([[3.0], [-2.0]]), q, qd, *args), [[3.0], [-2.0]], rtol=1e-12)
    for _ in range(50):
        tr.step(np.zeros((2, 1)), q, qd, *args)
    tr.reset([1])
    out = tr.step(np.array([[0.0], [7.0]]), q, qd, *args)
    assert out[1, 0] == pytest.approx(7.0, rel=1e-12)
    assert tr.engagement(q, 0.02)[1, 0] == 1.0
