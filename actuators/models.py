"""Stateless actuator math on ``(num_envs, num_joints)`` arrays (numpy or torch, chosen from the inputs).

Parameters broadcast: a float, a ``(num_joints,)`` array (one value per joint) or a ``(num_envs, num_joints)`` array
(per-env randomized values). Parameters are converted to the backend, dtype and device of the state array, so a
tensor that already matches is used without a copy. Units are SI at the joint side: rad, rad/s, N·m (m, m/s, N for
a prismatic joint).
"""

from __future__ import annotations

from realgap.actuators._xp import Array, as_like, clip, namespace


def pd_torque(
    q_target: Array,
    qd_target: Array,
    q: Array,
    qd: Array,
    kp: Array | float,
    kd: Array | float,
    tau_ff: Array | None = None,
) -> Array:
    """Ideal PD torque with a velocity target and optional feed-forward: realgap's one PD law.

    ``τ = kp·(q* − q) + kd·(q̇* − q̇) + τ_ff``

    Every PD in realgap is this function (through the :class:`~realgap.actuators.chain.ActuatorChain` or directly).
    Saturation is the caller's next step (the chain's envelope, or :func:`clip_box` on the simulator's peak torque),
    never folded in here.

    Args:
        q_target: Target position ``q*``, rad.
        qd_target: Target velocity ``q̇*``, rad/s.
        q: Joint position, rad.
        qd: Joint velocity, rad/s.
        kp: Stiffness, N·m/rad.
        kd: Damping, N·m·s/rad.
        tau_ff: Feed-forward torque, N·m (``None``: zero).

    Returns:
        Unsaturated torque, N·m.

    Shape:
        States ``(E, J)``; gains ``()``, ``(J,)`` or ``(E, J)``; output ``(E, J)``.
    """
    tau = as_like(kp, q) * (q_target - q) + as_like(kd, q) * (qd_target - qd)
    return tau if tau_ff is None else tau + tau_ff


def clip_box(tau: Array, limit: Array | float) -> Array:
    """Symmetric box saturation ``clip(τ, −τ_max, τ_max)``.

    Args:
        tau: Torque, N·m.
        limit: ``τ_max`` > 0, N·m.

    Shape:
        ``tau`` ``(E, J)``; ``limit`` ``()``, ``(J,)`` or ``(E, J)``; output ``(E, J)``.
    """
    lim = as_like(limit, tau)
    return clip(tau, -lim, lim)


def torque_speed_bounds(qd: Array, peak_torque: Array | float, no_load_speed: Array | float) -> tuple[Array, Array]:
    """Instantaneous DC-motor torque envelope ``[τ_lo(q̇), τ_hi(q̇)]``.

    ``τ_hi = clip(τ_peak·(1 − q̇/ω_0), 0, τ_peak)``,  ``τ_lo = clip(τ_peak·(−1 − q̇/ω_0), −τ_peak, 0)``
    (computed as ``τ_peak·clip(1 − q̇/ω_0, 0, 1)`` and ``τ_peak·clip(−1 − q̇/ω_0, −1, 0)``, equal for ``τ_peak > 0``).

    Motoring (torque along the velocity) follows the stall line through ``(0, τ_peak)`` and ``(ω_0, 0)``; braking
    (torque against the velocity) is allowed up to ``τ_peak`` at any speed; zero torque is always inside. With
    ``ω_0 = inf`` this is the box ``[−τ_peak, τ_peak]``. Compared with Isaac Lab's ``DCMotor`` (stall line clipped to
    the *continuous* limit, and the velocity clamped so that beyond ``ω_0`` a braking torque is forced), the box here
    is the peak torque and the drive may always output zero.

    Args:
        qd: Joint velocity, rad/s.
        peak_torque: Stall/peak torque ``τ_peak`` > 0, N·m.
        no_load_speed: ``ω_0`` > 0, rad/s (``inf`` disables the line).

    Returns:
        ``(τ_lo, τ_hi)``, N·m, with ``τ_lo <= 0 <= τ_hi``.

    Shape:
        ``qd`` ``(E, J)``; parameters ``()``, ``(J,)`` or ``(E, J)``; outputs ``(E, J)``.
    """
    peak = as_like(peak_torque, qd)
    ratio = qd / as_like(no_load_speed, qd)
    return peak * clip(-1.0 - ratio, -1.0, 0.0), peak * clip(1.0 - ratio, 0.0, 1.0)


def clip_torque_speed(tau: Array, qd: Array, peak_torque: Array | float, no_load_speed: Array | float) -> Array:
    """Saturate ``τ`` to the torque–speed envelope of :func:`torque_speed_bounds`: ``clip(τ, τ_lo(q̇), τ_hi(q̇))``.

    Args:
        tau: Requested torque, N·m.
        qd: Joint velocity, rad/s.
        peak_torque: ``τ_peak`` > 0, N·m.
        no_load_speed: ``ω_0`` > 0, rad/s (``inf``: box only).

    Shape:
        ``tau``, ``qd`` ``(E, J)``; parameters ``()``, ``(J,)`` or ``(E, J)``; output ``(E, J)``.
    """
    lo, hi = torque_speed_bounds(qd, peak_torque, no_load_speed)
    return clip(tau, lo, hi)


def clip_velocity_limit(tau: Array, qd: Array, velocity_limit: Array | float) -> Array:
    """The drive's speed limit as a torque cut-off: beyond ``±v_max`` only torque that decelerates passes.

    ``τ' = min(τ, 0)`` if ``q̇ > v_max``;  ``τ' = max(τ, 0)`` if ``q̇ < −v_max``;  ``τ' = τ`` otherwise.

    Why this model: the chain only commands torque (the simulator owns the state, so clamping ``q̇`` would inject
    momentum the dynamics never produced), and a servo drive in torque mode limits speed the same way, by refusing
    current that accelerates further past its limit (ODrive's ``enable_torque_mode_vel_limit`` clamps the torque with
    a proportional ramp; this is its high-gain limit, which needs no extra gain to tune or to destabilize the explicit
    step). It is passive: it never adds torque, braking stays allowed, and zero torque is always inside, so it
    composes with :func:`clip_torque_speed` in either order. It does not guarantee ``|q̇| <= v_max`` when external
    loads (gravity, contacts) drive the joint; with a rate-limited servo it may chatter at the limit, as drives do.

    Args:
        tau: Torque, N·m.
        qd: Joint velocity, rad/s.
        velocity_limit: ``v_max`` > 0, rad/s (``inf``: no limit for that joint).

    Shape:
        ``tau``, ``qd`` ``(E, J)``; ``velocity_limit`` ``()``, ``(J,)`` or ``(E, J)``; output ``(E, J)``.
    """
    v = as_like(velocity_limit, qd)
    pushing_past = ((qd > v) & (tau > 0)) | ((qd < -v) & (tau < 0))
    return namespace(tau).where(pushing_past, 0.0 * tau, tau)


def friction_torque(qd: Array, coulomb: Array | float, viscous: Array | float, velocity_scale: Array | float) -> Array:
    """Joint friction torque (acts against the motion), Coulomb smoothed by tanh plus viscous.

    ``τ_f = −(f_c·tanh(q̇/v_s) + f_v·q̇)``

    The tanh reaches 76 % of ``f_c`` at ``|q̇| = v_s`` and 96 % at ``2·v_s``. Near rest it acts as a damper of slope
    ``f_c/v_s``, which an explicit integrator must resolve: keep ``v_s`` large enough for
    :func:`explicit_pd_stability_margin` with ``kd + f_c/v_s + f_v`` (sticking itself is not modelled; a simulator's
    implicit joint friction, e.g. MuJoCo ``frictionloss``, does that).

    Args:
        qd: Joint velocity, rad/s.
        coulomb: ``f_c`` >= 0, N·m.
        viscous: ``f_v`` >= 0, N·m·s/rad.
        velocity_scale: ``v_s`` > 0, rad/s.

    Returns:
        Friction torque, N·m, to add to the motor torque.

    Shape:
        ``qd`` ``(E, J)``; parameters ``()``, ``(J,)`` or ``(E, J)``; output ``(E, J)``.
    """
    xp = namespace(qd)
    return -(as_like(coulomb, qd) * xp.tanh(qd / as_like(velocity_scale, qd)) + as_like(viscous, qd) * qd)


def explicit_pd_stability_margin(
    kp: Array | float, kd: Array | float, inertia: Array | float, dt: float
) -> Array | float:
    """Stability margin of PD on one inertia integrated with explicit (semi-implicit Euler) steps; stable iff < 1.

    ``ρ = (kp·dt² + 2·kd·dt) / (4·J)``

    Derivation: ``v' = v + dt·(−a·x − b·v)``, ``x' = x + dt·v'`` with ``a = kp/J``, ``b = kd/J`` has the transition
    matrix ``[[1 − a·dt², dt·(1 − b·dt)], [−a·dt, 1 − b·dt]]`` with ``det = 1 − b·dt`` and
    ``tr = 2 − a·dt² − b·dt``. Both eigenvalues lie inside the unit circle iff ``|det| < 1`` and
    ``|tr| < 1 + det``, i.e. ``b·dt > 0`` and ``a·dt² + 2·b·dt < 4`` (this implies ``b·dt < 2``, the familiar
    damping bound ``kd·dt/J < 2``). This is how a simulator integrates a torque computed outside it (MuJoCo Euler,
    Isaac Lab explicit actuators). Pass ``kd + f_c/v_s + f_v`` as ``kd`` to include the friction slope. Use the
    smallest inertia the joint can present (reflected inertia + a lower bound of the link-side inertia).

    Args:
        kp: Stiffness, N·m/rad.
        kd: Damping (plus friction slope), N·m·s/rad.
        inertia: ``J`` > 0, kg·m².
        dt: Physics step, s.

    Shape:
        Broadcasts; returns a float for float inputs.
    """
    return (kp * dt * dt + 2.0 * kd * dt) / (4.0 * inertia)
