"""The contact drop lab: sweeps of MuJoCo contact parameters on a box drop and the passive G1, JSON + plots.

Usage: python scripts/contact_lab.py [--factors timeconst dampratio ...] [--out docs/results/contact]
       realgap contact_lab --engines   # MuJoCo C beside the training engine (Newton): engines.json,
                                                 # box, G1 foot and the passive whole G1
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from realgap.envs.contact import engines, engines_g1, lab
from realgap.envs.contact.params import load

ENGINE_STEPS = (0.005, 0.001)
"""Physics steps of the passive-G1 engine comparison, s."""


def main(argv: list[str] | None = None) -> int:
    from realgap.envs.run.cli import parser
    from realgap.envs.run.paths import check_output_dir

    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--factors", nargs="+", default=sorted(lab.SWEEPS), choices=sorted(lab.SWEEPS))
    ap.add_argument("--g1", default="g1_ground", help="contact config of the G1 feet (configs/contact/<name>.yaml)")
    ap.add_argument("--out", type=Path, default=Path("docs/results/contact"))
    ap.add_argument("--engines", action="store_true", help="compare MuJoCo C and Newton (MuJoCo-Warp) instead")
    args = ap.parse_args(argv)
    feet = next(iter(load(args.g1).values()))  # every input checked before the output folder exists
    if args.engines:
        for dt in ENGINE_STEPS:  # the feet at each compared step: a time constant under two steps is refused here
            try:
                replace(feet, timestep=dt)
            except ValueError as err:
                raise ValueError(
                    f"--g1 {args.g1} at the {dt * 1e3:g} ms step the engine comparison runs: {err}"
                ) from None
    check_output_dir(args.out, "--out")
    args.out.mkdir(parents=True, exist_ok=True)
    if args.engines:
        box = replace(lab.BASE_DROP, duration=0.6)
        rows = engines.side_by_side(lab.BASE, box, feet)
        g1 = [engines_g1.compare_g1(replace(feet, timestep=dt)) for dt in ENGINE_STEPS]
        out = {"tolerances": engines.TOLERANCES, "rows": rows}
        out["g1_passive"] = {"tolerances": engines_g1.G1_TOLERANCES, "early_s": engines_g1.EARLY_S, "rows": g1}
        (args.out / "engines.json").write_text(json.dumps(out, indent=1))
        for r in rows + g1:
            mj, nw = r["mujoco_c"], r["newton"]
            print(
                f"{r['case']:>16}: pen_max {mj['max_penetration'] * 1e3:.4f} / {nw['max_penetration'] * 1e3:.4f} mm, "
                f"F_peak {mj['peak_force']:.2f} / {nw['peak_force']:.2f} N, "
                f"disagree: {[k for k, ok in r['agree'].items() if not ok]}"
            )
        return 0
    result = {f: lab.sweep(f) for f in args.factors}
    result["g1_passive"] = lab.g1_drop(feet)
    result["g1_standing"] = lab.g1_standing(feet)
    result["cone"], result["ringing"] = lab.cone_sweep(), lab.ringing()
    (args.out / "drop_lab.json").write_text(json.dumps(result, indent=1) + "\n")
    for f in ("timeconst", "dampratio"):
        if f in args.factors:
            lab.plot(args.out / f"drop_{f}.png", f)
    print("\n".join(lab.summary_lines(result)))
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
