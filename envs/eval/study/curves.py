"""Training curves of the transfer study's arms (issue 57, item 3: which arm learns how much in the budget).

Per arm and seed, the task's training metric (``survival_rate`` or ``success_rate`` in the run's ``progress.csv``)
against env steps (iterations × steps per iteration from the run's record), written as one CSV (every point) and one
figure (one panel per arm, a line per seed). A run still training contributes the iterations it has.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from realgap.envs.eval.compare.table import read_progress
from realgap.envs.eval.study.steps import Pair, find_run
from realgap.envs.run.run_dir import env_steps_per_iteration

FIELDS = ("arm", "seed", "iteration", "env_steps", "value")


def curve_points(pairs: Sequence[Pair], metric: str) -> list[dict[str, Any]]:
    """Every logged point of ``metric`` (a ``progress.csv`` column) of each pair's training run, in pair order;
    pairs without a run, and iterations where the metric was not logged yet, give none."""
    points = []
    for pair in pairs:
        run_dir = find_run(pair)
        if run_dir is None:
            continue
        per_iteration = env_steps_per_iteration(run_dir)
        for row in read_progress(run_dir):
            value = row.get(metric, math.nan)
            if math.isfinite(value):
                it = int(row["iteration"])
                steps = (it + 1) * per_iteration
                points.append(
                    {"arm": pair.arm.id, "seed": pair.seed, "iteration": it, "env_steps": steps, "value": value}
                )
    return points


def kept_points(out: Path, pairs: Sequence[Pair]) -> list[dict[str, Any]]:
    """The points of ``out``'s ``training_curves.csv`` whose (arm, seed) has no run in ``pairs``: a published folder
    keeps the curves of runs trained on another machine (their run folders are not published) when summarized again."""
    path = out / "training_curves.csv"
    if not path.is_file():
        return []
    with_run = {(p.arm.id, p.seed) for p in pairs if find_run(p) is not None}
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [
        {
            "arm": r["arm"],
            "seed": int(r["seed"]),
            "iteration": int(r["iteration"]),
            "env_steps": int(r["env_steps"]),
            "value": float(r["value"]),
        }
        for r in rows
        if (r["arm"], int(r["seed"])) not in with_run
    ]


PANELS_PER_ROW = 4  # a study's dozen arms wrap into rows a page can show, not one strip 40 inches wide


def write_curves(points: Sequence[dict[str, Any]], metric: str, out: Path) -> list[Path]:
    """``training_curves.csv`` (every point) and ``training_curves.png`` (a panel per arm) in ``out``; returns the
    files written (none without points)."""
    if not points:
        return []
    csv_path, png_path = out / "training_curves.csv", out / "training_curves.png"
    with csv_path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(points)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    arms = list(dict.fromkeys(p["arm"] for p in points))
    cols = min(len(arms), PANELS_PER_ROW)
    rows = -(-len(arms) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.8 * rows), sharey=True, squeeze=False)
    for ax in axes.flat[len(arms) :]:  # the last row's unused panels
        ax.set_visible(False)
    for ax, arm in zip(axes.flat, arms, strict=False):
        for seed in sorted({p["seed"] for p in points if p["arm"] == arm}):
            mine = [p for p in points if p["arm"] == arm and p["seed"] == seed]
            ax.plot([p["env_steps"] / 1e6 for p in mine], [p["value"] for p in mine], label=f"seed {seed}")
        ax.set_title(f"arm ({arm})")
        ax.set_xlabel("env steps (M)")
        ax.legend(fontsize=7)
    for row in axes:
        row[0].set_ylabel(f"training {metric}")
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)
    return [csv_path, png_path]
