"""Two evaluations of one held-out suite compared episode by episode: the same robot and the same pushes or objects.

    python scripts/suite_paired.py --a docs/results/transfer/before/balance_g1 \\
        --b docs/results/transfer/before/balance_zero_action --out /tmp/paired.json

``--a`` and ``--b`` are ``--out`` folders of ``scripts/evaluate_suite.py`` runs on the same suite with the same
``--robots`` and ``--episodes``. Per family and over the suite: the mean of the per-episode differences of time (time
up for balance), a minus b, with its standard error, and the episodes only one of them won. Writes one JSON
(``--out``). Bad input exits with status 2 and one message.
"""

from __future__ import annotations

import argparse

from realgap.envs.run.cli import parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__)
    p.add_argument("--a", required=True, help="evaluation folder (its episodes.csv)")
    p.add_argument("--b", required=True, help="evaluation folder it is compared with")
    p.add_argument("--out", required=True, help="output JSON")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    from realgap.envs.eval.suite.report import PairedRequest, paired_report

    paired_report(PairedRequest(**vars(parse_args(argv))))  # prints each group and what it wrote
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
