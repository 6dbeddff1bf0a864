"""Which of the task's pushes knock a balance policy over: falls by push heading (in the robot's frame) and magnitude.

    realgap push_headings --policy configs/policies/balance_g1
    realgap push_headings --policy configs/policies/balance_g1 --zero_action --steps 1000

Runs the task's Play variant as it is evaluated (pushes of 0.2-0.4 m/s in a random heading every 3-5 s) for
``--steps`` policy steps in ``--num_envs`` envs, logs every push and whether a fall followed it before the next push,
and prints the fall rate per direction (forward / left / backward / right quadrant of the push in the robot's frame)
and magnitude bin with 95 % Wilson intervals, then where the policy holds its capture point standing (3 s without
pushes: ξ's offset ahead of the ankles along the heading); writes JSON (default runs/push_headings/<name>.json).
"""

from __future__ import annotations

import argparse

from realgap.envs.eval.push.headings_run import PushHeadingsRequest, push_headings, report_lines
from realgap.envs.run.cli import finite_float, output_file, parser, positive_int, shared_flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__, shared_flags("num_envs", "seed", "policy", required=("policy",), num_envs=128))
    p.add_argument("--zero_action", action="store_true", help="log the zero action (hold the stance) instead")
    p.add_argument("--steps", type=positive_int, default=2000, help="policy steps (50 Hz) per env")
    p.add_argument("--edges", default="0.2,0.3,0.35,0.4", help="magnitude bin edges, m/s (comma-separated)")
    p.add_argument(
        "--ankle_pitch_bias",
        type=finite_float,
        default=0.0,
        help="a what-if, not a policy: add this many action units to both ankle-pitch actions (after the "
        "clip; negative leans the G1 forward), to see how the stance trades one push side for another",
    )
    p.add_argument(
        "--hip_reflex",
        type=finite_float,
        default=0.0,
        help="a what-if, not a policy: after every sagittal push >= 0.25 m/s add this many action units to both "
        "hip-pitch actions for --reflex_steps steps, signed with the push "
        "(a scripted hip strategy that knows the push)",
    )
    p.add_argument("--reflex_steps", type=positive_int, default=10, help="policy steps of the hip reflex")
    p.add_argument(
        "--crouch",
        type=finite_float,
        default=0.0,
        help="a what-if, not a policy: this many rad more knee flexion, half of it less on the hip and ankle pitch, "
        "as constant offsets (a lower stance)",
    )
    p.add_argument("--out", type=output_file(".json"), default=None, help="output JSON")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    report, out = push_headings(PushHeadingsRequest(**vars(parse_args(argv))))
    print("\n".join(report_lines(report)))
    print(f"[realgap] wrote {out}")
    return 0


if __name__ == "__main__":
    from realgap.envs.export.metadata import ExportError
    from realgap.envs.run.cli import run_cli

    run_cli(main, extra_errors=(ExportError,))
