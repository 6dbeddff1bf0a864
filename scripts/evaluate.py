"""Robustness sweeps: evaluate trained policies while one physical factor at a time moves away from nominal.

    realgap evaluate --checkpoint runs/balance_g1/<run>                        # every factor, defaults
    realgap evaluate --checkpoint runs/balance_g1/<dr_run> --label DR --checkpoint runs/balance_g1/<run> \\
        --label "no DR" --zero_action --factors payload_kg,push_mps --heatmap push_mps,payload_kg
    realgap evaluate --zero_action --task Realgap-Balance-G1-v0 --values push_mps=0,0.5,1 --episodes 32
    realgap evaluate --policy configs/policies/balance_g1 --zero_action        # a shipped export

Factors (``realgap.envs.eval.robustness.sweep.FACTORS``; default values per robot in ``DEFAULT_VALUES``, set your own
with ``--values NAME=V1,V2,...``): payload_kg, link_mass_scale, com_shift_m, inertia_scale, object_mass_scale,
command_delay_s, pd_gain_scale, torque_limit_scale, joint_friction_scale, contact_friction, torque_filter_hz,
speed_limit_scale, backlash_rad, transmission_stiffness_scale, push_mps (``inf`` is a value of torque_filter_hz and
speed_limit_scale: an ideal current loop, no speed cut-off). backlash_rad and transmission_stiffness_scale need joints
built compliant: named in --factors (alone), the env is built once with the robot's compliant stand-in (G1: knees and
hip roll; Panda: wrist joints 5-7; envs/robots/) and every value is written per env in place, no rebuild per value.
Every other factor stays at its nominal value; the nominal point is part of every sweep. Each point runs ``--episodes``
episodes of the task's evaluation variant; points are packed into batches of ``--num_envs`` envs (on a CPU, 64 envs cost
little more per step than 16). Writes <out>/report.json (per factor: values, success rate with its 95 % Wilson interval,
time up and return mean ± std / 95 % CI, episodes; the heatmap grid; rates and actuator model) and one PNG per factor
plus the heatmap. Default <out>: <run>/robustness for one checkpoint, else runs/robustness/<timestamp>.
"""

from __future__ import annotations

import argparse

from realgap.envs.eval.robustness.evaluation import EvalRequest, evaluate, summary_lines
from realgap.envs.eval.robustness.sweep import FACTORS, NOT_SWEEPABLE
from realgap.envs.run.cli import parser, positive_float, shared_flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(
        __doc__,
        shared_flags(
            "task", "episodes", "num_envs", "device", "seed", "policy", repeatable=("policy",), task=None, num_envs=64
        ),
    )
    p.add_argument("--checkpoint", action="append", default=[], help="run folder or model_<it>.pt (repeatable)")
    p.add_argument(
        "--label",
        action="append",
        default=[],
        help="name of each --checkpoint, then each --policy, in the report and plots",
    )
    p.add_argument(
        "--zero_action",
        action="store_true",
        help="also evaluate the zero action (beside --policy it holds the standing pose, not the pose the "
        "export acts around, e.g. the crouch)",
    )
    unsweepable = f"; not sweepable: {', '.join(NOT_SWEEPABLE)}" if NOT_SWEEPABLE else ""  # none at present
    p.add_argument(
        "--factors",
        default=None,
        help=f"comma-separated factors (default: every one the task supports) among {', '.join(FACTORS)}{unsweepable}",
    )
    p.add_argument("--values", action="append", default=[], help="FACTOR=V1,V2,... sweep values (repeatable)")
    p.add_argument(
        "--heatmap",
        default=None,
        help="X,Y factors of the success heatmap, or 'none' (default: push_mps,payload_kg when both are swept)",
    )
    p.add_argument("--episode_s", type=positive_float, default=None, help="episode length, s (default: the task's)")
    p.add_argument("--out", default=None, help="output folder")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    report, out, plots = evaluate(EvalRequest(**vars(parse_args(argv))))
    print("\n".join(summary_lines(report, out, plots)))
    return 0


if __name__ == "__main__":
    from realgap.envs.export.metadata import ExportError
    from realgap.envs.run.cli import run_cli
    from realgap.envs.run.run_dir import CheckpointError

    run_cli(main, extra_errors=(CheckpointError, ExportError))
