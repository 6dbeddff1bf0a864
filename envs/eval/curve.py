"""A run's learning curve (``scripts/plot_curve.py``): a task metric from progress.csv against wall-clock minutes and
env steps, as one PNG and the same curve as CSV beside it.

Minutes are the run's own collection + learning time per iteration, summed (what ``--max_minutes`` budgets); env steps
are iterations x steps per env x envs (from params/).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from realgap.envs.eval.compare.table import read_progress
from realgap.envs.run.run_dir import env_steps_per_iteration


@dataclass(frozen=True)
class CurveRequest:
    """A learning curve as scripts/plot_curve.py's flags give it (see its ``--help`` for each)."""

    run: str
    out: str
    metric: str = "success_rate"
    title: str | None = None


def plot_curve(req: CurveRequest) -> Path:
    """Draw ``req.metric`` of the run against minutes and env steps into ``req.out`` (PNG) and write the curve beside
    it (CSV); returns the PNG's path.

    Raises:
        ValueError: The run's progress.csv has no such column (or no rows).
    """
    import matplotlib  # the plotting backend: only for this figure

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run = Path(req.run)
    rows = read_progress(run)
    if not rows or req.metric not in rows[0]:
        raise ValueError(f"{run}/progress.csv has no column {req.metric!r}")
    record = json.loads((run / "params" / "run.json").read_text())
    per_iteration = env_steps_per_iteration(run)
    minutes, elapsed = [], 0.0
    for r in rows:
        elapsed += r["collect_s"] + r["learn_s"]
        minutes.append(elapsed / 60.0)
    steps = [(int(r["iteration"]) + 1) * per_iteration / 1e6 for r in rows]
    values = [r[req.metric] for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    ax1.plot(minutes, values)
    ax1.set_xlabel("wall-clock minutes (collection + learning)")
    ax1.set_ylabel(f"training {req.metric} (running mean)")
    ax2.plot(steps, values)
    ax2.set_xlabel("env steps (millions)")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    fig.suptitle(req.title or f"{record.get('task', '')}: {run.name}")
    fig.tight_layout()
    out = Path(req.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    with open(out.with_suffix(".csv"), "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["iteration", "minutes", "env_steps_millions", req.metric])
        writer.writerows(
            [int(r["iteration"]), round(m, 3), round(s, 4), v]
            for r, m, s, v in zip(rows, minutes, steps, values, strict=True)
        )
    return out
