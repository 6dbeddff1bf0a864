"""Command delay (exact k-step lag, per-env, reset), servo-rate hold and target interpolation, numpy and torch."""

import numpy as np
import pytest
import torch

from realgap.actuators import CommandDelay, TargetInterpolator, ZeroOrderHold, latency_range_to_steps, latency_to_steps

pytestmark = pytest.mark.unit

BACKENDS = ["numpy", "torch"]


def _arr(backend: str, values) -> np.ndarray | torch.Tensor:
    a = np.asarray(values, dtype=np.float64)
    return torch.from_numpy(a) if backend == "torch" else a


def _gen(backend: str, seed: int):
    return torch.Generator().manual_seed(seed) if backend == "torch" else np.random.default_rng(seed)


def _np(x) -> np.ndarray:
    return x.numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


@pytest.mark.unit
def test_latency_to_steps_rounding():
    # nearest step, ties up: 7.5 ms / 5 ms = 1.5 -> 2; 15 ms -> 3; 2 ms -> 0.4 -> 0; 2.5 ms -> 0.5 -> 1; 0 -> 0
    assert [latency_to_steps(x, 0.005) for x in (0.0075, 0.015, 0.002, 0.0025, 0.0)] == [2, 3, 0, 1, 0]
    assert latency_range_to_steps((0.0, 0.010), 0.005) == (0, 2)
    with pytest.raises(ValueError, match="min 0.02 s > max 0.01 s"):
        latency_range_to_steps((0.02, 0.01), 0.005)
    with pytest.raises(ValueError, match="latency_s"):
        latency_to_steps(-0.001, 0.005)


@pytest.mark.unit
@pytest.mark.parametrize("backend", BACKENDS)
def test_command_reaches_output_exactly_k_steps_later(backend):
    # Env e has delay k_e = e. Command at step t for env e, joint j: 100·t + 10·e + j (distinct everywhere).
    delay = CommandDelay(num_envs=4, min_steps=0, max_steps=3, generator=_gen(backend, 0))
    delay.set_delay_steps(np.array([0, 1, 2, 3]))
    for t in range(10):
        cmd = _arr(backend, [[100 * t + 10 * e + j for j in range(2)] for e in range(4)])
        out = _np(delay.step(cmd))
        for e in range(4):
            src = max(t - e, 0)  # before k_e steps have passed, the first command (t = 0) is held
            np.testing.assert_array_equal(out[e], [100 * src + 10 * e + j for j in range(2)])


@pytest.mark.unit
@pytest.mark.parametrize("backend", BACKENDS)
def test_delays_differ_across_envs_and_are_reproducible(backend):
    d1 = CommandDelay(64, 0, 3, _gen(backend, 7))
    d2 = CommandDelay(64, 0, 3, _gen(backend, 7))
    steps = _np(d1.delay_steps)
    np.testing.assert_array_equal(steps, _np(d2.delay_steps))
    # 64 uniform draws from {0,1,2,3}: P(some value missing) <= 4·(3/4)^64 ≈ 4e-8
    assert set(steps.tolist()) == {0, 1, 2, 3}


@pytest.mark.unit
@pytest.mark.parametrize("backend", BACKENDS)
def test_reset_resamples_and_clears_only_reset_envs(backend):
    delay = CommandDelay(32, 1, 4, _gen(backend, 1))
    for t in range(6):
        delay.step(_arr(backend, np.full((32, 1), float(t))))
    before = _np(delay.delay_steps).copy()
    reset_ids = [3, 17]
    changed = False
    for _ in range(20):  # resampling {1..4} twice for 2 envs: P(no change in 20 tries) ≈ (1/4)^40
        delay.reset(reset_ids)
        after = _np(delay.delay_steps)
        keep = np.setdiff1d(np.arange(32), reset_ids)
        np.testing.assert_array_equal(after[keep], before[keep])
        changed |= bool(np.any(after[reset_ids] != before[reset_ids]))
    assert changed
    out = _np(delay.step(_arr(backend, np.full((32, 1), 6.0))))
    # reset envs have no history: they output the new command; the others still lag by their delay (>= 1)
    assert np.all(out[reset_ids, 0] == 6.0)
    np.testing.assert_array_equal(out[keep, 0], 6.0 - before[keep])


@pytest.mark.unit
def test_delay_validation():
    with pytest.raises(ValueError, match="min_steps=3, max_steps=1"):
        CommandDelay(4, 3, 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="generator is required"):
        CommandDelay(4, 0, 2)
    delay = CommandDelay(4, 0, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"\[0, 2\]"):
        delay.set_delay_steps(np.array([0, 1, 2, 3]))


@pytest.mark.unit
@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_order_hold_updates_every_period(backend):
    # P = 3: inputs 0..8 -> outputs 0,0,0,3,3,3,6,6,6
    hold = ZeroOrderHold(num_envs=2, period_steps=3)
    outs = [_np(hold.step(_arr(backend, [[float(t)], [float(-t)]])))[:, 0] for t in range(9)]
    np.testing.assert_array_equal([o[0] for o in outs], [0, 0, 0, 3, 3, 3, 6, 6, 6])
    np.testing.assert_array_equal([o[1] for o in outs], [0, 0, 0, -3, -3, -3, -6, -6, -6])


@pytest.mark.unit
@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_order_hold_periods_per_env(backend):
    # servo at the physics rate (P = 1) for env 0; env 1 behind a bridge holding each command's torque 4 steps
    hold = ZeroOrderHold(num_envs=2, period_steps=1)
    ref = _arr(backend, [0.0])
    periods = torch.tensor([4]) if backend == "torch" else np.array([4])
    hold.set_periods(periods, [1])
    assert list(_np(hold.periods)) == [1, 4] and isinstance(hold.periods, type(ref))
    outs = [_np(hold.step(_arr(backend, [[float(t)], [float(t)]])))[:, 0] for t in range(9)]
    np.testing.assert_array_equal([o[0] for o in outs], list(range(9)))
    np.testing.assert_array_equal([o[1] for o in outs], [0, 0, 0, 0, 4, 4, 4, 4, 8])
    hold.set_periods(periods[:1] * 0 + 1, None)  # back to the physics rate: the very next step updates
    hold.reset([1])
    np.testing.assert_array_equal(_np(hold.step(_arr(backend, [[9.0], [9.0]])))[:, 0], [9, 9])


@pytest.mark.unit
@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_order_hold_mid_period_reset_restarts_that_env_only(backend):
    hold = ZeroOrderHold(num_envs=2, period_steps=3)
    outs = []
    for t in range(7):
        if t == 4:
            hold.reset([1])  # env 1 updates at t = 4 and then every 3 steps (t = 7); env 0 keeps t = 3, 6
        outs.append(_np(hold.step(_arr(backend, [[float(t)], [float(t)]])))[:, 0])
    np.testing.assert_array_equal([o[0] for o in outs], [0, 0, 0, 3, 3, 3, 6])
    np.testing.assert_array_equal([o[1] for o in outs], [0, 0, 0, 3, 4, 4, 4])


@pytest.mark.unit
@pytest.mark.parametrize("backend", BACKENDS)
def test_interpolated_targets_are_exact(backend):
    # D = 4. Period 1 target 1.0 (first after reset: no ramp, 1.0 throughout). Period 2 target 3.0:
    # x_p = (1 − α)·1 + α·3 with α = (p+1)/4 -> 1.5, 2.0, 2.5, 3.0. Period 3 target −1.0 -> 2.0, 1.0, 0.0, −1.0.
    interp = TargetInterpolator(num_envs=1, decimation=4, mode="interpolate")
    sent = [1.0] * 4 + [3.0] * 4 + [-1.0, 7.0, 7.0, 7.0]  # 7.0 mid-period is ignored (latched at period start)
    got = [float(_np(interp.step(_arr(backend, [[x]])))[0, 0]) for x in sent]
    assert got == [1.0, 1.0, 1.0, 1.0, 1.5, 2.0, 2.5, 3.0, 2.0, 1.0, 0.0, -1.0]


@pytest.mark.unit
@pytest.mark.parametrize("backend", BACKENDS)
def test_interpolation_reset_restarts_only_reset_env(backend):
    interp = TargetInterpolator(num_envs=2, decimation=2, mode="interpolate")
    seq = []
    for t, x in enumerate([0.0, 0.0, 4.0, 4.0, 8.0, 8.0]):
        if t == 3:
            interp.reset([0])  # mid-period: env 0 starts a new period at t = 3 without a previous target
        seq.append(_np(interp.step(_arr(backend, [[x], [x]])))[:, 0].tolist())
    # D = 2, inputs 0,0,4,4,8,8. Env 1 (never reset): periods start at t = 0, 2, 4 -> 0,0 | 2,4 | 6,8.
    assert [s[1] for s in seq] == [0.0, 0.0, 2.0, 4.0, 6.0, 8.0]
    # Env 0: 0,0 | 2, then reset at t = 3: a new period latches 4 with no previous target -> 4, 4 (α = 1/2, 1);
    # t = 5 starts the next period latching 8 from prev 4 with α = 1/2 -> 6.
    assert [s[0] for s in seq] == [0.0, 0.0, 2.0, 4.0, 4.0, 6.0]


@pytest.mark.unit
def test_hold_mode_is_identity():
    interp = TargetInterpolator(num_envs=1, decimation=4, mode="hold")
    x = np.array([[0.3]])
    assert interp.step(x) is x
    with pytest.raises(ValueError, match="'linear'"):
        TargetInterpolator(1, 4, mode="linear")  # type: ignore[arg-type]
