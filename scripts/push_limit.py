"""Single-push limit of a balance policy: the largest push it survives in at least half the trials.

    realgap push_limit --policy configs/policies/balance_g1 --zero_action --episodes 64
    realgap push_limit --policy configs/policies/balance_g1 --values 0.3,0.4,0.5 --engines mujoco

Each episode: stand for ``--push_at_s`` (1 s), one push of the swept magnitude in a random heading, then
``--recover_s`` (3 s) to stay up (pelvis above 0.45 m, tilt below 1 rad). Isaac Lab runs the task's Play variant (the
task's pushes replaced by that single push, per-env magnitudes in one batch); MuJoCo runs the export through the
torch-free deploy runtime on the MJCF robot. The zero action (hold the stance with the PD servos) uses the same
metadata. Prints survival per magnitude with its 95 % Wilson interval and the limit (the largest swept magnitude
survived in >= 50 % of the episodes); writes JSON (default runs/push_limit/<export name>.json).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

DEFAULT_VALUES = "0.2,0.25,0.3,0.35,0.4,0.45,0.5,0.55,0.6,0.65,0.7,0.8"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from realgap.envs.run.cli import nonnegative_float, output_file, parser, positive_float, shared_flags

    p = parser(
        __doc__, shared_flags("episodes", "num_envs", "seed", "policy", required=("policy",), episodes=64, num_envs=128)
    )
    p.add_argument("--zero_action", action="store_true", help="also the zero action (hold the stance)")
    p.add_argument("--values", default=DEFAULT_VALUES, help="push magnitudes, m/s (comma-separated)")
    p.add_argument("--engines", default="isaac,mujoco", help="isaac, mujoco or both")
    p.add_argument("--push_at_s", type=nonnegative_float, default=1.0, help="time of the push after the reset, s")
    p.add_argument("--recover_s", type=positive_float, default=3.0, help="time after the push to stay up, s")
    p.add_argument("--out", type=output_file(".json"), default=None, help="output JSON")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from realgap.envs.eval.policies import read_export
    from realgap.envs.eval.robustness.sweep import wilson_interval

    values = [float(v) for v in args.values.split(",")]
    engines = args.engines.split(",")
    if not set(engines) <= {"isaac", "mujoco"} or not engines:
        raise ValueError(f"--engines: choose from isaac, mujoco; got {args.engines!r}")
    if min(values) < 0 or args.episodes < 1 or args.push_at_s <= 0 or args.recover_s <= 0:
        raise ValueError("--values must be >= 0 m/s, --episodes >= 1, --push_at_s and --recover_s > 0")
    meta, onnx_path = read_export(args.policy)
    if "Balance" not in meta.task:
        raise ValueError(f"--policy {args.policy} is a {meta.task} policy; the push limit is a balance measure")
    labels = ["policy"] + (["zero action"] if args.zero_action else [])
    duration = args.push_at_s + args.recover_s
    survived: dict[str, dict[str, list[tuple[int, int]]]] = {engine: {} for engine in engines}
    if "isaac" in engines:
        from realgap.envs.eval.push.limit import isaac_single_push

        survived["isaac"] = isaac_single_push(meta, onnx_path, labels, values, args.episodes, args.push_at_s,
                                              duration, args.num_envs, args.seed)  # fmt: skip
    if "mujoco" in engines:
        from realgap.envs.eval.push.limit import mujoco_single_push

        survived["mujoco"] = mujoco_single_push(meta, onnx_path, labels, values, args.episodes, args.push_at_s,
                                                duration, args.seed)  # fmt: skip
    report = {"policy": str(args.policy), "task": meta.task, "values_mps": values, "episodes": args.episodes,
              "push_at_s": args.push_at_s, "recover_s": args.recover_s, "seed": args.seed, "engines": {}}  # fmt: skip
    for engine, by_label in survived.items():
        report["engines"][engine] = {}
        for label, counts in by_label.items():
            rows = [{"push_mps": v, "survived": k, "episodes": n, "survival": k / n, "ci95": wilson_interval(k, n)}
                    for v, (k, n) in zip(values, counts, strict=True)]  # fmt: skip
            held = [r["push_mps"] for r in rows if r["survival"] >= 0.5]
            limit = max(held) if held else None
            report["engines"][engine][label] = {"rows": rows, "limit_mps": limit}
            curve = "  ".join(f"{r['push_mps']:g}:{r['survival']:.2f}" for r in rows)
            print(f"[realgap] {engine:>6} {label:>12}  limit {limit if limit is not None else '—'} m/s  | {curve}")
    out = Path(args.out or Path("runs") / "push_limit" / f"{Path(args.policy).name}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"[realgap] wrote {out}")
    return 0


if __name__ == "__main__":
    from realgap.envs.export.metadata import ExportError
    from realgap.envs.run.cli import run_cli

    run_cli(main, extra_errors=(ExportError,))
