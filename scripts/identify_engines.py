"""Identification side by side: realgap's inverse-dynamics fit and MuJoCo's ``mujoco.sysid`` on the same hidden-robot
logs, against the hidden truth (the identification docs page's engine table).

    realgap identify_engines --out docs/results/identify_engines

Per drive family (``default``: the hidden robot of the identification tests; ``worn``: far from its datasheet), the
hidden G1 of seed ``--seed`` runs the excitation of ``--joints`` hanging, and both engines fit armature, Coulomb and
viscous friction from its log. Writes ``report.json`` and ``report.md`` (truth, estimates, relative errors, fit times).
"""

from __future__ import annotations

import argparse

from realgap.envs.identify.engines import JOINTS, IdentifyEnginesRequest, identify_engines, markdown
from realgap.envs.run.cli import output_dir, parser, positive_int, shared_flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__, shared_flags("seed", seed=3))
    p.add_argument("--out", type=output_dir, required=True, help="output folder (report.json, report.md)")
    p.add_argument("--joints", nargs="+", default=list(JOINTS), help="joints to excite and identify")
    p.add_argument("--drives", nargs="+", default=["default", "worn"], help="hidden drive families")
    p.add_argument("--max_iters", type=positive_int, default=30, help="mujoco.sysid optimiser iterations")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    report, out = identify_engines(IdentifyEnginesRequest(**vars(parse_args(argv))))  # prints each family fitted
    print(markdown(report))
    print(f"[realgap] wrote {out}/report.json and report.md")
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
