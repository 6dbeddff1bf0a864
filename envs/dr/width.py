"""Randomization width: every range of a profile narrowed about its midpoint, and the level rule that widens it.

At width ``w`` a range ``[lo, hi]`` becomes ``[mid − w·half, mid + w·half]`` (``mid``, ``half``: its centre and
half-width): ``w = 1`` is the profile as written, ``w = 0`` the one robot at the middle of every range. The middle,
not the datasheet value, because a profile's range need not contain the datasheet value (a worn robot's friction
× 2–3.5), and narrowing must never draw outside what the profile calls plausible. A curriculum over width (automatic
domain randomization in its simplest form) starts narrow and widens as training survival rises, so a policy first
learns the task on robots near the middle and then on the whole range.

:class:`LevelController` is the rule shared by the curricula of this suite (the width and the push range): a level in
[0, 1] moved up or down by a step each time enough episodes have ended. Pure Python and torch: no simulator import.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import torch

from realgap.envs.dr.inertia_sampling import InertiaRandomization


def narrow(lo: Any, hi: Any, width: float) -> tuple[Any, Any]:
    """``[lo, hi]`` narrowed to ``width`` of itself about its midpoint (floats or tensors alike).

    Raises:
        ValueError: ``width`` outside [0, 1].
    """
    check_width(width)
    if width == 1.0:
        return lo, hi  # the profile as written, bit for bit
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    return mid - width * half, mid + width * half


def narrow_steps(lo: int, hi: int, width: float) -> tuple[int, int]:
    """An integer range ``{lo, …, hi}`` (delay steps) narrowed about its midpoint, rounded inward to whole steps
    (at least the middle step, or the two middle ones)."""
    if width == 1.0:
        return lo, hi
    a, b = narrow(float(lo), float(hi), width)
    a_int, b_int = math.ceil(a - 1e-9), math.floor(b + 1e-9)
    if a_int > b_int:  # no whole step inside: the middle one (or two)
        mid = 0.5 * (lo + hi)
        a_int, b_int = math.floor(mid), math.ceil(mid)
    return int(a_int), int(b_int)


def narrow_randomization(r: InertiaRandomization, width: float) -> InertiaRandomization:
    """Every range of a consistent inertia randomization narrowed about its midpoint (the moved fraction and the
    payload's random rotation are not ranges and stay)."""
    if width == 1.0:
        return r
    fields = {}
    for f in dataclasses.fields(r):
        value = getattr(r, f.name)
        if isinstance(value, tuple) and value and isinstance(value[0], tuple):
            fields[f.name] = tuple(narrow(*axis, width) for axis in value)
        elif isinstance(value, tuple):
            fields[f.name] = narrow(*value, width)
    return dataclasses.replace(r, **fields)


def check_width(width: float) -> None:
    """Raises ValueError unless ``0 <= width <= 1``."""
    if not 0.0 <= width <= 1.0:
        raise ValueError(f"randomization width must be in [0, 1], got {width}")


def draw_unit_width(unit: torch.Tensor, width: float) -> torch.Tensor:
    """A U[0, 1] draw mapped to the narrowed unit interval (the same generator state as the full range)."""
    return unit if width == 1.0 else 0.5 + width * (unit - 0.5)


@dataclasses.dataclass
class LevelController:
    """A curriculum level in [0, 1] moved by episode survival.

    Whenever ``min_episodes`` episodes have ended since the last decision, the level rises by ``step`` if their
    survival is at least ``promote``, falls by ``step`` if it is below ``demote``, else stays.

    Attributes:
        step: Level change per decision, in (0, 1].
        promote: Survival at or above which the level rises.
        demote: Survival below which the level falls (<= ``promote``).
        min_episodes: Episodes that must end between two decisions (>= 1).
        level: The current level.
    """

    step: float
    promote: float
    demote: float
    min_episodes: int
    level: float = 0.0
    ended: int = 0
    survived: int = 0

    def __post_init__(self) -> None:
        if not 0.0 < self.step <= 1.0 or not 0.0 <= self.demote <= self.promote <= 1.0 or self.min_episodes < 1:
            raise ValueError(
                f"a curriculum needs 0 < step <= 1, 0 <= demote <= promote <= 1 and min_episodes >= 1, "
                f"got step={self.step}, promote={self.promote}, demote={self.demote}, "
                f"min_episodes={self.min_episodes}"
            )
        if not 0.0 <= self.level <= 1.0:
            raise ValueError(f"a curriculum level must be in [0, 1], got {self.level}")

    def update(self, ended: int, survived: int) -> float:
        """Count ``ended`` episodes of which ``survived`` survived; decide once enough have ended. Returns the level."""
        if not 0 <= survived <= ended:
            raise ValueError(f"need 0 <= survived <= ended, got survived={survived}, ended={ended}")
        self.ended, self.survived = self.ended + ended, self.survived + survived
        if self.ended >= self.min_episodes:
            survival = self.survived / self.ended
            if survival >= self.promote:
                self.level = min(1.0, self.level + self.step)
            elif survival < self.demote:
                self.level = max(0.0, self.level - self.step)
            self.ended = self.survived = 0
        return self.level
