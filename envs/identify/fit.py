"""Identify the actuator chain from a robot log (:mod:`realgap.envs.deploy.log`): per joint, what the log determines.

Two fits, each used where it is exact for its parameter (robot model: the log's export, in MuJoCo C):

1. **Torque regressions** (need ``tau``). The command side replays the logged targets through the realgap
   :class:`~realgap.actuators.chain.ActuatorChain` (numpy, unit gains, infinite envelope) for every candidate delay
   ``d`` = 0..``max_delay_steps``: ``τ = kp·e_d + kd·(−q̇)`` with ``e_d`` the chain's delayed position error is linear
   in (kp, kd), so ordinary least squares per joint is the exact estimator; the delay (one per bus) is the ``d`` with
   the smallest normalized residual — a discrete search, exact when the targets have edges. Samples where that law
   predicts more than the measured torque are saturated: there ``τ = τ_peak·clip(±1 − q̇/ω_0)`` gives the torque
   limit (ω_0 from the datasheet). The plant side needs a welded base (no contact, no base state): MuJoCo's inverse
   dynamics with armature and friction zeroed gives the rigid-body torque ``τ_rb(q, q̇, q̈)`` (q̈ from the logged
   velocities, ``(q̇[k+1] − q̇[k])/dt``, MuJoCo's own velocity update) and ``τ − τ_rb = a·q̈ + f_c·sgn(q̇[k+1]) +
   f_v·q̇[k+1]`` is linear in armature, Coulomb and viscous friction (``q̇[k+1]``: MuJoCo integrates joint damping
   implicitly); samples near zero velocity (stiction) are left out. Uncertainty: OLS covariance ``s²(XᵀX)⁻¹``. A
   negative armature or friction is reported not identifiable, whatever its spread: no joint has one, so the column
   absorbed what the model misses.
   **Noisy sensors** (``filter_hz``): both regressions are linear in their parameters, so the measured side and every
   regressor column, each computed from the raw samples, are passed through the *same* zero-phase low-pass
   (Butterworth, 4th order, forward-backward: ``scipy.signal.sosfiltfilt``) before the fit — the parallel filtering
   of robot identification (Gautier); for the gains only over stretches of unsaturated samples (saturation and the
   delay are told from the raw samples). The linear relation holds exactly after the filter, while
   the noise above the corner, which the finite-difference q̈ amplifies by 1/dt, is removed from the regressors
   (errors in a regressor bias OLS towards zero). Without it, a few % of sensor noise leaves the plant not
   identifiable (hidden Panda, ``SensorNoise`` "typical": armature −0.01 ± 0.03 for a truth of 0.16).
2. **Replay** (:mod:`realgap.envs.identify.replay`): the logged targets drive the chain on the MuJoCo robot
   and ``scipy.optimize.least_squares`` minimizes the tracking error of ``q`` (and ``τ`` where logged). It is what a
   log *without* torque allows, it checks the regressions, and it draws the fit plot.

Which log determines what (a parameter a log cannot determine is reported "not identifiable" with the reason):

==============================  ======================================================================================
log                             identifiable
==============================  ======================================================================================
excitation, hanging, torque     delay, kp, kd, armature, Coulomb, viscous; torque limit if a step saturated the drive
excitation, hanging, no torque  by replay only, roughly: delay, kp, kd + viscous (only their sum acts on q), armature,
                                Coulomb (hidden G1 knee: delay right but only 1 % better than the next; kp +21 %,
                                armature +33 %, Coulomb +39 %: the open-loop replay drifts, see the report)
policy log, floating, torque    delay, kp, kd, torque limit if saturated; not the plant (contacts, base unknown)
policy log, no torque           nothing (contact forces and base state unknown)
==============================  ======================================================================================
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from realgap.actuators.chain import ActuatorChain, ChainTiming
from realgap.actuators.params import JointParams
from realgap.envs.deploy.log import RobotLog
from realgap.envs.identify.estimates import Estimate, JointFit

MIN_VELOCITY = 0.5  # rad/s: below, MuJoCo's soft frictionloss (like stiction) gives less than f_c (0.2: 3 % bias)
MIN_REVERSALS = 10  # samples on each side of zero velocity before Coulomb and viscous friction separate
MAX_REL_STD = 0.5  # an estimate whose standard deviation exceeds half its value is reported not identifiable


@dataclass
class Identification:
    """Result of :func:`identify`: the bus delay, a :class:`JointFit` per joint (each with its own ``delay_steps``
    estimate where the delay was fitted per joint) and the normalized residual per candidate delay, summed over the
    joints."""

    delay_steps: Estimate
    delay_rss: dict[int, float]
    joints: list[JointFit]
    dt: float
    notes: list[str] = field(default_factory=list)

    def joint_delays(self) -> dict[str, int]:
        """Each joint's identified delay, log samples (empty unless it was fitted per joint)."""
        found = {f.joint: f.estimates.get("delay_steps") for f in self.joints}
        return {j: int(e.value) for j, e in found.items() if e is not None and e.identifiable}


def _unit_chain_response(log: RobotLog, delay: int, kp: float, kd: float) -> np.ndarray:
    """Replay the logged targets through the chain with gains ``kp``, ``kd`` on every joint, no envelope and a
    ``delay``-step bus, against the logged ``q``, ``q̇``. Shape: ``(T, J)`` torques."""
    n = len(log.joint_names)
    inf = np.full(n, np.inf)
    params = JointParams(
        kp=np.full(n, kp),
        kd=np.full(n, kd),
        peak_torque=inf,
        no_load_speed=inf,
        coulomb_friction=np.zeros(n),
        viscous_friction=np.zeros(n),
        friction_velocity_scale=np.ones(n),
    )
    chain = ActuatorChain(params, ChainTiming(log.control_dt), 1, delay_steps=(delay, delay))
    zeros = np.zeros((1, n))
    out = np.empty_like(log.q)
    for k in range(log.num_samples):
        out[k] = chain.compute(log.q_target[k : k + 1], zeros, log.q[k : k + 1], log.qd[k : k + 1]).tau_applied[0]
    return out


def _lowpass(x: np.ndarray, samples: np.ndarray, filter_hz: float | None, dt: float) -> np.ndarray:
    """``x`` (rows = ``samples``, one or more columns) through a zero-phase 4th-order Butterworth low-pass at
    ``filter_hz``, separately over each run of consecutive samples; unchanged when ``filter_hz`` is None."""
    if filter_hz is None:
        return x
    from scipy.signal import butter, sosfiltfilt

    sos = butter(4, filter_hz, fs=1.0 / dt, output="sos")
    out = np.array(x, dtype=float, copy=True)
    breaks = np.nonzero(np.diff(samples) != 1)[0] + 1
    for run in np.split(np.arange(samples.size), breaks):
        if run.size > 27:  # sosfiltfilt's default padding for two sections needs more samples than 3·(2·4+1)
            out[run] = sosfiltfilt(sos, out[run], axis=0)
    return out


def check_filter(filter_hz: float | None, dt: float) -> None:
    """Refuse a corner that is not a positive frequency below the log's Nyquist rate (names both)."""
    if filter_hz is not None and not (np.isfinite(filter_hz) and 0 < filter_hz < 0.5 / dt):
        raise ValueError(
            f"filter_hz {filter_hz:g} Hz: give a corner above 0 and below the log's Nyquist rate "
            f"{0.5 / dt:g} Hz (samples every {dt:g} s)"
        )


def _ols(x: np.ndarray, y: np.ndarray, correlated: float = 1.0) -> tuple[np.ndarray, np.ndarray, float]:
    """Least squares ``y ≈ x·β``: ``(β, std(β), rss)`` with the covariance ``s²(XᵀX)⁻¹``, times ``correlated``: the
    samples per independent one where the residuals are low-passed (``fs / (2·f_c)``, see :func:`_filter_factor`)."""
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    rss = float(np.sum((y - x @ beta) ** 2))
    dof = max(len(y) - x.shape[1], 1)
    cov = rss / dof * np.linalg.pinv(x.T @ x) * correlated
    return beta, np.sqrt(np.clip(np.diag(cov), 0.0, None)), rss


def _filter_factor(filter_hz: float | None, dt: float) -> float:
    """How many filtered samples carry one independent residual: ``fs / (2·f_c)`` (1 without the filter)."""
    return 1.0 if filter_hz is None else max(0.5 / (dt * filter_hz), 1.0)


def _envelope(qd: np.ndarray, sign: np.ndarray, no_load_speed: float) -> np.ndarray:
    """``τ/τ_peak`` at the edge of the torque–speed envelope: ``clip(1 − q̇/ω_0, 0, 1)`` (τ > 0) or
    ``clip(−1 − q̇/ω_0, −1, 0)`` (τ < 0), as :func:`realgap.actuators.models.torque_speed_bounds`."""
    r = qd / no_load_speed
    return np.where(sign > 0, np.clip(1.0 - r, 0.0, 1.0), np.clip(-1.0 - r, -1.0, 0.0))


def _delay_residuals(log: RobotLog, fit: JointFit, responses: dict[int, np.ndarray]) -> dict[int, float]:
    """One joint's residual of the PD law ``τ = kp·e_d − kd·q̇`` per candidate delay ``d``, normalized by the
    torque's variance (so joints of different sizes weigh alike in the bus sum)."""
    tau = log.tau[fit.samples, fit.index]
    out = {}
    for d, e in responses.items():
        x = np.stack([e[fit.samples, fit.index], -log.qd[fit.samples, fit.index]], axis=1)
        out[d] = _ols(x, tau)[2] / (np.sum((tau - tau.mean()) ** 2) + 1e-12)
    return out


def _delay_estimate(rss: dict[int, float], max_delay_steps: int, whose: str) -> Estimate:
    """The candidate delay with the smallest residual, with how clearly it wins (the next best's residual ratio)."""
    ranked = sorted(rss, key=rss.get)
    ratio = rss[ranked[1]] / max(rss[ranked[0]], 1e-300)
    method = f"{whose}discrete search 0..{max_delay_steps}; next best d={ranked[1]} has {ratio:.3g}× the residual"
    return Estimate(float(ranked[0]), 0.0, "physics steps", method)


def _gains_and_limit(
    fit: JointFit, log: RobotLog, e: np.ndarray, no_load_speed: float, filter_hz: float | None = None
) -> float:
    """kp, kd (OLS on unsaturated samples) and the torque limit (saturated samples) of one joint; returns the RSS."""
    j, s = fit.index, fit.samples
    tau, x = log.tau[s, j], np.stack([e[s, j], -log.qd[s, j]], axis=1)
    # pass 1: leave out the torques near the top of the (speed-dependent) envelope, which may be saturated
    reach = np.abs(tau) / np.maximum(np.abs(_envelope(log.qd[s, j], np.sign(tau), no_load_speed)), 1e-6)
    keep = reach < 0.9 * reach.max()
    for _ in range(3):  # then: saturated = the PD law asks for more than the drive gave; refit on the rest
        beta, _, _ = _ols(x[keep], tau[keep])
        pred = x @ beta
        sigma = np.std(tau[keep] - pred[keep]) + 1e-9
        saturated = (np.abs(pred) - np.abs(tau) > 6 * sigma + 1e-3 * np.abs(tau).max()) & (pred * tau > 0)
        keep = ~saturated
    n_sat = int(saturated.sum())
    if n_sat >= 3:  # the limit from the saturated samples; then keep only samples clear of it, measured *and* asked
        peaks = tau[saturated] / _envelope(log.qd[s, j][saturated], np.sign(tau[saturated]), no_load_speed)
        limit = float(np.median(peaks))
        for _ in range(2):
            beta, _, _ = _ols(x[keep], tau[keep])
            pred = x @ beta
            sigma = np.std(tau[keep] - pred[keep]) + 1e-9
            ceiling = np.abs(_envelope(log.qd[s, j], np.sign(pred), no_load_speed)) * limit - 3 * sigma
            keep = ~saturated & (np.abs(tau) < ceiling) & (np.abs(pred) < ceiling)
    # saturation is told from the raw samples; the filter then runs over each stretch of unsaturated samples only,
    # since it would smear the limit's nonlinearity into its neighbours
    both = _lowpass(np.column_stack([tau, x])[keep], s[keep], filter_hz, log.control_dt)
    beta, std, rss = _ols(both[:, 1:], both[:, 0], _filter_factor(filter_hz, log.control_dt))
    fit.tau_predicted = np.full(log.num_samples, np.nan)
    fit.tau_predicted[s] = x @ beta
    cmd_kp, cmd_kd = log.kp[j], log.kd[j]
    fit.estimates["kp"] = Estimate(float(beta[0]), float(std[0]), "N·m/rad", f"OLS on τ (commanded {cmd_kp:g})")
    fit.estimates["kd"] = Estimate(float(beta[1]), float(std[1]), "N·m·s/rad", f"OLS on τ (commanded {cmd_kd:g})")
    if n_sat >= 3:
        fit.estimates["torque_limit"] = Estimate(
            limit, float(np.std(peaks) / np.sqrt(n_sat)), "N·m", f"{n_sat} saturated samples"
        )
        fit.tau_predicted[s] = np.clip(x @ beta, -limit, limit)
    else:
        fit.estimates["torque_limit"] = Estimate.missing(
            "N·m", f"the drive never saturated (max |τ| {np.abs(tau).max():.3g} N·m, always what the PD law asked)"
        )
    return rss


def _plant(fit: JointFit, log: RobotLog, tau_rb: np.ndarray, filter_hz: float | None = None) -> None:
    """Armature, Coulomb and viscous friction of one joint from ``τ − τ_rb`` (see the module docstring)."""
    j, s = fit.index, fit.samples
    s = s[s < log.num_samples - 1]
    qd_next = log.qd[s + 1, j]
    qdd = (qd_next - log.qd[s, j]) / log.control_dt
    cols = np.stack([log.tau[s, j] - tau_rb[s, j], qdd, np.sign(qd_next), qd_next], axis=1)
    y_all, qdd, sgn, qd_next = _lowpass(cols, s, filter_hz, log.control_dt).T  # one filter for both sides
    moving = np.abs(qd_next) > MIN_VELOCITY
    pos, neg = int((moving & (qd_next > 0)).sum()), int((moving & (qd_next < 0)).sum())
    y = y_all[moving]
    if min(pos, neg) < MIN_REVERSALS:
        reason = (
            f"velocity above {MIN_VELOCITY} rad/s in one direction only ({pos} samples > 0, {neg} < 0): Coulomb "
            "friction and a torque offset cannot be told apart"
        )
        fit.estimates["coulomb"] = Estimate.missing("N·m", reason)
        x = np.stack([qdd[moving], qd_next[moving]], axis=1)
        names = ("armature", "viscous")
    else:
        x = np.stack([qdd[moving], sgn[moving], qd_next[moving]], axis=1)
        names = ("armature", "coulomb", "viscous")
    units = {"armature": "kg·m²", "coulomb": "N·m", "viscous": "N·m·s/rad"}
    beta, std, _ = _ols(x, y, _filter_factor(filter_hz, log.control_dt))
    for name, b, sd in zip(names, beta, std, strict=True):
        if sd > MAX_REL_STD * abs(b) and sd > 1e-4:
            fit.estimates[name] = Estimate.missing(
                units[name],
                f"too little excitation: {b:.3g} ± {sd:.2g} {units[name]} (std above {MAX_REL_STD:.0%} of the value)",
            )
        elif b < 0.0:  # a negative inertia or friction is no joint's: the column absorbed what the model misses
            fit.estimates[name] = Estimate.missing(
                units[name],
                f"fitted {b:.3g} ± {sd:.2g} {units[name]}, negative, which no real joint has: the regression put here "
                "what the model misses (sensor noise, an inertia or a delay the log does not match)",
            )
        else:
            fit.estimates[name] = Estimate(
                float(b), float(sd), units[name], f"OLS on τ − τ_rb, {int(moving.sum())} sliding samples"
            )


def _plant_missing(fit: JointFit, reason: str) -> None:
    fit.estimates |= {
        k: Estimate.missing(u, reason) for k, u in (("armature", "kg·m²"), ("coulomb", "N·m"), ("viscous", "N·m·s/rad"))
    }


def _joint_fits(log: RobotLog, joints: Sequence[str] | None) -> list[JointFit]:
    """One empty :class:`JointFit` per joint to identify, with the samples it is fitted on: the log's excitation
    segment of that joint, or every sample for a joint the log did not excite (a policy log).

    Raises:
        ValueError: An unknown joint, or one whose target never moves in its samples.
    """
    names = log.joint_names
    excited = [names[i] for i in sorted(set(log.segment.tolist()) - {-1})]
    chosen = list(joints) if joints else (excited or list(names))
    unknown = [j for j in chosen if j not in names]
    if unknown:
        raise ValueError(f"joints {unknown} are not in the log (joints: {list(names)})")
    fits = []
    for joint in chosen:
        i = names.index(joint)
        samples = np.nonzero(log.segment == i)[0] if joint in excited else np.arange(log.num_samples)
        if np.ptp(log.q_target[samples, i]) < 1e-4:
            raise ValueError(f"joint '{joint}': its target never moves in the log; nothing to identify")
        fits.append(JointFit(joint, i, samples))
    return fits


def identify(
    log: RobotLog,
    joints: Sequence[str] | None = None,
    *,
    max_delay_steps: int = 6,
    replay: bool = True,
    filter_hz: float | None = None,
    delay_per_joint: bool = False,
) -> Identification:
    """Identify the actuator parameters of ``joints`` (default: every joint the log excited, else every joint).

    ``filter_hz``: corner of the zero-phase low-pass applied to both sides of the torque regressions (noisy sensors;
    see the module docstring); None: the raw samples. ``delay_per_joint``: each joint's delay is the candidate with
    its own smallest residual (joints on different buses or drives), and its gains are fitted at that delay; the
    bus delay is still reported. Needs the torque channel.

    Raises:
        ValueError: An unknown joint, no joint with enough motion (names them), a corner at or above the log's
            Nyquist rate, or a delay per joint asked of a log without torque.
    """
    check_filter(filter_hz, log.control_dt)
    from realgap.envs.identify.replay import ReplayModel, fit_replay, rigid_body_torque

    fits = _joint_fits(log, joints)
    meta = log.metadata()
    no_load = {j: g.joint_params().no_load_speed[k] for g in meta.actuator_groups for k, j in enumerate(g.joint_names)}
    notes, rss_by_delay = [], {}
    if log.tau is not None:
        responses = {d: _unit_chain_response(log, d, 1.0, 0.0) for d in range(max_delay_steps + 1)}
        per_joint = {fit.joint: _delay_residuals(log, fit, responses) for fit in fits}
        rss_by_delay = {d: sum(r[d] for r in per_joint.values()) for d in responses}
        delay = _delay_estimate(rss_by_delay, max_delay_steps, "")
        for fit in fits:
            if delay_per_joint:
                fit.estimates["delay_steps"] = _delay_estimate(per_joint[fit.joint], max_delay_steps, "this joint's ")
            d = int(fit.estimates["delay_steps"].value) if delay_per_joint else int(delay.value)
            _gains_and_limit(fit, log, responses[d], no_load[fit.joint], filter_hz)
        if log.fixed_base:
            model = ReplayModel(log)
            tau_rb = rigid_body_torque(model, log)
            for fit in fits:
                _plant(fit, log, tau_rb, filter_hz)
        else:
            for fit in fits:
                _plant_missing(
                    fit,
                    "floating base: contact forces and the base state are not logged, so the "
                    "rigid-body torque is unknown",
                )
    elif delay_per_joint:
        raise ValueError("a delay per joint needs the torque channel: this log has none")
    else:
        delay = Estimate.missing("physics steps", "set by the replay fit below")
        notes.append("no torque channel: every parameter comes from the replay fit of q (kd includes viscous friction)")
    if replay and log.fixed_base:
        delay = fit_replay(log, fits, delay, max_delay_steps, notes)
    elif log.tau is None:
        delay = Estimate.missing("physics steps", "no torque channel and no welded base: neither fit applies")
    if abs(log.control_dt - log.physics_dt) > 1e-9:
        notes.append(
            f"log sampled every {log.control_dt:g} s, training physics step {log.physics_dt:g} s: the delay "
            "is in log samples"
        )
    return Identification(delay, rss_by_delay, fits, log.control_dt, notes)


def replace_estimate(fit: JointFit, name: str, **changes) -> None:
    """Change fields of one estimate in place (used by the replay fit)."""
    fit.estimates[name] = dataclasses.replace(fit.estimates[name], **changes)
