"""Identify the actuator chain from a robot log and write the identified spec, a DR profile and a fit plot.

    realgap deploy --policy configs/policies/balance_g1 --robot hidden --excite \\
        left_knee_joint left_shoulder_pitch_joint --log runs/identify/hidden.npz
    realgap identify --log runs/identify/hidden.npz --out configs/identified/g1_hidden.yaml

Per joint (default: every joint the log excited), it fits what the log determines — command delay (physics steps,
discrete search), realized kp/kd, armature, Coulomb and viscous friction, torque limit — and reports any other
parameter as not identifiable with the reason (see :mod:`realgap.envs.identify.fit`). Writes ``--out`` (the
identified spec), ``<out>_dr.yaml`` (a DR profile centred on it) and ``<out>.png`` (logged vs replayed). Bad input
exits with status 2 and one message.
"""

from __future__ import annotations

import argparse

from realgap.envs.run.cli import nonnegative_int, parser, positive_float, shared_flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__, shared_flags("policy"))
    p.add_argument("--log", required=True, help="robot log (.npz or .mcap, realgap.robot_log/1)")
    p.add_argument("--out", required=True, help="identified spec YAML, e.g. configs/identified/<name>.yaml")
    p.add_argument("--joints", nargs="+", default=None, help="joints to identify (default: those the log excited)")
    p.add_argument("--max_delay_steps", type=nonnegative_int, default=6, help="largest delay searched, physics steps")
    p.add_argument("--base_profile", default="nominal", help="DR profile the generated one starts from")
    p.add_argument(
        "--filter_hz",
        type=positive_float,
        default=None,
        help="noisy sensors: zero-phase low-pass corner applied to both sides of the torque regressions, Hz",
    )
    p.add_argument(
        "--engine",
        choices=("realgap", "mujoco_sysid"),
        default="realgap",
        help="who fits armature and friction: realgap's inverse dynamics (default; see the identification page's "
        "engine table) or MuJoCo's rollout-error mujoco.sysid (needs a welded-base log with torque)",
    )
    p.add_argument(
        "--delay_per_joint", action="store_true", help="fit each joint's own delay (joints on different buses)"
    )
    p.add_argument("--no_replay", action="store_true", help="skip the MuJoCo replay (no q plot; needs torque)")
    p.add_argument("--no_plot", action="store_true", help="do not draw the fit plot")
    p.add_argument(
        "--accept_log_problems",
        action="store_true",
        help="fit a log that fails the timing checks (repeated or skipped samples, another rate) anyway; "
        "the problems are recorded in the spec's notes",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)  # first: --help and a refused flag load no torch
    from realgap.envs.identify.run import IdentifyRequest, identify_log

    paths = identify_log(IdentifyRequest(**vars(args)))  # prints the log's quality and the fit
    print("\n".join(f"[realgap] wrote {what}: {path}" for what, path in paths.items()))
    return 0


if __name__ == "__main__":
    from realgap.envs.format import MetadataError
    from realgap.envs.run.cli import run_cli

    run_cli(main, (MetadataError,))
