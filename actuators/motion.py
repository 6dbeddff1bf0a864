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
"""

from __future__ import annotations

from realgap.actuators._xp import Array, namespace


def limit_rate(
    setpoint: Array, velocity: Array, target: Array, v_max: Array | float, a_max: Array | float, dt: float
) -> tuple[Array, Array]:
    """One physics step of the rate-limited setpoint: ``(s[k], v[k])`` from ``(s[k−1], v[k−1])`` and the target.

    Args:
        setpoint: Commanded position ``s[k−1]``, rad.
        velocity: Its velocity ``v[k−1]``, rad/s.
        target: What the policy asks for, ``q*``, rad.
        v_max: Velocity limit > 0, rad/s (per joint, broadcasts).
        a_max: Acceleration limit > 0, rad/s² (per joint, broadcasts).
        dt: Physics step, s.

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
    return setpoint + v * dt, v


def check_limits(v_max: Array | float, a_max: Array | float, owner: str) -> None:
    """Refuse velocity or acceleration limits that are not positive finite numbers (naming ``owner`` and the value)."""
    import numpy as np

    for field, values in (("max_velocity [rad/s]", v_max), ("max_acceleration [rad/s²]", a_max)):
        flat = np.asarray(values.detach().cpu() if hasattr(values, "detach") else values, dtype=np.float64).ravel()
        bad = [v for v in flat.tolist() if not (np.isfinite(v) and v > 0)]
        if bad:
            raise ValueError(f"{owner}: {field} must be a positive finite number, got {bad[0]!r}")
