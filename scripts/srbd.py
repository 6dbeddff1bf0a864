"""Single rigid body dynamics of the G1 against the full model: writes docs/results/srbd/ (validation.json, plots).

    realgap srbd --policy configs/policies/balance_g1 --out docs/results/srbd

The export balances the MuJoCo G1 through the deploy runtime for ``--duration_s`` in each scenario (no push; a
0.4 m/s push forward at 2 s; the same sideways); every physics step the single body gets the measured contact forces
(:mod:`realgap.envs.srbd.validate` says what is compared and why).

    realgap srbd --out docs/results/srbd/lab --isaac 16 --num_envs 112

``--isaac`` instead runs the three-way balance evaluation (SRBD controller, policy, zero action) in the Isaac Lab
task's robustness protocol (:func:`realgap.envs.eval.srbd.balance.lab_evaluate`): <out>/report.json and plots.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

SCENARIOS = {"standing": (), "push_forward_0.4": ((2.0, 0.4, 0.0),), "push_sideways_0.4": ((2.0, 0.0, 0.4),)}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from realgap.envs.run.cli import output_dir, parser, positive_float, shared_flags

    p = parser(__doc__, shared_flags("policy", policy="configs/policies/balance_g1"))
    p.add_argument("--out", type=output_dir, required=True, help="output folder (validation.json, plots)")
    p.add_argument("--duration_s", type=positive_float, default=6.0, help="episode length per scenario, s")
    p.add_argument("--horizon_s", type=positive_float, default=0.2, help="CoM prediction horizon, s")
    p.add_argument("--evaluate", type=int, default=0, metavar="EPISODES",
                   help="also run the three-way balance evaluation (policy, zero action, SRBD controller) over this "
                        "many 20 s pushed episodes on the MuJoCo G1 (evaluation.json)")  # fmt: skip
    p.add_argument("--push_limit", type=int, default=0, metavar="EPISODES",
                   help="also sweep the SRBD controller's single-push survival at 0.3-0.7 m/s over this many headings "
                        "(push_limit.json; the protocol of scripts/push_limit.py on MuJoCo)")  # fmt: skip
    p.add_argument("--isaac", type=int, default=0, metavar="EPISODES",
                   help="only the Isaac Lab three-way evaluation, this many episodes per point and arm")  # fmt: skip
    p.add_argument("--num_envs", type=int, default=112, help="Isaac Lab envs per batch (--isaac)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.duration_s > 2.5 or not args.horizon_s > 0 or min(args.evaluate, args.push_limit, args.isaac) < 0:
        raise ValueError("--duration_s must be > 2.5 (the pushes come at 2 s), --horizon_s > 0, --evaluate, "
                         "--push_limit and --isaac >= 0")  # fmt: skip
    if args.isaac:
        from realgap.envs.eval.robustness.evaluation import summary_lines
        from realgap.envs.eval.srbd.balance import lab_evaluate

        command = " ".join(["python scripts/srbd.py", *(sys.argv[1:] if argv is None else argv)])
        report = lab_evaluate(args.policy, args.out, episodes=args.isaac, num_envs=args.num_envs, command=command)
        print("\n".join(summary_lines(report, Path(args.out), len(report["factors"]))))
        return 0
    from realgap.envs.srbd.model import g1_model
    from realgap.envs.srbd.validate import plot, run_episode, summary

    model, _ = g1_model()
    mass = float(model.body_subtreemass[1])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {"policy": args.policy, "duration_s": args.duration_s, "horizon_s": args.horizon_s, "scenarios": {}}
    for name, pushes in SCENARIOS.items():
        trace = run_episode(args.policy, args.duration_s, pushes, args.horizon_s)
        report["scenarios"][name] = summary(trace, mass) | {"pushes": [list(p) for p in pushes]}
        plot(trace, out / f"{name}.png", f"{name}: SRBD with the measured contact forces vs MuJoCo")
        print(f"[realgap] {name}: {report['scenarios'][name]}")
    (out / "validation.json").write_text(json.dumps(report, indent=2))
    if args.evaluate:
        from realgap.envs.eval.srbd.balance import evaluate, evaluation_lines

        result = evaluate(args.policy, episodes=args.evaluate)
        (out / "evaluation.json").write_text(json.dumps(result, indent=2))
        print("\n".join(evaluation_lines(result)))
    if args.push_limit:
        from realgap.envs.eval.srbd.balance import PUSH_LIMIT_MPS, single_push

        # the crouch export's committed protocol (push_limit_balance_g1_crouch.json): push at 3 s, after the ramp
        limit = single_push(args.policy, PUSH_LIMIT_MPS, episodes=args.push_limit, push_at_s=3.0, duration_s=6.0)
        (out / "push_limit.json").write_text(json.dumps(limit, indent=2))
        print(f"[realgap] srbd_controller single-push limit {limit['limit_mps']} m/s: "
              + ", ".join(f"{r['push_mps']}: {r['survived']}/{r['episodes']}" for r in limit["rows"]))  # fmt: skip
    print(f"[realgap] wrote {out}/validation.json and {len(SCENARIOS)} plots")
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
