"""Benchmark: env throughput against bare stepping of the same articulation, and realgap's explicit actuator chain
against Isaac Lab's implicit PD, all measured in one run.

    python scripts/benchmark.py                          # balance task, 256 envs, 100 policy steps
    python scripts/benchmark.py --num_envs 64 --steps 50 --json bench.json

Prints the env's policy steps/s, the bare scene's physics steps/s for the same number of physics steps, and the
ratio (env physics-steps/s ÷ bare physics-steps/s: 1.0 means the env adds nothing over stepping the physics).
Figures are machine- and load-dependent: run on an otherwise idle machine and compare ratios from one run.
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", default="Realgap-Balance-G1-v0")
    p.add_argument("--num_envs", type=int, default=256)
    p.add_argument("--steps", type=int, default=100, help="policy steps timed (after warm-up)")
    p.add_argument("--json", default=None, help="write the figures to this JSON file")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import torch

    from realgap.envs.bench import bare_physics_steps, env_policy_steps
    from realgap.tasks import check_task

    check_task(args.task)
    env = env_policy_steps(args.task, args.num_envs, args.steps)
    bare = bare_physics_steps(args.task, args.num_envs, env["physics_steps"])
    implicit = env_policy_steps(args.task, args.num_envs, args.steps, actuators="implicit")
    ratio = env["physics_steps_per_s"] / bare["physics_steps_per_s"]
    chain_ratio = env["policy_steps_per_s"] / implicit["policy_steps_per_s"]
    result = {
        "task": args.task,
        "machine": {"cpu": platform.processor() or platform.machine(), "torch_threads": torch.get_num_threads()},
        "env": env,
        "bare": bare,
        "env_over_bare": ratio,
        "env_implicit_pd": implicit,
        "explicit_chain_over_implicit": chain_ratio,
    }
    print(f"\n{'benchmark':<34} {'envs':>6} {'policy steps/s':>15} {'physics steps/s':>16}")
    print(f"{'env (' + args.task + ')':<34} {args.num_envs:>6} {env['policy_steps_per_s']:>15.0f} "
          f"{env['physics_steps_per_s']:>16.0f}")  # fmt: skip
    print(f"{'bare scene stepping':<34} {args.num_envs:>6} {'':>15} {bare['physics_steps_per_s']:>16.0f}")
    print(f"{'env, Isaac Lab implicit PD':<34} {args.num_envs:>6} {implicit['policy_steps_per_s']:>15.0f} "
          f"{implicit['physics_steps_per_s']:>16.0f}")  # fmt: skip
    print(f"env / bare (same physics steps): {ratio:.3f}  -> env overhead {100 * (1 / ratio - 1):+.1f} %")
    print(f"explicit datasheet chain (with delay) / implicit PD: {chain_ratio:.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    from realgap.envs.cli import run_cli

    run_cli(main)
