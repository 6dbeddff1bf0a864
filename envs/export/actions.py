"""The action terms of a live Isaac Lab env, described for the exported metadata (Isaac Lab glue).

Each term of ``env.action_manager`` becomes an :class:`~realgap.envs.deploy.actions.ActionTerm`: its slice of the
action vector, a type of the format, its joints, its resolved parameters (the term's own scale / offset / clip
tensors, open and close commands, IK settings) and its equation. Gravity compensation added by realgap's grasp action
classes is a ``feed_forward``. The model-based grasp terms (computed torque, Cartesian impedance) are described as
``joint_computed_torque`` / ``ee_impedance``, types the deploy runtime refuses by name (they need the robot's dynamics
model). A term of any other class is refused, naming it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from realgap.envs.format.actions import Actions, ActionTerm
from realgap.envs.format.schema import json_bound


class ExportError(ValueError):
    """The env uses something the export format / deploy runtime cannot describe (names it)."""


JOINT_UNITS = "rad for hinge joints, m for slide joints (joints.types)"


def f32(value: float) -> float:
    """A float32 simulator value as the shortest decimal that is the same float32 (0.312, not 0.31200000643730164)."""
    return float(str(np.float32(value))) if math.isfinite(value) else float(value)


def per_joint(value: Any, n: int) -> list[float]:
    """A float or an ``(E, n)`` tensor (identical rows) as ``n`` floats (env 0), see :func:`f32`."""
    if isinstance(value, int | float):
        return [f32(value)] * n
    return [f32(v) for v in value[0].reshape(-1).tolist()]


_BOUND = "and |s[j] - q[j]| <= max_following_error[j] (null: unbounded; s is moved back within it) "


def _following_error(term: Any, n: int) -> list[float | None]:
    """The motion generator's following-error bound per joint (``None`` entries: unbounded)."""
    return [None] * n if term._max_error is None else per_joint(term._max_error, n)


def _clip(term: Any, n: int) -> tuple[list[float | None], list[float | None]]:
    if term.cfg.clip is None:
        return [None] * n, [None] * n
    lo, hi = per_joint(term._clip[..., 0], n), per_joint(term._clip[..., 1], n)
    return [json_bound(v) for v in lo], [json_bound(v) for v in hi]


def _feed_forward(term: Any) -> dict[str, Any] | None:
    """realgap's grasp actions add g(q) (``cfg.gravity_source``); plain Isaac Lab terms add nothing."""
    source = getattr(term.cfg, "gravity_source", None)
    if source is None:
        return None
    if source == "simulator":
        model = "the simulated (possibly randomized) robot's own inverse dynamics"
    else:
        model = (f"the nominal robot model (the robot's URDF in example-robot-data, computed with {source}), which "
                 "knows no payload or randomization")  # fmt: skip
    return {"type": "gravity", "source": source, "model": model,
            "equation": "tau_ff = g(q): the gravity torque of the term's joints at the measured q, recomputed every "
                        "physics step"}  # fmt: skip


def _quat_wxyz(rot_xyzw: Any) -> list[float]:
    x, y, z, w = (float(v) for v in rot_xyzw)  # Isaac Lab 3.0 quaternions are (x, y, z, w)
    return [w, x, y, z]


def describe_term(name: str, term: Any, start: int) -> ActionTerm:
    """One live action term as an :class:`ActionTerm` starting at ``start`` in the action vector.

    Raises:
        ExportError: A term class the format has no type for.
    """
    from isaaclab.envs.mdp.actions import JointPositionAction
    from isaaclab.envs.mdp.actions.binary_joint_actions import BinaryJointPositionAction
    from isaaclab.envs.mdp.actions.joint_actions import JointEffortAction, JointVelocityAction
    from isaaclab.envs.mdp.actions.task_space_actions import DifferentialInverseKinematicsAction

    from realgap.tasks.balance.action_terms import RampedJointPositionAction
    from realgap.tasks.grasp.action_terms import JointPositionDeltaAction, RateLimitedJointPositionAction
    from realgap.tasks.grasp.model_based_terms import CartesianImpedanceAction, ComputedTorqueAction

    joints = tuple(term._joint_names)
    n, stop = len(joints), start + term.action_dim
    ff = _feed_forward(term)
    tau = "tau_ff[j] = g(q)[j] (feed_forward)" if ff else "tau_ff[j] = 0"
    a = "a[start + j]"
    common = {"name": name, "start": start, "stop": stop, "joint_names": joints, "feed_forward": ff}
    if isinstance(term, ComputedTorqueAction | CartesianImpedanceAction):  # before the joint position classes
        return _describe_model_based(term, common)
    if isinstance(term, RateLimitedJointPositionAction) and term._limited:
        lo, hi = _clip(term, n)
        params = {"scale": per_joint(term._scale, n), "offset": per_joint(term._offset, n), "clip_min": lo,
                  "clip_max": hi, "max_velocity": per_joint(term._v_max, n),
                  "max_acceleration": per_joint(term._a_max, n),
                  "max_following_error": _following_error(term, n)}  # fmt: skip
        eq = (f"q*[j] = clip(offset[j] + scale[j] * {a}, clip_min[j], clip_max[j]) each policy step; each physics "
              "step the setpoint s[j] follows q*[j] with |ds/dt| <= max_velocity[j], |d2s/dt2| <= max_acceleration[j] "
              f"{_BOUND}(realgap.actuators.motion.limit_rate), at rest at the measured q after a reset; q_target[j] = "
              f"s[j]; qd_target[j] = 0; {tau}")  # fmt: skip
        return ActionTerm(type="joint_position_rate_limited", params=params, equation=eq, units=JOINT_UNITS, **common)
    if isinstance(term, JointPositionAction):
        lo, hi = _clip(term, n)
        ramped = isinstance(term, RampedJointPositionAction)  # the balance task's: describe the offset after the ramp
        offset, ramp = (term.nominal_offset, term.cfg.ramp_s) if ramped else (term._offset, 0.0)
        params = {"scale": per_joint(term._scale, n), "offset": per_joint(offset, n), "clip_min": lo,
                  "clip_max": hi}  # fmt: skip
        eq = f"q_target[j] = clip(offset[j] + scale[j] * {a}, clip_min[j], clip_max[j]); qd_target[j] = 0; {tau}"
        if ramp > 0:
            params["ramp_s"] = ramp
            eq += ("; for the first ramp_s after the start offset[j] is replaced by default_pos[j] + (offset[j] - "
                   "default_pos[j]) * min(1, k * policy_dt / ramp_s), k policy steps in")  # fmt: skip
        return ActionTerm(type="joint_position_offset", params=params, equation=eq, units=JOINT_UNITS, **common)
    if isinstance(term, JointPositionDeltaAction):
        limits = term._asset.data.soft_joint_pos_limits.torch[0, term._joint_ids]
        params = {"scale": per_joint(term._scale, n), "clip_min": [json_bound(f32(v)) for v in limits[:, 0].tolist()],
                  "clip_max": [json_bound(f32(v)) for v in limits[:, 1].tolist()],
                  "initial_target": "the measured joint positions at the reset"}  # fmt: skip
        eq = (f"q_target_k[j] = clip(q_target_(k-1)[j] + scale[j] * {a}, clip_min[j], clip_max[j]) at each policy "
              f"step k (q_target_0 = initial_target); qd_target[j] = 0; {tau}")  # fmt: skip
        return ActionTerm(type="joint_position_delta", params=params, equation=eq, units=JOINT_UNITS, **common)
    if isinstance(term, JointVelocityAction | JointEffortAction):
        params = {"scale": per_joint(term._scale, n), "offset": per_joint(term._offset, n)}
        if isinstance(term, JointVelocityAction):
            kind, units = "joint_velocity", "rad/s for hinge joints, m/s for slide joints (joints.types)"
            eq = f"qd_target[j] = offset[j] + scale[j] * {a}; q_target[j] unchanged; {tau}"
        else:
            kind, units = "joint_effort", "N·m for hinge joints, N for slide joints (joints.types)"
            plus = " + g(q)[j] (feed_forward)" if ff else ""
            eq = f"tau_ff[j] = offset[j] + scale[j] * {a}{plus}; q_target[j], qd_target[j] unchanged"
        return ActionTerm(type=kind, params=params, equation=eq, units=units, **common)
    if isinstance(term, BinaryJointPositionAction):
        if term.cfg.clip is not None:
            raise ExportError(f"action term '{name}': a clipped binary action is not part of the format")
        params = {"open": [f32(v) for v in term._open_command.tolist()],
                  "close": [f32(v) for v in term._close_command.tolist()], "threshold": 0.0}  # fmt: skip
        eq = "q_target[j] = close[j] if a[start] < threshold else open[j]; qd_target[j] = 0; tau_ff[j] = 0"
        return ActionTerm(type="binary_joint_position", params=params, equation=eq, units=JOINT_UNITS, **common)
    if isinstance(term, DifferentialInverseKinematicsAction):
        return _describe_ik(term, common, tau)
    raise ExportError(f"action term '{name}' is a {type(term).__name__}, which the export format has no type for")


def _describe_ik(term: Any, common: dict[str, Any], tau: str) -> ActionTerm:
    from isaaclab.utils import to_dict

    ctrl = term.cfg.controller
    if ctrl.command_type != "pose" or not ctrl.use_relative_mode:
        raise ExportError(f"action term '{common['name']}': differential IK with command_type "
                          f"{ctrl.command_type!r}, relative={ctrl.use_relative_mode} is not part of the format "
                          "(only relative pose commands)")  # fmt: skip
    offset = term.cfg.body_offset
    rest = {k: v for k, v in to_dict(ctrl).items() if k not in ("class_type", "ik_method", "ik_params")}
    params = {
        "body": term._body_name,
        "body_offset": {"pos": [f32(v) for v in offset.pos] if offset else [0.0] * 3,
                        "quat_wxyz": _quat_wxyz(offset.rot) if offset else [1.0, 0.0, 0.0, 0.0]},
        "frame": "the robot's root body frame (robot.root_body): positions and rotations of the controlled frame "
                 "(body + body_offset, the tool centre point) relative to the root body",
        "command": "pose increment: d = offset + scale * a[start:stop]; d[0:3] translation (m), d[3:6] rotation "
                   "vector (axis · angle, rad), both in the root body frame",
        "scale": per_joint(term._scale, term.action_dim), "offset": per_joint(term._offset, term.action_dim),
        "ik": {"method": ctrl.ik_method, "params": dict(ctrl.ik_params or {}), "controller": rest},
        "rate": "the target pose is set once per policy step from the controlled frame's pose then; the IK step "
                "runs every physics step from the measured q and the frame's geometric Jacobian",
    }  # fmt: skip
    lam = (ctrl.ik_params or {}).get("lambda_val")
    solve = (f"dq = J^T (J J^T + lambda^2 I)^-1 e with lambda = {lam:g}" if ctrl.ik_method == "dls" and lam is not None
             else f"dq from e and J by Isaac Lab's DifferentialIKController, method '{ctrl.ik_method}'")  # fmt: skip
    eq = ("each policy step: p* = p + d[0:3], R* = Exp(d[3:6]) · R (p, R: the controlled frame's pose in the root "
          "frame); each physics step: e = (p* - p, Log(R* · R^T)), J = the frame's 6 x n geometric Jacobian in the "
          f"root frame, {solve}; q_target = q + dq; qd_target = 0; {tau}")  # fmt: skip
    units = "d: m (translation), rad (rotation vector); q_target: rad for hinge joints, m for slide joints"
    return ActionTerm(type="ee_pose_delta", params=params, equation=eq, units=units, **common)


_TAU_UNITS = "N·m for hinge joints, N for slide joints (joints.types)"
_MODEL = "the simulated robot's own (possibly randomized) M(q), C(q, qd)·qd and g(q) (Newton), every physics step"


def _describe_model_based(term: Any, common: dict[str, Any]) -> ActionTerm:
    """A computed-torque or Cartesian-impedance term: its law and gains (the runtime refuses both by type)."""
    from realgap.tasks.grasp.model_based_terms import ComputedTorqueAction

    n = len(common["joint_names"])
    if isinstance(term, ComputedTorqueAction):
        lo, hi = _clip(term, n)
        h = "C(q, qd)·qd + g(q)" if term.cfg.coriolis else "g(q)"
        params = {"scale": per_joint(term._scale, n), "offset": per_joint(term._offset, n), "clip_min": lo,
                  "clip_max": hi, "max_velocity": per_joint(term._v_max, n),
                  "max_acceleration": per_joint(term._a_max, n), "max_following_error": _following_error(term, n),
                  "kp": f32(term.cfg.kp), "kd": f32(term.cfg.kd), "model": _MODEL}  # fmt: skip
        eq = ("q* = clip(offset + scale * a[start:stop], clip_min, clip_max) each policy step; each physics step the "
              "setpoint s follows q* within max_velocity, max_acceleration and max_following_error (as "
              "joint_position_rate_limited); "
              f"tau = M(q) (kp (s - q) - kd qd) + {h}; q_target, qd_target unused (the arm's kp = kd = 0)")  # fmt: skip
        return ActionTerm(type="joint_computed_torque", params=params, equation=eq, units=_TAU_UNITS, **common)
    ctrl, offset = term.cfg.controller_cfg, term.cfg.body_offset
    params = {
        "body": term._ee_body_name,
        "body_offset": {"pos": [f32(v) for v in offset.pos] if offset else [0.0] * 3,
                        "quat_wxyz": _quat_wxyz(offset.rot) if offset else [1.0, 0.0, 0.0, 0.0]},
        "position_scale": f32(term.cfg.position_scale), "orientation_scale": f32(term.cfg.orientation_scale),
        "stiffness": [f32(v) for v in ctrl.motion_stiffness_task],
        "damping_ratio": [f32(v) for v in ctrl.motion_damping_ratio_task],
        "nullspace": {"control": ctrl.nullspace_control, "stiffness": f32(ctrl.nullspace_stiffness),
                      "damping_ratio": f32(ctrl.nullspace_damping_ratio),
                      "target": term.cfg.nullspace_joint_pos_target},
        "model": _MODEL,
    }  # fmt: skip
    eq = ("each policy step: x* = x (+) (position_scale * a[0:3], orientation_scale * a[3:6]) (the controlled frame's "
          "pose in the root frame); each physics step: e = (p* - p, axis-angle of R* R^T), "
          "tau = J^T (Kx e - Dx xd) + g(q) + (I - J^T J^+T) M(q) (kn (q0 - q) - dn qd), Kx = diag(stiffness), "
          "Dx = 2 damping_ratio sqrt(Kx) (Isaac Lab's OperationalSpaceController, no inertial decoupling)")  # fmt: skip
    return ActionTerm(type="ee_impedance", params=params, equation=eq, units=_TAU_UNITS, **common)


def action_terms(env: Any, raw_clip: float | None = None) -> tuple[Actions, Any]:
    """Every action term of ``env`` in action-vector order, and the articulation they drive.

    Args:
        raw_clip: The bound rsl-rl's wrapper applies to raw actions (``clip_actions`` of the agent cfg), if any.

    Raises:
        ExportError: A term of a class the format cannot describe, or terms driving different assets.
    """
    terms, pos, assets = [], 0, set()
    for name in env.action_manager.active_terms:
        term = env.action_manager.get_term(name)
        assets.add(term.cfg.asset_name)
        terms.append(describe_term(name, term, pos))
        pos = terms[-1].stop
    if len(assets) != 1:
        raise ExportError(f"the action terms drive the assets {sorted(assets)}; the export describes one robot")
    clip = None if raw_clip is None or not math.isfinite(raw_clip) else float(raw_clip)
    return Actions(tuple(terms), clip), env.scene[assets.pop()]


def check_actions(meta: Any, env: Any) -> None:
    """Refuse an env whose action terms are not the export's (as :func:`action_terms` describes them): the policy's
    raw actions would mean other joint targets. Build the env with :func:`realgap.envs.eval.policies.export_actions`
    applied to its cfg first.

    Raises:
        ExportError: Naming each term that differs, and how.
    """
    env_actions, _ = action_terms(env, meta.actions.raw_clip)
    if env_actions == meta.actions:
        return
    lines = []
    for x, e in zip(meta.actions.terms, env_actions.terms, strict=False):
        keys = sorted(k for k in set(x.params) | set(e.params) if x.params.get(k) != e.params.get(k))
        if (x.name, x.type, x.start, x.stop, x.joint_names) != (e.name, e.type, e.start, e.stop, e.joint_names):
            lines.append(f"term '{x.name}' ({x.type}, [{x.start}, {x.stop})) vs the env's '{e.name}' ({e.type}, "
                         f"[{e.start}, {e.stop}))")  # fmt: skip
        elif keys or x.feed_forward != e.feed_forward:
            lines.append(f"term '{x.name}': {', '.join(keys) or 'feed_forward'} differ")
    if len(meta.actions.terms) != len(env_actions.terms):
        lines.append(f"{len(meta.actions.terms)} terms vs the env's {len(env_actions.terms)}")
    raise ExportError("the env's action terms are not the export's:\n  - " + "\n  - ".join(lines or ["raw_clip"]))
