"""Train a realgap task with PPO (rsl-rl-lib through isaaclab_rl).

    realgap train --task Realgap-Balance-G1-v0
    realgap train --task Realgap-Balance-G1-v0 --num_envs 4096 --device cuda
    realgap train --num_procs 2                 # CPU: two processes, half the envs each, both cores busy
    realgap train --resume runs/balance_g1/2026-11-29_20-00-00
    realgap train --dr_profile nominal      # domain randomization from configs/dr/nominal.yaml
    realgap train --set agent.algorithm.num_learning_epochs=8 env.rewards.fall.weight=-50

The default device is CUDA when torch sees one, else the CPU. Runs land in runs/<experiment>/<timestamp>/ with
checkpoints, TensorBoard logs (tensorboard --logdir runs), progress.csv and the resolved configs in params/
(the resolved DR profile in params/dr_profile.yaml). The default profile "none" trains the task as defined.
"""

from __future__ import annotations

import argparse
import sys

from realgap.envs.run.cli import parser, positive_float, positive_int, shared_flags
from realgap.envs.run.training import TrainRequest, rank, start


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__, shared_flags("task", "num_envs", "device", "seed", "deterministic", num_envs=None, seed=None))
    p.add_argument("--max_iterations", type=positive_int, default=None, help="PPO iterations in total (default: cfg's)")
    p.add_argument(
        "--max_minutes",
        type=positive_float,
        default=None,
        help="wall-clock budget: stop (with a checkpoint) after the iteration that uses it up",
    )
    p.add_argument(
        "--resume", default=None, help="run folder to continue (its latest model_<it>.pt) or a model_<it>.pt"
    )
    p.add_argument(
        "--dr_profile", default=None, help="DR profile: configs/dr/<NAME>.yaml or a YAML PATH (default: none)"
    )
    p.add_argument("--rates", default=None, help="rate profile: configs/rates/<NAME>.yaml or a YAML PATH")
    p.add_argument(
        "--save_interval", type=positive_int, default=None, help="checkpoint every N iterations (default: cfg's)"
    )
    p.add_argument("--run_name", default="", help="suffix of the run folder name")
    p.add_argument("--log_root", default="runs", help="folder holding all runs")
    p.add_argument("--num_procs", type=positive_int, default=None, help="CPU processes sharing the envs (default: 1)")
    p.add_argument(
        "--torch_threads",
        type=positive_int,
        default=None,
        help="torch CPU threads per process (default on the CPU: 1; physics runs on one core)",
    )
    p.add_argument(
        "--set",
        dest="overrides",
        nargs="+",
        action="extend",
        default=[],
        metavar="KEY=VALUE",
        help="config overrides, env.PATH=VALUE or agent.PATH=VALUE (e.g. agent.algorithm.gamma=0.98); "
        "recorded in params/run.json and kept on --resume",
    )
    p.add_argument("--run_dir", default=None, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv

    run_dir = start(TrainRequest(**vars(parse_args(argv))), argv, __file__)
    if run_dir is not None and rank() == 0:
        print(f"[realgap] done: {run_dir}")
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli
    from realgap.envs.run.run_dir import CheckpointError

    run_cli(main, extra_errors=(CheckpointError,))
