"""The single rigid body of a multibody robot: total mass, whole-body CoM and composite inertia about it.

Pure numpy. The composite (locked) inertia of bodies ``i`` with mass ``m_i``, CoM ``c_i`` and rotational inertia
``I_i`` about their own CoM, all in one frame, about the whole-body CoM ``c = Σ m_i c_i / M``:

    I_c = Σ_i [ I_i + m_i (‖r_i‖² 𝟙 − r_i r_iᵀ) ],   r_i = c_i − c          (parallel-axis theorem)

It is what the SRBD model assumes the body keeps while its limbs move (the "frozen pose"); it changes with the pose,
which is where the model's error comes from (limb angular momentum, checked against the full model on the SRBD page).
Inputs are per-body arrays, so a domain-randomized body set (:mod:`realgap.envs.dr.inertia_sampling`) gives its own
single body by the same call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SingleBody:
    """The robot as one rigid body, in the world frame of the pose it was computed in.

    Attributes:
        mass: Total mass M, kg.
        com_w: Whole-body CoM c, m. Shape: ``(3,)``.
        inertia_w: Composite rotational inertia about c, kg·m². Shape: ``(3, 3)``, symmetric positive definite.
    """

    mass: float
    com_w: np.ndarray
    inertia_w: np.ndarray

    def inertia_in(self, rot_w_b: np.ndarray) -> np.ndarray:
        """The inertia about the CoM in a body frame ``b`` whose orientation is ``rot_w_b`` (world ← b):
        ``Rᵀ I_w R``. Shape: ``(3, 3)``."""
        r = np.asarray(rot_w_b, dtype=float)
        return r.T @ self.inertia_w @ r


def composite(masses: np.ndarray, coms_w: np.ndarray, inertias_w: np.ndarray) -> SingleBody:
    """Lump bodies into one (module docstring).

    Args:
        masses: Body masses, kg. Shape: ``(B,)``.
        coms_w: Body CoMs in one frame, m. Shape: ``(B, 3)``.
        inertias_w: Body rotational inertias about their own CoM, in the same frame, kg·m². Shape: ``(B, 3, 3)``.

    Raises:
        ValueError: Shapes that do not match, a negative mass, or no mass at all.
    """
    m = np.asarray(masses, dtype=float)
    c = np.asarray(coms_w, dtype=float)
    inertia = np.asarray(inertias_w, dtype=float)
    if c.shape != (m.size, 3) or inertia.shape != (m.size, 3, 3):
        raise ValueError(f"shapes {m.shape}, {c.shape}, {inertia.shape}: expected (B,), (B, 3), (B, 3, 3)")
    if (m < 0).any() or not m.sum() > 0:
        raise ValueError(f"masses must be >= 0 with a positive total, got total {m.sum()} and min {m.min()}")
    total = float(m.sum())
    com = (m[:, None] * c).sum(axis=0) / total
    r = c - com
    shift = m[:, None, None] * ((r * r).sum(axis=1)[:, None, None] * np.eye(3) - r[:, :, None] * r[:, None, :])
    i_c = (inertia + shift).sum(axis=0)
    return SingleBody(total, com, 0.5 * (i_c + i_c.T))
