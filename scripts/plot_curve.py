"""Learning curve of a run: a task metric from progress.csv against wall-clock minutes and env steps (one PNG).

    realgap plot_curve --run runs/grasp_franka_ee_pose_delta/<run> --metric success_rate --out curve.png

Minutes are the run's own collection + learning time per iteration, summed (what `--max_minutes` budgets); env steps
are iterations x steps per env x envs (from params/). Also writes the curve as CSV beside the PNG.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from realgap.envs.run.cli import output_file, parser

    p = parser(__doc__)
    p.add_argument("--run", required=True, help="run folder (progress.csv, params/)")
    p.add_argument("--metric", default="success_rate", help="progress.csv column (e.g. success_rate, survival_rate)")
    p.add_argument("--out", type=output_file(".png"), required=True, help="PNG to write")
    p.add_argument("--title", default=None)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from realgap.envs.eval.compare.table import read_progress
    from realgap.envs.run.run_dir import env_steps_per_iteration

    run = Path(args.run)
    rows = read_progress(run)
    if not rows or args.metric not in rows[0]:
        raise ValueError(f"{run}/progress.csv has no column {args.metric!r}")
    record = json.loads((run / "params" / "run.json").read_text())
    per_iteration = env_steps_per_iteration(run)
    minutes, elapsed = [], 0.0
    for r in rows:
        elapsed += r["collect_s"] + r["learn_s"]
        minutes.append(elapsed / 60.0)
    steps = [(int(r["iteration"]) + 1) * per_iteration / 1e6 for r in rows]
    values = [r[args.metric] for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    ax1.plot(minutes, values)
    ax1.set_xlabel("wall-clock minutes (collection + learning)")
    ax1.set_ylabel(f"training {args.metric} (running mean)")
    ax2.plot(steps, values)
    ax2.set_xlabel("env steps (millions)")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    fig.suptitle(args.title or f"{record.get('task', '')}: {run.name}")
    fig.tight_layout()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    with open(out.with_suffix(".csv"), "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["iteration", "minutes", "env_steps_millions", args.metric])
        writer.writerows([int(r["iteration"]), round(m, 3), round(s, 4), v]
                         for r, m, s, v in zip(rows, minutes, steps, values, strict=True))  # fmt: skip
    print(f"[realgap] wrote {out} and {out.with_suffix('.csv')}")
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
