"""Learning curve of a run: a task metric from progress.csv against wall-clock minutes and env steps (one PNG).

    realgap plot_curve --run runs/grasp_franka_ee_pose_delta/<run> --metric success_rate --out curve.png

Minutes are the run's own collection + learning time per iteration, summed (what `--max_minutes` budgets); env steps
are iterations x steps per env x envs (from params/). Also writes the curve as CSV beside the PNG.
"""

from __future__ import annotations

import argparse

from realgap.envs.eval.curve import CurveRequest, plot_curve
from realgap.envs.run.cli import output_file, parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__)
    p.add_argument("--run", required=True, help="run folder (progress.csv, params/)")
    p.add_argument("--metric", default="success_rate", help="progress.csv column (e.g. success_rate, survival_rate)")
    p.add_argument("--out", type=output_file(".png"), required=True, help="PNG to write")
    p.add_argument("--title", default=None)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    out = plot_curve(CurveRequest(**vars(parse_args(argv))))
    print(f"[realgap] wrote {out} and {out.with_suffix('.csv')}")
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
