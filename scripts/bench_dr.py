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

from realgap.envs.run.cli import nonnegative_float, parser, positive_int, shared_flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__, shared_flags("task", "num_envs", "device", "seed", num_envs=256))
    p.add_argument("--profile", default="nominal", help="DR profile name or YAML path")
    p.add_argument("--rounds", type=positive_int, default=3, help="rounds of 24 policy steps per variant")
    p.add_argument("--std", type=nonnegative_float, default=0.5, help="std of the random actions")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from realgap.envs.eval.bench.dr_cost import BenchDrRequest, bench_dr

    print("\n".join(bench_dr(BenchDrRequest(**vars(args)))))
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
