"""The first-GPU check: driver/torch/warp, the gpu test tier, a 2-iteration training and its resume, and a PPO
throughput figure at 4,096 envs per task, each with a verdict (PASS / FAIL / NO GPU / NOT RUN). About 15 minutes on
one GPU; on a machine without one it says so at once and runs nothing.

    realgap gpu_check                      # report in gpu_check/report.txt
    realgap gpu_check --out /tmp/gpu_check

Exit status: 0 all passed, 1 a step failed, 2 no usable GPU was found. See docs/gpu.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from realgap.envs.run.gpu_check import exit_code, gpu_check


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="gpu_check", help="folder for report.txt, the step logs and the training run")
    args = p.parse_args(argv)

    verdicts = gpu_check(Path(args.out).resolve())
    for verdict in verdicts:
        print(verdict.line(), flush=True)
    print(f"report: {Path(args.out).resolve() / 'report.txt'}")
    return exit_code(verdicts)


if __name__ == "__main__":
    sys.exit(main())
