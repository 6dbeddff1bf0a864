"""Newton–Euler dynamics of the single rigid body, integrated with the rotation on SO(3).

Pure numpy. State: CoM position ``p`` (m) and velocity ``v`` (m/s), orientation ``R`` (world ← body), angular momentum
about the CoM ``L`` (kg·m²/s, world frame). Inputs: contact forces ``f_i`` (N, world) at points ``r_i`` (m, world):

    M v̇ = Σ f_i + M g                 (translational)
    L̇   = Σ (r_i − p) × f_i            (rotational, about the CoM)
    ω   = I_w⁻¹ L,  I_w = R I_b Rᵀ,  Ṙ = [ω]× R

:func:`step` is semi-implicit Euler: velocity and momentum first, then position with the new velocity and the
orientation by the exponential map ``R ← exp([ω]× dt) R``, so R stays a rotation to round-off (no re-orthonormalising)
and L is exactly conserved when no torque acts. Global error is first order in dt (tested).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GRAVITY_W = np.array([0.0, 0.0, -9.81])
"""Gravity, m/s² (world frame, z up)."""


@dataclass(frozen=True)
class BodyState:
    """The single body's state (module docstring). Shapes: ``p, v, L (3,)``, ``R (3, 3)``."""

    p: np.ndarray
    v: np.ndarray
    R: np.ndarray
    L: np.ndarray


def xyzw_from_wxyz(quat_wxyz: np.ndarray) -> np.ndarray:
    """A realgap quaternion ``(w, x, y, z)`` in pinocchio's (and Isaac Lab 3.0's) order ``(x, y, z, w)``.

    realgap's convention is w-first (docs/policy_format.md, :mod:`realgap.envs.format`); the SRBD law converts only
    where it writes pinocchio's configuration. Shape: ``(..., 4)``.
    """
    return np.asarray(quat_wxyz, dtype=float)[..., [1, 2, 3, 0]]


def wxyz_from_xyzw(quat_xyzw: np.ndarray) -> np.ndarray:
    """A ``(x, y, z, w)`` quaternion (pinocchio's, Isaac Lab 3.0's) in realgap's order ``(w, x, y, z)``.
    Shape: ``(..., 4)``."""
    return np.asarray(quat_xyzw, dtype=float)[..., [3, 0, 1, 2]]


def quat_to_matrix(quat_wxyz: np.ndarray) -> np.ndarray:
    """Rotation matrix (world ← body) of a quaternion ``(w, x, y, z)``, normalized first. Shape: ``(3, 3)``."""
    xyzw = xyzw_from_wxyz(quat_wxyz)
    x, y, z, w = xyzw / np.linalg.norm(xyzw)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def skew(w: np.ndarray) -> np.ndarray:
    """``[w]×``, the matrix of ``x ↦ w × x``. Shape: ``(3, 3)``."""
    x, y, z = np.asarray(w, dtype=float)
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def so3_exp(w: np.ndarray) -> np.ndarray:
    """Rotation by the vector ``w`` (axis · angle, rad): Rodrigues' formula, its series below 1e-8 rad."""
    w = np.asarray(w, dtype=float)
    theta = float(np.linalg.norm(w))
    k = skew(w)
    if theta < 1e-8:
        return np.eye(3) + k + 0.5 * k @ k
    return np.eye(3) + np.sin(theta) / theta * k + (1.0 - np.cos(theta)) / theta**2 * k @ k


def wrench(state: BodyState, forces_w: np.ndarray, points_w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Net contact force (N) and torque about the CoM (N·m) of forces ``(N, 3)`` at points ``(N, 3)``, world."""
    f = np.asarray(forces_w, dtype=float).reshape(-1, 3)
    r = np.asarray(points_w, dtype=float).reshape(-1, 3) - state.p
    return f.sum(axis=0), np.cross(r, f).sum(axis=0)


def rates(
    state: BodyState, mass: float, forces_w: np.ndarray, points_w: np.ndarray, gravity_w: np.ndarray = GRAVITY_W
) -> tuple[np.ndarray, np.ndarray]:
    """What SRBD predicts from contact forces: CoM acceleration (m/s²) and angular-momentum rate about the CoM (N·m)."""
    force, torque = wrench(state, forces_w, points_w)
    return force / mass + gravity_w, torque


def angular_velocity(state: BodyState, inertia_b: np.ndarray) -> np.ndarray:
    """``ω = (R I_b Rᵀ)⁻¹ L``, rad/s (world)."""
    i_w = state.R @ np.asarray(inertia_b, dtype=float) @ state.R.T
    return np.linalg.solve(i_w, state.L)


def step(
    state: BodyState,
    mass: float,
    inertia_b: np.ndarray,
    forces_w: np.ndarray,
    points_w: np.ndarray,
    dt: float,
    gravity_w: np.ndarray = GRAVITY_W,
) -> BodyState:
    """Advance the state by ``dt`` (s) under contact forces held over the step (module docstring).

    Raises:
        ValueError: ``dt`` not positive or ``mass`` not positive.
    """
    if not dt > 0 or not mass > 0:
        raise ValueError(f"dt and mass must be > 0, got dt={dt}, mass={mass}")
    acc, l_dot = rates(state, mass, forces_w, points_w, gravity_w)
    v = state.v + acc * dt
    lin = state.L + l_dot * dt
    moved = BodyState(state.p + v * dt, v, state.R, lin)
    omega = angular_velocity(moved, inertia_b)
    return BodyState(moved.p, v, so3_exp(omega * dt) @ state.R, lin)


def energy(state: BodyState, mass: float, inertia_b: np.ndarray) -> float:
    """Kinetic energy ``½ M ‖v‖² + ½ ωᵀ I_w ω``, J."""
    omega = angular_velocity(state, inertia_b)
    return float(0.5 * mass * state.v @ state.v + 0.5 * omega @ state.L)
