"""Replay a robot log on the MuJoCo robot through the realgap actuator chain, and fit the chain to it.

:class:`ReplayModel` is the log's robot (its export's description in MuJoCo C, base welded where the log's was), the
datasheet armature and friction in its joints. :func:`replay` drives it from the logged state at the start of a
joint's segment with the logged targets: :class:`~realgap.actuators.chain.ActuatorChain` (numpy; delay, PD with the
given gains, torque–speed envelope) computes the torque, MuJoCo applies armature and friction. :func:`fit_replay` fits
kp, kd, armature and Coulomb friction (and viscous friction when torque is logged) per joint with
``scipy.optimize.least_squares`` — chosen because the residual (tracking error over time) is a smooth vector function
of a few bounded parameters, which is the trust-region reflective method's case: bounds keep gains and friction
non-negative, and its Jacobian at the solution gives the covariance ``s²(JᵀJ)⁻¹`` we report as the uncertainty. The
delay, an integer, is searched outside it. numpy + scipy + mujoco.
"""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
from scipy.optimize import least_squares

from realgap.actuators.chain import ActuatorChain, ChainTiming
from realgap.envs.deploy.log import RobotLog
from realgap.envs.deploy.mujoco_robot import MujocoRobot
from realgap.envs.identify.estimates import Estimate, JointFit

Q_SCALE = 1e-3  # rad: a tracking error of 1 mrad weighs as much as ...
TAU_SCALE = 0.01  # ... 1 % of the joint's largest logged torque


class ReplayModel:
    """The log's robot in MuJoCo C with the datasheet actuator numbers of its export, base welded like the log's."""

    def __init__(self, log: RobotLog) -> None:
        meta = log.metadata()
        hang = float(log.root_pos_w[2] - meta.robot.start_root_pos[2]) if np.isfinite(log.root_pos_w).all() else 0.5
        self.robot = MujocoRobot.for_policy(meta, fixed_base=True, hang_m=hang)
        m = self.robot.model
        self.vadr, self.qadr = self.robot.dof_adr, self.robot.qpos_adr
        self.nominal = {
            "armature": m.dof_armature[self.vadr].copy(),
            "coulomb": m.dof_frictionloss[self.vadr].copy(),
            "viscous": m.dof_damping[self.vadr].copy(),
        }
        self.params = dataclasses.replace(
            meta.actuator_groups[0].joint_params(),
            **{
                k: np.concatenate([getattr(g.joint_params(), k) for g in meta.actuator_groups])
                for k in (
                    "kp",
                    "kd",
                    "peak_torque",
                    "no_load_speed",
                    "coulomb_friction",
                    "viscous_friction",
                    "friction_velocity_scale",
                )
            },
        )
        order = [j for g in meta.actuator_groups for j in g.joint_names]
        perm = np.array([order.index(j) for j in log.joint_names])
        self.params = dataclasses.replace(
            self.params,
            **{
                f.name: getattr(self.params, f.name)[perm]
                for f in dataclasses.fields(self.params)
                if getattr(self.params, f.name) is not None
            },
        )


def rigid_body_torque(model: ReplayModel, log: RobotLog) -> np.ndarray:
    """``τ_rb(q, q̇, q̈)`` per sample from MuJoCo inverse dynamics with armature, friction and damping zeroed
    (``q̈[k] = (q̇[k+1] − q̇[k]) / dt``; the last sample gets zero). Shape: ``(T, J)``."""
    m = model.robot.model
    saved = m.dof_armature.copy(), m.dof_frictionloss.copy(), m.dof_damping.copy()
    m.dof_armature[:], m.dof_frictionloss[:], m.dof_damping[:] = 0.0, 0.0, 0.0
    d = mujoco.MjData(m)
    out = np.zeros_like(log.q)
    qdd = np.diff(log.qd, axis=0) / log.control_dt
    try:
        for k in range(log.num_samples - 1):
            d.qpos[model.qadr], d.qvel[model.vadr], d.qacc[model.vadr] = log.q[k], log.qd[k], qdd[k]
            mujoco.mj_inverse(m, d)
            out[k] = d.qfrc_inverse[model.vadr]
    finally:
        m.dof_armature[:], m.dof_frictionloss[:], m.dof_damping[:] = saved
    return out


def replay(
    model: ReplayModel,
    log: RobotLog,
    fit: JointFit,
    theta: dict[str, float],
    delay: int,
    kp_scale: np.ndarray,
    kd_scale: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Simulate ``fit``'s segment with its joint's parameters ``theta`` (kp, kd, armature, coulomb, viscous, and
    optionally torque_limit); the other joints keep the commanded gains × ``kp_scale``/``kd_scale`` and the
    datasheet plant. Returns the joint's ``q`` and ``τ`` over the segment."""
    robot, j, s = model.robot, fit.index, fit.samples
    m, v = robot.model, model.vadr[j]
    m.dof_armature[v], m.dof_frictionloss[v], m.dof_damping[v] = theta["armature"], theta["coulomb"], theta["viscous"]
    kp, kd = log.kp * kp_scale, log.kd * kd_scale
    kp[j], kd[j] = theta["kp"], theta["kd"]
    peak = model.params.peak_torque.copy()
    peak[j] = theta.get("torque_limit", peak[j])
    params = dataclasses.replace(model.params, kp=kp, kd=kd, peak_torque=peak, coulomb_friction=np.zeros_like(kp))
    chain = ActuatorChain(params, ChainTiming(log.control_dt), 1, delay_steps=(delay, delay))
    d = robot.data
    mujoco.mj_resetData(m, d)
    d.qpos[model.qadr], d.qvel[model.vadr] = log.q[s[0]], log.qd[s[0]]
    zeros = np.zeros((1, kp.size))
    q_out, tau_out = np.empty(s.size), np.empty(s.size)
    try:
        for n, k in enumerate(s):
            q, qd = d.qpos[model.qadr][None, :], d.qvel[model.vadr][None, :]
            q_out[n] = q[0, j]
            tau = chain.compute(log.q_target[k : k + 1], zeros, q, qd).tau_applied[0]
            tau_out[n] = tau[j]
            d.ctrl[:] = tau
            mujoco.mj_step(m, d)
    finally:
        for key, field in (("armature", "dof_armature"), ("coulomb", "dof_frictionloss"), ("viscous", "dof_damping")):
            getattr(m, field)[v] = model.nominal[key][j]
    return q_out, tau_out


def _scales(log: RobotLog, fits: list[JointFit]) -> tuple[np.ndarray, np.ndarray]:
    """Realized/commanded gains of the fitted joints (1 elsewhere), for the joints held still during a segment."""
    kp_s, kd_s = np.ones(len(log.joint_names)), np.ones(len(log.joint_names))
    for f in fits:
        for name, arr, cmd in (("kp", kp_s, log.kp), ("kd", kd_s, log.kd)):
            e = f.estimates.get(name)
            if e is not None and e.identifiable and cmd[f.index] > 0:
                arr[f.index] = e.value / cmd[f.index]
    return kp_s, kd_s


def fit_replay(log: RobotLog, fits: list[JointFit], delay: Estimate, max_delay: int, notes: list[str]) -> Estimate:
    """Replay every joint's segment; without torque, fit its parameters (and the delay) with least squares.

    With torque the regressions of :mod:`realgap.envs.identify.fit` are exact and only their replay is kept
    (``q_replayed``, the plot, the tracking RMS in ``notes``). Returns the delay estimate.
    """
    model = ReplayModel(log)
    if log.tau is not None:
        kp_s, kd_s = _scales(log, fits)
        for f in fits:
            theta = {
                k: (
                    f.estimates[k].value
                    if f.estimates.get(k) and f.estimates[k].identifiable
                    else model.nominal.get(k, [0.0] * (f.index + 1))[f.index]
                )
                for k in ("kp", "kd", "armature", "coulomb", "viscous")
            }
            if f.estimates["torque_limit"].identifiable:
                theta["torque_limit"] = f.estimates["torque_limit"].value
            own = f.estimates.get("delay_steps")  # fitted per joint, or the bus's
            q, _ = replay(model, log, f, theta, int((own or delay).value), kp_s, kd_s)
            f.q_replayed = np.full(log.num_samples, np.nan)
            f.q_replayed[f.samples] = q
            rms = float(np.sqrt(np.mean((q - log.q[f.samples, f.index]) ** 2)))
            if np.isfinite(rms):
                notes.append(f"{f.joint}: replay with the identified values tracks q to {rms * 1e3:.3g} mrad RMS")
            else:
                notes.append(f"{f.joint}: replay with the identified values diverges (q not finite): do not use them")
        return delay
    names = ("kp", "kd", "armature", "coulomb")
    units = ("N·m/rad", "N·m·s/rad", "kg·m²", "N·m")
    kp_s, kd_s = np.ones(len(log.joint_names)), np.ones(len(log.joint_names))
    best_by_delay = {}
    for d in range(max_delay + 1):
        total, results = 0.0, []
        for f in fits:
            j = f.index
            x0 = np.array([log.kp[j], log.kd[j], model.nominal["armature"][j], model.nominal["coulomb"][j]])

            def residual(x: np.ndarray, f: JointFit = f, d: int = d) -> np.ndarray:
                theta = dict(zip(names, x, strict=True)) | {"viscous": 0.0}
                q, _ = replay(model, log, f, theta, d, kp_s, kd_s)
                return (q - log.q[f.samples, f.index]) / Q_SCALE

            res = least_squares(
                residual,
                x0,
                bounds=(np.zeros(4), np.full(4, np.inf)),
                x_scale=np.abs(x0) + 1e-3,
                diff_step=1e-3,
                max_nfev=40,
            )
            total += float(np.sum(res.fun**2))
            results.append(res)
        best_by_delay[d] = (total, results)
    best = min(best_by_delay, key=lambda d: best_by_delay[d][0])
    for f, res in zip(fits, best_by_delay[best][1], strict=True):
        dof = max(res.fun.size - res.x.size, 1)
        cov = np.linalg.pinv(res.jac.T @ res.jac) * float(np.sum(res.fun**2)) / dof
        std = np.sqrt(np.clip(np.diag(cov), 0, None))
        for name, unit, value, sd in zip(names, units, res.x, std, strict=True):
            label = "kd (+ viscous)" if name == "kd" else name
            f.estimates[name] = Estimate(float(value), float(sd), unit, f"least_squares replay of q: {label}")
        f.estimates["viscous"] = Estimate.missing(
            "N·m·s/rad", "no torque logged: viscous friction acts on q exactly as kd does (q̇* = 0); kd holds their sum"
        )
        f.estimates["torque_limit"] = Estimate.missing("N·m", "no torque logged (the replay fit does not search it)")
        theta = dict(zip(names, res.x, strict=True)) | {"viscous": 0.0}
        f.q_replayed = np.full(log.num_samples, np.nan)
        f.q_replayed[f.samples] = replay(model, log, f, theta, best, kp_s, kd_s)[0]
    ranked = sorted(best_by_delay, key=lambda d: best_by_delay[d][0])
    ratio = best_by_delay[ranked[1]][0] / max(best_by_delay[best][0], 1e-300)
    return Estimate(
        float(best),
        0.0,
        "physics steps",
        f"least_squares replay for d = 0..{max_delay}; next best d={ranked[1]} has {ratio:.3g}× the residual",
    )
