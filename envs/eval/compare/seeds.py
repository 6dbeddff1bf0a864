"""The comparison at the seed level: per recipe a mean and interval over seeds, pairwise differences, tiers.

What :mod:`realgap.envs.eval.compare.table` tabulates per run and pools per action space, this module answers as a
question about recipes: is action space A better than B *over training seeds*? Each metric is one value per seed
(Play success; env steps to 40 % and 80 % training success, censored at the budget; mean success over each
robustness sweep); a rank is stated only where the Welch interval of the difference excludes zero
(:mod:`realgap.envs.eval.seed_stats`), else the pair is called tied.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only
import matplotlib.pyplot as plt  # noqa: E402

from realgap.envs.eval.compare.table import RunResult, read_progress  # noqa: E402
from realgap.envs.eval.seed_stats import (  # noqa: E402
    SeedSummary,
    binomial_floor,
    mean_band,
    pairwise,
    summarize,
    tiers,
)
from realgap.envs.run.run_dir import env_steps_per_iteration  # noqa: E402

LEVELS = (0.4, 0.8)
"""Training-success levels (running mean, exploration on) whose first crossing measures how fast a recipe learns."""


def steps_to(result: RunResult, level: float) -> tuple[float, float]:
    """Env steps at the end of the first iteration whose training success exceeds ``level`` (NaN: never), and the
    run's whole budget in env steps (the bound a never-reaching seed is censored at)."""
    progress = read_progress(result.run_dir)
    per_iteration = env_steps_per_iteration(result.run_dir)
    budget = float(len(progress) * per_iteration)
    for row in progress:
        if row.get("success_rate", math.nan) > level:
            return float((row["iteration"] + 1) * per_iteration), budget
    return math.nan, budget


def metrics(results: Sequence[RunResult], rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, list[float]]]:
    """Per metric, per action space (in the order of ``results``), one value per seed.

    Metrics: ``play_success``; ``steps_to_<level>`` for each of :data:`LEVELS` (NaN when never reached); for each
    swept factor ``<factor>_mean_success`` (success averaged over the sweep's points). ``rows`` are
    :func:`realgap.envs.eval.compare.table.table_rows` of the same ``results``, in the same order.
    """
    out: dict[str, dict[str, list[float]]] = {}

    def add(metric: str, space: str, value: float) -> None:
        out.setdefault(metric, {}).setdefault(space, []).append(float(value))

    for result, row in zip(results, rows, strict=True):
        add("play_success", result.space, row["success_rate"])
        for level in LEVELS:
            add(f"steps_to_{level:g}", result.space, steps_to(result, level)[0])
        for key in (k for k in row if k.endswith("_mean_success")):
            add(key, result.space, row[key])
    return out


def _budget(results: Sequence[RunResult]) -> float:
    """The largest budget of any run, env steps: the censoring bound (runs of one comparison share one budget)."""
    return max((steps_to(r, 1.0)[1] for r in results), default=math.nan)


def _episodes(rows: Sequence[Mapping[str, Any]], space: str) -> int:
    """Evaluation episodes per seed of ``space`` (the smallest, if seeds differ)."""
    return min(int(r["eval_episodes"]) for r in rows if r["action_space"] == space)


def _fmt(metric: str, value: float) -> str:
    """Env steps in millions, clipped at 0; rates in percent, clipped to [0, 100] % (a t interval over few seeds can
    leave either range)."""
    if math.isnan(value):
        return "–"
    if metric.startswith("steps_to"):
        return f"{max(value, 0.0) / 1e6:.2f} M"
    return f"{100 * min(max(value, 0.0), 1.0):.0f} %"


Section = tuple[list[SeedSummary], dict[str, float]]
"""One metric over the spaces: each space's :class:`SeedSummary` and the variance floors its pairs are compared with."""


def _sections(results: Sequence[RunResult], rows: Sequence[Mapping[str, Any]]) -> tuple[float, dict[str, Section]]:
    """The censoring budget and, per metric of :func:`metrics`, its :data:`Section` (computed once for the whole
    seed-level section: the metrics read every run's progress.csv)."""
    budget = _budget(results)
    out = {}
    for metric, groups in metrics(results, rows).items():
        steps = metric.startswith("steps_to")
        # a success rate over m episodes carries at least its binomial variance (no zero-width interval from 2 seeds)
        floors = {} if steps else {n: binomial_floor(v, _episodes(rows, n)) for n, v in groups.items()}
        bound = budget if steps else None
        out[metric] = [summarize(n, v, bound, floor=floors.get(n, 0.0)) for n, v in groups.items()], floors
    return budget, out


def _title(metric: str) -> str:
    """A metric's name in words."""
    if metric == "play_success":
        return "Play success"
    if metric.startswith("steps_to"):
        return f"env steps to {100 * float(metric.rsplit('_', 1)[1]):.0f} % training success"
    return f"{metric.removesuffix('_mean_success')}: mean success over the sweep"


def _cell(metric: str, s: SeedSummary) -> str:
    """``mean (lo to hi)``, with ``k/n reached`` for a steps metric."""
    if metric.startswith("steps_to") and s.reached == 0:
        return f"never (0/{len(s.values)} reached)"
    reached = f", {s.reached}/{len(s.values)} reached" if metric.startswith("steps_to") else ""
    return f"{_fmt(metric, s.mean)} ({_fmt(metric, s.lo)} to {_fmt(metric, s.hi)}{reached})"


def _glance(sections: Mapping[str, Section]) -> list[str]:
    """:func:`glance` of computed sections."""
    play, floors = sections["play_success"]
    ahead: dict[str, list[str]] = {s.name: [] for s in play}
    for v in pairwise({s.name: list(s.values) for s in play}, floors=floors):
        if v.separated:
            ahead[v.better].append(v.worse)
    by_name = {m: {s.name: s for s in summaries} for m, (summaries, _) in sections.items()}
    lines = [
        "| action space | seeds | " + " | ".join(map(_title, sections)) + " | ahead of, in Play success |",
        "|---|---|" + "---|" * len(sections) + "---|",
    ]
    for s in play:
        cells = " | ".join(_cell(m, by_name[m][s.name]) for m in sections)
        better = ", ".join(f"`{n}`" for n in ahead[s.name]) or "none"
        lines.append(f"| `{s.name}` | {len(s.values)} | {cells} | {better} |")
    return lines


def glance(results: Sequence[RunResult], rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One row per action space over its seeds: every metric's mean and 95 % t interval, and the spaces it is ahead
    of in Play success (Welch interval excluding zero): the comparison's answer in one table."""
    return _glance(_sections(results, rows)[1])


def markdown(results: Sequence[RunResult], rows: Sequence[Mapping[str, Any]]) -> str:
    """The seed-level section of comparison.md: the :func:`glance` table, then per metric a table of each space's
    mean and 95 % t interval over seeds, tiers and every pair's verdict in words (rank only where the Welch interval
    excludes zero)."""
    budget, sections = _sections(results, rows)
    lines = [
        "Seed level: the unit is a training seed; intervals are Student-t 95 % over seeds (rates shown clipped to",
        "0–100 %); a pair is ranked only where the Welch 95 % interval of its difference excludes zero, otherwise",
        "it is called tied. No multiplicity correction: among many pairs, about one in twenty true ties can look",
        "separated by chance. Env steps: a seed that never reached the level counts as the whole budget",
        f"({budget / 1e6:.2f} M), fewer is better.",
        "",
        *_glance(sections),
        "",
    ]
    for metric, (summaries, floors) in sections.items():
        steps = metric.startswith("steps_to")
        title = _title(metric) + (
            f" (a seed that never reached it counts as the budget, {budget / 1e6:.2f} M: fewer is better)"
            if steps
            else ""
        )
        lines += [f"**{title}**", "", "| action space | seeds | mean (95 % interval) | per seed |", "|---|---|---|---|"]
        for s in summaries:
            reached = f" ({s.reached}/{len(s.values)} reached)" if steps else ""
            lines.append(
                f"| `{s.name}` | {len(s.values)} | {_fmt(metric, s.mean)} ({_fmt(metric, s.lo)} to "
                f"{_fmt(metric, s.hi)}){reached} | {' / '.join(_fmt(metric, v) for v in s.values)} |"
            )
        censored = {s.name: list(s.values) for s in summaries}
        order = tiers(censored, higher_is_better=not steps, floors=floors)
        lines += [
            "",
            "Tiers (best first; no rank within a tier): "
            + " > ".join("{" + ", ".join(f"`{n}`" for n in tier) + "}" for tier in order),
            "",
        ]
        scale = 1e6 if steps else 0.01
        unit = " M" if steps else " pt"
        for v in pairwise(censored, higher_is_better=not steps, floors=floors):
            scaled = type(v)(
                v.better, v.worse, v.diff / scale + 0.0, v.lo / scale + 0.0, v.hi / scale + 0.0, v.separated
            )
            lines.append(f"- {scaled.words(unit)}")
        lines.append("")
    return "\n".join(lines)


def plot_bands(results: Sequence[RunResult], path: Path) -> Path:
    """Training success against env steps: per action space the mean over seeds with its 95 % t band."""
    fig, ax = plt.subplots(figsize=(7, 4))
    by_space: dict[str, list[RunResult]] = {}
    for r in results:
        by_space.setdefault(r.space, []).append(r)
    for i, (space, runs) in enumerate(by_space.items()):
        curves = [[row.get("success_rate", math.nan) for row in read_progress(r.run_dir)] for r in runs]
        mean, lo, hi = mean_band(curves)
        per_it = env_steps_per_iteration(runs[0].run_dir)
        steps = [(k + 1) * per_it for k in range(len(mean))]
        ax.plot(steps, mean, color=f"C{i % 10}", label=f"{space} ({len(runs)} seeds)")
        ax.fill_between(steps, lo, hi, color=f"C{i % 10}", alpha=0.15, linewidth=0)
    ax.set_xlabel("env steps")
    ax.set_ylabel("training success (running mean)")
    ax.set_ylim(-0.03, 1.03)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("mean over seeds, 95 % t band", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
