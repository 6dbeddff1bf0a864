"""Per-point statistics of a robustness sweep: success rates with Wilson intervals, means with normal-approximation
intervals, and strict-JSON output (pure Python).

Split from :mod:`realgap.envs.eval.robustness.sweep` (the factors and the plan), which re-exports these names.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from realgap.envs.format.stats import wilson_interval  # noqa: F401  (re-exported: the sweep's callers import it here)


def mean_std_ci(values: Sequence[float], z: float = 1.96) -> dict[str, float]:
    """Mean, sample std and the half-width of the normal-approximation 95 % CI of the mean (NaN when undefined)."""
    n = len(values)
    if n == 0:
        return {"mean": math.nan, "std": math.nan, "ci95": math.nan}
    mean = sum(values) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else math.nan
    return {"mean": mean, "std": std, "ci95": z * std / math.sqrt(n) if n > 1 else math.nan}


@dataclass(frozen=True)
class Episode:
    """One counted episode: its outcome, how long it lasted, its return and the termination terms that ended it."""

    success: bool
    survived: bool
    duration_s: float
    episode_return: float
    ended_by: tuple[str, ...] = ()


def summarize(episodes: Sequence[Episode]) -> dict[str, object]:
    """Per-point statistics: success rate with its Wilson 95 % interval, survival, time up, return (mean ± CI) and
    the share of the episodes each termination term ended (``ended_by``; time-outs included)."""
    n = len(episodes)
    wins = sum(e.success for e in episodes)
    lo, hi = wilson_interval(wins, n)
    terms = dict.fromkeys(t for e in episodes for t in e.ended_by)
    return {
        "episodes": n,
        "success_rate": wins / n if n else math.nan,
        "success_ci95": [lo, hi],
        "survival_rate": sum(e.survived for e in episodes) / n if n else math.nan,
        "time_up_s": mean_std_ci([e.duration_s for e in episodes]),
        "time_to_fall_s": mean_std_ci([e.duration_s for e in episodes if not e.survived]),
        "return": mean_std_ci([e.episode_return for e in episodes]),
        "ended_by": {t: sum(t in e.ended_by for e in episodes) / n for t in terms},
    }


def finite_or_none(value: object) -> object:
    """``value`` with every NaN / inf float replaced by ``None`` (strict JSON has no NaN), recursively."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_or_none(v) for v in value]
    return value
