"""The drive plant of a robot log fitted with MuJoCo's own identification module (``mujoco.sysid``).

:mod:`realgap.envs.identify.fit` fits armature, Coulomb and viscous friction by inverse dynamics (a linear
regression of the logged torque on the measured motion, one joint at a time). ``mujoco.sysid`` fits the same three
MuJoCo joint parameters (``armature``, ``frictionloss``, ``damping``) by rollout error: it replays the logged motor
torques open loop on the robot's MJCF from each excitation segment's start state and minimises the error of the
simulated joint positions and velocities against the logged ones. Both read the same ``realgap.robot_log/1`` file;
this module runs the second so the two can be put side by side (``scripts/identify.py --engine``, the identification
docs page). What only realgap's fit does — the command delay search, realized kp/kd, the torque envelope, standard
errors with the not-identifiable rule — stays there: ``mujoco.sysid`` models the plant, not the drive.

Needs a log with torque (``tau_source`` ``commanded`` or ``measured``) recorded on a welded base (``fixed_base``):
an open-loop torque replay of a standing robot falls over, whatever the parameters.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from realgap.envs.deploy.log import LogError, RobotLog
from realgap.envs.format.description import locate_description
from realgap.envs.identify.fit import Estimate, identify

PARAMETERS = ("armature", "coulomb", "viscous")
"""What this fit estimates per joint, in :mod:`realgap.envs.identify.fit`'s names (MuJoCo: ``armature``,
``frictionloss``, ``damping``)."""
_MJ_ATTR = {"armature": "armature", "coulomb": "frictionloss", "viscous": "damping"}


@dataclass(frozen=True)
class SysidFit:
    """Result of :func:`fit_plant`.

    Attributes:
        values: Per joint, per parameter of :data:`PARAMETERS`: the estimate (kg·m², N·m, N·m·s/rad).
        intervals: The same keys: ``(lo, hi)`` 95 % confidence interval from ``mujoco.sysid.calculate_intervals``.
        fit_s: Wall-clock time of the optimisation, s.
        residual_rms: RMS of the final residual (rad and rad/s mixed, as ``mujoco.sysid`` weighs them).
        segments: Excitation segments replayed (one per joint).
    """

    values: dict[str, dict[str, float]]
    intervals: dict[str, dict[str, tuple[float, float]]]
    fit_s: float
    residual_rms: float
    segments: int


def _spec(log: RobotLog):
    """The log's robot as an ``MjSpec``: its MJCF (from the metadata's description), base welded where the log says,
    one motor (force = ctrl) and a position and velocity sensor per logged joint, the datasheet plant as start."""
    import mujoco

    from realgap.envs.deploy.mujoco_robot import ROBOT_CONAFFINITY, ROBOT_CONTYPE

    meta = log.metadata()
    spec = mujoco.MjSpec.from_file(str(locate_description(meta.robot.description)))
    for element in [*spec.actuators, *spec.keys, *spec.sensors]:
        spec.delete(element)
    for joint in [j for j in spec.joints if j.type == mujoco.mjtJoint.mjJNT_FREE]:
        joint.parent.pos = [float(x) for x in log.root_pos_w]
        joint.parent.quat = list(meta.robot.start_root_quat_wxyz)
        spec.delete(joint)
    for group in meta.actuator_groups:
        for i, name in enumerate(group.joint_names):
            spec.joint(name).armature = float(group.armature[i])
            spec.joint(name).frictionloss = float(group.coulomb_friction[i])
            spec.joint(name).damping = [float(group.viscous_friction[i]), 0.0, 0.0]
    for geom in spec.geoms:  # the deploy robot's collision classes: no self-collision, as on the robot that logged
        if geom.contype or geom.conaffinity:
            geom.contype, geom.conaffinity = ROBOT_CONTYPE, ROBOT_CONAFFINITY
    for name in log.joint_names:
        spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
    for name in log.joint_names:
        spec.add_sensor(
            name=f"{name}_pos", type=mujoco.mjtSensor.mjSENS_JOINTPOS, objtype=mujoco.mjtObj.mjOBJ_JOINT, objname=name
        )
    for name in log.joint_names:
        spec.add_sensor(
            name=f"{name}_vel", type=mujoco.mjtSensor.mjSENS_JOINTVEL, objtype=mujoco.mjtObj.mjOBJ_JOINT, objname=name
        )
    spec.option.timestep = float(log.control_dt)
    return spec


def _segments(log: RobotLog, joints: Sequence[str]) -> list[tuple[str, np.ndarray]]:
    """Per joint, the contiguous sample indices of its excitation segment."""
    out = []
    for name in joints:
        k = log.joint_names.index(name)
        idx = np.nonzero(log.segment == k)[0]
        if idx.size < 10:
            raise LogError(f"joint '{name}' was not excited in the log (its segment has {idx.size} samples)")
        out.append((name, np.arange(idx[0], idx[-1] + 1)))
    return out


def fit_plant(
    log: RobotLog, joints: Sequence[str] | None = None, *, window_s: float = 0.25, max_iters: int = 50
) -> SysidFit:
    """Fit armature, frictionloss and damping of ``joints`` (default: every excited joint) with ``mujoco.sysid``.

    Each joint's segment is cut into windows of ``window_s`` (multiple shooting: an open-loop torque replay drifts, so
    each window restarts from the logged ``q``, ``q̇`` of its first sample); the logged ``tau`` of every joint is the
    motor control, the logged ``q``, ``q̇`` the measured sensors (weight 1 on the fitted joints, 0 elsewhere).
    Starting point: the export's datasheet values (viscous 0 → 0.01 N·m·s/rad, off the bound); bounds
    ``[0, max(10 × start, 1)]``.

    Raises:
        LogError: No torque in the log, a floating base, or a requested joint not excited.
    """
    if log.tau is None:
        raise LogError(f"mujoco.sysid replays torques: this log has none (tau_source '{log.tau_source}')")
    if not log.fixed_base:
        raise LogError("mujoco.sysid replays torques open loop: it needs a log recorded on a welded base (fixed_base)")
    excited = [log.joint_names[k] for k in sorted({int(s) for s in log.segment if s >= 0})]
    joints = list(joints) if joints is not None else excited
    segments = _segments(log, joints)
    from mujoco import sysid

    window = max(2, round(window_s / log.control_dt))
    spec = _spec(log)
    model = spec.compile()
    qadr = [model.jnt_qposadr[model.joint(n).id] for n in log.joint_names]
    vadr = [model.jnt_dofadr[model.joint(n).id] for n in log.joint_names]
    names, inits, controls, sensors = [], [], [], []
    for name, idx in segments:
        for w, start in enumerate(range(idx[0], idx[-1] + 1 - window, window)):
            win = np.arange(start, start + window + 1)
            qpos, qvel = np.zeros(model.nq), np.zeros(model.nv)
            qpos[qadr], qvel[vadr] = log.q[win[0]], log.qd[win[0]]
            inits.append(sysid.create_initial_state(model, qpos, qvel))
            t = log.t[win] - log.t[win[0]]
            controls.append(sysid.TimeSeries(t, log.tau[win]))
            sensors.append(sysid.TimeSeries.from_names(t, np.hstack([log.q[win], log.qd[win]]), model))
            names.append(f"{name}_{w}")
    params = sysid.ParameterDict()
    for name in joints:
        for what in PARAMETERS:
            attr = _MJ_ATTR[what]
            current = spec.joint(name).damping[0] if attr == "damping" else getattr(spec.joint(name), attr)
            start = max(float(current), 0.01)
            upper = max(10.0 * start, 1.0)  # a worn drive can be far from its datasheet; 1.0 covers the viscous 0 start

            def modify(s, p, n=name, a=attr):
                value = float(p.value[0])
                setattr(s.joint(n), a, [value, 0.0, 0.0] if a == "damping" else value)

            params.add(
                sysid.Parameter(f"{name}:{what}", nominal=start, min_value=0.0, max_value=upper, modifier=modify)
            )
    sequences = sysid.ModelSequences(log.metadata().robot.name, spec, names, inits, controls, sensors)
    # only the fitted joints' sensors count: the others' plant stays at the datasheet, so their error is not theirs
    weights = {f"{n}_{s}": float(n in joints) for n in log.joint_names for s in ("pos", "vel")}
    residual_fn = sysid.build_residual_fn(models_sequences=[sequences], sensor_weights=weights)
    t0 = time.perf_counter()
    opt, result = sysid.optimize(params, residual_fn, optimizer="mujoco", verbose=False, max_iters=max_iters)
    fit_s = time.perf_counter() - t0
    residuals, _, _ = residual_fn(result.x, opt)
    r = np.concatenate(residuals)
    lo_hi = sysid.calculate_intervals(residuals, result.jac)
    values = {n: {w: float(opt[f"{n}:{w}"].value[0]) for w in PARAMETERS} for n in joints}
    intervals = _intervals(lo_hi, joints, values)
    return SysidFit(values, intervals, fit_s, float(np.sqrt(np.mean(r**2))), len(segments))


def _intervals(raw, joints: Sequence[str], values: dict[str, dict[str, float]]) -> dict[str, dict[str, tuple]]:
    """``calculate_intervals``' half-widths (one per parameter, in :func:`fit_plant`'s order) as ``(lo, hi)``."""
    half = np.asarray(raw[1], dtype=float).ravel()  # (Sigma_X, half-widths)
    out, k = {}, 0
    for n in joints:
        out[n] = {}
        for w in PARAMETERS:
            h = float(half[k]) if k < half.size else float("nan")
            out[n][w] = (values[n][w] - h, values[n][w] + h)
            k += 1
    return out


def compare_engines(log: RobotLog, truth: dict[str, dict[str, float]], *, max_iters: int = 50) -> dict:
    """Fit ``log`` with realgap's identification and with ``mujoco.sysid``; per joint and parameter of
    :data:`PARAMETERS` the truth, both estimates and their relative errors, and each engine's wall-clock fit time.

    ``truth``: per joint, per parameter, the hidden value (e.g. from the hidden robot's :class:`HiddenTruth`).
    """

    t0 = time.perf_counter()
    ours = identify(log, list(truth), replay=False)
    ours_s = time.perf_counter() - t0
    theirs = fit_plant(log, list(truth), max_iters=max_iters)
    rows = []
    for fit in ours.joints:
        for what in PARAMETERS:
            want = truth[fit.joint][what]
            a, b = fit.estimates[what].value, theirs.values[fit.joint][what]
            rows.append(
                {
                    "joint": fit.joint,
                    "parameter": what,
                    "truth": want,
                    "realgap": a,
                    "mujoco_sysid": b,
                    "realgap_rel_error": None if a is None else (a - want) / want,
                    "mujoco_sysid_rel_error": (b - want) / want,
                    "mujoco_sysid_ci95": list(theirs.intervals[fit.joint][what]),
                }
            )
    return {
        "rows": rows,
        "realgap_fit_s": ours_s,
        "mujoco_sysid_fit_s": theirs.fit_s,
        "mujoco_sysid_residual_rms": theirs.residual_rms,
        "samples": log.num_samples,
    }


UNITS = {"armature": "kg·m²", "coulomb": "N·m", "viscous": "N·m·s/rad"}


def use_sysid_plant(ident, log: RobotLog, *, max_iters: int = 50):
    """``ident`` (a :class:`realgap.envs.identify.fit.Identification`) with its armature, Coulomb and viscous
    estimates replaced by :func:`fit_plant`'s (std = 95 % half-width / 1.96); the delay, kp/kd and torque limit stay
    realgap's, which ``mujoco.sysid`` does not fit. Returns ``ident`` (changed in place)."""

    fit = fit_plant(log, [j.joint for j in ident.joints], max_iters=max_iters)
    for joint in ident.joints:
        for what in PARAMETERS:
            lo, hi = fit.intervals[joint.joint][what]
            value = fit.values[joint.joint][what]
            method = f"mujoco.sysid rollout error ({fit.segments} segments, {fit.fit_s:.0f} s)"
            joint.estimates[what] = Estimate(value, (hi - lo) / 2 / 1.96, UNITS[what], method)
    ident.notes.append("armature, Coulomb and viscous friction fitted by mujoco.sysid (--engine mujoco_sysid)")
    return ident
