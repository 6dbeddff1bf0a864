"""The contact drop lab: sweeps of MuJoCo contact parameters on a box drop and the passive G1, JSON + plots.

Usage: python scripts/contact_lab.py [--factors timeconst dampratio ...] [--out docs/results/contact]
       realgap contact_lab --engines   # MuJoCo C beside the training engine (Newton): engines.json,
                                                 # box, G1 foot and the passive whole G1
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from realgap.envs.contact import engines, engines_g1, lab
from realgap.envs.contact.params import load


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--factors", nargs="+", default=sorted(lab.SWEEPS), choices=sorted(lab.SWEEPS))
    ap.add_argument("--g1", default="g1_ground", help="contact config of the G1 feet (configs/contact/<name>.yaml)")
    ap.add_argument("--out", type=Path, default=Path("docs/results/contact"))
    ap.add_argument("--engines", action="store_true", help="compare MuJoCo C and Newton (MuJoCo-Warp) instead")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.engines:
        box = replace(lab.BASE_DROP, duration=0.6)
        feet = next(iter(load(args.g1).values()))
        rows = engines.side_by_side(lab.BASE, box, feet)
        g1 = [engines_g1.compare_g1(replace(feet, timestep=dt)) for dt in (0.005, 0.001)]
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
        return
    feet = next(iter(load(args.g1).values()))
    result = {f: lab.sweep(f) for f in args.factors}
    result["g1_passive"] = lab.g1_drop(feet)
    result["g1_standing"] = lab.g1_standing(feet)
    result["cone"], result["ringing"] = lab.cone_sweep(), lab.ringing()
    (args.out / "drop_lab.json").write_text(json.dumps(result, indent=1) + "\n")
    for f in ("timeconst", "dampratio"):
        if f in args.factors:
            lab.plot(args.out / f"drop_{f}.png", f)
    print("\n".join(lab.summary_lines(result)))


if __name__ == "__main__":
    main()
