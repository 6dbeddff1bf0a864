"""Solver work per physics step, counted (not timed): a task's env at the zero action against bare stepping of the
same scene, and for the grasp task the env with the object's nominal body; then a CoM-offset box in MuJoCo C and
MuJoCo-Warp alone.

    realgap solver_counts --task Realgap-Grasp-Franka-v0 --num_envs 16
    realgap solver_counts --task Realgap-Balance-G1-v0 --num_envs 16 --steps 200 --no_box
"""

from __future__ import annotations

import argparse
import json


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from realgap.envs.run.cli import parser, positive_int, shared_flags

    p = parser(__doc__, shared_flags("task", "num_envs", "device", "seed", num_envs=16))
    p.add_argument("--steps", type=positive_int, default=240, help="physics steps per build (second half counted)")
    p.add_argument("--no_box", action="store_true", help="skip the MuJoCo C / MuJoCo-Warp box (a minute of compile)")
    p.add_argument("--json", default=None, help="write every count to this JSON file")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from realgap.envs.eval.bench import solver_work
    from realgap.tasks import check_task

    task, n, steps = check_task(args.task), args.num_envs, args.steps
    builds = {"env": solver_work.env_counts(task, n, steps, args.seed, args.device)}
    if "Grasp" in task:
        builds["env, object nominal body"] = solver_work.env_counts(task, n, steps, args.seed, args.device, True)
    builds["bare scene"] = solver_work.bare_counts(task, n, steps, args.seed, args.device)
    print(f"\n{task}, {n} envs, per physics step (second half of {steps}):")
    print(f"{'build':<28} {'contacts/world':>15} {'rows/world':>11} {'iterations':>11} {'max':>4}  filtered pairs")
    for name, c in builds.items():
        print(f"{name:<28} {c['contacts_per_world']:>15.2f} {c['constraint_rows_per_world']:>11.2f} "
              f"{c['solver_iterations']:>11.2f} {c['solver_iterations_max']:>4}  "
              f"{c['model']['geom_pairs_after_filtering']} of {c['model']['geom_pairs']}")  # fmt: skip
    result: dict = {"task": task, "num_envs": n, "builds": builds}
    if not args.no_box:
        # realgap's box-box setting (the default path's rows: scripts/engine_agreement.py, in a process of their own)
        result["offset_com_box"] = {off: solver_work.offset_com_box(off, exact_box_box=True) for off in (0.0, 0.01)}
        print("\n5 cm box on a table, CoM offset along x, exact box-box; engines alone (second half of 400 steps):")
        for off, engines in result["offset_com_box"].items():
            for engine, c in engines.items():
                print(f"  offset {off * 1000:>4.0f} mm  {engine:<12} contacts {c['contacts']:.2f}  iterations "
                      f"{c['solver_iterations']:.2f}  max |omega| {c['max_angular_speed']:.2g} rad/s")  # fmt: skip
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2)
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
