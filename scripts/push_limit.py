"""Single-push limit of a balance policy: the largest push it survives in at least half the trials.

    realgap push_limit --policy configs/policies/balance_g1 --zero_action --episodes 64
    realgap push_limit --policy configs/policies/balance_g1 --values 0.3,0.4,0.5 --engines mujoco

Each episode: stand for ``--push_at_s`` (1 s), one push of the swept magnitude in a random heading, then
``--recover_s`` (3 s) to stay up (pelvis above 0.45 m, tilt below 1 rad). Isaac Lab runs the task's Play variant (the
task's pushes replaced by that single push, per-env magnitudes in one batch); MuJoCo runs the export through the
torch-free deploy runtime on the MJCF robot. The zero action (hold the stance with the PD servos) uses the same
metadata. Prints survival per magnitude with its 95 % Wilson interval and the limit (the largest swept magnitude
survived in >= 50 % of the episodes); writes JSON (default runs/push_limit/<export name>.json).
"""

from __future__ import annotations

import argparse

from realgap.envs.eval.push.limit import DEFAULT_VALUES
from realgap.envs.run.cli import nonnegative_float, output_file, parser, positive_float, shared_flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(
        __doc__, shared_flags("episodes", "num_envs", "seed", "policy", required=("policy",), episodes=64, num_envs=128)
    )
    p.add_argument("--zero_action", action="store_true", help="also the zero action (hold the stance)")
    p.add_argument("--values", default=DEFAULT_VALUES, help="push magnitudes, m/s (comma-separated)")
    p.add_argument("--engines", default="isaac,mujoco", help="isaac, mujoco or both")
    p.add_argument("--push_at_s", type=nonnegative_float, default=1.0, help="time of the push after the reset, s")
    p.add_argument("--recover_s", type=positive_float, default=3.0, help="time after the push to stay up, s")
    p.add_argument("--out", type=output_file(".json"), default=None, help="output JSON")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)  # first: --help and a refused flag load no torch
    from realgap.envs.eval.push.limit_run import PushLimitRequest, limit_lines, push_limit

    report, out = push_limit(PushLimitRequest(**vars(args)))
    print("\n".join([*limit_lines(report), f"[realgap] wrote {out}"]))
    return 0


if __name__ == "__main__":
    from realgap.envs.export.metadata import ExportError
    from realgap.envs.run.cli import run_cli

    run_cli(main, extra_errors=(ExportError,))
