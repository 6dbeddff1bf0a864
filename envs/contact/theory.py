"""Closed forms of MuJoCo's soft-constraint contact model (numpy only).

MuJoCo solves for a constraint acceleration ``a1 = (1 - d) a0 + d aref`` (scalar constraint, exact for one normal
contact) with the reference acceleration ``aref = -b v - k d r`` (``r`` the signed distance, negative inside), where
for solref = (timeconst, dampratio): ``b = 2 / (dmax tc)``, ``k = 1 / (dmax^2 tc^2 zeta^2)``, ``dmax = max(d0,
dwidth)`` (MuJoCo's engine_core_constraint.c). These forms give the steady penetration and the response's frequency
and decay that the drop lab checks the engine against.
"""

from __future__ import annotations

import numpy as np

GRAVITY = 9.81  # m/s^2, the drop lab's |g|


def impedance(r: np.ndarray | float, solimp: tuple[float, float, float, float, float]) -> np.ndarray:
    """Impedance d(|r|) in (0, 1): d0 at 0, dwidth at |r| >= width, a two-piece power sigmoid with its midpoint between.

    Shape: same as ``r``. Why: impedance sets how much of the reference acceleration the solver enforces.
    """
    d0, dw, width, mid, power = solimp
    x = np.clip(np.abs(np.asarray(r, dtype=np.float64)) / width, 0.0, 1.0)
    if power == 1:
        y = x
    else:
        lo = (x**power) / (mid ** (power - 1))
        hi = 1 - ((1 - x) ** power) / ((1 - mid) ** (power - 1))
        y = np.where(x <= mid, lo, hi)
    return np.clip(d0 + y * (dw - d0), 1e-4, 0.9999)


def reference_gains(timeconst: float, dampratio: float, dmax: float) -> tuple[float, float]:
    """(k, b) of ``aref = -b v - k d r``; k in 1/s^2, b in 1/s."""
    return 1.0 / (dmax**2 * timeconst**2 * dampratio**2), 2.0 / (dmax * timeconst)


def steady_penetration(
    timeconst: float, dampratio: float, solimp: tuple[float, float, float, float, float], g: float = GRAVITY
) -> float:
    """Resting penetration depth (m, >= 0) of one normal contact under gravity g.

    At rest ``a1 = 0`` and ``v = 0``: ``(1 - d) g = d * k * d * p``, so ``p = (1 - d) g / (k d^2)`` with d = d(p),
    solved by bisection (the left side falls and the right rises with p). Independent of mass: the impedance
    form makes penetration a property of the reference dynamics, not of a material stiffness.
    """
    dmax = max(solimp[0], solimp[1])
    k, _ = reference_gains(timeconst, dampratio, dmax)

    def f(p: float) -> float:
        d = float(impedance(p, solimp))
        return d * d * k * p - (1 - d) * g

    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return 0.5 * (lo + hi)


def natural_frequency(timeconst: float, dampratio: float, d: float, dmax: float) -> tuple[float, float]:
    """(omega_n in rad/s, zeta) of the error dynamics at constant impedance d.

    ``r'' = -d b r' - d^2 k r``: omega_n = d / (dmax tc zeta), effective damping ratio = zeta; at d = dmax the
    envelope decays at 1/tc whatever zeta (under-damped case), which is why timeconst names the response time.
    """
    k, b = reference_gains(timeconst, dampratio, dmax)
    wn = d * np.sqrt(k)
    return float(wn), float(d * b / (2 * wn))


def damped_period(timeconst: float, dampratio: float, d: float, dmax: float) -> float:
    """Period (s) of the penetration's ringing for zeta < 1: 2 pi / (omega_n sqrt(1 - zeta^2))."""
    wn, z = natural_frequency(timeconst, dampratio, d, dmax)
    if z >= 1:
        raise ValueError(f"no ringing at damping ratio {z} >= 1")
    return float(2 * np.pi / (wn * np.sqrt(1 - z * z)))


def incline_acceleration(angle_rad: float, mu: float, g: float = GRAVITY) -> float:
    """Down-slope acceleration (m/s^2) of a block on an incline with Coulomb friction mu (0 if it sticks)."""
    return float(max(0.0, g * (np.sin(angle_rad) - mu * np.cos(angle_rad))))
