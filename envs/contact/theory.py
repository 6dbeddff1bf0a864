"""Closed forms of MuJoCo's soft-constraint contact model (numpy only).

MuJoCo solves for a constraint acceleration ``a1 = (1 - d) a0 + d aref`` (scalar constraint, exact for one normal
contact) with the reference acceleration ``aref = -b v - k d r`` (``r`` the signed distance, negative inside), where
for solref = (timeconst, dampratio): ``b = 2 / (dmax tc)``, ``k = 1 / (dmax^2 tc^2 zeta^2)`` and ``dmax = dwidth``
(``solimp[1]``, MuJoCo's engine_core_constraint.c ``mj_makeImpedance``). At rest the solver's force on each row is
``aref / R`` with the regulariser ``R = (1 - d) / d * w``, where ``w`` is MuJoCo's *approximate* inverse inertia of
the row: the translational inverse weight ``body_invweight0`` of the contact's bodies (``1 / m`` for a free body),
not the row's true inverse inertia. So a contact at rest under normal force ``F`` sinks to the ``p`` that solves
``F w = c k d(p)^2 p / (1 - d(p))`` (``c``: :func:`cone_factor`), whatever else the body is connected to. These forms
give the steady penetration and the response's frequency and decay that the drop lab checks the engine against.
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


def cone_factor(cone: str = "elliptic", mu: float = 1.0, condim: int = 3, impratio: float = 1.0) -> float:
    """How much more normal force a resting contact's rows carry at one depth than a frictionless row does.

    Elliptic or frictionless (condim 1): 1, the normal row alone carries the load. Pyramidal: the load is shared by
    the ``2 (condim - 1)`` edge rows ``n ± mu t``, whose regulariser MuJoCo sets to ``2 mu^2 / impratio`` times the
    first row's, itself built on ``w (1 + mu^2)`` (``mj_diagApprox``); their normal forces add to
    ``(condim - 1) impratio / (mu^2 (1 + mu^2))`` times the frictionless row's. At condim 3 it is 1 at mu = 1 and
    4.08 at mu 0.6: a pyramidal contact rests shallower below mu = 1 and deeper above it; an elliptic one does not
    depend on mu.
    """
    if cone not in ("elliptic", "pyramidal"):
        raise ValueError(f"cone must be 'elliptic' or 'pyramidal', got {cone!r}")
    if cone == "elliptic" or condim == 1:
        return 1.0
    if not mu > 0 or not impratio > 0 or condim not in (3, 4, 6):
        raise ValueError(f"need mu > 0, impratio > 0, condim in (1, 3, 4, 6); got {mu}, {impratio}, {condim}")
    return (condim - 1) * impratio / (mu * mu * (1 + mu * mu))


def depth_under_load(
    load: float, timeconst: float, dampratio: float, solimp: tuple[float, float, float, float, float], cone: float = 1.0
) -> float:
    """Resting depth (m, >= 0) of one contact whose normal force F times its row weight w is ``load = F w`` (m/s^2).

    At rest ``v = 0`` and the force is ``c d k d p / ((1 - d) w)`` (module docstring), so ``c k d^2 p = (1 - d) F w``
    with d = d(p), solved by bisection (the left side rises and the right falls with p). ``cone``: :func:`cone_factor`.
    """
    k, _ = reference_gains(timeconst, dampratio, solimp[1])

    def f(p: float) -> float:
        d = float(impedance(p, solimp))
        return cone * d * d * k * p - (1 - d) * load

    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return 0.5 * (lo + hi)


def steady_penetration(
    timeconst: float,
    dampratio: float,
    solimp: tuple[float, float, float, float, float],
    g: float = GRAVITY,
    *,
    n_contacts: int = 1,
    cone: float = 1.0,
) -> float:
    """Resting penetration depth (m, >= 0) of a free body on ``n_contacts`` equal contacts under gravity g.

    Each contact carries ``m g / N`` and weighs ``w = 1 / m`` (module docstring), so ``F w = g / N`` and
    ``p = (1 - d) g / (c N k d^2)`` with d = d(p): one contact (a sphere) gives ``(1 - d) g / (k d^2)``, a box flat
    on four corners the same with g / 4. Independent of mass: the impedance form makes penetration a property of
    the reference dynamics and of MuJoCo's row weights, not of a material stiffness. ``cone``: :func:`cone_factor`.
    """
    return depth_under_load(g / n_contacts, timeconst, dampratio, solimp, cone)


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


def discrete_period(timeconst: float, dampratio: float, d: float, dmax: float, timestep: float) -> float:
    """Period (s) of the ringing as MuJoCo's semi-implicit Euler step integrates it (constant impedance d).

    One step maps (r, v) by ``v += h (-2 zeta wn v - wn^2 r)``, ``r += h v``: eigenvalues ``rho e^(±i theta)`` with
    ``rho^2 = 1 - 2 zeta wn h`` and ``cos theta = (2 - 2 zeta wn h - (wn h)^2) / (2 rho)``, so the period is
    ``2 pi h / theta``: shorter than :func:`damped_period` by about ``zeta wn h / 2 + (wn h)^2 / 24`` (the damping is
    explicit in the step), 0.8 % at wn h = 0.056, zeta 0.3 and 5.4 % at wn h = 0.67, zeta 0.1.
    """
    wn, z = natural_frequency(timeconst, dampratio, d, dmax)
    h = timestep
    rho2 = 1 - 2 * z * wn * h
    c = (2 - 2 * z * wn * h - (wn * h) ** 2) / (2 * np.sqrt(rho2)) if rho2 > 0 else 2.0
    if not -1 < c < 1:
        raise ValueError(f"no discrete ringing at wn h = {wn * h:.3g}, zeta = {z:.3g}")
    return float(2 * np.pi * h / np.arccos(c))


def incline_acceleration(angle_rad: float, mu: float, g: float = GRAVITY) -> float:
    """Down-slope acceleration (m/s^2) of a block on an incline with Coulomb friction mu (0 if it sticks)."""
    return float(max(0.0, g * (np.sin(angle_rad) - mu * np.cos(angle_rad))))
