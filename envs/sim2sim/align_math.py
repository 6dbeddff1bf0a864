"""Pure math of the sim2sim alignment check (numpy only): the open-loop torque sequence, trajectory errors and the
energy balance ΔE = ∫τᵀq̇ dt (with no friction, damping or contact, motor power is the only
change of mechanical energy).

Discrete work. A simulator holds the torque ``τ_k`` over step ``k`` and both engines here integrate positions with
the *new* velocity (semi-implicit Euler, MuJoCo's ``implicitfast`` without damping): ``q_{k+1} = q_k + dt·q̇_{k+1}``.
The work done by ``τ_k`` along the discrete path is then exactly ``τ_kᵀ(q_{k+1} − q_k)``, so
``W = Σ_k τ_kᵀ(q_{k+1} − q_k)`` is the ∫τᵀq̇ dt each engine actually applied. The remaining residual
``ΔE − W`` is the integrator's own energy error (semi-implicit Euler is symplectic: bounded, O(dt), no drift).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def torque_sequence(
    gravity_torque: np.ndarray,
    joint_inertia: np.ndarray,
    peak_torque: np.ndarray,
    steps: int,
    dt: float,
    amplitude_rad: float = 0.1,
    freq_range_hz: tuple[float, float] = (0.8, 2.0),
    seed: int = 0,
) -> np.ndarray:
    """Open-loop torques ``τ_j(t) = g_j(q0) + A_j·sin(2π f_j t + φ_j)``, moving each joint by about ``amplitude_rad``.

    ``A_j = amplitude_rad · J_j · (2π f_j)²`` is the torque that swings an isolated inertia ``J_j`` by ``amplitude_rad``
    at ``f_j``; the gravity torque at the start pose keeps the robot from sagging, so joints stay near the start pose
    (away from their limits) and every joint does work. ``A_j`` is capped at half the peak torque.

    Args:
        gravity_torque: g(q0), N·m. Shape ``(J,)``.
        joint_inertia: Inertia each joint presents at q0 (e.g. ``1/(M⁻¹)_jj`` with armature), kg·m². Shape ``(J,)``.
        peak_torque: Peak torque per joint, N·m. Shape ``(J,)``.
        steps: Number of physics steps ``N``.
        dt: Physics step, s.
        amplitude_rad: Target swing per joint, rad.
        freq_range_hz: Frequencies drawn uniformly from this range per joint, Hz.
        seed: Seed of the frequencies and phases.

    Returns:
        ``τ_k`` held over step k, N·m. Shape ``(N, J)``.
    """
    rng = np.random.default_rng(seed)
    n = len(gravity_torque)
    omega = 2.0 * np.pi * rng.uniform(*freq_range_hz, n)
    phase = rng.uniform(0.0, 2.0 * np.pi, n)
    amplitude = np.minimum(amplitude_rad * np.asarray(joint_inertia) * omega**2, 0.5 * np.asarray(peak_torque))
    t = np.arange(steps)[:, None] * dt
    tau = np.asarray(gravity_torque)[None, :] + amplitude[None, :] * np.sin(omega[None, :] * t + phase[None, :])
    limit = np.asarray(peak_torque)[None, :]
    if np.any(np.abs(tau) > limit):
        raise ValueError("the open-loop torque exceeds a peak torque (gravity torque too large at this pose)")
    return tau


def discrete_work(tau: np.ndarray, q: np.ndarray) -> tuple[float, float]:
    """``W = Σ_k τ_kᵀ(q_{k+1} − q_k)`` and ``Σ_k |τ_kᵀ(q_{k+1} − q_k)|`` (the scale the residual is judged on), J.

    Shape:
        ``tau`` ``(N, J)``, ``q`` ``(N + 1, J)``.
    """
    power = np.einsum("kj,kj->k", tau, np.diff(q, axis=0))
    return float(power.sum()), float(np.abs(power).sum())


@dataclass(frozen=True)
class EnergyBalance:
    """One engine's energy balance over the open-loop run.

    Attributes:
        delta_energy_j: ``E_N − E_0`` (kinetic + potential, armature included), J.
        work_j: ``Σ τ_kᵀ(q_{k+1} − q_k)``, J.
        abs_work_j: ``Σ |τ_kᵀ(q_{k+1} − q_k)|``, J.
        relative_residual: ``|ΔE − W| / Σ|τᵀΔq|``.
    """

    delta_energy_j: float
    work_j: float
    abs_work_j: float
    relative_residual: float


def energy_balance(energy: np.ndarray, tau: np.ndarray, q: np.ndarray) -> EnergyBalance:
    """Compare an engine's own energy change with the work its torques did.

    Shape:
        ``energy`` ``(N + 1,)`` J (state k, before step k), ``tau`` ``(N, J)``, ``q`` ``(N + 1, J)``.
    """
    work, scale = discrete_work(tau, q)
    delta = float(energy[-1] - energy[0])
    return EnergyBalance(delta, work, scale, abs(delta - work) / scale if scale > 0 else float("nan"))


def trajectory_errors(q_a: np.ndarray, q_b: np.ndarray, joint_names: Sequence[str]) -> dict[str, object]:
    """RMS and max |q_a − q_b| over all joints and steps, and the worst joint, rad.

    Shape:
        ``q_a``, ``q_b`` ``(N + 1, J)``.
    """
    err = np.asarray(q_a) - np.asarray(q_b)
    per_joint = np.abs(err).max(axis=0)
    worst = int(per_joint.argmax())
    return {
        "rms_rad": float(np.sqrt(np.mean(err**2))),
        "max_abs_rad": float(per_joint.max()),
        "worst_joint": joint_names[worst],
        "final_rms_rad": float(np.sqrt(np.mean(err[-1] ** 2))),
        "motion_rms_rad": float(np.sqrt(np.mean((np.asarray(q_a) - np.asarray(q_a)[0]) ** 2))),
    }
