"""Rigid-body inertial parameters: parallel axis, pseudo-inertia, log-Cholesky, physical consistency.

Pure torch (no simulator import). Conventions used here and in :mod:`realgap.envs.dr.inertia_sampling`:

- Body frame ``b``: the simulator's link frame, origin O. Every vector and tensor below is expressed in its axes.
- ``mass`` m [kg], shape ``(...,)``.
- ``com_b`` c: centre of mass C relative to O [m], shape ``(..., 3)``.
- ``inertia_c`` I_C: rotational inertia about C, axes parallel to the body frame [kg·m²], shape ``(..., 3, 3)``
  (what Newton/PhysX/MuJoCo store per body next to the CoM).
- ``inertia_o`` I_O: the same body's inertia about O; parallel-axis theorem I_O = I_C + m(‖c‖²·1 − c cᵀ).
- Pseudo-inertia about O (Wensing, Kim & Slotine 2017), ``(..., 4, 4)`` [kg·m², kg·m, kg]::

      J = [[Σ_O, m c], [m cᵀ, m]],   Σ_O = ∫ x xᵀ dm = ½ tr(I_O)·1 − I_O   (second moment of mass).

  J is linear in the mass distribution (two bodies in one frame: J = J₁ + J₂), and a density realising
  (m, c, I_C) exists iff J ⪰ 0. J ≻ 0 ⇔ m > 0 and I_C symmetric with principal moments that are positive and
  satisfy the strict triangle inequality (each < sum of the other two): those are the checks below.
- Log-Cholesky parameters θ = (α, d1, d2, d3, s12, s23, s13, t1, t2, t3) (Rucker & Wensing 2022), shape
  ``(..., 10)``: J = U Uᵀ with U = e^α·[[e^d1, s12, s13, t1], [0, e^d2, s23, t2], [0, 0, e^d3, t3], [0, 0, 0, 1]].
  Then m = e^{2α}, c = t, and Σ_C = m·L Lᵀ with L the upper 3×3 block (lengths in m). Every θ ∈ R¹⁰ gives J ≻ 0
  and every J ≻ 0 has exactly one θ: samplers that move θ cannot leave the set of physical bodies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

LOG_CHOLESKY_NAMES: tuple[str, ...] = ("alpha", "d1", "d2", "d3", "s12", "s23", "s13", "t1", "t2", "t3")


def _eye3(like: Tensor) -> Tensor:
    return torch.eye(3, dtype=like.dtype, device=like.device)


def _trace(mat: Tensor) -> Tensor:
    return mat.diagonal(dim1=-2, dim2=-1).sum(-1)


def _sym(mat: Tensor) -> Tensor:
    return 0.5 * (mat + mat.transpose(-1, -2))


@dataclass(frozen=True)
class BodyInertia:
    """Inertial parameters of a batch of rigid bodies (see the module docstring for frames).

    Attributes:
        mass: Body mass [kg]. Shape: ``(...,)``.
        com_b: Centre of mass in the body frame [m]. Shape: ``(..., 3)``.
        inertia_c: Inertia about the CoM, body-frame axes [kg·m²]. Shape: ``(..., 3, 3)``.

    Only shapes, dtypes and devices are checked here; physical consistency is :func:`check_consistency`'s job
    (a point-mass payload, for instance, is a legal ``BodyInertia`` with ``inertia_c = 0``).
    """

    mass: Tensor
    com_b: Tensor
    inertia_c: Tensor

    def __post_init__(self) -> None:
        batch = tuple(self.mass.shape)
        if tuple(self.com_b.shape) != (*batch, 3) or tuple(self.inertia_c.shape) != (*batch, 3, 3):
            raise ValueError(
                f"BodyInertia shapes disagree: mass {tuple(self.mass.shape)} needs com_b {(*batch, 3)} and "
                f"inertia_c {(*batch, 3, 3)}, got {tuple(self.com_b.shape)} and {tuple(self.inertia_c.shape)}"
            )
        for name in ("mass", "com_b", "inertia_c"):
            value = getattr(self, name)
            if not value.is_floating_point():
                raise ValueError(f"BodyInertia.{name} must be a floating-point tensor, got {value.dtype}")
            if value.dtype != self.mass.dtype or value.device != self.mass.device:
                raise ValueError(
                    f"BodyInertia.{name} is {value.dtype} on {value.device}, mass is {self.mass.dtype} on "
                    f"{self.mass.device}: all three must match"
                )

    @property
    def batch_shape(self) -> torch.Size:
        """Batch shape ``(...)`` shared by the three tensors."""
        return self.mass.shape

    def inertia_o(self) -> Tensor:
        """Inertia about the body-frame origin [kg·m²]. Shape: ``(..., 3, 3)``."""
        return inertia_c_to_o(self.mass, self.com_b, self.inertia_c)

    def pseudo_inertia(self) -> Tensor:
        """Pseudo-inertia J about the body-frame origin. Shape: ``(..., 4, 4)``."""
        return pseudo_inertia(self)

    def expand(self, *batch_shape: int) -> BodyInertia:
        """Broadcast to ``batch_shape`` (e.g. nominal ``(num_bodies,)`` → ``(num_envs, num_bodies)``)."""
        shape = tuple(batch_shape)
        return BodyInertia(
            self.mass.expand(shape).clone(),
            self.com_b.expand(*shape, 3).clone(),
            self.inertia_c.expand(*shape, 3, 3).clone(),
        )


def parallel_axis_term(mass: Tensor, offset: Tensor) -> Tensor:
    """Steiner term m(‖r‖²·1 − r rᵀ): inertia of a point mass m at offset r [kg·m²].

    Shape: mass ``(...,)``, offset ``(..., 3)`` [m] → ``(..., 3, 3)``.
    """
    r2 = (offset * offset).sum(-1)
    outer = offset.unsqueeze(-1) * offset.unsqueeze(-2)
    return mass[..., None, None] * (r2[..., None, None] * _eye3(offset) - outer)


def inertia_c_to_o(mass: Tensor, com_b: Tensor, inertia_c: Tensor) -> Tensor:
    """Parallel-axis theorem I_O = I_C + m(‖c‖²·1 − c cᵀ) [kg·m²].

    Shape: mass ``(...,)``, com_b ``(..., 3)``, inertia_c ``(..., 3, 3)`` → ``(..., 3, 3)``.
    """
    return inertia_c + parallel_axis_term(mass, com_b)


def inertia_o_to_c(mass: Tensor, com_b: Tensor, inertia_o: Tensor) -> Tensor:
    """Inverse parallel-axis theorem I_C = I_O − m(‖c‖²·1 − c cᵀ) [kg·m²]. Shapes as :func:`inertia_c_to_o`."""
    return inertia_o - parallel_axis_term(mass, com_b)


def second_moment_from_inertia(inertia: Tensor) -> Tensor:
    """Second moment of mass Σ = ½ tr(I)·1 − I about the same point [kg·m²]. Shape: ``(..., 3, 3)``."""
    return 0.5 * _trace(inertia)[..., None, None] * _eye3(inertia) - inertia


def inertia_from_second_moment(sigma: Tensor) -> Tensor:
    """Rotational inertia I = tr(Σ)·1 − Σ (inverse of :func:`second_moment_from_inertia`). Shape: ``(..., 3, 3)``."""
    return _trace(sigma)[..., None, None] * _eye3(sigma) - sigma


def pseudo_inertia(body: BodyInertia) -> Tensor:
    """J = [[½ tr(I_O)·1 − I_O, m c], [m cᵀ, m]] about the body-frame origin.

    Shape: ``(..., 4, 4)``; blocks in kg·m², kg·m and kg.
    """
    sigma_o = second_moment_from_inertia(body.inertia_o())
    h = body.mass[..., None] * body.com_b
    top = torch.cat([sigma_o, h[..., :, None]], dim=-1)
    bottom = torch.cat([h, body.mass[..., None]], dim=-1)[..., None, :]
    return torch.cat([top, bottom], dim=-2)


def body_from_pseudo_inertia(pseudo: Tensor) -> BodyInertia:
    """(m, c, I_C) from a pseudo-inertia about the body-frame origin (inverse of :func:`pseudo_inertia`).

    Shape: ``(..., 4, 4)`` → mass ``(...,)``, com_b ``(..., 3)``, inertia_c ``(..., 3, 3)``.

    Raises:
        ValueError: wrong shape, or m = J[3, 3] ≤ 0 (the CoM is then undefined).
    """
    if pseudo.shape[-2:] != (4, 4):
        raise ValueError(f"pseudo-inertia must have shape (..., 4, 4), got {tuple(pseudo.shape)}")
    mass = pseudo[..., 3, 3]
    bad = ~(mass > 0)
    if bool(bad.any()):
        idx = tuple(torch.nonzero(bad)[0].tolist())
        raise ValueError(f"pseudo-inertia at index {idx} has mass J[3,3] = {mass[idx].item():.6g} kg, must be > 0")
    com_b = pseudo[..., :3, 3] / mass[..., None]
    inertia_o = inertia_from_second_moment(pseudo[..., :3, :3])
    return BodyInertia(mass, com_b, inertia_o_to_c(mass, com_b, inertia_o))


def _upper_cholesky(mat: Tensor) -> tuple[Tensor, Tensor]:
    """Upper-triangular U with U Uᵀ = mat (reverse-order Cholesky) and the per-matrix failure flag."""
    flipped = mat.flip(-1, -2)
    lower, info = torch.linalg.cholesky_ex(flipped)
    return lower.flip(-1, -2), info != 0


def log_cholesky_from_body(body: BodyInertia) -> Tensor:
    """Log-Cholesky parameters θ of bodies with J ≻ 0 (Rucker & Wensing 2022; layout in the module docstring).

    Computed from (m, c, Σ_C) rather than by factoring J, which avoids the cancellation Σ_O − m c cᵀ when
    ‖c‖ is large compared with the radii of gyration (float32 links far from their frame origin).

    Shape: BodyInertia with batch ``(...)`` → ``(..., 10)``.

    Raises:
        ValueError: a body has m ≤ 0 or Σ_C not positive definite (J only ⪰ 0: rod, plate or point mass).
    """
    bad_mass = ~(body.mass > 0)
    if bool(bad_mass.any()):
        idx = tuple(torch.nonzero(bad_mass)[0].tolist())
        raise ValueError(f"log-Cholesky needs m > 0; body at index {idx} has mass {body.mass[idx].item():.6g} kg")
    sigma_c = second_moment_from_inertia(_sym(body.inertia_c)) / body.mass[..., None, None]  # [m²]
    chol, failed = _upper_cholesky(sigma_c)
    if bool(failed.any()):
        idx = tuple(torch.nonzero(failed)[0].tolist())
        smallest = torch.linalg.eigvalsh(sigma_c[idx]).min().item()
        raise ValueError(
            f"log-Cholesky needs J ≻ 0 strictly; body at index {idx} has smallest principal second moment per "
            f"unit mass {smallest:.6g} m² (degenerate rod/plate/point mass or inconsistent inertia)"
        )
    alpha = 0.5 * torch.log(body.mass)
    d = torch.log(chol.diagonal(dim1=-2, dim2=-1))
    shear = torch.stack([chol[..., 0, 1], chol[..., 1, 2], chol[..., 0, 2]], dim=-1)
    return torch.cat([alpha[..., None], d, shear, body.com_b], dim=-1)


def cholesky_factor_from_log_cholesky(theta: Tensor) -> Tensor:
    """Upper-triangular L [m] with Σ_C = m·L Lᵀ from θ. Shape: ``(..., 10)`` → ``(..., 3, 3)``."""
    if theta.shape[-1] != 10:
        raise ValueError(f"log-Cholesky parameters must have shape (..., 10), got {tuple(theta.shape)}")
    chol = torch.diag_embed(torch.exp(theta[..., 1:4]))
    chol[..., 0, 1] = theta[..., 4]
    chol[..., 1, 2] = theta[..., 5]
    chol[..., 0, 2] = theta[..., 6]
    return chol


def body_from_log_cholesky(theta: Tensor) -> BodyInertia:
    """(m, c, I_C) from θ: m = e^{2α}, c = t, Σ_C = m·L Lᵀ, I_C = tr(Σ_C)·1 − Σ_C. J ≻ 0 for every finite θ.

    Shape: ``(..., 10)`` → BodyInertia with batch ``(...)``.
    """
    chol = cholesky_factor_from_log_cholesky(theta)
    mass = torch.exp(2.0 * theta[..., 0])
    sigma_c = mass[..., None, None] * _sym(chol @ chol.transpose(-1, -2))
    return BodyInertia(mass, theta[..., 7:10].clone(), _sym(inertia_from_second_moment(sigma_c)))


def pseudo_inertia_from_log_cholesky(theta: Tensor) -> Tensor:
    """J = U Uᵀ with the paper's U (module docstring). Shape: ``(..., 10)`` → ``(..., 4, 4)``."""
    unit = torch.zeros((*theta.shape[:-1], 4, 4), dtype=theta.dtype, device=theta.device)
    unit[..., :3, :3] = cholesky_factor_from_log_cholesky(theta)
    unit[..., :3, 3] = theta[..., 7:10]
    unit[..., 3, 3] = 1.0
    upper = torch.exp(theta[..., 0])[..., None, None] * unit
    return upper @ upper.transpose(-1, -2)


def default_rtol(dtype: torch.dtype) -> float:
    """Default round-off tolerance of the consistency check: 16 machine epsilons of ``dtype``.

    ≈ 3.6e-15 for float64 and 1.9e-6 for float32: an eigen-decomposition of a symmetric 3×3 matrix is accurate
    to a few eps × its largest eigenvalue, so margins smaller than this are indistinguishable from zero.
    """
    return 16.0 * torch.finfo(dtype).eps


def _consistency_terms(body: BodyInertia, rtol: float | None) -> dict[str, Tensor]:
    """Per-body quantities of every condition, in units of ``peak`` [kg·m²]: every condition is homogeneous in I_C,
    so I_C is divided by its largest |entry| first and no finite input (entries near the float limit, denormals) can
    overflow the sums or make the eigen-decomposition fail; non-finite bodies are judged on a stand-in."""
    tol = default_rtol(body.mass.dtype) if rtol is None else float(rtol)
    if not tol >= 0.0:
        raise ValueError(f"rtol must be >= 0, got {rtol}")
    finite = torch.isfinite(torch.cat([body.mass[..., None], body.com_b, body.inertia_c.flatten(-2)], -1)).all(-1)
    inertia = torch.where(finite[..., None, None], body.inertia_c, _eye3(body.inertia_c).expand_as(body.inertia_c))
    peak = inertia.abs().flatten(-2).amax(-1)
    peak = torch.where(peak > 0, peak, torch.ones_like(peak))  # I_C = 0 (point mass): nothing to scale
    unit = inertia / peak[..., None, None]
    scale = _trace(unit).abs()
    asym = (unit - unit.transpose(-1, -2)).abs().flatten(-2).amax(-1)
    moments = torch.linalg.eigvalsh(_sym(unit))  # ascending λ1 ≤ λ2 ≤ λ3 [peak]; entries in [-1, 1]: converges
    margin = moments[..., 0] + moments[..., 1] - moments[..., 2]  # = 2·(smallest principal second moment)
    allowed = tol * scale
    return {
        "finite": finite,
        "mass": finite & (body.mass > 0),
        "symmetric": asym <= allowed,
        "positive": moments[..., 0] > -allowed,
        "triangle": margin > -allowed,
        "peak": peak,
        "asym": asym,
        "moments": moments,
        "margin": margin,
        "allowed": allowed,
    }


def consistency_mask(body: BodyInertia, rtol: float | None = None) -> Tensor:
    """True where the body is physically consistent (J ≻ 0 up to round-off).

    Args:
        body: Bodies to check (any values: NaN, inf and entries near the float limit give False or True, never an
            error).
        rtol: Round-off tolerance relative to tr(I_C): asymmetry max|I − Iᵀ| ≤ rtol·tr and triangle margin
            λ1 + λ2 − λ3 > −rtol·tr are accepted. ``None`` → :func:`default_rtol` of the dtype; ``0`` is the exact
            test J ≻ 0 (strict triangle inequality, exact symmetry). m > 0 is always strict.

    Returns:
        Boolean mask. Shape: ``(...,)``.
    """
    terms = _consistency_terms(body, rtol)
    return terms["mass"] & terms["symmetric"] & terms["positive"] & terms["triangle"]


def _fmt(values: Tensor) -> str:
    return "(" + ", ".join(f"{v:.6g}" for v in values.tolist()) + ")"


@dataclass(frozen=True)
class Verdict:
    """The validator's answer for a batch of bodies: ``consistent`` (every body has J ≻ 0 up to the tolerance), else
    the ``reason`` (the first inconsistent body, the failed condition and by how much)."""

    consistent: bool
    reason: str = ""


def consistency_verdict(
    body: BodyInertia, rtol: float | None = None, names: Sequence[str] | None = None, what: str = "body"
) -> Verdict:
    """Judge every body: consistent, or not with the reason; never raises for any value of the tensors.

    Args:
        body: Bodies to check (finite or not).
        rtol: See :func:`consistency_mask` (a negative one is a caller error: ValueError).
        names: Optional names of the last batch dimension (body names), quoted in the reason.
        what: What the batch holds, for the reason (e.g. ``"nominal G1 link"``).
    """
    terms = _consistency_terms(body, rtol)
    for check in ("finite", "mass", "symmetric", "positive", "triangle"):
        bad = ~terms[check]
        if not bool(bad.any()):
            continue
        idx = tuple(torch.nonzero(bad)[0].tolist())
        label = f"{what} at index {idx}"
        if names is not None and len(idx) > 0 and len(names) == body.batch_shape[-1]:
            label += f" ({names[idx[-1]]!r})"
        peak = float(terms["peak"][idx])  # back to kg·m² in float64 (no overflow for float32 input)
        moments, allowed = terms["moments"][idx].double() * peak, float(terms["allowed"][idx]) * peak
        reason = "mass, com_b or inertia_c contains NaN or inf"
        if check == "mass":
            reason = f"mass {body.mass[idx].item():.6g} kg is not > 0"
        elif check == "symmetric":
            asym = float(terms["asym"][idx]) * peak
            reason = f"inertia_c is not symmetric: max |I - I^T| = {asym:.6g} kg·m² exceeds the allowance {allowed:.3g}"
        elif check == "positive":
            reason = f"principal moment {moments[0].item():.6g} kg·m² is not > 0 (moments {_fmt(moments)})"
        elif check == "triangle":
            lam1, lam2, lam3 = moments.tolist()
            reason = (
                f"principal moments {_fmt(moments)} kg·m² violate the triangle inequality: "
                f"{lam1:.6g} + {lam2:.6g} < {lam3:.6g} by {-float(terms['margin'][idx]) * peak:.6g} "
                f"(round-off allowance {allowed:.3g})"
            )
        return Verdict(
            False, f"{label} is not physically consistent: {reason}; {int(bad.sum())} of {bad.numel()} fail this check"
        )
    return Verdict(True)


def check_consistency(
    body: BodyInertia, rtol: float | None = None, names: Sequence[str] | None = None, what: str = "body"
) -> None:
    """Raise ValueError with the :class:`Verdict`'s reason (arguments: :func:`consistency_verdict`) unless every body
    is consistent: non-finite values, m ≤ 0, asymmetric I_C, a non-positive moment, a violated triangle inequality."""
    verdict = consistency_verdict(body, rtol, names, what)
    if not verdict.consistent:
        raise ValueError(verdict.reason)


def box_inertia_c(mass: Tensor, size: Tensor) -> Tensor:
    """Solid uniform box about its centre, axes along its edges: m/12·diag(b²+c², a²+c², a²+b²) [kg·m²].

    Shape: mass ``(...,)`` [kg], size ``(..., 3)`` edge lengths (a, b, c) [m] → ``(..., 3, 3)``.

    Raises:
        ValueError: negative mass or edge length.
    """
    if bool((mass < 0).any()) or bool((size < 0).any()):
        raise ValueError(
            f"box needs mass >= 0 and sizes >= 0, got min mass {mass.min():.6g}, min size {size.min():.6g}"
        )
    sq = size * size
    diag = torch.stack([sq[..., 1] + sq[..., 2], sq[..., 0] + sq[..., 2], sq[..., 0] + sq[..., 1]], dim=-1)
    return torch.diag_embed(mass[..., None] / 12.0 * diag)


def rotate_inertia(rot: Tensor, inertia: Tensor) -> Tensor:
    """Express an inertia given in a rotated frame in the body axes: R I Rᵀ [kg·m²].

    Shape: rot ``(..., 3, 3)`` (columns = rotated axes in body coordinates), inertia ``(..., 3, 3)``.
    """
    return _sym(rot @ inertia @ rot.transpose(-1, -2))


def combine_bodies(first: BodyInertia, second: BodyInertia) -> BodyInertia:
    """Exact composite of two bodies rigidly fixed together, both given in the same body frame.

    m = m₁ + m₂, c = (m₁c₁ + m₂c₂)/m, I_C = Σᵢ [I_Cᵢ + mᵢ(‖cᵢ − c‖²·1 − (cᵢ − c)(cᵢ − c)ᵀ)] (parallel axis);
    equivalently J = J₁ + J₂. A valid body plus anything with J ⪰ 0 (point mass, box, m₂ = 0) stays valid.

    Raises:
        ValueError: total mass ≤ 0 somewhere.
    """
    mass = first.mass + second.mass
    if bool((mass <= 0).any()):
        raise ValueError(f"composite mass must be > 0, min is {mass.min().item():.6g} kg")
    com_b = (first.mass[..., None] * first.com_b + second.mass[..., None] * second.com_b) / mass[..., None]
    steiner = [parallel_axis_term(part.mass, part.com_b - com_b) for part in (first, second)]
    return BodyInertia(mass, com_b, _sym(first.inertia_c + steiner[0] + second.inertia_c + steiner[1]))
