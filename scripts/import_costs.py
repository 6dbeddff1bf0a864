"""What each deferred import saves: the cold-import cost of every third-party name a deferred realgap import spares
and of the entry modules, and those imports checked against the rule of :mod:`realgap.envs.eval.bench.imports`.

    realgap import_costs                                # print the costs and the verdict
    realgap import_costs --out docs/results/import_costs.json   # and write the costs the layering test reads
"""

from __future__ import annotations

import argparse
from pathlib import Path

from realgap.envs.eval.bench.imports import import_report
from realgap.envs.run.cli import parser, positive_int

REPO = Path(__file__).resolve().parents[1]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__)
    p.add_argument("--repeats", type=positive_int, default=5, help="fresh interpreters per package (the median)")
    p.add_argument("--out", type=Path, default=None, help="write the measured costs to this JSON file")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print("\n".join(import_report(REPO, args.out, args.repeats)))
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
