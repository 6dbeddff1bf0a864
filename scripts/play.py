"""Play a trained policy: run N episodes of the task's evaluation variant, print the task metrics, export the policy.

    realgap play --checkpoint runs/balance_g1/2026-11-29_20-00-00
    realgap play --checkpoint runs/balance_g1/<run>/model_300.pt --episodes 200 --num_envs 64
    realgap play --task Realgap-Balance-G1-v0 --zero_action     # baseline: hold the default pose
    realgap play --policy configs/policies/balance_g1 --episodes 256 --num_envs 128   # a shipped export

Prints the task's metrics with 95 % Wilson intervals: ``success=`` (grasp: lifted and held; with the drop rate,
the time to drop and the joint-speed-reflex rate) or ``survival=`` (balance: reached the time-out; with the time to
fall and the push survived). ``--policy`` evaluates an exported policy (ONNX + metadata, e.g. one committed in
configs/policies/) without its training run folder.

Exports ``policy.onnx`` (observation normalizer folded in, metadata embedded), ``policy.pt`` (TorchScript) and
``policy.json`` (joint order, action scale, gains, rates, observation layout...) into <run>/realgap_export/, as
``scripts/export.py`` does.
"""

from __future__ import annotations

import argparse

from realgap.envs.deploy.flags import add_protocol_flags
from realgap.envs.eval.play import PlayRequest, play
from realgap.envs.run.cli import finite_float, parser, shared_flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(
        __doc__,
        shared_flags(
            "task",
            "episodes",
            "num_envs",
            "device",
            "seed",
            "checkpoint",
            "policy",
            task=None,
            episodes=64,
            num_envs=32,
        ),
    )
    p.add_argument(
        "--episode_s",
        type=finite_float,
        default=None,
        help="episode length, s (default: the task's; a shorter one is a quick check, not the task's metric)",
    )
    add_protocol_flags(p, fall=False, interval=False)
    p.add_argument("--zero_action", action="store_true", help="evaluate the zero action (no checkpoint needed)")
    p.add_argument(
        "--nominal_of",
        default=None,
        metavar="EXPORT_DIR",
        help="with --zero_action: raw zero actions through that export's action terms, i.e. holding the "
        "pose its policy acts around (e.g. the crouch) instead of the task's stance",
    )
    p.add_argument("--no_export", action="store_true", help="skip the ONNX / TorchScript export")
    p.add_argument("--json", default=None, help="also write the metrics to this JSON file")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    play(PlayRequest(**vars(parse_args(argv))))
    return 0


if __name__ == "__main__":
    from realgap.envs.export.metadata import ExportError
    from realgap.envs.run.cli import run_cli
    from realgap.envs.run.run_dir import CheckpointError

    run_cli(main, extra_errors=(CheckpointError, ExportError))
