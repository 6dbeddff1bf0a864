"""Seed-level statistics of a comparison: what a rank between training recipes may claim.

The unit of replication is the training seed. The pooled evaluation episodes of one recipe hold episode noise only,
while two seeds of one recipe can end several points apart; so every interval here is over seeds (one value per
seed), and a pair of recipes is ranked only where the interval of their difference excludes zero — otherwise the pair
is called tied, in words. Pure numpy/scipy: no simulator, no run folder.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

LEVEL = 0.95
"""Two-sided confidence level of every interval here."""


@dataclass(frozen=True)
class SeedSummary:
    """One recipe's values over its seeds.

    Attributes:
        name: The recipe (e.g. the action space).
        values: One value per seed (censored values already replaced by their bound, see :func:`censor`).
        mean: Mean over seeds.
        lo: Lower end of the Student-t interval of the mean (NaN with fewer than two seeds).
        hi: Upper end.
        reached: Seeds whose value was observed rather than censored (equals ``len(values)`` when nothing was).
    """

    name: str
    values: tuple[float, ...]
    mean: float
    lo: float
    hi: float
    reached: int


def t_interval(values: Sequence[float], level: float = LEVEL, floor: float = 0.0) -> tuple[float, float, float]:
    """Mean and Student-t interval of the mean over seeds: ``mean ± t_{n-1} · s / √n``, with ``s² ≥ floor`` (the
    per-seed variance floor of :func:`welch_difference`).

    The t interval (not the normal one) because seeds are few: with 5 seeds t₄ = 2.78 against z = 1.96.
    Returns ``(mean, nan, nan)`` for one seed and ``(nan, nan, nan)`` for none.
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return math.nan, math.nan, math.nan
    mean = float(x.mean())
    if x.size < 2:
        return mean, math.nan, math.nan
    std = math.sqrt(max(float(x.var(ddof=1)), floor))
    half = float(stats.t.ppf(0.5 + level / 2, x.size - 1) * std / math.sqrt(x.size))
    return mean, mean - half, mean + half


def bootstrap_interval(
    values: Sequence[float], level: float = LEVEL, resamples: int = 10_000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean over seeds (resampling seeds with replacement).

    Reported beside the t interval: it assumes no normality but is too narrow with very few seeds (with n seeds it
    can never leave the range of the values), so ranks use :func:`welch_difference`, not this.
    """
    x = np.asarray(values, dtype=float)
    if x.size < 2:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1)
    return float(np.quantile(means, 0.5 - level / 2)), float(np.quantile(means, 0.5 + level / 2))


def welch_difference(
    a: Sequence[float], b: Sequence[float], level: float = LEVEL, floor_a: float = 0.0, floor_b: float = 0.0
) -> tuple[float, float, float]:
    """Difference of means ``mean(a) − mean(b)`` and its Welch interval (unequal variances, Welch–Satterthwaite df).

    Seeds of two recipes are independent draws (seed k of one recipe shares nothing with seed k of another beyond its
    number), so the test is unpaired. ``floor_a`` / ``floor_b`` bound each side's per-seed variance from below: a seed's
    value that is itself an estimate (a success rate over m episodes) carries at least its own sampling variance, so
    two seeds that happen to agree do not make a zero-width interval. With both variances zero the interval is the
    point. NaN bounds when either side has fewer than two seeds.
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    diff = float(x.mean() - y.mean()) if x.size and y.size else math.nan
    if x.size < 2 or y.size < 2:
        return diff, math.nan, math.nan
    vx, vy = max(x.var(ddof=1), floor_a) / x.size, max(y.var(ddof=1), floor_b) / y.size
    se = math.sqrt(vx + vy)
    if se == 0.0:
        return diff, diff, diff
    df = (vx + vy) ** 2 / (vx**2 / (x.size - 1) + vy**2 / (y.size - 1))
    half = float(stats.t.ppf(0.5 + level / 2, df) * se)
    return diff, diff - half, diff + half


def censor(values: Sequence[float], bound: float) -> tuple[list[float], int]:
    """Values with each NaN ("never reached within the budget") replaced by ``bound``, and how many were observed.

    Used for env steps to a training-success level: a seed that never reached it took *at least* the whole budget, so
    the bound is the conservative value (it can only make a never-reaching recipe look faster than it is).
    """
    out = [bound if math.isnan(v) else float(v) for v in values]
    return out, sum(not math.isnan(v) for v in values)


def summarize(
    name: str, values: Sequence[float], bound: float | None = None, level: float = LEVEL, floor: float = 0.0
) -> SeedSummary:
    """:class:`SeedSummary` of ``values`` (censored at ``bound`` where given, see :func:`censor`; variance floor as in
    :func:`t_interval`)."""
    if bound is None:
        kept, reached = [float(v) for v in values], len(values)
    else:
        kept, reached = censor(values, bound)
    mean, lo, hi = t_interval(kept, level, floor)
    return SeedSummary(name, tuple(kept), mean, lo, hi, reached)


@dataclass(frozen=True)
class PairVerdict:
    """Two recipes compared over seeds.

    Attributes:
        better: The recipe with the better mean (``a`` when equal).
        worse: The other.
        diff: |mean difference| in the metric's units (better − worse, oriented so larger is better).
        lo: Lower end of the Welch interval of ``diff``.
        hi: Upper end.
        separated: The interval excludes zero: a rank may be claimed. Otherwise the pair is tied.
    """

    better: str
    worse: str
    diff: float
    lo: float
    hi: float
    separated: bool

    def words(self, unit: str = "") -> str:
        """One sentence: "A ahead of B by d (lo to hi)" or "A and B tied (d, lo to hi)"."""
        if math.isnan(self.lo):
            return f"{self.better} and {self.worse} not ranked: fewer than two seeds on a side (no interval)"
        span = f"{self.diff:.3g}{unit} ({self.lo:.3g} to {self.hi:.3g}{unit})"
        if self.separated:
            return f"{self.better} ahead of {self.worse} by {span}"
        return f"{self.better} and {self.worse} tied: difference {span} includes zero"


def binomial_floor(rates: Sequence[float], episodes: int) -> float:
    """The mean sampling variance of a success rate over ``episodes`` episodes, ``mean_i p_i(1 − p_i) / m``: the
    least variance a seed's measured rate carries (the floor of :func:`welch_difference`)."""
    p = np.asarray(rates, dtype=float)
    return float(np.mean(p * (1.0 - p)) / episodes) if p.size and episodes > 0 else 0.0


def pairwise(
    groups: Mapping[str, Sequence[float]],
    higher_is_better: bool = True,
    level: float = LEVEL,
    floors: Mapping[str, float] | None = None,
) -> list[PairVerdict]:
    """Every pair of recipes (in the order of ``groups``), each with its Welch interval and whether it separates.

    ``floors``: per recipe, the variance floor of :func:`welch_difference` (0 where absent). A pair with fewer than two
    seeds on either side is never separated (its interval is undefined).
    """
    floors = floors or {}
    names = list(groups)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            diff, lo, hi = welch_difference(groups[a], groups[b], level, floors.get(a, 0.0), floors.get(b, 0.0))
            if not higher_is_better:
                diff, lo, hi = -diff, -hi, -lo
            better, worse = (a, b) if diff >= 0 else (b, a)
            if diff < 0:
                diff, lo, hi = -diff, -hi, -lo
            separated = not math.isnan(lo) and (lo > 0.0 or hi < 0.0)
            out.append(PairVerdict(better, worse, diff, lo, hi, separated))
    return out


def tiers(
    groups: Mapping[str, Sequence[float]],
    higher_is_better: bool = True,
    level: float = LEVEL,
    floors: Mapping[str, float] | None = None,
) -> list[list[str]]:
    """Recipes in order of their mean, cut into tiers: a new tier starts only where the recipe is separated from
    every member of the tier above it. Within a tier no rank is claimed (every member is tied with at least one
    other member, or none is separated from the tier's head)."""
    sign = 1.0 if higher_is_better else -1.0
    order = sorted(groups, key=lambda n: -sign * float(np.mean(groups[n])))
    verdicts = {frozenset((v.better, v.worse)): v for v in pairwise(groups, higher_is_better, level, floors)}
    out: list[list[str]] = []
    for name in order:
        if out and all(verdicts[frozenset((name, m))].separated for m in out[-1]):
            out.append([name])
        elif out:
            out[-1].append(name)
        else:
            out.append([name])
    return out


def mean_band(curves: Sequence[Sequence[float]], level: float = LEVEL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pointwise mean and Student-t band over seeds of equally long curves (truncated to the shortest; NaN entries
    are left out pointwise). Shape: each output ``(min_len,)``."""
    if not curves:
        empty = np.zeros(0)
        return empty, empty, empty
    length = min(len(c) for c in curves)
    x = np.asarray([list(c)[:length] for c in curves], dtype=float)
    n = np.sum(~np.isnan(x), axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.nanmean(x, axis=0) if length else np.zeros(0)
        std = np.nanstd(x, axis=0, ddof=1) if x.shape[0] > 1 else np.full(length, np.nan)
        tq = np.where(n > 1, stats.t.ppf(0.5 + level / 2, np.maximum(n - 1, 1)), np.nan)
        half = tq * std / np.sqrt(n)
    return mean, mean - half, mean + half
