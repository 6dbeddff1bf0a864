"""The transfer study (issue 57, docs/results/transfer.md): train each arm and seed with the study's budget, export its
last checkpoint, score it in Play and on the held-out suite, and summarize — resumable across sittings.

    python scripts/transfer_study.py --task balance --arms a,b --seeds 1,2,3 --jobs 2 --device cpu \\
        --out runs/transfer/balance
    python scripts/transfer_study.py --task balance --arms a,b --seeds 1,2,3 --device cpu \\
        --out runs/transfer/balance --summarize_only          # the tables of whatever is finished

Arms (the page's table; envs/eval/study/arms.py): balance a, b, c0, c, d, e, f, g, h and the levers gh, hw, gm,
gho; grasp a, b, c0, c, d, e, g, h (grasp f is g; arm i is not run by this command). Per (arm, seed), each a
process of its own and skipped once its artifact exists: scripts/train.py (the task's base command, the arm's
--dr_profile and its --set, if any), export of model_<N-1>.pt, scripts/play.py --episodes 256 --seed 0,
scripts/evaluate_suite.py --episodes 4.
The same command run again into the same --out goes on where a stopped sitting ended (a training stopped part-way
continues with --resume); a folder of another request (task, device, budget) is refused, and nothing is ever deleted.
Writes into --out: study.json, study.md (per seed, per arm with t intervals over seeds, tiers and every pair's
verdict), study.csv (with each step's wall-clock and CPU seconds), request.json (the budget and every sitting), the
runs, exports, Play and suite results, and a log per step in logs/. On the CPU each child runs with OMP_NUM_THREADS=1.

--max_iterations, --num_envs, --play_episodes, --suite_robots and --suite_episodes exist for smoke runs only: a
folder made with any of them off the page's rules says so in study.json (is_study false) and at the top of study.md.
"""

from __future__ import annotations

import argparse

from realgap.envs.run.cli import output_dir, parser, positive_int, shared_flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__, shared_flags("num_envs", "device"))
    p.add_argument("--task", required=True, choices=("balance", "grasp"), help="the study's task")
    p.add_argument("--arms", default="a,b,g,h", help="comma-separated arms (default: a,b,g,h, the page's first four)")
    p.add_argument("--seeds", default="1,2,3", help="comma-separated training seeds in 1-999 (default: 1,2,3)")
    p.add_argument(
        "--jobs",
        type=positive_int,
        default=1,
        help="(arm, seed) pairs at a time: one training process per core (2-core CPU: balance 2, grasp 1)",
    )
    p.add_argument("--out", type=output_dir, required=True, help="the study's folder (runs/transfer/<name>)")
    p.add_argument("--summarize_only", action="store_true", help="train nothing: the tables of what is finished")
    p.add_argument("--max_iterations", type=positive_int, default=None, help="smoke only (default: the task's budget)")
    p.add_argument("--play_episodes", type=positive_int, default=256, help="smoke only (default: 256)")
    p.add_argument("--suite_robots", type=positive_int, default=None, help="smoke only: first K robots per family")
    p.add_argument("--suite_episodes", type=positive_int, default=4, help="smoke only (default: 4 per robot)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    import sys

    from realgap.envs.eval.study.run import StudyRequest, run_study

    out, text, failures = run_study(StudyRequest(**vars(parse_args(argv))))
    print(text)
    print(f"[realgap] wrote {out}/study.json, study.md and study.csv")
    if failures:
        print(f"error: {len(failures)} run(s) failed (kept; the next sitting goes on from them):", file=sys.stderr)
        print("\n".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
