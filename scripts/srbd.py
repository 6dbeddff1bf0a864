"""Single rigid body dynamics of the G1 against the full model: writes docs/results/srbd/ (validation.json, plots).

    realgap srbd --policy configs/policies/balance_g1 --out docs/results/srbd

The export balances the MuJoCo G1 through the deploy runtime for ``--duration_s`` in each scenario (no push; a
0.4 m/s push forward at 2 s; the same sideways); every physics step the single body gets the measured contact forces
(:mod:`realgap.envs.srbd.validate` says what is compared and why).

    realgap srbd --out docs/results/srbd/lab --isaac 16 --num_envs 112

``--isaac`` instead runs the three-way balance evaluation (SRBD controller, policy, zero action) in the Isaac Lab
task's robustness protocol (:func:`realgap.envs.eval.srbd.balance.lab_evaluate`): <out>/report.json and plots.
"""

from __future__ import annotations

import argparse
import sys

from realgap.envs.eval.srbd.run import SrbdRequest, run_srbd
from realgap.envs.run.cli import output_dir, parser, positive_float, shared_flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__, shared_flags("policy", policy="configs/policies/balance_g1"))
    p.add_argument("--out", type=output_dir, required=True, help="output folder (validation.json, plots)")
    p.add_argument("--duration_s", type=positive_float, default=6.0, help="episode length per scenario, s")
    p.add_argument("--horizon_s", type=positive_float, default=0.2, help="CoM prediction horizon, s")
    p.add_argument(
        "--evaluate",
        type=int,
        default=0,
        metavar="EPISODES",
        help="also run the three-way balance evaluation (policy, zero action, SRBD controller) over this "
        "many 20 s pushed episodes on the MuJoCo G1 (evaluation.json)",
    )
    p.add_argument(
        "--push_limit",
        type=int,
        default=0,
        metavar="EPISODES",
        help="also sweep the SRBD controller's single-push survival at 0.3-0.7 m/s over this many headings "
        "(push_limit.json; the protocol of scripts/push_limit.py on MuJoCo)",
    )
    p.add_argument(
        "--isaac",
        type=int,
        default=0,
        metavar="EPISODES",
        help="only the Isaac Lab three-way evaluation, this many episodes per point and arm",
    )
    p.add_argument("--num_envs", type=int, default=112, help="Isaac Lab envs per batch (--isaac)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    command = " ".join(["python scripts/srbd.py", *(sys.argv[1:] if argv is None else argv)])
    run_srbd(SrbdRequest(**vars(parse_args(argv))), command)  # prints each result as it comes
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
