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


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from realgap.envs.run.cli import nonnegative_int, parser, positive_float, shared_flags

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
    p.add_argument("--no_replay", action="store_true", help="skip the MuJoCo replay (no q plot; needs torque)")
    p.add_argument("--no_plot", action="store_true", help="do not draw the fit plot")
    p.add_argument("--accept_log_problems", action="store_true",
                   help="fit a log that fails the timing checks (repeated or skipped samples, another rate) anyway; "
                   "the problems are recorded in the spec's notes")  # fmt: skip
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.max_delay_steps < 1:
        raise ValueError("--max_delay_steps must be >= 1")
    from realgap.envs.deploy.log import load_log, metadata_sha256
    from realgap.envs.identify.fit import identify
    from realgap.envs.identify.report import output_paths, summary_lines, write_outputs

    output_paths(args.out)  # a folder, a link or a wrong suffix at any of the three outputs: refused before the fit
    expected = None
    if args.policy is not None:
        from realgap.envs.format.verify import load_verified

        meta, _ = load_verified(args.policy)
        expected = metadata_sha256(meta)
    log = load_log(args.log, joint_names=None if args.policy is None else meta.joint_names, metadata_hash=expected)
    from realgap.envs.identify.log_quality import check_log_quality, log_quality

    quality = log_quality(log) if args.accept_log_problems else check_log_quality(log, args.log)
    print(f"[realgap] {quality.line()}")
    ident = identify(
        log, args.joints, max_delay_steps=args.max_delay_steps, replay=not args.no_replay, filter_hz=args.filter_hz
    )
    ident.notes.extend(f"log timing problem accepted (--accept_log_problems): {p}" for p in quality.problems)
    if args.engine == "mujoco_sysid":
        from realgap.envs.identify.sysid_mujoco import use_sysid_plant

        use_sysid_plant(ident, log)
    print("\n".join(summary_lines(ident)))
    paths = write_outputs(ident, log, args.log, args.out, base_profile=args.base_profile, plot=not args.no_plot)
    for what, path in paths.items():
        print(f"[realgap] wrote {what}: {path}")
    return 0


if __name__ == "__main__":
    from realgap.envs.format import MetadataError
    from realgap.envs.run.cli import run_cli

    run_cli(main, (MetadataError,))
