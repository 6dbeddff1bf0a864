"""ActuatorChain's optional stages: bit-identical when off, wiring and order when on, per-env reset, refusals."""

from dataclasses import fields, replace

import numpy as np
import pytest
import torch

from realgap.actuators import (
    ActuatorChain,
    ActuatorSpec,
    ChainStages,
    ChainTiming,
    CommandDelay,
    JointParams,
    PDGains,
    TargetInterpolator,
    ZeroOrderHold,
    clip_torque_speed,
    friction_torque,
    pd_torque,
    torque_speed_bounds,
)

pytestmark = pytest.mark.unit

TIMING = ChainTiming(physics_dt=0.005, decimation=4, servo_period_steps=2, target_mode="interpolate")


def _spec(name="a", **kw) -> ActuatorSpec:
    base = dict(
        peak_torque=30.0,
        continuous_torque=10.0,
        velocity_limit=8.0,
        gains=PDGains(60.0, 1.5),
        armature=0.02,
        no_load_speed=12.0,
        link_inertia=0.05,
        coulomb_friction=0.5,
        viscous_friction=0.05,
        friction_velocity_scale=0.5,
        latency_range_s=(0.0, 0.015),
    )
    base.update(kw)
    return ActuatorSpec(name, (f"{name}.*",), **base)


class _ReferenceChain:
    """The chain as it was before the optional stages (interpolate -> delay -> PD -> hold -> clip -> friction)."""

    def __init__(self, p: JointParams, num_envs: int, generator) -> None:
        self.p = p
        self.interpolator = TargetInterpolator(num_envs, TIMING.decimation, TIMING.target_mode)
        self.delay = CommandDelay(num_envs, 0, 3, generator)
        self.servo = ZeroOrderHold(num_envs, TIMING.servo_period_steps)

    def reset(self, env_ids) -> None:
        self.interpolator.reset(env_ids)
        self.delay.reset(env_ids)
        self.servo.reset(env_ids)

    def compute(self, q_t, qd_t, q, qd, tau_ff):
        p, j, xp = self.p, q.shape[1], torch if torch.is_tensor(q) else np
        cmd = self.delay.step(self.interpolator.step(xp.concatenate([q_t, qd_t, tau_ff], 1)))
        tau = self.servo.step(pd_torque(cmd[:, :j], cmd[:, j : 2 * j], q, qd, p.kp, p.kd, cmd[:, 2 * j :]))
        tau = clip_torque_speed(tau, qd, p.peak_torque, p.no_load_speed)
        return tau + friction_torque(qd, p.coulomb_friction, p.viscous_friction, p.friction_velocity_scale)


def _neutral(p: JointParams) -> JointParams:
    """Every optional stage present at its neutral value (inf limits/cutoffs/stiffness, zero damping/backlash)."""
    inf, zero = p.kp * 0 + float("inf"), p.kp * 0
    return replace(
        p,
        velocity_limit=inf,
        position_filter_hz=inf,
        torque_filter_hz=inf,
        transmission_stiffness=inf,
        transmission_damping=zero,
        backlash=zero,
        motor_inertia=zero + 0.02,
    )


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_stages_off_or_neutral_give_bit_identical_torques(backend):
    # 5 envs × 3 joints, interpolation, servo every 2 steps, random delays 0..3, friction, a mid-period reset:
    # (a) from_specs (new fields filled, all off), (b) the 7-field JointParams of older callers, (c) every stage
    # forced on with neutral values — all equal the pre-stage pipeline bit for bit.
    specs = [_spec("a"), _spec("b", peak_torque=12.0, no_load_speed=None), _spec("c")]
    gen = (lambda: np.random.default_rng(7)) if backend == "numpy" else (lambda: torch.Generator().manual_seed(7))
    mk = dict(backend=backend, apply_friction=True)
    a = ActuatorChain.from_specs(
        specs, TIMING, 5, generator=gen(), **mk, dtype=np.float64 if backend == "numpy" else torch.float64
    )
    assert a.stages == ChainStages()
    legacy = JointParams(**{f.name: getattr(a.params, f.name) for f in fields(JointParams)[:7]})
    b = ActuatorChain(legacy, TIMING, 5, delay_steps=(0, 3), generator=gen(), apply_friction=True)
    on = ChainStages(True, True, True, True)
    c = ActuatorChain(
        _neutral(a.params), TIMING, 5, delay_steps=(0, 3), generator=gen(), apply_friction=True, stages=on
    )
    ref = _ReferenceChain(a.params, 5, gen())
    rng = np.random.default_rng(1)
    conv = (lambda x: x) if backend == "numpy" else torch.as_tensor
    for k in range(40):
        if k == 13:
            for chain in (a, b, c, ref):
                chain.reset([1, 3])
        q_t, qd_t, q, qd, ff = (conv(rng.normal(size=(5, 3)) * s) for s in (0.5, 2.0, 0.5, 6.0, 3.0))
        expected = np.asarray(ref.compute(q_t, qd_t, q, qd, ff))
        for chain in (a, b, c):
            np.testing.assert_array_equal(np.asarray(chain.compute(q_t, qd_t, q, qd, ff).tau_applied), expected)


def test_speed_limit_in_the_chain():
    # kp = 60, target +1 rad from 0 -> τ_cmd = 60, clipped to the envelope at q̇ = 9: 30·(1 − 9/12) = 7.5 N·m.
    # Enforced limit 8 rad/s: q̇ = 9 > 8 and τ > 0 pushes further -> 0. Not enforced: 7.5.
    timing = ChainTiming(0.005)
    args = (np.ones((1, 1)), np.zeros((1, 1)), np.zeros((1, 1)), np.full((1, 1), 9.0))
    free = ActuatorChain.from_specs([_spec(latency_range_s=(0, 0))], timing, 1)
    assert free.compute(*args).tau_motor[0, 0] == pytest.approx(7.5)
    cut = ActuatorChain.from_specs([_spec(latency_range_s=(0, 0), enforce_velocity_limit=True)], timing, 1)
    assert cut.stages == ChainStages(velocity_limit=True)
    assert cut.compute(*args).tau_motor[0, 0] == 0.0


def test_current_loop_lags_the_reference_and_stays_in_the_envelope():
    # f_c = 20 Hz at dt = 5 ms: β = exp(−2π·20·0.005) = 0.5335. Reference 60 clipped to 30 (q̇ = 0): the motor
    # torque goes 0 (first step: no past, reference 0) -> 30·(1 − β) = 13.99 -> 30·(1 − β²) = 21.46; never above 30.
    chain = ActuatorChain.from_specs([_spec(latency_range_s=(0, 0), torque_filter_hz=20.0)], ChainTiming(0.005), 1)
    z = np.zeros((1, 1))
    assert chain.compute(z, z, z, z).tau_motor[0, 0] == 0.0
    beta = np.exp(-2 * np.pi * 20 * 0.005)
    taus = [chain.compute(np.ones((1, 1)), z, z, z).tau_motor[0, 0] for _ in range(60)]
    np.testing.assert_allclose(taus[:2], [30 * (1 - beta), 30 * (1 - beta**2)], rtol=1e-12)
    assert max(taus) <= 30.0
    chain.reset()  # no past after a reset: the first torque is the (clipped) reference itself
    assert chain.compute(-np.ones((1, 1)), z, z, z).tau_motor[0, 0] == -30.0


def test_position_filter_smooths_the_target_the_servo_sees():
    # f = 10 Hz, dt = 5 ms: β = exp(−π/10) = 0.7304; target 0 then 1: q*_f = 1 − β, 1 − β², ...
    chain = ActuatorChain.from_specs([_spec(latency_range_s=(0, 0), position_filter_hz=10.0)], ChainTiming(0.005), 2)
    z = np.zeros((2, 1))
    chain.compute(z, z, z, z)
    beta = np.exp(-2 * np.pi * 10 * 0.005)
    seen = [chain.compute(np.ones((2, 1)), z, z, z).q_target[0, 0] for _ in range(3)]
    np.testing.assert_allclose(seen, 1 - beta ** np.arange(1, 4), rtol=1e-12)
    chain.reset([1])
    out = chain.compute(np.full((2, 1), 2.0), z, z, z).q_target
    assert out[1, 0] == 2.0 and out[0, 0] == pytest.approx(2 - (2 - (1 - beta**3)) * beta)


def test_compliant_chain_holds_a_target_on_a_link_and_resets_per_env():
    # Series-elastic joint (k = 300, c = 0.5, J_m = reflected 0.02) driving a link J_l = 0.05 integrated here, PD on
    # the motor (the drive's encoder): it settles at the target; the torque envelope holds at every step; a reset
    # re-seats env 1.
    spec = _spec(
        latency_range_s=(0, 0),
        transmission_stiffness=300.0,
        transmission_damping=0.5,
        backlash=0.002,
        coulomb_friction=0.0,
        viscous_friction=0.0,
    )
    chain = ActuatorChain.from_specs([spec], ChainTiming(0.001), 2)
    assert chain.stages == ChainStages(transmission=True)
    q, qd, tgt, z = np.zeros((2, 1)), np.zeros((2, 1)), np.full((2, 1), 0.3), np.zeros((2, 1))
    for _ in range(3000):
        _, speed = chain.transmission.motor_state(q, qd, chain.params.transmission_stiffness)  # what the drive sees
        out = chain.compute(tgt, z, q, qd)
        lo, hi = torque_speed_bounds(speed, 30.0, 12.0)
        assert np.all(out.tau_motor >= lo - 1e-9) and np.all(out.tau_motor <= hi + 1e-9)
        qd = qd + 0.001 * out.tau_applied / 0.05
        q = q + 0.001 * qd
    np.testing.assert_allclose(q, 0.3, atol=2e-3)
    chain.reset([1])
    out = chain.compute(np.full((2, 1), 0.5), z, q, qd)
    assert out.tau_transmitted[1, 0] == pytest.approx(out.tau_motor[1, 0], rel=1e-12)  # re-seated: no jolt


def test_chain_refuses_what_its_stages_cannot_run():
    base = ActuatorChain.from_specs([_spec(latency_range_s=(0, 0))], ChainTiming(0.005), 1).params
    with pytest.raises(ValueError, match=r"JointParams: torque_filter_hz \[Hz\] must be below the Nyquist .* 100 Hz"):
        ActuatorChain(replace(_neutral(base), torque_filter_hz=base.kp * 0 + 100.0), ChainTiming(0.005), 1)
    with pytest.raises(ValueError, match=r"backlash \[rad\] .* backlash only with a finite stiffness"):
        ActuatorChain(
            replace(_neutral(base), backlash=base.kp * 0 + 0.01),
            ChainTiming(0.005),
            1,
            stages=ChainStages(transmission=True),
        )
    with pytest.raises(ValueError, match=r"stage 'torque_filter' is on but JointParams.torque_filter_hz is None"):
        only_filter = ChainStages(torque_filter=True)
        ActuatorChain(replace(base, torque_filter_hz=None), ChainTiming(0.005), 1, stages=only_filter)
    # a link lighter than the motor binds: J_m = 0.02, J_l = 0.01, c = 0 -> k < 4/((100 − 50)·dt²) = 3200 N·m/rad
    with pytest.raises(
        ValueError,
        match=r"transmission_stiffness \[N·m/rad\] 5000.0 makes the elastic joint unstable"
        r".*need k < 3200 N·m/rad",
    ):
        ActuatorChain.from_specs([_spec(transmission_stiffness=5000.0, link_inertia=0.01)], ChainTiming(0.005), 1)


def test_stages_switched_on_at_runtime_act_per_env():
    # A chain built without current loop or speed limit, params per env, then written as a robustness sweep does:
    # env 0 keeps the neutral values (inf: bit-identical to the stage off), env 1 gets f_c = 10 Hz and v_max = 1 rad/s.
    # kp = 60, target 0.1 rad from rest: τ_ref = 6 N·m. β = exp(−2π·10·0.005) = 0.7304: after the reset (no past:
    # first output 0 for target 0) env 1 gives 6·(1 − β) = 1.618, then 6·(1 − β²) = 2.799 N·m; env 0 gives 6.
    chain = ActuatorChain.from_specs([_spec(latency_range_s=(0, 0))], ChainTiming(0.005), 2)
    chain.params = chain.params.expand(2)
    chain.params.torque_filter_hz[1] = 10.0
    chain.params.velocity_limit[1] = 1.0
    assert chain.stages == ChainStages()  # written values act only once their stage is on
    chain.set_stages(ChainStages(velocity_limit=True, torque_filter=True))
    z, tgt = np.zeros((2, 1)), np.full((2, 1), 0.1)
    chain.compute(z, z, z, z)
    beta = np.exp(-2 * np.pi * 10 * 0.005)
    taus = np.array([chain.compute(tgt, z, z, z).tau_applied[:, 0] for _ in range(2)])
    np.testing.assert_array_equal(taus[:, 0], [6.0, 6.0])
    np.testing.assert_allclose(taus[:, 1], [6 * (1 - beta), 6 * (1 - beta**2)], rtol=1e-12)
    # speed cut-off at q̇ = 2 rad/s: τ_ref = 6 − kd·2 = 3 N·m pushes further -> 0 in env 1 (v_max 1), passes in env 0
    # (inf); the cut acts on the reference, so env 1's current loop decays from 2.799 towards 0: β·2.799 = 2.044 N·m
    tau = chain.compute(tgt, z, z, np.full((2, 1), 2.0)).tau_motor[:, 0]
    assert tau[0] == pytest.approx(3.0) and tau[1] == pytest.approx(beta * 6 * (1 - beta**2))
    with pytest.raises(ValueError, match=r"JointParams: torque_filter_hz \[Hz\] must be below the Nyquist"):
        chain.params.torque_filter_hz[1] = 150.0
        chain.set_stages(ChainStages(torque_filter=True))  # checked again when a stage is switched
    with pytest.raises(ValueError, match=r"transmission stage cannot be switched at runtime \(built rigid\).*armature"):
        chain.set_stages(ChainStages(transmission=True))
