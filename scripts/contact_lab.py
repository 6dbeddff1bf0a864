"""The contact drop lab: sweeps of MuJoCo contact parameters on a box drop and the passive G1, JSON + plots.

Usage: python scripts/contact_lab.py [--factors timeconst dampratio ...] [--out docs/results/contact]
       realgap contact_lab --engines   # MuJoCo C beside the training engine (Newton): engines.json,
                                                 # box, G1 foot and the passive whole G1
"""

from __future__ import annotations

from pathlib import Path

from realgap.envs.contact import lab
from realgap.envs.eval.contact_lab import ContactLabRequest, contact_lab
from realgap.envs.run.cli import parser


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--factors", nargs="+", default=sorted(lab.SWEEPS), choices=sorted(lab.SWEEPS))
    ap.add_argument("--g1", default="g1_ground", help="contact config of the G1 feet (configs/contact/<name>.yaml)")
    ap.add_argument("--out", type=Path, default=Path("docs/results/contact"))
    ap.add_argument("--engines", action="store_true", help="compare MuJoCo C and Newton (MuJoCo-Warp) instead")
    print("\n".join(contact_lab(ContactLabRequest(**vars(ap.parse_args(argv))))))
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
