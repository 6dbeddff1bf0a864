"""Benchmarks, every figure measured in one run and printed with its baseline and ratio (never asserted in tests).

    realgap benchmark                                  # all sections, 256 envs
    realgap benchmark --sections env --num_envs 64 --steps 50 --json bench.json

Sections:
  env     policy steps/s of each task's env vs bare stepping of the same scene for the same physics steps (ratio:
          1.0 = the env adds nothing; both hold the default pose unless --action_std is given, so the solver does
          the same work); and the balance env with realgap's explicit actuator chain vs Isaac Lab's implicit PD with
          the same datasheet numbers.
  ppo     PPO end to end through scripts/train.py (collection and learning separately): 1 process with n envs, 2
          processes sharing n envs, and 2 processes with n envs each (the single process's load on each core);
          --ppo_layouts picks some of them.
  mujoco  plain MuJoCo C mj_step on the same G1 description (one thread: the CPU limit), standing from its default
          pose under datasheet PD (the reference; restarted if it falls) and, labelled, with zero torque (it collapses
          and lies on the ground: more contacts, slower), and the torch-free deploy runtime (sim2sim) on it.
--device cuda runs the env and ppo sections on the GPU (2-process PPO needs 2 GPUs: skipped, and said so, with one);
the mujoco section is MuJoCo C on one CPU thread whatever the device.
Figures depend on the machine and its load: run on an otherwise idle machine and compare ratios within one run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from realgap.envs.eval.bench.report import PPO_LAYOUTS, SECTIONS, TASKS, BenchRequest, run_benchmark
from realgap.envs.run.cli import nonnegative_float, parser, positive_int, shared_flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__, shared_flags("num_envs", "device", "deterministic", num_envs=256))
    p.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated: env, ppo, mujoco")
    p.add_argument("--tasks", default=",".join(TASKS), help="tasks of the env section")
    p.add_argument("--steps", type=positive_int, default=100, help="policy steps timed per measurement (after warm-up)")
    p.add_argument(
        "--action_std",
        type=nonnegative_float,
        default=0.0,
        help="env section: actions N(0, STD); 0 holds the pose, as the bare stepping does",
    )
    p.add_argument("--ppo_iterations", type=positive_int, default=6, help="PPO iterations per run (first not timed)")
    p.add_argument(
        "--ppo_layouts",
        default=",".join(PPO_LAYOUTS),
        help="PPO runs of the ppo section: one_process (n envs), two_processes (sharing n envs), "
        "two_processes_double_envs (n envs each)",
    )
    p.add_argument("--json", default=None, help="write every figure to this JSON file")
    args = p.parse_args(argv)
    args.ppo_layouts = args.ppo_layouts.split(",")
    if unknown := [name for name in args.ppo_layouts if name not in PPO_LAYOUTS]:
        p.error(f"unknown --ppo_layouts {unknown}; known: {', '.join(PPO_LAYOUTS)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    result = run_benchmark(BenchRequest(**vars(args)))  # prints the table as it fills
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
