"""Two exported balance policies on the hidden G1, free-floating, facing the same pushes: paired time up.

    realgap hidden_compare --policy runs/balance_g1/<identified>/realgap_export \\
        --against configs/policies/balance_g1 --hidden_seed 3 --episodes 64 --seed 0 --out runs/hidden/seed3.json

The robot is ``--robot hidden`` of ``realgap deploy`` (``envs/deploy/hidden_robot.py``): the MuJoCo
G1 whose drive parameters (delay, realized gains, friction, armature, torque limit) are drawn from ``--hidden_seed``
around the datasheet of the ``--against`` export (or ``--hidden_from``), with a free base in the start pose. Every
episode's push schedule (the balance task's: 0.2-0.4 m/s every 3-5 s, drawn from ``--seed``) is replayed for each
policy; an episode ends at ``--duration_s`` or at the task's fall (root below 0.45 m or tilted beyond 1 rad).
Prints each policy's mean time up and falls, and the paired difference (policy minus against) of time up with its
standard error; ``--zero_action`` adds the zero action (hold the stance) as a third arm. Writes one JSON (``--out``,
default runs/hidden_compare/seed<N>_<timestamp>.json): the settings, the hidden truth, the summaries, every episode
with its pushes. Bad input exits with status 2 and one message.
"""

from __future__ import annotations

import argparse

from realgap.envs.deploy.flags import add_protocol_flags
from realgap.envs.eval.hidden_compare import HiddenCompareRequest, hidden_compare
from realgap.envs.run.cli import nonnegative_int, output_file, parser, positive_float, shared_flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__, shared_flags("episodes", "seed", "policy", required=("policy",), episodes=64))
    p.add_argument("--against", required=True, help="export folder (or policy.onnx) it is compared with")
    p.add_argument(
        "--hidden_from",
        default=None,
        help="export whose datasheet the hidden truth is drawn around (default: --against)",
    )
    p.add_argument("--hidden_seed", type=nonnegative_int, default=0, help="seed of the hidden drive parameters")
    p.add_argument(
        "--hidden_drives",
        default="default",
        help="family the hidden drives are drawn from (default, worn: envs/deploy/hidden_robot.py DRIVE_FAMILIES)",
    )
    p.add_argument("--zero_action", action="store_true", help="also run the zero action (hold the stance)")
    p.add_argument(
        "--duration_s", type=positive_float, default=None, help="episode length, s (default: the protocol's)"
    )
    add_protocol_flags(p)
    p.add_argument(
        "--out",
        type=output_file(".json"),
        default=None,
        help="output JSON (default: runs/hidden_compare/seed<N>_<timestamp>.json)",
    )
    p.add_argument("--plot", default=None, help="also draw the fraction of episodes still standing against time (PNG)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    hidden_compare(HiddenCompareRequest(**vars(parse_args(argv))))  # prints each arm, each pair and what it wrote
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
