"""The held-out robot suite: an exported policy (or the zero action) on every robot of a suite, in MuJoCo C through
the deploy runtime.

    python scripts/evaluate_suite.py --policy configs/policies/balance_g1 --suite configs/suites/g1_v1.yaml \\
        --episodes 4 --out runs/suite/balance_g1
    python scripts/evaluate_suite.py --policy configs/policies/grasp_franka \\
        --suite configs/suites/panda_grasp_v1.yaml --episodes 4 --zero_action --out runs/suite/grasp_zero

A suite (``configs/suites/*.yaml``, ``envs/eval/suite/schema.py``) holds families of robots drawn from fixed seeds:
drives (realised gains, friction, armature, torque limit, a delay per joint, a bridge that holds its PD torque),
bodies and contacts, sensor noise and bias (G1), object, pads, table and object-pose noise (Panda grasp). Each robot
runs ``--episodes`` episodes (balance: the suite's pushes, survival = no fall; grasp: the export's success test).
Writes <out>/summary.json (per family and over the suite: rate with its Wilson 95 % interval, the mean over robots
with its t interval, mean time; every robot's drawn parameters; the command), summary.md, episodes.csv and plots.
``--robots K`` runs the first K robots of each family. Bad input exits with status 2 and one message.
"""

from __future__ import annotations

import argparse

from realgap.envs.eval.suite.run import SuiteRequest, evaluate_suite
from realgap.envs.run.cli import parser, positive_int, shared_flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__, shared_flags("episodes", "policy", required=("policy",), episodes=4))
    p.add_argument("--suite", required=True, help="suite file (configs/suites/*.yaml)")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument(
        "--zero_action",
        action="store_true",
        help="run the task's zero action instead of the policy (the export gives the robot and the action layout)",
    )
    p.add_argument("--robots", type=positive_int, default=None, help="the first N robots of each family (default all)")
    p.add_argument("--families", nargs="+", default=None, help="only these families (default all)")
    p.add_argument(
        "--restore",
        nargs="+",
        default=(),
        metavar="GROUP",
        help="give every robot outside --restore_from these error groups of that family's robot of the same index "
        "(drives, delay, hold, body, contact, sensors): the part of a family's gap they cause",
    )
    p.add_argument("--restore_from", default="typical", help="the family lending the groups (default typical)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    evaluate_suite(SuiteRequest(**vars(parse_args(argv))))  # prints each robot, each family and what it wrote
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
