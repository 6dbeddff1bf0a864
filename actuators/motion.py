"""Motion generator of a position interface: the commanded setpoint follows the policy's target, rate-limited.

A real arm does not jump its position setpoint to whatever the client sends. Franka's libfranka, for one, passes
every joint position command through ``franka::limitRate`` (on by default) so that the commanded motion respects the
interface's velocity, acceleration and jerk limits; a command that jumps is followed as fast as those limits allow.
Without it, a policy's absolute target that jumps by 0.15 rad between two 50 Hz steps drives the PD into a joint
speed the robot's reflex forbids.

Here the setpoint ``s`` (with velocity ``v``) tracks the target ``q*`` once per physics step ``dt``, with the
velocity bounded by ``v_max`` and its change per step by ``a_max·dt``; near the target the speed is also bounded by
the braking speed ``v_b`` from which the setpoint can still stop there, slowing by ``a_max·dt`` per step (the
discrete form of ``sqrt(2·a_max·|e|)``: ``v_b·(v_b + a_max·dt) / (2·a_max) = |e|``):

    v_des = sign(e)·min(v_max, v_b, |e| / dt),      e = q* − s
    v[k]  = clip(v_des, v[k−1] − a_max·dt, v[k−1] + a_max·dt)
    s[k]  = s[k−1] + v[k]·dt

A constant target is reached after about ``|e|/v_max + v_max/a_max`` and held there exactly. Jerk is not limited
(libfranka also bounds it; at the 200 Hz physics rate the acceleration limit alone already spreads a step over
tens of steps).

Following-error bound (optional, ``max_error``): the setpoint is kept within ``δ`` of the measured position ``q``,

    s[k] ← clip(s[k], q − δ, q + δ),   v[k] ← clip((s[k] − s[k−1]) / dt, −v_max, v_max)   where it was clipped,

as a servo drive's following-error limit does. Rate limiting alone bounds the setpoint, not the joint: a joint held
back (a contact, a saturated torque) lets the setpoint run ahead, and when it is released the PD drives it toward
the far setpoint at its own terminal speed ``≈ (Kp/Kd)·|s − q|``, past the speed the setpoint ever had (measured on
the Franka's wrist: 0.2–0.4 rad of lag, 2.7–4.6 rad/s against a 2.61 rad/s reflex). Bounding the lag bounds that
speed: ``|q̇| ≲ (Kp/Kd)·δ`` with gravity compensated.
"""

from __future__ import annotations

from realgap.actuators._xp import Array, as_like, clip, namespace


def limit_rate(
    setpoint: Array,
    velocity: Array,
    target: Array,
    v_max: Array | float,
    a_max: Array | float,
    dt: float,
    measured: Array | None = None,
    max_error: Array | float | None = None,
) -> tuple[Array, Array]:
    """One physics step of the rate-limited setpoint: ``(s[k], v[k])`` from ``(s[k−1], v[k−1])`` and the target.

    Args:
        setpoint: Commanded position ``s[k−1]``, rad.
        velocity: Its velocity ``v[k−1]``, rad/s.
        target: What the policy asks for, ``q*``, rad.
        v_max: Velocity limit > 0, rad/s (per joint, broadcasts).
        a_max: Acceleration limit > 0, rad/s² (per joint, broadcasts).
        dt: Physics step, s.
        measured: Measured joint position ``q``, rad (required with ``max_error``).
        max_error: Following-error bound ``δ`` > 0, rad (per joint, broadcasts); ``None``: unbounded.

    Shape:
        ``(E, J)`` arrays (numpy or torch), limits broadcast against them.
    """
    xp = namespace(setpoint, velocity, target)
    err = target - setpoint
    gap = xp.abs(err)
    dv = a_max * dt
    # discrete braking speed: moving at v this step and then slowing by dv per step covers v·(v + dv)/(2·a_max)
    brake = 0.5 * (xp.sqrt(dv * dv + 8.0 * a_max * gap) - dv)
    speed = xp.minimum(xp.minimum(brake, gap / dt), v_max)
    v = xp.minimum(xp.maximum(xp.sign(err) * speed, velocity - dv), velocity + dv)
    out = setpoint + v * dt
    if max_error is None:
        return out, v
    if measured is None:
        raise ValueError("limit_rate: max_error needs the measured joint position")
    bounded = xp.minimum(xp.maximum(out, measured - max_error), measured + max_error)
    dragged = xp.minimum(xp.maximum((bounded - setpoint) / dt, -v_max), v_max)
    return bounded, xp.where(bounded != out, dragged, v)


def check_limits(
    v_max: Array | float, a_max: Array | float, owner: str, max_error: Array | float | None = None
) -> None:
    """Refuse velocity, acceleration or following-error limits that are not positive finite numbers (naming
    ``owner`` and the value); ``max_error`` None is no bound."""
    import numpy as np

    fields = [("max_velocity [rad/s]", v_max), ("max_acceleration [rad/s²]", a_max)]
    if max_error is not None:
        fields.append(("max_following_error [rad]", max_error))
    for field, values in fields:
        flat = np.asarray(values.detach().cpu() if hasattr(values, "detach") else values, dtype=np.float64).ravel()
        bad = [v for v in flat.tolist() if not (np.isfinite(v) and v > 0)]
        if bad:
            raise ValueError(f"{owner}: {field} must be a positive finite number, got {bad[0]!r}")


def ramp_toward(setpoint: Array, target: Array, max_step: Array | float) -> Array:
    """One step of a constant-speed setpoint: ``s[k] = s[k−1] + clip(q* − s[k−1], −Δ, Δ)`` with ``Δ = v_max·dt``.

    The Franka Hand's own controller moves its fingers this way toward a ``move`` / ``grasp`` width (speed per finger,
    no acceleration phase worth modelling at the physics step); a finger PD then tracks the setpoint.

    Args:
        setpoint: ``s[k−1]`` (m or rad).
        target: ``q*``, what was commanded (same units).
        max_step: ``Δ = v_max·dt`` ≥ 0 per step (broadcasts); ``inf``: jump to the target.

    Shape:
        ``(E, J)`` arrays (numpy or torch), ``max_step`` broadcasting against them.
    """
    limit = as_like(max_step, setpoint)
    return setpoint + clip(target - setpoint, -limit, limit)
