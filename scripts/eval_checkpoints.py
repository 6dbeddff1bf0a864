"""Evaluate every checkpoint of a run under the task's evaluation variant: the learning curve in task metrics.

    realgap eval_checkpoints --run runs/balance_g1/<timestamp> --episodes 64
    realgap eval_checkpoints --run runs/balance_g1/<timestamp> --every 50 --target_survival 0.95

For each model_<it>.pt (every ``--every`` iterations), runs ``--episodes`` episodes of the Play variant (for the
balance task: the default pushes at full magnitude from the first second, no curriculum, no observation noise) and
writes <run>/eval_checkpoints.csv with the iteration, the training wall-clock time up to that checkpoint (sum of
collect and learn times in progress.csv), the env steps up to it and the metrics; its first row (iteration -1) is the
zero-action baseline under the same seed, pushes and resets. Also prints the first checkpoint reaching
``--target_survival`` (time-to-balance: minutes and env steps) when one does.
"""

from __future__ import annotations

import argparse

from realgap.envs.deploy.flags import add_protocol_flags
from realgap.envs.eval.checkpoints import CheckpointsRequest, eval_checkpoints, time_to_balance_line
from realgap.envs.run.cli import nonnegative_float, parser, positive_int, shared_flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__, shared_flags("episodes", "num_envs", "device", "seed", episodes=64, num_envs=64))
    p.add_argument("--run", required=True, help="run folder")
    p.add_argument("--every", type=positive_int, default=1, help="evaluate iterations that are multiples of N")
    add_protocol_flags(p, fall=False, interval=False)
    p.add_argument("--target_survival", type=nonnegative_float, default=0.95)
    p.add_argument("--no_baseline", action="store_true", help="skip the zero-action baseline row")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rows, out = eval_checkpoints(CheckpointsRequest(**vars(args)))
    print(time_to_balance_line(rows, args.target_survival))
    print(f"[realgap] wrote {out}")
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli
    from realgap.envs.run.run_dir import CheckpointError

    run_cli(main, extra_errors=(CheckpointError,))
