"""The per-physics-step actuator pipeline shared by Isaac Lab, the MuJoCo sim2sim loop and the deploy runtime.

One physics step of :meth:`ActuatorChain.compute` (stages in brackets are optional, off by default)::

    latest policy target (q*, q̇*, τ_ff), passed on every physics step
      -> TargetInterpolator   hold (identity) / linear interpolation across the D = decimation physics steps
      -> CommandDelay         per-env transport latency, k_e physics steps
      -> [position low-pass]  q*_f[k] = q*[k] + β_p·(q*_f[k−1] − q*[k]),  β = exp(−2π·f·dt)   (drive command filter)
      -> PD + feed-forward    τ_cmd = kp·(q*_f − q) + kd·(q̇* − q̇) + τ_ff      (q, q̇: θ_m, θ̇_m where compliant)
      -> ZeroOrderHold        τ_cmd recomputed every P = servo_period_steps physics steps, held in between
      -> saturation           τ_ref = clip(τ_cmd, τ_lo(ω), τ_hi(ω))        (box ∩ torque–speed line, every step)
      -> [speed limit]        τ_ref = 0 where it pushes |ω| further past v_max (torque cut-off)
      -> [current loop]       τ_i[k] = τ_ref[k] + β_c·(τ_i[k−1] − τ_ref[k]);  τ_motor = clip(τ_i, τ_lo(ω), τ_hi(ω))
      -> [transmission]       motor J_m + dead-zone spring–damper (k, c, b) -> τ_link = k·dz_b(θ_m − q) + c·(θ̇_m − q̇)
      -> + friction           τ_applied = τ_link + τ_f(q̇)                  (optional, explicit)

``ω`` is the speed the drive sees: the joint velocity ``q̇``, or the motor's ``θ̇_m`` where the transmission is
compliant (back-EMF and the drive's speed limit follow the motor; so does the PD, which closes on the drive's rotor
encoder: a collocated loop).

Order, and why: interpolation happens on the policy computer before the bus, so the bus latency delays the
interpolated stream (this also keeps every env's interpolation phase aligned with the policy step); the drive's
command filter smooths what arrives from the bus, before its position loop (on a robot the deploy runtime runs this
filter itself before sending, on every robot, so a drive with its own command filter must have it off:
docs/policy_format.md). The drive's current limit acts on the
motor torque at every step (it follows the speed faster than the servo loop); its speed limiter is firmware acting on
the same current reference (both are clips to intervals containing zero, so their order does not matter). The
current loop then lags the clipped reference (clipping first: no wind-up beyond the current limit), and the
torque–speed (voltage) limit bounds the current actually reached, so ``τ_motor`` stays in its envelope. That torque
drives the motor side of the transmission; only what the gear teeth/spring pass reaches the link. Friction is a
passive loss in the transmission, so it is added last, on the joint velocity: the *motor* torque stays in its
envelope, while the torque the joint feels may exceed it in braking, as on hardware.

Stages that are off (hold, zero delay, servo at the physics rate, no friction, no filter/speed limit/transmission)
cost nothing and leave the torques bit-identical; at 256 envs × 29 joints on this CPU a step costs ~0.1 ms (hold, no
delay) to ~0.3 ms (interpolation, delay, slower servo) in torch. A stage is on when some joint of the parameters
given at construction uses it (:class:`ChainStages`); per-env randomization can then change its values in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from realgap.actuators._xp import Array, EnvIds, concat_cols, is_torch, namespace
from realgap.actuators.delay import CommandDelay, latency_range_to_steps
from realgap.actuators.filters import LowPass, check_cutoff, lowpass_decay
from realgap.actuators.hold import TargetInterpolator, TargetMode, ZeroOrderHold
from realgap.actuators.models import clip_torque_speed, clip_velocity_limit, friction_torque, pd_torque
from realgap.actuators.params import JointParams
from realgap.actuators.spec import ActuatorSpec, check_explicit_stability, check_physics_step
from realgap.actuators.transmission import ElasticTransmission


class RatesLike(Protocol):
    """Anything shaped like :class:`realgap.envs.rates.RateSpec` (not imported: actuators stay below envs)."""

    sim_dt: float
    decimation: int
    servo_period_steps: int
    target_mode: str


@dataclass(frozen=True)
class ChainTiming:
    """Step sizes the chain needs.

    Attributes:
        physics_dt: Physics step, s, > 0.
        decimation: Physics steps per policy step ``D`` >= 1.
        servo_period_steps: Physics steps per servo (control) update ``P`` >= 1; must divide ``D``.
        target_mode: ``"hold"`` or ``"interpolate"`` the policy target between policy steps.
    """

    physics_dt: float
    decimation: int = 1
    servo_period_steps: int = 1
    target_mode: TargetMode = "hold"

    def __post_init__(self) -> None:
        if not self.physics_dt > 0:
            raise ValueError(f"ChainTiming: physics_dt must be > 0 s, got {self.physics_dt!r}")
        if self.decimation < 1 or self.servo_period_steps < 1:
            raise ValueError(
                f"ChainTiming: decimation ({self.decimation}) and servo_period_steps ({self.servo_period_steps}) "
                "must be >= 1"
            )
        if self.decimation % self.servo_period_steps:
            raise ValueError(
                f"ChainTiming: servo_period_steps ({self.servo_period_steps}) must divide decimation "
                f"({self.decimation})"
            )
        if self.target_mode not in ("hold", "interpolate"):
            raise ValueError(f"ChainTiming: target_mode must be 'hold' or 'interpolate', got {self.target_mode!r}")

    @classmethod
    def from_rates(cls, rates: RatesLike) -> ChainTiming:
        """From a ``RateSpec`` (``sim_dt``, ``decimation``, ``servo_period_steps``, ``target_mode``)."""
        mode: Any = rates.target_mode
        return cls(rates.sim_dt, rates.decimation, rates.servo_period_steps, mode)


@dataclass(frozen=True)
class ChainStages:
    """Which optional stages :class:`ActuatorChain` runs (a stage that is off costs nothing and is the identity).

    Attributes:
        velocity_limit: Torque cut-off at ``JointParams.velocity_limit``.
        position_filter: Low-pass on ``q*`` at ``JointParams.position_filter_hz``.
        torque_filter: Current-loop lag at ``JointParams.torque_filter_hz``.
        transmission: Compliant transmission with backlash (``transmission_stiffness``, ``transmission_damping``,
            ``backlash``, ``motor_inertia``).
    """

    velocity_limit: bool = False
    position_filter: bool = False
    torque_filter: bool = False
    transmission: bool = False

    @classmethod
    def from_params(cls, params: JointParams) -> ChainStages:
        """On where some joint sets a non-neutral value (finite limit/cutoff/stiffness)."""
        inf = float("inf")
        return cls(
            velocity_limit=params.active("velocity_limit", inf),
            position_filter=params.active("position_filter_hz", inf),
            torque_filter=params.active("torque_filter_hz", inf),
            transmission=params.active("transmission_stiffness", inf),
        )


@dataclass(frozen=True)
class ChainOutput:
    """Everything one physics step produced, for the simulator and for logging.

    Attributes:
        q_target: Position target the servo used (interpolated, delayed), rad.
        qd_target: Velocity target the servo used, rad/s.
        tau_computed: PD + feed-forward torque as held at the servo rate, before saturation, N·m.
        tau_motor: ``tau_computed`` saturated (speed-limited, current-loop filtered) to the torque envelope, N·m.
        tau_friction: Friction torque (zero when the chain does not model friction), N·m.
        tau_applied: ``tau_transmitted + tau_friction``: what to apply to the joint, N·m.
        tau_transmitted: What the transmission passes to the link, N·m (``tau_motor`` when rigid).

    Shape:
        Every field ``(E, J)``.
    """

    q_target: Array
    qd_target: Array
    tau_computed: Array
    tau_motor: Array
    tau_friction: Array
    tau_applied: Array
    tau_transmitted: Array | None = None


class ActuatorChain:
    """Stateful actuator pipeline (see the module docstring), one call per physics step, numpy or torch.

    Args:
        params: Per-joint (or per-env) parameters; converted to the inputs' backend on the first call.
        timing: Physics step, decimation, servo period, target mode.
        num_envs: ``E``.
        delay_steps: ``(min, max)`` command delay, physics steps.
        generator: ``numpy.random.Generator`` or ``torch.Generator`` drawing the per-env delays (construction and
            every :meth:`reset`); required when ``min < max``.
        apply_friction: Add :func:`friction_torque` explicitly. Leave ``False`` when the simulator already models
            joint friction (e.g. MuJoCo ``frictionloss`` imported with the MJCF), or friction is counted twice.
        device: Torch device for the delays (defaults to the generator's; moved to the inputs' device anyway).
        stages: Optional stages to run; ``None``: :meth:`ChainStages.from_params` (turn one on explicitly to
            randomize it away from a neutral nominal value).

    Raises:
        ValueError: A filter cutoff at or above the Nyquist rate of ``timing.physics_dt``, or backlash on a rigid
            joint (names the field, the value and the limit).

    Per-env randomization: ``chain.params = chain.params.expand(num_envs)`` once, then write rows in place
    (``chain.params.kp[env_ids] = ...``); ``chain.delay.set_delay_steps`` overrides drawn delays; a finite cutoff or
    speed limit written into a stage that is off needs :meth:`set_stages` to act. Call :meth:`reset` with the ids of
    the envs being reset (Isaac Lab: from the articulation's reset).
    """

    def __init__(
        self,
        params: JointParams,
        timing: ChainTiming,
        num_envs: int,
        *,
        delay_steps: tuple[int, int] = (0, 0),
        generator: Any = None,
        apply_friction: bool = False,
        device: Any = None,
        stages: ChainStages | None = None,
    ) -> None:
        self.params = params
        self.timing = timing
        self.num_envs = num_envs
        self.apply_friction = apply_friction
        self.stages = ChainStages.from_params(params) if stages is None else stages
        check_stage_params(params, self.stages, timing.physics_dt)
        self.position_filter = LowPass(num_envs)
        self.torque_filter = LowPass(num_envs)
        self.transmission = ElasticTransmission(num_envs, timing.physics_dt)
        self.interpolator = TargetInterpolator(num_envs, timing.decimation, timing.target_mode)
        self.delay = CommandDelay(num_envs, delay_steps[0], delay_steps[1], generator, device)
        self.servo = ZeroOrderHold(num_envs, timing.servo_period_steps)
        self.last: ChainOutput | None = None
        """Output of the latest :meth:`compute`."""
        self._zeros: Array | None = None  # cached (E, J) zeros (read-only use)

    @classmethod
    def from_specs(
        cls,
        specs: Sequence[ActuatorSpec],
        timing: ChainTiming,
        num_envs: int,
        *,
        generator: Any = None,
        backend: Literal["numpy", "torch"] = "numpy",
        device: Any = None,
        dtype: Any = None,
        apply_friction: bool = False,
        check_stability: bool = True,
    ) -> ActuatorChain:
        """Build from one spec per joint (all specs must share one latency range: one command bus).

        With ``check_stability`` every spec must pass :func:`check_explicit_stability` at the servo period
        ``P·dt`` (the torque is held that long), including the friction slope when ``apply_friction``, and its
        compliant transmission :func:`check_physics_step` at ``dt`` (filter cutoffs are always checked).
        """
        ranges = {s.latency_range_s for s in specs}
        if len(ranges) != 1:
            named = sorted({f"{s.name}: {s.latency_range_s}" for s in specs})
            raise ValueError(f"all joints of one chain share one latency range (one bus), got {named}")
        if check_stability:
            unique = list({s.name: s for s in specs}.values())
            dt_servo = timing.physics_dt * timing.servo_period_steps
            check_explicit_stability(unique, dt_servo, include_friction=apply_friction)
            check_physics_step(unique, timing.physics_dt)
        params = JointParams.from_specs(specs, backend=backend, device=device, dtype=dtype)
        delay = latency_range_to_steps(next(iter(ranges)), timing.physics_dt)
        return cls(
            params,
            timing,
            num_envs,
            delay_steps=delay,
            generator=generator,
            apply_friction=apply_friction,
            device=device,
        )

    def reset(self, env_ids: EnvIds = None) -> None:
        """Reset ``env_ids`` only: new delays, fresh policy period and servo phase, no remembered targets, filters
        without a past, the transmission re-seated in static equilibrium on the next step."""
        self.interpolator.reset(env_ids)
        self.delay.reset(env_ids)
        self.servo.reset(env_ids)
        if self.stages.position_filter:
            self.position_filter.reset(env_ids)
        if self.stages.torque_filter:
            self.torque_filter.reset(env_ids)
        if self.stages.transmission:
            self.transmission.reset(env_ids)

    def set_stages(self, stages: ChainStages) -> None:
        """Switch the command filter, the current loop or the speed limit on or off at runtime (e.g. a robustness
        sweep writing a finite cutoff into a chain built without one). A stage switched on starts without a past.

        Raises:
            ValueError: The params cannot run the new stages (as at construction), or ``stages.transmission`` differs
                from the chain's: the compliant transmission is fixed at construction, because its motor inertia is
                a state of the chain while a rigid joint's rotor is the simulator's armature (counted once).
        """
        if stages.transmission != self.stages.transmission:
            raise ValueError(
                f"ActuatorChain: the transmission stage cannot be switched at runtime (built "
                f"{'compliant' if self.stages.transmission else 'rigid'}): a compliant joint's motor inertia J_m is "
                "a state of the chain and must be left out of the simulator's armature, which is set when the "
                "simulator is built; set transmission_stiffness in the spec both are built from"
            )
        check_stage_params(self.params, stages, self.timing.physics_dt)
        if stages.position_filter and not self.stages.position_filter:
            self.position_filter.reset()
        if stages.torque_filter and not self.stages.torque_filter:
            self.torque_filter.reset()
        self.stages = stages

    def _params_like(self, q: Array) -> JointParams:
        kp = self.params.kp
        same = is_torch(kp) == is_torch(q) and kp.dtype == q.dtype
        if same and is_torch(q):
            same = kp.device == q.device
        if not same:
            self.params = self.params.to_like(q)
        return self.params

    def compute(
        self, q_target: Array, qd_target: Array, q: Array, qd: Array, tau_ff: Array | None = None
    ) -> ChainOutput:
        """Advance one physics step and return the torques (also kept in :attr:`last`).

        Args:
            q_target: Latest policy position target, rad (passed on every physics step).
            qd_target: Latest policy velocity target, rad/s.
            q: Measured joint position, rad.
            qd: Measured joint velocity, rad/s.
            tau_ff: Feed-forward torque, N·m (``None``: zero).

        Shape:
            All inputs ``(E, J)``; every output field ``(E, J)``.
        """
        p = self._params_like(q)
        xp = namespace(q)
        if self._zeros is None or tuple(self._zeros.shape) != tuple(q.shape):
            self._zeros = xp.zeros_like(q)
        if self.interpolator.active or self.delay.max_steps > 0:
            # One (E, 3J) stream so interpolation and delay treat the three channels identically.
            j = q.shape[1]
            command = concat_cols([q_target, qd_target, self._zeros if tau_ff is None else tau_ff])
            command = self.delay.step(self.interpolator.step(command))
            q_target, qd_target, tau_ff = command[:, :j], command[:, j : 2 * j], command[:, 2 * j :]
        stages, dt = self.stages, self.timing.physics_dt
        if stages.position_filter:
            q_target = self.position_filter.step(q_target, lowpass_decay(p.position_filter_hz, dt))
        # what the drive measures: the motor where the transmission is compliant (a collocated PD), else the joint
        q_m, speed = self.transmission.motor_state(q, qd, p.transmission_stiffness) if stages.transmission else (q, qd)
        tau_cmd = self.servo.step(pd_torque(q_target, qd_target, q_m, speed, p.kp, p.kd, tau_ff))
        tau_motor = clip_torque_speed(tau_cmd, speed, p.peak_torque, p.no_load_speed)
        if stages.velocity_limit:
            tau_motor = clip_velocity_limit(tau_motor, speed, p.velocity_limit)
        if stages.torque_filter:
            tau_current = self.torque_filter.step(tau_motor, lowpass_decay(p.torque_filter_hz, dt))
            tau_motor = clip_torque_speed(tau_current, speed, p.peak_torque, p.no_load_speed)
        tau_link = tau_motor
        if stages.transmission:
            tau_link = self.transmission.step(
                tau_motor, q, qd, p.transmission_stiffness, p.transmission_damping, p.backlash, p.motor_inertia
            )
        if self.apply_friction:
            tau_f = friction_torque(qd, p.coulomb_friction, p.viscous_friction, p.friction_velocity_scale)
            tau_applied = tau_link + tau_f
        else:
            tau_f, tau_applied = self._zeros, tau_link
        self.last = ChainOutput(q_target, qd_target, tau_cmd, tau_motor, tau_f, tau_applied, tau_link)
        return self.last


def check_stage_params(params: JointParams, stages: ChainStages, dt: float) -> None:
    """Refuse what the enabled stages cannot run at the physics step ``dt`` (s): names the field, the worst value and
    the limit. Called at chain construction and :meth:`ActuatorChain.set_stages`, and by the deploy metadata loader.

    Raises:
        ValueError: A stage that is on lacks its parameters, a filter cutoff is not below the Nyquist rate
            ``1/(2·dt)``, a speed limit is not > 0, or the transmission values are out of range.
    """
    needs = {
        "velocity_limit": ("velocity_limit",),
        "position_filter": ("position_filter_hz",),
        "torque_filter": ("torque_filter_hz",),
        "transmission": ("transmission_stiffness", "transmission_damping", "backlash", "motor_inertia"),
    }
    for stage, names in needs.items():
        for name in names:
            if getattr(stages, stage) and getattr(params, name) is None:
                raise ValueError(f"ActuatorChain: stage '{stage}' is on but JointParams.{name} is None")
    for name in ("position_filter_hz", "torque_filter_hz"):
        if getattr(stages, name.replace("_hz", "")):
            check_cutoff(getattr(params, name), dt, "JointParams", name)
    if stages.velocity_limit and not bool((params.velocity_limit > 0).all()):
        raise ValueError(f"JointParams: velocity_limit [rad/s] must be > 0, got {params.velocity_limit!r}")
    if stages.transmission:
        xp = namespace(params.backlash)
        rigid = ~xp.isfinite(params.transmission_stiffness)
        for name, value, ok in (
            ("transmission_stiffness [N·m/rad]", params.transmission_stiffness, params.transmission_stiffness > 0),
            ("transmission_damping [N·m·s/rad]", params.transmission_damping, params.transmission_damping >= 0),
            ("backlash [rad]", params.backlash, (params.backlash >= 0) & ~(rigid & (params.backlash > 0))),
            ("motor_inertia [kg·m²]", params.motor_inertia, rigid | (params.motor_inertia > 0)),
        ):
            if not bool(ok.all()):
                raise ValueError(
                    f"JointParams: {name} must be > 0 (stiffness, motor inertia where compliant) or >= 0 "
                    f"(damping, backlash; backlash only with a finite stiffness), got {value!r}"
                )
