"""Record grasp states from the scripted grasp, for the grasp task's reverse curriculum.

    realgap record_grasp_states --num_envs 256 --per_phase 1024 --out configs/grasp_states/franka_scripted.npz

Runs the scripted approach–descend–close–lift (``envs/eval/grasp/scripted.py``, through the end-effector action
space) once in every env, keeps every env-step of the descend, close and lift phases of the episodes that succeeded,
and draws ``--per_phase`` states from each phase into one file (format: ``tasks/grasp/reverse_curriculum.py``).
Training uses it with ``--set env.events.reset_from_states.params.fraction=0.5``; evaluation never does.
"""

from __future__ import annotations

import argparse

from realgap.envs.run.cli import output_file, parser, positive_int, shared_flags
from realgap.tasks.grasp.reverse_curriculum import DEFAULT_STATES


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__, shared_flags("num_envs", "seed", num_envs=256))
    p.add_argument("--per_phase", type=positive_int, default=1024, help="states drawn from each phase")
    p.add_argument("--out", type=output_file(".npz"), default=str(DEFAULT_STATES), help="output .npz")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from realgap.envs.eval.grasp.scripted import GraspStatesRequest, record_grasp_state_file

    success, recorded, written = record_grasp_state_file(GraspStatesRequest(**vars(args)))
    print(
        f"[realgap] scripted success {success:.3f} over {args.num_envs} episodes; states seen per phase {recorded}; "
        f"wrote {written} states to {args.out}"
    )
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
