"""The exported format's words for an action term: each action term class describes itself with these.

A term's ``export_description()`` returns a :func:`description` (its format type, joints, parameters, equation, units
and feed-forward); ``realgap.envs.export.actions.describe_term`` only adds the term's name and slice. The builders
here hold every equation text, so one type is worded one way whichever class has it. Why below the tasks: the term
classes live in ``tasks/``, export reads them from above, and the wording belongs to the format they both follow.
Values from the simulator are float32: they are written as the shortest decimal of the same float32 (:func:`f32`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from realgap.envs.format.schema import json_bound


class TermDescriptionError(ValueError):
    """A term setting the format has no words for (says which; the export adds the term's name)."""


JOINT_UNITS = "rad for hinge joints, m for slide joints (joints.types)"
TORQUE_UNITS = "N·m for hinge joints, N for slide joints (joints.types)"
VELOCITY_UNITS = "rad/s for hinge joints, m/s for slide joints (joints.types)"
_A = "a[start + j]"
_BOUND = "and |s[j] - q[j]| <= max_following_error[j] (null: unbounded; s is moved back within it) "
SIMULATOR_MODEL = (
    "the simulated robot's own (possibly randomized) M(q), C(q, qd)·qd and g(q) (Newton), every physics step"
)


def f32(value: float) -> float:
    """A float32 simulator value as the shortest decimal that is the same float32 (0.312, not 0.31200000643730164)."""
    return float(str(np.float32(value))) if math.isfinite(value) else float(value)


def per_joint(value: Any, n: int) -> list[float]:
    """A float or an ``(E, n)`` tensor (identical rows) as ``n`` floats (env 0), see :func:`f32`."""
    if isinstance(value, int | float):
        return [f32(value)] * n
    return [f32(v) for v in value[0].reshape(-1).tolist()]


def optional_per_joint(value: Any, n: int) -> list[float | None]:
    """:func:`per_joint`, or ``n`` ``None`` (unbounded) for ``None``."""
    return [None] * n if value is None else per_joint(value, n)


def clip_bounds(clip: Any, n: int) -> tuple[list[float | None], list[float | None]]:
    """Lower and upper clip per joint from an ``(E, n, 2)`` tensor; ``None`` (no clip) or an infinite bound: null."""
    if clip is None:
        return [None] * n, [None] * n
    lo, hi = per_joint(clip[..., 0], n), per_joint(clip[..., 1], n)
    return [json_bound(v) for v in lo], [json_bound(v) for v in hi]


def gravity_feed_forward(source: str | None) -> dict[str, Any] | None:
    """The gravity feed-forward g(q) computed from ``source`` (``None``: the term adds none)."""
    if source is None:
        return None
    if source == "simulator":
        model = "the simulated (possibly randomized) robot's own inverse dynamics"
    else:
        model = (
            f"the nominal robot model (the robot's URDF in example-robot-data, computed with {source}), which "
            "knows no payload or randomization"
        )
    return {
        "type": "gravity",
        "source": source,
        "model": model,
        "equation": "tau_ff = g(q): the gravity torque of the term's joints at the measured q, recomputed every "
        "physics step",
    }


def _tau(feed_forward: dict[str, Any] | None) -> str:
    return "tau_ff[j] = g(q)[j] (feed_forward)" if feed_forward else "tau_ff[j] = 0"


def body_offset(offset: Any) -> dict[str, list[float]]:
    """An Isaac Lab ``OffsetCfg`` (``pos``, ``rot`` as x, y, z, w; ``None``: none) as ``pos`` and ``quat_wxyz``."""
    if offset is None:
        return {"pos": [0.0] * 3, "quat_wxyz": [1.0, 0.0, 0.0, 0.0]}
    x, y, z, w = (float(v) for v in offset.rot)  # Isaac Lab 3.0 quaternions are (x, y, z, w)
    return {"pos": [f32(v) for v in offset.pos], "quat_wxyz": [w, x, y, z]}


def description(
    type: str,
    joint_names: Sequence[str],
    params: dict[str, Any],
    equation: str,
    units: str,
    feed_forward: dict[str, Any] | None,
) -> dict[str, Any]:
    """What ``export_description()`` returns: the fields of the format's action term but its name and slice."""
    return {
        "type": type,
        "joint_names": tuple(joint_names),
        "params": params,
        "equation": equation,
        "units": units,
        "feed_forward": feed_forward,
    }


def joint_position_offset(
    joint_names: Sequence[str],
    scale: Any,
    offset: Any,
    clip: Any,
    feed_forward: dict[str, Any] | None,
    ramp_s: float = 0.0,
) -> dict[str, Any]:
    """``joint_position_offset``: q_target = clip(offset + scale·a), with ``ramp_s`` > 0 reached from the default pose
    over ``ramp_s`` seconds."""
    n = len(joint_names)
    lo, hi = clip_bounds(clip, n)
    params = {"scale": per_joint(scale, n), "offset": per_joint(offset, n), "clip_min": lo, "clip_max": hi}
    tau = _tau(feed_forward)
    eq = f"q_target[j] = clip(offset[j] + scale[j] * {_A}, clip_min[j], clip_max[j]); qd_target[j] = 0; {tau}"
    if ramp_s > 0:
        params["ramp_s"] = ramp_s
        eq += (
            "; for the first ramp_s after the start offset[j] is replaced by default_pos[j] + (offset[j] - "
            "default_pos[j]) * min(1, k * policy_dt / ramp_s), k policy steps in"
        )
    return description("joint_position_offset", joint_names, params, eq, JOINT_UNITS, feed_forward)


def joint_position_measured(joint_names: Sequence[str], scale: Any, clip: Any) -> dict[str, Any]:
    """``joint_position_measured``: q_target = clip(q + scale·a) about the joint positions measured when the command
    is set, so a zero action holds the robot where it is and a drive that holds its PD torque for the policy period
    gets a torque bounded by kp·scale·|a| (no stiffness on a stale reading)."""
    n = len(joint_names)
    lo, hi = clip_bounds(clip, n)
    params = {"scale": per_joint(scale, n), "clip_min": lo, "clip_max": hi}
    eq = (
        f"q_target[j] = clip(q[j] + scale[j] * {_A}, clip_min[j], clip_max[j]) each policy step, q the joint "
        "positions measured at that step (the reading the observations use); qd_target[j] = 0; tau_ff[j] = 0"
    )
    return description("joint_position_measured", joint_names, params, eq, JOINT_UNITS, None)


def rate_limited_params(
    n: int, scale: Any, offset: Any, clip: Any, v_max: Any, a_max: Any, max_error: Any
) -> dict[str, Any]:
    """Parameters of an absolute joint target followed by the motion generator (``realgap.actuators.motion``)."""
    lo, hi = clip_bounds(clip, n)
    return {
        "scale": per_joint(scale, n),
        "offset": per_joint(offset, n),
        "clip_min": lo,
        "clip_max": hi,
        "max_velocity": per_joint(v_max, n),
        "max_acceleration": per_joint(a_max, n),
        "max_following_error": optional_per_joint(max_error, n),
    }


def joint_position_rate_limited(
    joint_names: Sequence[str], params: dict[str, Any], feed_forward: dict[str, Any] | None
) -> dict[str, Any]:
    """``joint_position_rate_limited``: the setpoint follows q* within the motion generator's limits each physics
    step (``params`` from :func:`rate_limited_params`)."""
    eq = (
        f"q*[j] = clip(offset[j] + scale[j] * {_A}, clip_min[j], clip_max[j]) each policy step; each physics "
        "step the setpoint s[j] follows q*[j] with |ds/dt| <= max_velocity[j], |d2s/dt2| <= max_acceleration[j] "
        f"{_BOUND}(realgap.actuators.motion.limit_rate), at rest at the measured q after a reset; q_target[j] = "
        f"s[j]; qd_target[j] = 0; {_tau(feed_forward)}"
    )
    return description("joint_position_rate_limited", joint_names, params, eq, JOINT_UNITS, feed_forward)


def joint_position_delta(
    joint_names: Sequence[str], scale: Any, soft_limits: Any, feed_forward: dict[str, Any] | None
) -> dict[str, Any]:
    """``joint_position_delta``: increments integrated on the previous target, clipped to ``soft_limits`` (``(n, 2)``
    of env 0)."""
    n = len(joint_names)
    params = {
        "scale": per_joint(scale, n),
        "clip_min": [json_bound(f32(v)) for v in soft_limits[:, 0].tolist()],
        "clip_max": [json_bound(f32(v)) for v in soft_limits[:, 1].tolist()],
        "initial_target": "the measured joint positions at the reset",
    }
    eq = (
        f"q_target_k[j] = clip(q_target_(k-1)[j] + scale[j] * {_A}, clip_min[j], clip_max[j]) at each policy "
        f"step k (q_target_0 = initial_target); qd_target[j] = 0; {_tau(feed_forward)}"
    )
    return description("joint_position_delta", joint_names, params, eq, JOINT_UNITS, feed_forward)


def joint_velocity(
    joint_names: Sequence[str], scale: Any, offset: Any, feed_forward: dict[str, Any] | None
) -> dict[str, Any]:
    """``joint_velocity``: qd_target = offset + scale·a."""
    n = len(joint_names)
    params = {"scale": per_joint(scale, n), "offset": per_joint(offset, n)}
    eq = f"qd_target[j] = offset[j] + scale[j] * {_A}; q_target[j] unchanged; {_tau(feed_forward)}"
    return description("joint_velocity", joint_names, params, eq, VELOCITY_UNITS, feed_forward)


def joint_effort(
    joint_names: Sequence[str], scale: Any, offset: Any, feed_forward: dict[str, Any] | None
) -> dict[str, Any]:
    """``joint_effort``: tau_ff = offset + scale·a (+ the feed-forward)."""
    n = len(joint_names)
    params = {"scale": per_joint(scale, n), "offset": per_joint(offset, n)}
    plus = " + g(q)[j] (feed_forward)" if feed_forward else ""
    eq = f"tau_ff[j] = offset[j] + scale[j] * {_A}{plus}; q_target[j], qd_target[j] unchanged"
    return description("joint_effort", joint_names, params, eq, TORQUE_UNITS, feed_forward)


def binary_joint_position(
    joint_names: Sequence[str],
    open_command: Any,
    close_command: Any,
    clipped: bool,
    speed: Sequence[float] | None = None,
) -> dict[str, Any]:
    """``binary_joint_position``: one action entry, below 0 the close targets, else the open ones; with ``speed``
    (per joint, m/s or rad/s) the setpoint moves toward them at that speed every physics step (a hand's own controller).

    Raises:
        TermDescriptionError: A clipped binary action.
    """
    if clipped:
        raise TermDescriptionError("a clipped binary action is not part of the format")
    params = {
        "open": [f32(v) for v in open_command.tolist()],
        "close": [f32(v) for v in close_command.tolist()],
        "threshold": 0.0,
    }
    eq = "q_target[j] = close[j] if a[start] < threshold else open[j]; qd_target[j] = 0; tau_ff[j] = 0"
    if speed is not None:
        params["speed"] = [f32(v) for v in speed]
        eq = (
            "goal[j] = close[j] if a[start] < threshold else open[j]; every physics step q_target[j] += "
            "clip(goal[j] - q_target[j], -speed[j]*physics_dt, speed[j]*physics_dt), starting at the measured q[j] "
            "after a reset; qd_target[j] = 0; tau_ff[j] = 0"
        )
    return description("binary_joint_position", joint_names, params, eq, JOINT_UNITS, None)


def ee_pose_delta(
    joint_names: Sequence[str],
    body: str,
    offset_cfg: Any,
    scale: Any,
    offset: Any,
    dim: int,
    controller: dict[str, Any],
    feed_forward: dict[str, Any] | None,
) -> dict[str, Any]:
    """``ee_pose_delta``: relative pose commands of the controlled frame, differential IK every physics step.

    Args:
        controller: The differential-IK controller cfg as a dict (Isaac Lab's ``to_dict``).

    Raises:
        TermDescriptionError: Absolute or position-only commands.
    """
    if controller["command_type"] != "pose" or not controller["use_relative_mode"]:
        raise TermDescriptionError(
            f"differential IK with command_type {controller['command_type']!r}, "
            f"relative={controller['use_relative_mode']} is not part of the format "
            "(only relative pose commands)"
        )
    method, ik_params = controller["ik_method"], controller["ik_params"] or {}
    rest = {k: v for k, v in controller.items() if k not in ("class_type", "ik_method", "ik_params")}
    params = {
        "body": body,
        "body_offset": body_offset(offset_cfg),
        "frame": "the robot's root body frame (robot.root_body): positions and rotations of the controlled frame "
        "(body + body_offset, the tool centre point) relative to the root body",
        "command": "pose increment: d = offset + scale * a[start:stop]; d[0:3] translation (m), d[3:6] rotation "
        "vector (axis · angle, rad), both in the root body frame",
        "scale": per_joint(scale, dim),
        "offset": per_joint(offset, dim),
        "ik": {"method": method, "params": dict(ik_params), "controller": rest},
        "rate": "the target pose is set once per policy step from the controlled frame's pose then; the IK step "
        "runs every physics step from the measured q and the frame's geometric Jacobian",
    }
    lam = ik_params.get("lambda_val")
    solve = (
        f"dq = J^T (J J^T + lambda^2 I)^-1 e with lambda = {lam:g}"
        if method == "dls" and lam is not None
        else f"dq from e and J by Isaac Lab's DifferentialIKController, method '{method}'"
    )
    eq = (
        "each policy step: p* = p + d[0:3], R* = Exp(d[3:6]) · R (p, R: the controlled frame's pose in the root "
        "frame); each physics step: e = (p* - p, Log(R* · R^T)), J = the frame's 6 x n geometric Jacobian in the "
        f"root frame, {solve}; q_target = q + dq; qd_target = 0; {_tau(feed_forward)}"
    )
    units = "d: m (translation), rad (rotation vector); q_target: rad for hinge joints, m for slide joints"
    return description("ee_pose_delta", joint_names, params, eq, units, feed_forward)


def joint_computed_torque(
    joint_names: Sequence[str],
    params: dict[str, Any],
    kp: float,
    kd: float,
    coriolis: bool,
    feed_forward: dict[str, Any] | None,
) -> dict[str, Any]:
    """``joint_computed_torque`` (the deploy runtime refuses it: it needs the robot's dynamics model); ``params`` from
    :func:`rate_limited_params`."""
    h = "C(q, qd)·qd + g(q)" if coriolis else "g(q)"
    params = {**params, "kp": f32(kp), "kd": f32(kd), "model": SIMULATOR_MODEL}
    eq = (
        "q* = clip(offset + scale * a[start:stop], clip_min, clip_max) each policy step; each physics step the "
        "setpoint s follows q* within max_velocity, max_acceleration and max_following_error (as "
        "joint_position_rate_limited); "
        f"tau = M(q) (kp (s - q) - kd qd) + {h}; q_target, qd_target unused (the arm's kp = kd = 0)"
    )
    return description("joint_computed_torque", joint_names, params, eq, TORQUE_UNITS, feed_forward)


def ee_impedance(
    joint_names: Sequence[str], body: str, cfg: Any, feed_forward: dict[str, Any] | None
) -> dict[str, Any]:
    """``ee_impedance`` from an Isaac Lab operational-space action cfg (the deploy runtime refuses it by type)."""
    ctrl = cfg.controller_cfg
    params = {
        "body": body,
        "body_offset": body_offset(cfg.body_offset),
        "position_scale": f32(cfg.position_scale),
        "orientation_scale": f32(cfg.orientation_scale),
        "stiffness": [f32(v) for v in ctrl.motion_stiffness_task],
        "damping_ratio": [f32(v) for v in ctrl.motion_damping_ratio_task],
        "nullspace": {
            "control": ctrl.nullspace_control,
            "stiffness": f32(ctrl.nullspace_stiffness),
            "damping_ratio": f32(ctrl.nullspace_damping_ratio),
            "target": cfg.nullspace_joint_pos_target,
        },
        "model": SIMULATOR_MODEL,
    }
    eq = (
        "each policy step: x* = x (+) (position_scale * a[0:3], orientation_scale * a[3:6]) (the controlled frame's "
        "pose in the root frame); each physics step: e = (p* - p, axis-angle of R* R^T), "
        "tau = J^T (Kx e - Dx xd) + g(q) + (I - J^T J^+T) M(q) (kn (q0 - q) - dn qd), Kx = diag(stiffness), "
        "Dx = 2 damping_ratio sqrt(Kx) (Isaac Lab's OperationalSpaceController, no inertial decoupling)"
    )
    return description("ee_impedance", joint_names, params, eq, TORQUE_UNITS, feed_forward)
