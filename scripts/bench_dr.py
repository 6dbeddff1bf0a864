"""Cost of domain randomization at reset: the balance env stepping with and without a DR profile.

    realgap bench_dr                      # 256 envs on the CPU, profile "nominal", 3 rounds
    realgap bench_dr --rounds 5 --std 1.0 # more rounds, more falls (resets)

One env is built with the profile; then rounds of one PPO iteration's worth of steps (24 policy steps) alternate
between three variants (no DR, DR with fast solver sync, DR with Isaac Lab's exact sync; see
:mod:`realgap.envs.eval.bench.dr_cost`), so a busy shared CPU slows all of them alike.

Actions are policy-like Gaussian noise (``--std`` in action units; the same stream for every variant), episode
lengths are spread as in PPO's first iteration. Reported per policy step: wall and process-CPU time, resets, and
the time spent inside reset events.
"""

from __future__ import annotations

import argparse


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from realgap.envs.run.cli import nonnegative_float, parser, positive_int, shared_flags

    p = parser(__doc__, shared_flags("task", "num_envs", "device", "seed", num_envs=256))
    p.add_argument("--profile", default="nominal", help="DR profile name or YAML path")
    p.add_argument("--rounds", type=positive_int, default=3, help="rounds of 24 policy steps per variant")
    p.add_argument("--std", type=nonnegative_float, default=0.5, help="std of the random actions")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from realgap.envs.dr.profile import load_dr_profile
    from realgap.envs.eval.bench.dr_cost import STEPS_PER_ROUND, VARIANTS, reset_dr_cost
    from realgap.tasks import check_task

    check_task(args.task)
    load_dr_profile(args.profile)  # both refused before an env is built
    per = reset_dr_cost(args.task, args.num_envs, args.device, args.profile, args.rounds, args.std, args.seed)
    print(
        f"\n[bench_dr] {args.task}, {args.num_envs} envs on {args.device}, profile {args.profile!r}: "
        f"{args.rounds} interleaved rounds of {STEPS_PER_ROUND} policy steps per variant, action std {args.std}"
    )
    print(f"{'variant':<16} {'wall ms/step':>13} {'cpu ms/step':>12} {'resets/step':>12} {'reset events ms/step':>21}")
    for variant, r in per.items():
        print(
            f"{variant:<16} {1e3 * r['wall']:>13.1f} {1e3 * r['cpu']:>12.1f} {r['resets']:>12.2f} "
            f"{1e3 * r['events']:>21.2f}"
        )
    base = per["no DR"]
    for variant in VARIANTS[1:]:
        r = per[variant]
        print(
            f"{variant}: wall x{r['wall'] / base['wall']:.3f} ({100 * (r['wall'] / base['wall'] - 1):+.1f} %), "
            f"cpu x{r['cpu'] / base['cpu']:.3f} ({100 * (r['cpu'] / base['cpu'] - 1):+.1f} %)"
        )
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
