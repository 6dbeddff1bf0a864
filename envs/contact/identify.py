"""Contact identification: (timeconst, dampratio) from a drop log and Coulomb friction from an incline-slide log.

Drop: simulate the same drop in MuJoCo with candidate (tc, zeta) and fit the lowest point's height z(t) after first
contact by least squares (log-parameters, so both stay positive); slide: the block's down-slope position is
``x0 + v0 t + a t^2 / 2`` with ``a = g (sin th - mu cos th)`` while it slides, a linear fit. Standard errors from the
Jacobian at the optimum, ``cov = s^2 (J^T J)^-1``, as the actuator identification reports them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from realgap.envs.contact import drop, theory
from realgap.envs.contact.params import ContactParams


class BadLogError(ValueError):
    """A log that cannot identify the parameter asked of it (too short, non-finite, no contact, no sliding)."""


def _check_log(log: drop.DropLog, what: str, min_steps: int = 20) -> None:
    arrays = {"t": log.t, "z": log.z, "vz": log.vz, "force": log.force, "x": log.x}
    for name, a in arrays.items():
        if a.ndim != 1 or a.shape != log.t.shape:
            raise BadLogError(f"{what} log: {name} has shape {a.shape}, expected {log.t.shape}")
        if not np.all(np.isfinite(a)):
            raise BadLogError(f"{what} log: {name} has non-finite samples")
    if log.t.size < min_steps:
        raise BadLogError(f"{what} log: {log.t.size} samples, need >= {min_steps}")
    if np.any(np.diff(log.t) <= 0):
        raise BadLogError(f"{what} log: time is not strictly increasing")


def fit_drop(
    log: drop.DropLog, spec: drop.DropSpec, known: ContactParams, guess: tuple[float, float] = (0.02, 1.0)
) -> dict[str, Any]:
    """Fit (timeconst s, dampratio) so MuJoCo reproduces the logged z(t); the other parameters are ``known``.

    The start lies on the line of (tc, zeta) that gives the logged steady penetration, at tc = ``guess[0]``.
    Returns value and standard error of each, the residual rms (m) and the sample count.
    """
    from scipy.optimize import least_squares

    _check_log(log, "drop")
    contact = np.nonzero(log.force > 0)[0]
    if contact.size == 0:
        raise BadLogError("drop log: the body never touches the plane (no contact to identify)")
    if not np.isclose(log.t[1] - log.t[0], known.timestep, rtol=1e-6):
        raise BadLogError(f"drop log: step {log.t[1] - log.t[0]:g} s differs from the model's {known.timestep:g} s")
    i0 = int(contact[0])
    ref = log.z[i0:]
    if np.ptp(ref) < 1e-7:
        raise BadLogError("drop log: no measurable motion after contact (< 0.1 um)")
    lo_tc = 2 * known.timestep

    def resid(x: np.ndarray) -> np.ndarray:
        tc, z = float(np.exp(x[0])), float(np.exp(x[1]))
        p = replace(known, timeconst=max(tc, lo_tc), dampratio=z)
        sim = drop.run(p, replace(spec, duration=float(log.t[-1] + 0.5 * known.timestep)))
        n = min(sim.z.size, log.z.size)
        return (sim.z[i0:n] - log.z[i0:n]) / max(np.ptp(ref), 1e-9)

    # start on the steady-penetration line: p_ss fixes tc * zeta (theory.steady_penetration), guess[0] fixes tc
    p_ss = max(-float(log.z[int(0.9 * log.z.size) :].mean()), 1e-9)
    unit = theory.steady_penetration(1.0, 1.0, known.solimp)  # p_ss scales with (tc zeta)^2 at fixed impedance
    tz = float(np.sqrt(p_ss / unit))
    x0 = np.log([guess[0], min(max(tz / guess[0], 0.06), 4.0)])
    bounds = (np.log([lo_tc, 0.05]), np.log([0.5, 5.0]))
    sol = least_squares(resid, x0, bounds=bounds, diff_step=1e-3, x_scale=1.0)
    r = sol.fun
    dof = max(1, r.size - 2)
    s2 = float(r @ r) / dof
    try:
        cov = s2 * np.linalg.inv(sol.jac.T @ sol.jac)
    except np.linalg.LinAlgError as e:
        raise BadLogError("drop log: parameters not identifiable from this log (singular Jacobian)") from e
    val = np.exp(sol.x)
    se = val * np.sqrt(np.diag(cov))  # delta method: d exp(x) = exp(x) dx
    return {
        "timeconst": float(val[0]),
        "timeconst_se": float(se[0]),
        "dampratio": float(val[1]),
        "dampratio_se": float(se[1]),
        "rms_m": float(np.sqrt(s2) * np.ptp(ref)),
        "samples": int(r.size),
    }


def fit_friction(log: drop.DropLog, tilt: float, g: float = theory.GRAVITY) -> dict[str, float]:
    """Fit Coulomb mu from the down-slope position of a block sliding on a plane tilted by ``tilt`` rad.

    Uses samples after the block has settled on the slope (last 80 %); refuses a log in which it does not accelerate
    down the slope (sticking, or the soft-contact creep at constant speed).
    """
    _check_log(log, "slide")
    if not 0 < tilt < np.pi / 2:
        raise BadLogError(f"slide log: tilt must be in (0, pi/2) rad, got {tilt}")
    k = slice(int(0.2 * log.t.size), None)
    t, x = log.t[k], log.x[k]
    if np.ptp(x) < 1e-4:
        raise BadLogError("slide log: the block does not slide (< 0.1 mm): mu >= tan(tilt), only a bound")
    a_mat = np.stack([np.ones_like(t), t, 0.5 * t * t], axis=1)
    coef, *_ = np.linalg.lstsq(a_mat, x, rcond=None)
    r = x - a_mat @ coef
    s2 = float(r @ r) / max(1, t.size - 3)
    cov = s2 * np.linalg.inv(a_mat.T @ a_mat)
    acc, acc_se = float(coef[2]), float(np.sqrt(cov[2, 2]))
    if acc <= max(3 * acc_se, 0.01 * g * np.sin(tilt)):
        # soft contacts creep at a constant speed on a slope they should hold: no acceleration, no mu
        raise BadLogError(
            f"slide log: the block does not slide (acceleration {acc:.3g} m/s^2): mu >= tan(tilt), only a bound"
        )
    mu = (np.sin(tilt) - acc / g) / np.cos(tilt)
    return {"mu": float(mu), "mu_se": float(acc_se / (g * np.cos(tilt))), "acceleration": acc}


def dr_profile(
    name: str,
    bodies: str,
    mu: float,
    mu_se: float,
    k: float = 3.0,
    floor: float = 0.05,
    drop_fit: dict[str, float] | None = None,
    physics_dt: float | None = None,
) -> dict[str, Any]:
    """A DR profile (envs/dr/profile.py schema) centred on the fits: contact friction mu +- max(k se, floor mu) and,
    with a :func:`fit_drop` result ``drop_fit``, the contact solref (time constant and damping ratio, each
    +- max(k se, floor x value)) of the same bodies. With ``physics_dt`` (s) the time-constant range is raised to
    2 physics steps where it reaches below (MuJoCo would clamp it there; the DR term refuses it)."""

    def around(value: float, se: float) -> list[float]:
        half = max(k * se, floor * value)
        return [max(0.0, value - half), value + half]

    friction = [{"asset": "robot", "bodies": bodies, "friction": around(mu, mu_se)}]
    sections: dict[str, Any] = {"contact_friction": friction}
    text = f"contact friction identified from a slide log: mu = {mu:.4f} +- {mu_se:.2g} (1 se)"
    if drop_fit is not None:
        tc = around(drop_fit["timeconst"], drop_fit["timeconst_se"])
        if physics_dt is not None:
            tc = [max(tc[0], 2.0 * physics_dt), max(tc[1], 2.0 * physics_dt)]
        zeta = around(drop_fit["dampratio"], drop_fit["dampratio_se"])
        sections["contact_solref"] = [{"asset": "robot", "bodies": bodies, "timeconst_s": tc, "dampratio": zeta}]
        fit = drop_fit
        text += (
            f"; solref from a drop log: timeconst = {fit['timeconst']:.4g} +- {fit['timeconst_se']:.2g} s, "
            f"dampratio = {fit['dampratio']:.3f} +- {fit['dampratio_se']:.2g} (1 se)"
        )
    return {
        "name": name,
        "description": text,
        "task": None,
        "payload": [],
        "link_inertia": [],
        "joint_friction": [],
        "actuator": [],
        "command_delay_s": [0.0, 0.0],
        "contact_geometry": [],
        "initial_pose": [],
        "push": None,
    } | sections
