"""Compare the grasp task's action spaces: train each with the same budget and seeds, evaluate, tabulate, plot.

    realgap compare_actions --max_iterations 300 --num_envs 64                  # all eight, seed 0
    realgap compare_actions --spaces joint_pos,joint_torque --seeds 0,1 --factors object_mass_scale
    realgap compare_actions --max_iterations 2 --num_envs 8 --episodes 2        # smoke test
    realgap compare_actions --seeds 1 --include runs/compare_actions/<seed-0 folder>  # add a seed later
    realgap compare_actions --seeds none --include DIR --out NEW    # rebuild DIR's tables, train nothing
    realgap compare_actions ... --out DIR   # the same command again: goes on where a stopped sitting ended

For every action space and seed, one subprocess (``--jobs`` at a time: the physics of one takes a core, so 2 on a
2-core CPU) trains as ``scripts/train.py`` does with identical ``--max_iterations``, ``--num_envs`` and ``--seed``
(each variant's PPO config differs only in its initial action noise, tasks/grasp/agent_cfg.py), then evaluates as
``scripts/evaluate.py`` does the last checkpoint at the nominal point and under the ``--factors`` sweeps (both in one
interpreter, envs/eval/compare/run.py). Writes into <out> (default
runs/compare_actions/<timestamp>): comparison.csv and comparison.md (action space, low-level actuator model, physics /
servo / policy rates and target mode, budget, training time, success with its 95 % CI, mean and worst success over
each sweep), learning_curves.png, learning_curves_seeds.png (mean ± 95 % band over seeds), success.png,
robustness.png; comparison.md ends with the seed-level ranks (envs/eval/compare/seeds.py); the runs under <out>/runs,
the evaluations under <out>/eval (each with the run's training record, progress.csv and params, in
eval/<space>_s<seed>/run/, so the folder stands on its own), each run's log in <out>/logs/<space>_s<seed>.log.
``--include DIR`` joins an earlier comparison's runs (same
budget and evaluation settings, checked) to this one's table and plots, their evaluation folders copied into
<out>/eval so that <out> holds every run: seeds can be added in another sitting; with
``--seeds none`` nothing is trained and the tables and plots are rebuilt from the included folders alone.
comparison.json is rewritten after every finished run; the same command into the same <out> keeps those runs,
evaluates a run whose training had ended, and trains the rest.
comparison.md opens with one row per action space over its seeds (evaluation episodes of all seeds pooled, per-seed
success and env steps to 40 % training success), then one row per run.

Progress: one line per finished run with an ETA, and each child's own progress line every 30 s.
"""

from __future__ import annotations

import argparse

from realgap.envs.eval.compare.run import CompareRequest, compare_action_spaces
from realgap.envs.run.cli import parser, positive_float, positive_int, shared_flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__, shared_flags("num_envs", "episodes", "device", num_envs=64))
    p.add_argument("--spaces", default=None, help="comma-separated action spaces (default: all)")
    p.add_argument(
        "--seeds",
        default="0",
        help="comma-separated training seeds (each space trains once per seed); 'none' trains nothing and "
        "rebuilds the tables from --include",
    )
    p.add_argument("--max_iterations", type=positive_int, default=300, help="PPO iterations per run (the equal budget)")
    p.add_argument(
        "--max_minutes",
        type=positive_float,
        default=None,
        help="wall-clock budget per run (train.py --max_minutes); --max_iterations caps it",
    )
    p.add_argument("--eval_envs", type=positive_int, default=32, help="envs per evaluation batch")
    p.add_argument("--episode_s", type=positive_float, default=None, help="evaluation episode, s (default: task's)")
    p.add_argument(
        "--factors",
        default="object_mass_scale,command_delay_s,joint_friction_scale",
        help="robustness factors (scripts/evaluate.py --factors)",
    )
    p.add_argument("--values", action="append", default=[], help="FACTOR=V1,V2,... (scripts/evaluate.py --values)")
    p.add_argument("--jobs", type=positive_int, default=1, help="trainings at a time (one per core: 2 on a 2-core CPU)")
    p.add_argument("--out", default=None, help="output folder")
    p.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="DIR",
        help="an earlier comparison's output folder whose runs join the table and plots (same settings; "
        "e.g. another seed run in another sitting)",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    out, text = compare_action_spaces(CompareRequest(**vars(parse_args(argv))))
    print(text)
    print(f"[realgap] wrote {out}/comparison.csv, comparison.md and 4 plots")
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main, extra_errors=(RuntimeError,))
