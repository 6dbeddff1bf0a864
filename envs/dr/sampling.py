"""Pure helpers of the domain-randomization event terms (torch only, no simulator import).

The Isaac Lab terms in :mod:`realgap.envs.dr.events` only *apply* what these functions draw: every draw takes an
explicit ``torch.Generator`` seeded from the env seed and the term's name (:func:`term_seed`), so a run is
reproducible and two terms never share a random stream. Name selectors follow Isaac Lab's convention (full-match
regular expressions) but fail loudly: a pattern that matches nothing is an error that lists the available names.
"""

from __future__ import annotations

import dataclasses
import re
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import Tensor

from realgap.envs.dr.inertia import BodyInertia
from realgap.envs.dr.inertia_sampling import InertiaRandomization, Range, Vec3Range, sample_inertia, validate_range
from realgap.envs.sim.constants import device_constant


def term_seed(env_seed: int | None, key: str) -> int:
    """Seed of one term's generator: CRC32 of ``"<env seed>/<key>"`` (stable across runs and Python versions).

    ``key`` is the term's name in the event table, so terms draw independent streams and adding a term does not
    change what the others draw. ``env_seed=None`` counts as 0.
    """
    return zlib.crc32(f"{0 if env_seed is None else int(env_seed)}/{key}".encode())


def make_generator(seed: int, device: str | torch.device = "cpu") -> torch.Generator:
    """A ``torch.Generator`` on ``device`` seeded with ``seed``."""
    generator = torch.Generator(device=device)
    generator.manual_seed(int(seed))
    return generator


def uniform(rng: Range, shape: Sequence[int], generator: torch.Generator, dtype: torch.dtype = torch.float32) -> Tensor:
    """Draws from U[lo, hi] on the generator's device (lo = hi gives exactly lo). Shape: ``shape``."""
    lo, hi = rng
    unit = torch.rand(tuple(shape), generator=generator, dtype=dtype, device=generator.device)
    return lo + (hi - lo) * unit


def uniform_int(lo: int, hi: int, n: int, generator: torch.Generator) -> Tensor:
    """``n`` integers drawn uniformly from {lo, ..., hi} (inclusive), int64. Shape: ``(n,)``."""
    if not 0 <= lo <= hi:
        raise ValueError(f"need 0 <= lo <= hi, got lo={lo}, hi={hi}")
    return torch.randint(lo, hi + 1, (n,), generator=generator, device=generator.device)


def resolve_names(patterns: Sequence[str], names: Sequence[str], where: str, what: str = "name") -> list[int]:
    """Indices (in ``names`` order) of the names matched by any full-match regex of ``patterns``.

    Raises:
        ValueError: a pattern matches none of ``names``; the message names the pattern, ``where`` it comes from
            and lists the available names.
    """
    selected: set[int] = set()
    for pattern in patterns:
        hits = [i for i, name in enumerate(names) if re.fullmatch(pattern, name)]
        if not hits:
            raise ValueError(
                f"{where}: {what} pattern {pattern!r} matches no {what} of this asset; available: {list(names)}"
            )
        selected.update(hits)
    return sorted(selected)


def check_disjoint(selections: Sequence[Sequence[int]], names: Sequence[str], where: str) -> None:
    """Raise if two groups of one section select the same name (which range would apply is then ambiguous)."""
    owner: dict[int, int] = {}
    for group, ids in enumerate(selections):
        for i in ids:
            if i in owner:
                raise ValueError(
                    f"{where}: {names[i]!r} is selected by group {owner[i]} and group {group}; "
                    "each body/joint may belong to one group per section"
                )
            owner[i] = group


def randomization_to_params(rnd: InertiaRandomization) -> dict[str, Any]:
    """Plain (YAML-safe) dict of an :class:`InertiaRandomization` (tuples become lists)."""

    def plain(value: Any) -> Any:
        return [plain(v) for v in value] if isinstance(value, tuple | list) else value

    return {f.name: plain(getattr(rnd, f.name)) for f in dataclasses.fields(rnd)}


def randomization_from_params(params: Mapping[str, Any]) -> InertiaRandomization:
    """Inverse of :func:`randomization_to_params` (validated by :class:`InertiaRandomization` itself)."""

    def frozen(value: Any) -> Any:
        return tuple(frozen(v) for v in value) if isinstance(value, tuple | list) else value

    return InertiaRandomization(**{k: frozen(v) for k, v in params.items()})


def body_from_flat(
    mass: Tensor, com_b: Tensor, inertia_flat: Tensor, dtype: torch.dtype = torch.float64
) -> BodyInertia:
    """:class:`BodyInertia` from the simulator's layout (row-major 3×3 inertia as 9 numbers), cast to ``dtype``.

    Shape: mass ``(...,)`` kg, com_b ``(..., 3)`` m, inertia_flat ``(..., 9)`` kg·m² → batch ``(...)``.
    """
    return BodyInertia(
        mass.to(dtype), com_b.to(dtype), inertia_flat.to(dtype).reshape(*inertia_flat.shape[:-1], 3, 3).contiguous()
    )


def body_to_flat(body: BodyInertia, dtype: torch.dtype = torch.float32) -> tuple[Tensor, Tensor, Tensor]:
    """(mass, com_b, inertia_flat) in the simulator's layout and ``dtype``; inverse of :func:`body_from_flat`."""
    inertia = body.inertia_c.to(dtype)
    return body.mass.to(dtype), body.com_b.to(dtype), inertia.reshape(*inertia.shape[:-2], 9).contiguous()


def sample_body_columns(
    body: BodyInertia, columns: Sequence[int], randomization: InertiaRandomization, generator: torch.Generator
) -> BodyInertia:
    """Apply :func:`~realgap.envs.dr.inertia_sampling.sample_inertia` to the bodies in ``columns`` only.

    Args:
        body: Bodies of every env. Batch ``(E, B)``.
        columns: Body indices (last batch dimension) to randomize; the others are copied unchanged.
        randomization: Ranges of the consistent randomization.
        generator: Source of randomness (one independent draw per env and selected body).

    Returns:
        A new :class:`BodyInertia` with batch ``(E, B)``; every selected body keeps J ≻ 0.
    """
    cols = device_constant(list(columns), torch.long, body.mass.device)  # built once, not copied at every reset
    sub = BodyInertia(body.mass[:, cols], body.com_b[:, cols], body.inertia_c[:, cols])
    new = sample_inertia(sub, randomization, generator)
    mass, com_b, inertia_c = body.mass.clone(), body.com_b.clone(), body.inertia_c.clone()
    mass[:, cols], com_b[:, cols], inertia_c[:, cols] = new.mass, new.com_b, new.inertia_c
    return BodyInertia(mass, com_b, inertia_c)


def push_magnitude(velocity_mps: Vec3Range, where: str = "push.velocity_mps") -> Range:
    """The ``(min, max)`` horizontal speed change [m/s] of a random-heading push equivalent to a profile's box.

    A push of random heading and magnitude in [0, a] reaches every horizontal direction equally, which a profile
    expresses as ``{x: [-a, a], y: [-a, a], z: [0, 0]}``; any other box has no random-heading equivalent.

    Raises:
        ValueError: the box is not symmetric, not the same in x and y, or has a vertical part.
    """
    (xlo, xhi), (ylo, yhi), (zlo, zhi) = (
        validate_range(f"{where}.{a}", r) for a, r in zip("xyz", velocity_mps, strict=True)
    )
    if not (xlo == -xhi and ylo == -yhi and xhi == yhi and zlo == 0.0 and zhi == 0.0):
        raise ValueError(
            f"{where}: the push term draws a random heading, so the box must be {{x: [-a, a], y: [-a, a], z: [0, 0]}}; "
            f"got x=[{xlo:g}, {xhi:g}], y=[{ylo:g}, {yhi:g}], z=[{zlo:g}, {zhi:g}] m/s"
        )
    return (0.0, float(xhi))
