"""Which of the task's pushes knock a balance policy over: falls by push heading (in the robot's frame) and magnitude.

    python scripts/push_headings.py --policy configs/policies/balance_g1
    python scripts/push_headings.py --policy configs/policies/balance_g1 --zero_action --steps 1000

Runs the task's Play variant as it is evaluated (pushes of 0.2-0.4 m/s in a random heading every 3-5 s) for
``--steps`` policy steps in ``--num_envs`` envs, logs every push and whether a fall followed it before the next push,
and prints the fall rate per direction (forward / left / backward / right quadrant of the push in the robot's frame)
and magnitude bin with 95 % Wilson intervals, then where the policy holds its capture point standing (3 s without
pushes: ξ's offset ahead of the ankles along the heading); writes JSON (default runs/push_headings/<name>.json).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from realgap.envs.run.cli import finite_float, parser, positive_int, shared_flags

    p = parser(__doc__, shared_flags("num_envs", "seed", num_envs=128))
    p.add_argument("--policy", required=True, help="export folder of a balance policy (policy.onnx + metadata)")
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
    p.add_argument("--out", default=None, help="output JSON")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from realgap.envs.eval.policies import read_export
    from realgap.envs.eval.push_headings import (
        heading_table,
        log_pushes,
        stance_offset,
        summary,
        with_ankle_pitch_bias,
        with_crouch,
        with_hip_reflex,
    )

    edges = [float(v) for v in args.edges.split(",")]
    heading_table([], edges)  # bad edges are refused here, before an env is built
    if args.steps < 1 or args.num_envs < 1 or args.reflex_steps < 1:
        raise ValueError("--steps, --num_envs and --reflex_steps must be >= 1")
    meta, onnx_path = read_export(args.policy)
    if "Balance" not in meta.task:
        raise ValueError(f"--policy {args.policy} is a {meta.task} policy; pushes are a balance measure")
    from realgap.envs.run.factory import load_cfgs, make_env, simulation
    from realgap.tasks import play_task

    task = play_task(meta.task)
    env_cfg, _ = load_cfgs(task, None, args.num_envs, args.seed)
    from realgap.envs.eval.policies import export_actions

    export_actions(env_cfg, meta)  # the policy's action terms; the zero action still holds the task's stance
    with simulation(env_cfg):
        from realgap.envs.eval.policies import exported_policy, zero_policy

        env = make_env(task, env_cfg)
        policy = zero_policy(env) if args.zero_action else exported_policy(env, meta, onnx_path)
        if args.ankle_pitch_bias:
            policy = with_ankle_pitch_bias(env, policy, args.ankle_pitch_bias)
        if args.crouch:
            policy = with_crouch(env, policy, args.crouch)
        if args.hip_reflex:
            policy = with_hip_reflex(env, policy, args.hip_reflex, args.reflex_steps)
        records = log_pushes(env, policy, args.steps)  # each policy clips its raw actions as in training
        stance = stance_offset(env, policy)  # after the log: the pushes logged are the task's draws from the seed
        env.close()
    rows = heading_table(records, edges)
    label = "zero action" if args.zero_action else str(args.policy)
    label += f" + ankle-pitch bias {args.ankle_pitch_bias:g}" if args.ankle_pitch_bias else ""
    label += f" + crouch {args.crouch:g} rad" if args.crouch else ""
    label += f" + hip reflex {args.hip_reflex:g} x {args.reflex_steps}" if args.hip_reflex else ""
    totals = summary(records)
    print(f"[realgap] {task} | {label} | {totals['pushes']} pushes, {totals['falls']} followed by a fall "
          f"({totals['sagittal_share_of_falls']:.2f} of them sagittal)")  # fmt: skip
    print(
        f"[realgap] standing (3 s, no pushes): ξ {stance[0] * 100:.1f} ± {stance[1] * 100:.1f} cm ahead of the ankles"
    )
    for r in rows:
        lo, hi = r["push_mps"]
        print(f"[realgap] {r['direction']:>8} {lo:g}-{hi:g} m/s  falls {r['falls']:>3} / {r['pushes']:<3}  "
              f"{r['fall_rate']:.2f} (95 % CI {r['ci95'][0]:.2f}-{r['ci95'][1]:.2f})")  # fmt: skip
    name = Path(args.policy).name + ("_zero_action" if args.zero_action else "")
    name += f"_ankle_bias{args.ankle_pitch_bias:g}" if args.ankle_pitch_bias else ""
    name += f"_crouch{args.crouch:g}" if args.crouch else ""
    name += f"_hip_reflex{args.hip_reflex:g}x{args.reflex_steps}" if args.hip_reflex else ""
    out = Path(args.out or Path("runs") / "push_headings" / f"{name}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    report = {"policy": label, "task": task, "steps": args.steps, "num_envs": args.num_envs, "seed": args.seed,
              "ankle_pitch_bias": args.ankle_pitch_bias, "hip_reflex": args.hip_reflex, "crouch_rad": args.crouch,
              "reflex_steps": args.reflex_steps, "edges_mps": edges, "summary": totals, "rows": rows,
              "stance_xi_ahead_of_ankles_m": {"mean": stance[0], "std": stance[1]}}  # fmt: skip
    out.write_text(json.dumps(report, indent=2))
    print(f"[realgap] wrote {out}")
    return 0


if __name__ == "__main__":
    from realgap.envs.export.metadata import ExportError
    from realgap.envs.run.cli import run_cli

    run_cli(main, extra_errors=(ExportError,))
