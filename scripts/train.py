"""Train a realgap task with PPO (rsl-rl-lib through isaaclab_rl).

    python scripts/train.py --task Realgap-Balance-G1-v0
    python scripts/train.py --task Realgap-Balance-G1-v0 --num_envs 4096 --device cuda
    python scripts/train.py --num_procs 2                 # CPU: two processes, half the envs each, both cores busy
    python scripts/train.py --resume runs/balance_g1/2026-11-29_20-00-00
    python scripts/train.py --dr_profile nominal      # domain randomization from configs/dr/nominal.yaml
    python scripts/train.py --set agent.algorithm.num_learning_epochs=8 env.rewards.fall.weight=-50

The default device is CUDA when torch sees one, else the CPU. Runs land in runs/<experiment>/<timestamp>/ with
checkpoints, TensorBoard logs (tensorboard --logdir runs), progress.csv and the resolved configs in params/
(the resolved DR profile in params/dr_profile.yaml). The default profile "none" trains the task as defined.
"""

from __future__ import annotations

import argparse
import sys


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", default="Realgap-Balance-G1-Crouch-v0", help="registered task id")  # tasks.DEFAULT_TASK
    p.add_argument("--num_envs", type=int, default=None, help="parallel envs in total (default: the task's)")
    p.add_argument("--device", default=None, help="cpu | cuda | cuda:N (default: cuda if available, else cpu)")
    p.add_argument("--seed", type=int, default=None, help="seed for env, policy and PPO (default: the agent cfg's)")
    p.add_argument("--max_iterations", type=int, default=None, help="PPO iterations in total (default: agent cfg's)")
    p.add_argument(
        "--max_minutes",
        type=float,
        default=None,
        help="wall-clock budget: stop (with a checkpoint) after the iteration that uses it up",
    )
    p.add_argument("--resume", default=None, help="run folder to continue (its latest model_<it>.pt)")
    p.add_argument("--dr_profile", default="none", help="DR profile: configs/dr/<NAME>.yaml or a YAML PATH")
    p.add_argument("--rates", default=None, help="rate profile: configs/rates/<NAME>.yaml or a YAML PATH")
    p.add_argument("--save_interval", type=int, default=None, help="checkpoint every N iterations (default: cfg's)")
    p.add_argument("--run_name", default="", help="suffix of the run folder name")
    p.add_argument("--log_root", default="runs", help="folder holding all runs")
    p.add_argument("--num_procs", type=int, default=1, help="CPU processes sharing the envs (torchrun, gloo)")
    p.add_argument(
        "--torch_threads",
        type=int,
        default=None,
        help="torch CPU threads per process (default on the CPU: 1; the physics runs on one core)",
    )
    p.add_argument(
        "--set",
        dest="overrides",
        nargs="+",
        action="extend",
        default=[],
        metavar="KEY=VALUE",
        help="config overrides, env.PATH=VALUE or agent.PATH=VALUE (e.g. agent.algorithm.num_learning_epochs=8); "
        "recorded in params/run.json and kept on --resume",
    )
    p.add_argument("--run_dir", default=None, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    from realgap.envs.run.overrides import parse_override
    from realgap.envs.run.training import (
        check_budget,
        envs_per_process,
        rank,
        relaunch_with_torchrun,
        resume_record,
        resumed_seed,
        train,
        world_size,
    )
    from realgap.tasks import check_task

    check_budget(args.max_minutes)
    for item in args.overrides:
        parse_override(item)  # malformed keys fail here; missing fields once the configs are built
    if args.num_procs < 1:
        raise ValueError(f"--num_procs must be >= 1, got {args.num_procs}")
    if args.num_procs > 1 and world_size() == 1:
        check_task(args.task)  # cheap checks before starting the processes
        if args.resume:
            resumed_seed(args.seed, resume_record(args.resume)[1])
        if args.num_envs is not None:
            envs_per_process(args.num_envs, args.num_procs)
        return relaunch_with_torchrun(__file__, argv, args.num_procs)
    run_dir = train(args)
    if rank() == 0:
        print(f"[realgap] done: {run_dir}")
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli
    from realgap.envs.run.run_dir import CheckpointError

    run_cli(main, extra_errors=(CheckpointError,))
