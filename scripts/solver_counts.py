"""Solver work per physics step, counted (not timed): a task's env at the zero action against bare stepping of the
same scene, and for the grasp task the env with the object's nominal body; then a CoM-offset box in MuJoCo C and
MuJoCo-Warp alone.

    realgap solver_counts --task Realgap-Grasp-Franka-v0 --num_envs 16
    realgap solver_counts --task Realgap-Balance-G1-v0 --num_envs 16 --steps 200 --no_box
"""

from __future__ import annotations

import argparse

from realgap.envs.run.cli import parser, positive_int, shared_flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__, shared_flags("task", "num_envs", "device", "seed", num_envs=16))
    p.add_argument("--steps", type=positive_int, default=240, help="physics steps per build (second half counted)")
    p.add_argument("--no_box", action="store_true", help="skip the MuJoCo C / MuJoCo-Warp box (a minute of compile)")
    p.add_argument("--json", default=None, help="write every count to this JSON file")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from realgap.envs.eval.bench.solver_work import SolverCountsRequest, solver_counts

    solver_counts(SolverCountsRequest(**vars(args)))  # prints each table as it is counted
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
