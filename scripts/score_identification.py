"""Score an identified actuator spec against the hidden robot it was identified on (the proof of identification).

    realgap score_identification --spec configs/identified/g1_hidden_seed3.yaml \\
        --policy configs/policies/balance_g1 --hidden_seed 3

Reads the hidden truth of ``--robot hidden --hidden_seed N`` (``envs/deploy/hidden_robot.py``; the identification
code never does) and prints one markdown row per identified parameter: datasheet, truth, identified ± std, relative
error; the command delay exact or not. Parameters the spec calls not identifiable are listed with the reason.
"""

from __future__ import annotations

import argparse


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from realgap.envs.run.cli import nonnegative_int, parser, shared_flags

    p = parser(__doc__, shared_flags("policy", required=("policy",)))
    p.add_argument("--spec", required=True, help="identified spec YAML written by scripts/identify.py")
    p.add_argument("--hidden_seed", type=nonnegative_int, required=True, help="seed of the hidden robot")
    p.add_argument("--hidden_drives", default="default", help="family of the hidden drives (default, worn)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import yaml

    from realgap.envs.deploy.hidden_robot import draw_truth
    from realgap.envs.format import load_metadata

    spec = yaml.safe_load(open(args.spec))
    if not isinstance(spec, dict) or spec.get("format") != "realgap.identified_actuators/1":
        raise ValueError(f"{args.spec} is not an identified spec (format realgap.identified_actuators/1)")
    meta = load_metadata(args.policy)
    truth = draw_truth(meta, args.hidden_seed, args.hidden_drives)
    delay = spec["command_delay_steps"]["value"]
    print(f"command delay: identified {delay:g} steps, hidden {truth.delay_steps} steps: "
          f"{'exact' if delay == truth.delay_steps else 'WRONG'}")  # fmt: skip
    print("| joint | parameter | datasheet | hidden truth | identified ± std | error |")
    print("|---|---|---|---|---|---|")
    for joint, params in spec["joints"].items():
        if joint not in meta.joint_names:
            raise ValueError(f"{args.spec}: joint {joint!r} is not one of the policy's joints")
        i = meta.joint_names.index(joint)
        for name, est in params.items():
            sheet = est.get("datasheet", float("nan"))
            want = {"kp": sheet * truth.kp_scale[i], "kd": sheet * truth.kd_scale[i], "armature": truth.armature[i],
                    "coulomb": truth.coulomb_nm[i], "viscous": truth.viscous_nms[i],
                    "torque_limit": truth.peak_torque[i]}.get(name)  # fmt: skip
            if want is None:
                continue
            if not est.get("identifiable", True):
                print(f"| {joint} | {name} | {sheet:.4g} | {want:.4g} | not identifiable: {est['reason']} | – |")
                continue
            err = abs(est["value"] - want) / abs(want)
            print(f"| {joint} | {name} | {sheet:.4g} | {want:.4g} | {est['value']:.4g} ± {est['std']:.1g} | "
                  f"{100 * err:.2f} % |")  # fmt: skip
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
