"""The action-space comparison's plots: learning curves per run, success per run, robustness per factor.

Drawn from what :mod:`realgap.envs.eval.compare.table` gathers (runs and table rows); files only (Agg), no simulator
import.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only
import matplotlib.pyplot as plt  # noqa: E402

from realgap.envs.eval.compare.table import RunResult, _num, read_progress  # noqa: E402
from realgap.envs.run.run_dir import env_steps_per_iteration  # noqa: E402


def _styles(results: Sequence[RunResult]) -> dict[tuple[str, int], dict[str, str]]:
    """Line style per run: one colour per action space, one line style per seed (a space's seeds read as a family)."""
    spaces = list(dict.fromkeys(r.space for r in results))
    seeds = sorted({r.seed for r in results})
    lines = ("-", "--", ":", "-.")
    return {
        (r.space, r.seed): {"color": f"C{spaces.index(r.space) % 10}", "linestyle": lines[seeds.index(r.seed) % 4]}
        for r in results
    }


def plot_learning_curves(results: Sequence[RunResult], path: Path) -> Path:
    """Training success against training minutes and against env steps, and mean episode reward against env steps;
    one line per run (minutes: the cumulative collect + learn time the run logged)."""
    fig, (ax_m, ax_s, ax_r) = plt.subplots(1, 3, figsize=(14, 3.8))
    styles = _styles(results)
    for r in results:
        style = styles[(r.space, r.seed)]
        rows = read_progress(r.run_dir)
        per_it = env_steps_per_iteration(r.run_dir)
        steps = [(row["iteration"] + 1) * per_it for row in rows]
        minutes = list(itertools.accumulate((row["collect_s"] + row["learn_s"]) / 60.0 for row in rows))
        success = [row.get("success_rate", math.nan) for row in rows]
        label = f"{r.space} (seed {r.seed})"
        ax_m.plot(minutes, success, label=label, **style)
        ax_s.plot(steps, success, label=label, **style)
        ax_r.plot(steps, [row["mean_reward"] for row in rows], label=label, **style)
    ax_m.set_xlabel("training minutes")
    ax_s.set_xlabel("env steps")
    ax_r.set_xlabel("env steps")
    for ax in (ax_m, ax_s):
        ax.set_ylabel("training success (running mean)")
        ax.set_ylim(-0.03, 1.03)
    ax_r.set_ylabel("mean episode reward")
    for ax in (ax_m, ax_s, ax_r):
        ax.grid(alpha=0.3)
    ax_m.legend(fontsize=7)
    fig.suptitle("learning curves (equal budget and seeds)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_success(rows: Sequence[Mapping[str, Any]], path: Path) -> Path:
    """Nominal success rate per run with its Wilson 95 % interval."""
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(rows) + 1.5), 3.8))
    labels = [f"{r['action_space']}\ns{r['seed']}" for r in rows]
    rate = [r["success_rate"] for r in rows]
    err = [
        [r["success_rate"] - r["success_ci95_lo"] for r in rows],
        [r["success_ci95_hi"] - r["success_rate"] for r in rows],
    ]
    ax.bar(range(len(rows)), rate, yerr=err, capsize=4, color="tab:blue", alpha=0.8)
    ax.set_xticks(range(len(rows)), labels, fontsize=7)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("success rate (95 % Wilson CI)")
    ax.set_title(f"nominal conditions, {rows[0]['eval_episodes']} episodes each", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_robustness(results: Sequence[RunResult], path: Path) -> Path:
    """Success rate against each swept factor, one panel per factor, one line per run."""
    factors = list(results[0].report["factors"])
    fig, axes = plt.subplots(1, len(factors), figsize=(4.2 * len(factors), 3.6), squeeze=False)
    styles = _styles(results)
    for ax, name in zip(axes[0], factors, strict=True):
        for r in results:
            factor = r.report["factors"][name]
            rows = next(iter(factor["policies"].values()))
            ax.plot(
                [x["value"] for x in rows],
                [_num(x["success_rate"]) for x in rows],
                marker="o",
                label=f"{r.space} (s{r.seed})",
                **styles[(r.space, r.seed)],
            )
        nominal = results[0].report["factors"][name]["nominal"]
        ax.axvline(nominal, color="grey", linestyle="--", linewidth=1)
        unit = results[0].report["factors"][name]["unit"]
        ax.set_xlabel(f"{name} [{unit}]" if unit else name)
        ax.set_ylabel("success rate")
        ax.set_ylim(-0.03, 1.03)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
