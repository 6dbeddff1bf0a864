"""ActuatorChain: ideal-PD equivalence, servo rate, delay + interpolation order, envelope, numpy == torch, isolation."""

from dataclasses import replace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from realgap.actuators import ActuatorChain, ActuatorSpec, ChainTiming, Gearbox, JointParams, PDGains

pytestmark = pytest.mark.unit


def _params(kp, kd, peak=1e9, w0=np.inf, fc=0.0, fv=0.0, vs=1.0, n=None) -> JointParams:
    n = n or np.size(kp)
    full = lambda v: np.broadcast_to(np.asarray(v, dtype=np.float64), (n,)).copy()  # noqa: E731
    return JointParams(full(kp), full(kd), full(peak), full(w0), full(fc), full(fv), full(vs))


@pytest.mark.unit
def test_chain_without_delay_or_hold_is_ideal_pd_step_response():
    # One joint, J = 0.05, kp = 20, kd = 0.3 -> ωn = 20 rad/s, ζ = 0.15; step 0.5 rad; integrate 1 s at dt = 0.5 ms.
    # Analytic: x(t) = A[1 − e^{−ζωn t}(cos ωd t + ζ/√(1−ζ²) sin ωd t)], ωd = 20·√(1 − 0.0225) = 19.7737 rad/s.
    chain = ActuatorChain(_params(20.0, 0.3), ChainTiming(physics_dt=5e-4), num_envs=1)
    inertia, dt, amp, zeta, wn = 0.05, 5e-4, 0.5, 0.15, 20.0
    q, qd, tgt, zero = np.zeros((1, 1)), np.zeros((1, 1)), np.full((1, 1), amp), np.zeros((1, 1))
    err = 0.0
    for k in range(1, 2001):
        out = chain.compute(tgt, zero, q, qd)
        qd = qd + dt * out.tau_applied / inertia
        q = q + dt * qd
        t, wd = k * dt, wn * np.sqrt(1 - zeta**2)
        ref = amp * (1 - np.exp(-zeta * wn * t) * (np.cos(wd * t) + zeta / np.sqrt(1 - zeta**2) * np.sin(wd * t)))
        err = max(err, abs(q[0, 0] - ref))
    assert err < 0.02 * amp


@pytest.mark.unit
def test_torque_changes_only_at_servo_rate():
    # servo every P = 2 physics steps (decimation 4); q moves every step, limits far away, no friction:
    # applied torque at steps 2m and 2m+1 is equal, and changes between 2m+1 and 2m+2.
    chain = ActuatorChain(_params([50.0, 80.0], [1.0, 2.0]), ChainTiming(0.005, 4, 2, "hold"), num_envs=3)
    taus = []
    for k in range(8):
        q = np.full((3, 2), 0.01 * k) + np.arange(3)[:, None] * 0.1
        taus.append(chain.compute(np.zeros((3, 2)), np.zeros((3, 2)), q, q * 0 + 0.2).tau_applied.copy())
    for m in range(4):
        np.testing.assert_array_equal(taus[2 * m], taus[2 * m + 1])
        if m:
            assert np.all(taus[2 * m] != taus[2 * m - 1])


@pytest.mark.unit
def test_interpolated_then_delayed_target_reaches_servo():
    # D = 2, interpolate, every env delayed k = 1 step. Targets 0 (period 1), 2 (period 2).
    # Interpolated stream: 0, 0, 1, 2; delayed by 1: 0, 0, 0, 1, 2 (first value held while history is short).
    spec = ActuatorSpec("j", ("j",), 1e6, 1e6, 10.0, PDGains(10.0, 0.0), armature=1.0, latency_range_s=(0.01, 0.01))
    chain = ActuatorChain.from_specs([spec], ChainTiming(0.01, 2, 1, "interpolate"), num_envs=2)
    assert chain.delay.delay_steps.tolist() == [1, 1]
    seen = []
    for tgt in (0.0, 0.0, 2.0, 2.0, 2.0):
        out = chain.compute(np.full((2, 1), tgt), np.zeros((2, 1)), np.zeros((2, 1)), np.zeros((2, 1)))
        seen.append(out.q_target[0, 0])
        np.testing.assert_allclose(out.tau_computed, 10.0 * out.q_target)  # kp·(q* − 0)
    assert seen == [0.0, 0.0, 0.0, 1.0, 2.0]


@pytest.mark.unit
def test_saturation_then_friction_and_logging_fields():
    # kp = 100, target 1 rad from 0 -> τ_cmd = 100; peak 30, ω0 = 10, q̇ = 5 -> τ_hi = 30·(1 − 0.5) = 15.
    # friction f_c = 2, v_s = 1, f_v = 0.1: τ_f = −(2·tanh(5) + 0.5) = −2.4998184; applied = 15 − 2.4998184
    p = _params(100.0, 0.0, peak=30.0, w0=10.0, fc=2.0, fv=0.1, vs=1.0)
    chain = ActuatorChain(p, ChainTiming(0.005), num_envs=1, apply_friction=True)
    out = chain.compute(np.ones((1, 1)), np.zeros((1, 1)), np.zeros((1, 1)), np.full((1, 1), 5.0))
    assert out.tau_computed[0, 0] == pytest.approx(100.0)
    assert out.tau_motor[0, 0] == pytest.approx(15.0)
    assert out.tau_friction[0, 0] == pytest.approx(-(2 * np.tanh(5.0) + 0.5))
    assert out.tau_applied[0, 0] == pytest.approx(15.0 - (2 * np.tanh(5.0) + 0.5))
    assert chain.last is out


@pytest.mark.unit
@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    num_envs=st.integers(1, 4),
    mode=st.sampled_from(["hold", "interpolate"]),
    backend=st.sampled_from(["numpy", "torch"]),
)
def test_chain_motor_torque_stays_in_per_env_envelope(seed, num_envs, mode, backend):
    rng = np.random.default_rng(seed)
    j = 3
    p = _params(rng.uniform(0, 500, j), rng.uniform(0, 20, j), n=j).expand(num_envs)
    p = replace(p, peak_torque=rng.uniform(0.5, 100, (num_envs, j)), no_load_speed=rng.uniform(1, 40, (num_envs, j)))
    gen = torch.Generator().manual_seed(seed) if backend == "torch" else np.random.default_rng(seed)
    chain = ActuatorChain(p, ChainTiming(0.005, 4, 2, mode), num_envs, delay_steps=(0, 2), generator=gen)
    conv = (lambda a: torch.from_numpy(a)) if backend == "torch" else (lambda a: a)
    for k in range(9):
        if k == 5:
            chain.reset([0])
        q, qd = rng.uniform(-3, 3, (num_envs, j)), rng.uniform(-60, 60, (num_envs, j))
        tgt, ff = rng.uniform(-3, 3, (num_envs, j)), rng.uniform(-200, 200, (num_envs, j))
        out = chain.compute(conv(tgt), conv(tgt * 0), conv(q), conv(qd), conv(ff))
        tau = np.asarray(out.tau_motor)
        peak, w0 = p.peak_torque, p.no_load_speed
        hi = np.minimum(peak, np.maximum(0.0, peak * (1 - qd / w0)))
        lo = np.maximum(-peak, np.minimum(0.0, peak * (-1 - qd / w0)))
        assert np.all(tau <= hi + 1e-9 * peak) and np.all(tau >= lo - 1e-9 * peak)


@pytest.mark.unit
def test_numpy_and_torch_chains_agree():
    rng = np.random.default_rng(0)
    e, j = 3, 4
    p = _params(
        rng.uniform(10, 200, j),
        rng.uniform(0.5, 5, j),
        peak=rng.uniform(5, 50, j),
        w0=20.0,
        fc=0.3,
        fv=0.05,
        vs=0.5,
        n=j,
    )
    timing = ChainTiming(0.005, 4, 2, "interpolate")
    c_np = ActuatorChain(p, timing, e, delay_steps=(0, 3), generator=np.random.default_rng(1), apply_friction=True)
    c_t = ActuatorChain(
        p.to_like(torch.zeros(1, dtype=torch.float64)),
        timing,
        e,
        delay_steps=(0, 3),
        generator=torch.Generator().manual_seed(1),
        apply_friction=True,
    )
    delays = np.array([0, 2, 3])
    c_np.delay.set_delay_steps(delays)
    c_t.delay.set_delay_steps(torch.from_numpy(delays))
    for k in range(14):
        if k == 6:
            c_np.reset([1])
            c_t.reset(torch.tensor([1]))
            c_np.delay.set_delay_steps(np.array([1]), [1])
            c_t.delay.set_delay_steps(torch.tensor([1]), [1])
        a = [rng.normal(size=(e, j)) for _ in range(5)]
        o_np = c_np.compute(*a)
        o_t = c_t.compute(*[torch.from_numpy(x) for x in a])
        for field in ("q_target", "qd_target", "tau_computed", "tau_motor", "tau_friction", "tau_applied"):
            np.testing.assert_allclose(getattr(o_t, field).numpy(), getattr(o_np, field), rtol=1e-12, atol=1e-12)


@pytest.mark.unit
def test_from_specs_validation():
    a = ActuatorSpec("a", ("a",), 10.0, 5.0, 5.0, PDGains(300.0, 10.0), gearbox=Gearbox.single(10, 1e-4))
    b = replace(a, name="b", joint_names_expr=("b",), gains=PDGains(1.0, 0.01), latency_range_s=(0.0, 0.01))
    with pytest.raises(ValueError, match="share one latency range"):
        ActuatorChain.from_specs([a, b], ChainTiming(0.005), 2, generator=np.random.default_rng(0))
    with pytest.raises(ValueError, match="'a'"):  # J = 0.01, kd = 10 at 5 ms: margin 2.69
        ActuatorChain.from_specs([a], ChainTiming(0.005), 2)
    ActuatorChain.from_specs([a], ChainTiming(0.005), 2, check_stability=False)
    with pytest.raises(ValueError, match="must divide decimation"):
        ChainTiming(0.005, decimation=4, servo_period_steps=3)
