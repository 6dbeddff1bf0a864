"""Samplers of rigid-body inertia that are physically consistent by construction (pure torch).

Every perturbation here is a map that sends a body with J ≻ 0 to a body with J ≻ 0 for *every* parameter inside a
validated range, so no sample is ever rejected or clipped (frames and units: :mod:`realgap.envs.dr.inertia`):

- density scale k > 0: J' = k·J (m' = k m, I' = k I, c' = c, radii of gyration unchanged);
- log-Cholesky perturbation (Rucker & Wensing 2022): α' = α + ½ ln k, L' = G L, t' = t + Δc with G upper
  triangular, diag(G) = stretch > 0, off-diagonal = shear. Physically: the mass distribution is deformed about its
  CoM by the linear map x − c ↦ G(x − c) (stretch each body axis, shear x along y/z and y along z), its density
  scaled by k, then translated by Δc. Σ_C' = G Σ_C Gᵀ ≻ 0 because det G > 0; every J' ≻ 0 is reachable;
- CoM shift by moving a fraction f ∈ (0, 1] of the mass: a lump f·m sitting at the CoM (it adds nothing to I_C) is
  moved by Δ/f, so c' = c + Δ and I_C' = I_C + m(1 − f)/f·(‖Δ‖²·1 − ΔΔᵀ); f = 1 is the rigid translation of the
  whole distribution (the log-Cholesky t-shift: I_C unchanged, only I_O changes, by the parallel-axis theorem);
- payload: a point mass or solid box (mass ≥ 0) rigidly attached at an offset — J' = J + J_payload with
  J_payload ⪰ 0 (:func:`realgap.envs.dr.inertia.combine_bodies`).

Samplers take an explicit ``torch.Generator`` (draws happen on its device, then move to the body's device, so a
seed gives the same bodies on CPU and GPU) and one independent draw per batch element: expand the nominal first,
e.g. ``nominal.expand(num_envs, num_bodies)``. Ranges are validated before any draw (:func:`validate_range`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from realgap.envs.dr.inertia import (
    BodyInertia,
    body_from_log_cholesky,
    box_inertia_c,
    check_consistency,
    cholesky_factor_from_log_cholesky,
    combine_bodies,
    consistency_mask,
    default_rtol,
    log_cholesky_from_body,
    parallel_axis_term,
    rotate_inertia,
)

Range = tuple[float, float]
Vec3Range = tuple[Range, Range, Range]
ZERO_RANGE: Range = (0.0, 0.0)
UNIT_RANGE: Range = (1.0, 1.0)
ZERO_VEC3: Vec3Range = (ZERO_RANGE, ZERO_RANGE, ZERO_RANGE)

# kind → (condition on lo, its wording). A range [lo, hi] is uniform; lo <= hi is always required.
_RANGE_KINDS = {
    "scale": (lambda lo: lo > 0.0, "> 0 (a unit-less scale <= 0 gives a non-positive mass/gain/size)"),
    "nonneg": (lambda lo: lo >= 0.0, ">= 0 (a negative mass, size, friction or delay is not physical)"),
    "positive": (lambda lo: lo > 0.0, "> 0"),
    "real": (lambda lo: True, "finite"),
}


def validate_range(name: str, rng: Sequence[float], kind: str = "real", unit: str = "") -> Range:
    """Check a uniform range ``[lo, hi]`` and return it as a tuple of floats.

    Args:
        name: Where the range comes from, quoted in the message (e.g. ``"nominal.link_inertia[0].mass_scale"``).
        rng: Two numbers ``(lo, hi)``.
        kind: ``"scale"`` (unit-less, lo > 0), ``"nonneg"`` (lo >= 0), ``"positive"`` (lo > 0) or ``"real"``.
        unit: Unit for the message, e.g. ``"kg"``.

    Raises:
        ValueError: not two finite numbers, lo > hi, or lo violating the kind's bound (with the amount).
    """
    if kind not in _RANGE_KINDS:
        raise ValueError(f"{name}: unknown range kind {kind!r}, known: {sorted(_RANGE_KINDS)}")
    if isinstance(rng, str | bytes) or not isinstance(rng, Sequence) or len(rng) != 2:
        raise ValueError(f"{name}: expected a range [lo, hi], got {rng!r}")
    if any(isinstance(v, bool) or not isinstance(v, int | float) for v in rng):
        raise ValueError(f"{name}: range bounds must be numbers, got {rng!r}")
    lo, hi = float(rng[0]), float(rng[1])
    suffix = f" {unit}" if unit else ""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"{name}: range bounds must be finite, got [{lo}, {hi}]{suffix}")
    if lo > hi:
        raise ValueError(f"{name}: lo {lo:g} > hi {hi:g}{suffix} (by {lo - hi:.6g})")
    check, wording = _RANGE_KINDS[kind]
    if not check(lo):
        raise ValueError(f"{name}: lo {lo:g}{suffix} must be {wording}")
    return (lo, hi)


def validate_vec3_range(name: str, rng: Sequence[Sequence[float]], kind: str = "real", unit: str = "") -> Vec3Range:
    """Check three per-axis ranges (x, y, z) in the body frame; see :func:`validate_range`."""
    if isinstance(rng, str | bytes) or not isinstance(rng, Sequence) or len(rng) != 3:
        raise ValueError(f"{name}: expected three ranges (x, y, z), got {rng!r}")
    return tuple(validate_range(f"{name}.{axis}", r, kind, unit) for axis, r in zip("xyz", rng, strict=True))


def validate_fraction(name: str, value: float) -> float:
    """Check a mass fraction f ∈ (0, 1] (fraction of a body's mass that is moved)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not (0.0 < float(value) <= 1.0):
        raise ValueError(f"{name}: must be a number in (0, 1], got {value!r}")
    return float(value)


@dataclass(frozen=True)
class InertiaRandomization:
    """Uniform ranges of one consistent inertial randomization (validated at construction).

    Applied in this order by :func:`sample_inertia`: log-Cholesky (mass scale, stretch, shear), CoM shift,
    payload. With stretch = 1 and shear = 0 the log-Cholesky step is exactly a density scaling.

    Attributes:
        mass_scale: Density scale k, unit-less, k > 0 (m' = k m, I' = k I).
        stretch: Per-body-axis stretch of the mass distribution about the CoM, unit-less, > 0 (drawn per axis).
        shear: Shear γ of the distribution (γ_xy, γ_yz, γ_xz drawn independently), unit-less.
        com_shift_m: CoM shift per body axis [m].
        com_moved_fraction: Fraction f ∈ (0, 1] of the mass moved to shift the CoM (1 = rigid translation).
        payload_mass_kg: Attached payload mass [kg], >= 0 (0 = no payload).
        payload_offset_m: Payload centre relative to the body-frame origin, per body axis [m].
        payload_size_m: Payload box edge lengths [m], >= 0 (all 0 = point mass).
        payload_random_rotation: Orient the payload box uniformly at random instead of along the body axes.
    """

    mass_scale: Range = UNIT_RANGE
    stretch: Range = UNIT_RANGE
    shear: Range = ZERO_RANGE
    com_shift_m: Vec3Range = ZERO_VEC3
    com_moved_fraction: float = 1.0
    payload_mass_kg: Range = ZERO_RANGE
    payload_offset_m: Vec3Range = ZERO_VEC3
    payload_size_m: Vec3Range = ZERO_VEC3
    payload_random_rotation: bool = False

    def __post_init__(self) -> None:
        validate_range("mass_scale", self.mass_scale, "scale")
        validate_range("stretch", self.stretch, "scale")
        validate_range("shear", self.shear, "real")
        validate_vec3_range("com_shift_m", self.com_shift_m, "real", "m")
        validate_fraction("com_moved_fraction", self.com_moved_fraction)
        validate_range("payload_mass_kg", self.payload_mass_kg, "nonneg", "kg")
        validate_vec3_range("payload_offset_m", self.payload_offset_m, "real", "m")
        validate_vec3_range("payload_size_m", self.payload_size_m, "nonneg", "m")
        if not isinstance(self.payload_random_rotation, bool):
            raise ValueError(f"payload_random_rotation must be a bool, got {self.payload_random_rotation!r}")


def scale_density(body: BodyInertia, scale: Tensor) -> BodyInertia:
    """Uniform density scaling: m' = k m, I_C' = k I_C, c' = c (radii of gyration √(Iᵢ/m) unchanged).

    Shape: scale ``(...,)`` unit-less, > 0.
    """
    _require_positive("density scale", scale)
    return BodyInertia(body.mass * scale, body.com_b.clone(), body.inertia_c * scale[..., None, None])


def perturb_log_cholesky(
    body: BodyInertia, mass_scale: Tensor, stretch: Tensor, shear: Tensor, com_shift_b: Tensor
) -> BodyInertia:
    """Move the log-Cholesky parameters: α += ½ ln k, L ← G L, t += Δc (see the module docstring).

    Args:
        body: Bodies with J ≻ 0.
        mass_scale: k > 0, unit-less. Shape: ``(...,)``.
        stretch: diag(G) > 0 along body x, y, z, unit-less. Shape: ``(..., 3)``.
        shear: (G_xy, G_yz, G_xz), unit-less (same order as θ's s12, s23, s13). Shape: ``(..., 3)``.
        com_shift_b: Δc in the body frame [m]. Shape: ``(..., 3)``.

    Returns:
        Perturbed bodies, J' ≻ 0 for every finite input with k > 0 and stretch > 0. Without stretch or shear
        (all 1 / 0) the map is the exact density scaling plus a rigid shift, computed without a Cholesky factor,
        so a nominal on the boundary J ⪰ 0 (thin rod or plate) is accepted there; otherwise J ≻ 0 is required.
    """
    _require_positive("mass scale", mass_scale)
    _require_positive("stretch", stretch)
    if bool((stretch == 1.0).all()) and bool((shear == 0.0).all()):
        scaled = scale_density(body, mass_scale)
        return BodyInertia(scaled.mass, scaled.com_b + com_shift_b, scaled.inertia_c)
    theta = log_cholesky_from_body(body)
    deform = torch.diag_embed(stretch)
    deform[..., 0, 1] = shear[..., 0]
    deform[..., 1, 2] = shear[..., 1]
    deform[..., 0, 2] = shear[..., 2]
    chol = deform @ cholesky_factor_from_log_cholesky(theta)  # upper triangular, diagonal stretch·e^d > 0
    new_theta = torch.cat(
        [
            (theta[..., 0] + 0.5 * torch.log(mass_scale))[..., None],
            torch.log(chol.diagonal(dim1=-2, dim2=-1)),
            torch.stack([chol[..., 0, 1], chol[..., 1, 2], chol[..., 0, 2]], dim=-1),
            theta[..., 7:10] + com_shift_b,
        ],
        dim=-1,
    )
    return body_from_log_cholesky(new_theta)


def shift_com(body: BodyInertia, delta_b: Tensor, moved_fraction: float = 1.0) -> BodyInertia:
    """Shift the CoM by Δ [m] by moving a lump of f·m (initially at the CoM) by Δ/f; total mass unchanged.

    c' = c + Δ and I_C' = I_C + m(1 − f)/f·(‖Δ‖²·1 − ΔΔᵀ) (composite of the remainder, (1 − f)m with the same
    I_C about c, and the moved point mass; both J ⪰ 0, so the result keeps J ≻ 0). f = 1: rigid translation,
    I_C unchanged and I_O' = I_C + m(‖c + Δ‖²·1 − (c + Δ)(c + Δ)ᵀ).

    Shape: delta_b ``(..., 3)``.
    """
    fraction = validate_fraction("moved_fraction", moved_fraction)
    extra = parallel_axis_term(body.mass * (1.0 - fraction) / fraction, delta_b)
    return BodyInertia(body.mass.clone(), body.com_b + delta_b, body.inertia_c + extra)


def attach_payload(
    body: BodyInertia, mass: Tensor, offset_b: Tensor, size: Tensor | None = None, rot_b: Tensor | None = None
) -> BodyInertia:
    """Rigidly attach a solid box (or point mass) payload; exact composite by the parallel-axis theorem.

    Args:
        body: Bodies the payload is fixed to.
        mass: Payload mass [kg], >= 0. Shape: ``(...,)``.
        offset_b: Payload centre in the body frame [m]. Shape: ``(..., 3)``.
        size: Box edge lengths [m], >= 0; ``None`` = point mass. Shape: ``(..., 3)``.
        rot_b: Box axes in body coordinates (columns); ``None`` = aligned with the body. Shape: ``(..., 3, 3)``.
    """
    if bool((mass < 0).any()):
        raise ValueError(f"payload mass must be >= 0, min is {mass.min().item():.6g} kg")
    inertia = torch.zeros_like(body.inertia_c) if size is None else box_inertia_c(mass, size)
    if rot_b is not None:
        inertia = rotate_inertia(rot_b, inertia)
    return combine_bodies(body, BodyInertia(mass, offset_b, inertia))


def cast_consistent(
    body: BodyInertia, dtype: torch.dtype = torch.float32, names: Sequence[str] | None = None, what: str = "body"
) -> BodyInertia:
    """The body in the simulator's ``dtype``, with the numbers actually written checked for consistency.

    A body consistent in float64 can lose it in the cast: a rod-like I_C (smallest principal moment below float32
    round-off of the largest, e.g. a CoM shifted by moving a small lump far) comes out with a negative moment or a
    violated triangle inequality. Here the cast values are judged exactly (in float64, where a float32 matrix's
    eigenvalues are accurate to ~1e-16 of its trace). A body failing only by round-off gets the smallest isotropic
    inertia δ·1 that makes the written numbers consistent, δ ≤ 64 eps(dtype)·tr(I_C) (~8e-6 of the trace in
    float32, far below any inertia measurement): its pseudo-inertia [[δ/2·1, 0], [0, 0]] ⪰ 0, so J + ΔJ ⪰ J.

    Args:
        body: Bodies to write (any float dtype), consistent at their own precision.
        dtype: The simulator's storage type.
        names: Names of the last batch dimension, for the message.
        what: What the batch holds, for the message.

    Returns:
        The body in ``dtype`` on the same device, consistent as stored.

    Raises:
        ValueError: The body is inconsistent before the cast, or the cast leaves it inconsistent beyond round-off
            (e.g. a mass or inertia that underflows or overflows ``dtype``).
    """
    # float32 round-off asymmetry (bodies computed from the simulator's numbers) is written as the symmetric part
    i_c, i_t = body.inertia_c, body.inertia_c.transpose(-1, -2)
    if bool(((i_c - i_t).abs() <= 1e-6 * i_c.abs().amax(dim=(-2, -1), keepdim=True)).all()):
        body = BodyInertia(body.mass, body.com_b, 0.5 * (i_c + i_t))
    check_consistency(body, None, names, what)
    out = _cast(body, dtype)
    exact = _cast(out, torch.float64)
    tol = default_rtol(torch.float64)
    bad = ~consistency_mask(exact, tol) & torch.isfinite(exact.inertia_c).flatten(-2).all(-1)
    if bool(bad.any()):
        eye = torch.eye(3, dtype=torch.float64, device=bad.device)
        inertia = torch.where(bad[..., None, None], exact.inertia_c, eye)
        moments = torch.linalg.eigvalsh(0.5 * (inertia + inertia.transpose(-1, -2)))  # entries finite and < max
        trace = moments.sum(-1).abs()
        deficit = torch.clamp(torch.maximum(-moments[..., 0], moments[..., 2] - moments[..., 0] - moments[..., 1]), 0)
        delta = torch.where(bad, deficit + 4.0 * torch.finfo(dtype).eps * trace, torch.zeros_like(trace))
        if bool((delta > 64.0 * torch.finfo(dtype).eps * trace).any()):
            check_consistency(exact, tol, names, f"{what} as written in {dtype} (beyond round-off)")
        nudged = exact.inertia_c + delta[..., None, None] * eye
        out = BodyInertia(out.mass, out.com_b, nudged.to(dtype))
    check_consistency(_cast(out, torch.float64), tol, names, f"{what} as written in {dtype}")
    return out


def _cast(body: BodyInertia, dtype: torch.dtype) -> BodyInertia:
    return BodyInertia(body.mass.to(dtype), body.com_b.to(dtype), body.inertia_c.to(dtype))


def _require_positive(name: str, value: Tensor) -> None:
    bad = ~(value > 0)
    if bool(bad.any()):
        idx = tuple(torch.nonzero(bad)[0].tolist())
        raise ValueError(f"{name} must be > 0; at index {idx} it is {value[idx].item():.6g}")


def _uniform(rng: Range, shape: Sequence[int], generator: torch.Generator, like: Tensor) -> Tensor:
    unit = torch.rand(tuple(shape), generator=generator, dtype=like.dtype, device=generator.device)
    return (rng[0] + (rng[1] - rng[0]) * unit).to(like.device)


def _uniform_vec3(rng: Vec3Range, shape: Sequence[int], generator: torch.Generator, like: Tensor) -> Tensor:
    return torch.stack([_uniform(r, shape, generator, like) for r in rng], dim=-1)


def random_rotation(shape: Sequence[int], generator: torch.Generator, like: Tensor) -> Tensor:
    """Uniformly distributed rotation matrices (normalised Gaussian quaternion). Shape: ``(*shape, 3, 3)``."""
    quat = torch.randn((*shape, 4), generator=generator, dtype=like.dtype, device=generator.device).to(like.device)
    w, x, y, z = (quat / quat.norm(dim=-1, keepdim=True)).unbind(-1)
    rows = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ]
    return torch.stack([torch.stack(row, dim=-1) for row in rows], dim=-2)


def sample_density_scale(body: BodyInertia, scale_range: Range, generator: torch.Generator) -> BodyInertia:
    """Density (uniform mass) scaling with k ~ U[lo, hi] per body, lo > 0. See :func:`scale_density`."""
    rng = validate_range("density scale_range", scale_range, "scale")
    check_consistency(body, what="nominal body")
    return scale_density(body, _uniform(rng, body.batch_shape, generator, body.mass))


def sample_com_shift(
    body: BodyInertia, shift_range_m: Vec3Range, generator: torch.Generator, moved_fraction: float = 1.0
) -> BodyInertia:
    """CoM shift Δ ~ U per body axis [m]; inertia follows :func:`shift_com`."""
    rng = validate_vec3_range("com shift_range_m", shift_range_m, "real", "m")
    check_consistency(body, what="nominal body")
    return shift_com(body, _uniform_vec3(rng, body.batch_shape, generator, body.mass), moved_fraction)


def sample_payload(
    body: BodyInertia,
    mass_range_kg: Range,
    offset_range_m: Vec3Range,
    generator: torch.Generator,
    size_range_m: Vec3Range = ZERO_VEC3,
    random_orientation: bool = False,
) -> BodyInertia:
    """Attach a payload box with mass, offset and edge lengths ~ U per body; see :func:`attach_payload`."""
    randomization = InertiaRandomization(
        payload_mass_kg=validate_range("payload mass_range_kg", mass_range_kg, "nonneg", "kg"),
        payload_offset_m=validate_vec3_range("payload offset_range_m", offset_range_m, "real", "m"),
        payload_size_m=validate_vec3_range("payload size_range_m", size_range_m, "nonneg", "m"),
        payload_random_rotation=random_orientation,
    )
    check_consistency(body, what="nominal body")
    return _sample_payload(body, randomization, generator)


def _sample_payload(body: BodyInertia, rnd: InertiaRandomization, generator: torch.Generator) -> BodyInertia:
    shape, like = body.batch_shape, body.mass
    mass = _uniform(rnd.payload_mass_kg, shape, generator, like)
    offset = _uniform_vec3(rnd.payload_offset_m, shape, generator, like)
    size = _uniform_vec3(rnd.payload_size_m, shape, generator, like)
    rot = random_rotation(shape, generator, like) if rnd.payload_random_rotation else None
    return attach_payload(body, mass, offset, size, rot)


def sample_log_cholesky(
    body: BodyInertia,
    generator: torch.Generator,
    mass_scale: Range = UNIT_RANGE,
    stretch: Range = UNIT_RANGE,
    shear: Range = ZERO_RANGE,
    com_shift_m: Vec3Range = ZERO_VEC3,
) -> BodyInertia:
    """Log-Cholesky perturbation with k, stretch (per axis), shear (per pair) and Δc ~ U; see
    :func:`perturb_log_cholesky`. The nominal must have J ≻ 0 strictly."""
    rnd = InertiaRandomization(
        mass_scale=validate_range("mass_scale", mass_scale, "scale"),
        stretch=validate_range("stretch", stretch, "scale"),
        shear=validate_range("shear", shear, "real"),
        com_shift_m=validate_vec3_range("com_shift_m", com_shift_m, "real", "m"),
    )
    check_consistency(body, what="nominal body")
    return _sample_log_cholesky(body, rnd, generator)


def _sample_log_cholesky(body: BodyInertia, rnd: InertiaRandomization, generator: torch.Generator) -> BodyInertia:
    shape, like = body.batch_shape, body.mass
    return perturb_log_cholesky(
        body,
        _uniform(rnd.mass_scale, shape, generator, like),
        _uniform_vec3((rnd.stretch,) * 3, shape, generator, like),
        _uniform_vec3((rnd.shear,) * 3, shape, generator, like),
        _uniform_vec3(rnd.com_shift_m, shape, generator, like),
    )


def sample_inertia(body: BodyInertia, randomization: InertiaRandomization, generator: torch.Generator) -> BodyInertia:
    """Full consistent randomization: log-Cholesky (k, stretch, shear), CoM shift with moved fraction f, payload.

    Args:
        body: Nominal bodies with J ≻ 0. Batch shape ``(...)``, one independent draw per element.
        randomization: Validated ranges.
        generator: Source of randomness.

    Returns:
        Randomized bodies, J ≻ 0 for every sample (each step maps J ≻ 0 to J ≻ 0).
    """
    check_consistency(body, what="nominal body")
    rnd = randomization
    out = _sample_log_cholesky(body, InertiaRandomization(rnd.mass_scale, rnd.stretch, rnd.shear), generator)
    out = shift_com(out, _uniform_vec3(rnd.com_shift_m, body.batch_shape, generator, body.mass), rnd.com_moved_fraction)
    return _sample_payload(out, rnd, generator)
