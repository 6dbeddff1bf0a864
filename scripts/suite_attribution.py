"""Which group of errors makes a suite family fall: one table from suite runs with error groups restored.

    python scripts/suite_attribution.py --root docs/results/transfer/worn_attribution

``--root`` holds one ``scripts/evaluate_suite.py --out`` folder per policy and group, named ``<policy>_<group>``:
``<policy>_none`` the family as drawn, ``<policy>_drives`` etc. run with ``--restore drives`` (the groups:
``envs/eval/suite/draw.py`` ``GROUPS``). Writes ``attribution.json`` and ``attribution.md`` into the root: per group
the survival pooled over the policies (Wilson 95 %) and the per-episode difference of time up against ``none``. Bad
input exits with status 2 and one message.
"""

from __future__ import annotations

import argparse

from realgap.envs.run.cli import parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__)
    p.add_argument("--root", required=True, help="folder of <policy>_<group> suite runs")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)  # before the suite's modules: --help loads no simulator
    from realgap.envs.eval.suite.attribution import write_attribution

    out = write_attribution(args.root)
    print(f"[realgap] wrote {out} and {out.with_suffix('.md').name}")
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
