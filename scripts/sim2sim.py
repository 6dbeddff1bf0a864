"""Sim2sim: Isaac Lab (Newton, MuJoCo-Warp) against plain MuJoCo C — contact-free first, then the closed loop.

    realgap sim2sim --checkpoint runs/balance_g1/<run>           # exports the policy if needed
    realgap sim2sim --policy runs/balance_g1/<run>/realgap_export --episodes 16
    realgap sim2sim --zero_action --task Realgap-Balance-G1-v0 --duration_s 4

1. Open loop, no contact: the robot's root welded in the air, no friction or damping, the same
   torque sequence (gravity torque of the start pose + per-joint sinusoids) in both engines at the training physics
   step and at ``--fine_dt``: joint trajectory RMS error, each engine's energy change against the work of its torques
   (with no friction or contact they are equal; the residual is the integrator's and shrinks with the step), and a
   model checklist by name (masses, CoMs, inertias, armature, friction, gravity, step, integrator).
2. Closed loop: the exported policy (or the zero action) balancing under the same push schedule in both engines, with
   the same datasheet actuator chain and rates: survival, time up, time to fall, per-episode outcomes.

Writes one JSON (default: <run>/sim2sim.json, or runs/sim2sim/<timestamp>.json).
"""

from __future__ import annotations

import argparse

from realgap.envs.deploy.flags import add_protocol_flags
from realgap.envs.run.cli import add_shared_flag, nonnegative_float, output_file, parser, positive_float, shared_flags
from realgap.envs.sim2sim.isaac_vs_mujoco import Sim2SimRequest, sim2sim


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__, shared_flags("task", "episodes", "seed", task=None, episodes=8))
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--checkpoint", help="run folder or model_<it>.pt (exported to <run>/realgap_export if needed)")
    add_shared_flag(src, "policy")
    src.add_argument("--zero_action", action="store_true", help="the zero action (hold the default pose)")
    p.add_argument(
        "--duration_s", type=positive_float, default=None, help="closed-loop episode length, s (default: the task's)"
    )
    add_protocol_flags(p, fall=False)  # the fall rule is the task's terminations
    p.add_argument("--open_loop_s", type=positive_float, default=0.5, help="open-loop duration, s")
    p.add_argument("--fine_dt", type=nonnegative_float, default=0.001, help="second open-loop step, s (0: skip)")
    p.add_argument("--skip_closed_loop", action="store_true")
    p.add_argument("--out", type=output_file(".json"), default=None, help="output JSON")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    report, out = sim2sim(Sim2SimRequest(**vars(parse_args(argv))))  # prints one line per stage
    print(f"[realgap] wrote {out} in {report['wall_s']} s")
    return 0


if __name__ == "__main__":
    from realgap.envs.format import MetadataError
    from realgap.envs.run.cli import run_cli
    from realgap.envs.run.run_dir import CheckpointError

    run_cli(main, extra_errors=(CheckpointError, MetadataError))
