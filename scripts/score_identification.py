"""Score an identified actuator spec against the hidden robot it was identified on (the proof of identification).

    realgap score_identification --spec configs/identified/g1_hidden_seed3.yaml \\
        --policy configs/policies/balance_g1 --hidden_seed 3

Reads the hidden truth of ``--robot hidden --hidden_seed N`` (``envs/eval/identification_score.py``; the
identification code never does) and prints one markdown row per identified parameter: datasheet, truth, identified ±
std, relative error; the command delay exact or not. Parameters the spec calls not identifiable are listed with the
reason.
"""

from __future__ import annotations

import argparse

from realgap.envs.run.cli import nonnegative_int, parser, shared_flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__, shared_flags("policy", required=("policy",)))
    p.add_argument("--spec", required=True, help="identified spec YAML written by scripts/identify.py")
    p.add_argument("--hidden_seed", type=nonnegative_int, required=True, help="seed of the hidden robot")
    p.add_argument("--hidden_drives", default="default", help="family of the hidden drives (default, worn)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)  # first: --help and a refused flag load no torch
    from realgap.envs.eval.identification_score import ScoreRequest, score_identification

    print("\n".join(score_identification(ScoreRequest(**vars(args)))))
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
