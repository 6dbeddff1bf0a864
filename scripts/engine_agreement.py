"""The training engine against MuJoCo C: the box–box repro for upstream and the canonical scenes' agreement.

    python scripts/engine_agreement.py --out docs/results/engine_agreement.json

Prints the offset-CoM box table (each engine's default box–box path, then the exact routine realgap uses), the
process-wide leak (run in a child process of its own), a simple body's inverse weights in both engines and each
canonical scene's figures in both engines.
"""

import argparse
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="write every row as JSON here")
    args = parser.parse_args()
    from realgap.envs.sim2sim.engine_agreement import agreement_report

    agreement_report(args.out)  # prints every table as it is measured


if __name__ == "__main__":
    main()
