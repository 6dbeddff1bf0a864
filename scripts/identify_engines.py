"""Identification side by side: realgap's inverse-dynamics fit and MuJoCo's ``mujoco.sysid`` on the same hidden-robot
logs, against the hidden truth (the identification docs page's engine table).

    realgap identify_engines --out docs/results/identify_engines

Per drive family (``default``: the hidden robot of the identification tests; ``worn``: far from its datasheet), the
hidden G1 of seed ``--seed`` runs the excitation of ``--joints`` hanging, and both engines fit armature, Coulomb and
viscous friction from its log. Writes ``report.json`` and ``report.md`` (truth, estimates, relative errors, fit times).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

JOINTS = ("left_knee_joint", "left_shoulder_pitch_joint", "right_wrist_pitch_joint")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from realgap.envs.run.cli import output_dir, parser, positive_int, shared_flags

    p = parser(__doc__, shared_flags("seed", seed=3))
    p.add_argument("--out", type=output_dir, required=True, help="output folder (report.json, report.md)")
    p.add_argument("--joints", nargs="+", default=list(JOINTS), help="joints to excite and identify")
    p.add_argument("--drives", nargs="+", default=["default", "worn"], help="hidden drive families")
    p.add_argument("--max_iters", type=positive_int, default=30, help="mujoco.sysid optimiser iterations")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.max_iters < 1:
        raise ValueError("--max_iters must be >= 1")
    from realgap.envs.identify.engines import markdown, run_family

    out = Path(args.out)
    report = {"seed": args.seed, "joints": args.joints, "families": {}}
    for drives in args.drives:
        report["families"][drives] = run_family(args.seed, args.joints, drives, args.max_iters)
        print(f"[realgap] {drives}: fitted")
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=2))
    (out / "report.md").write_text(markdown(report))
    print(markdown(report))
    print(f"[realgap] wrote {out}/report.json and report.md")
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
