"""Export a trained policy for a robot: policy.onnx (one file, metadata embedded), policy.pt (TorchScript) and
policy.json (the metadata: joint order, default pose, action scale/offset/clip, PD gains and torque limits, rates,
observation layout, command delay, robot description hash, task and training commit).

    python scripts/export.py --checkpoint runs/balance_g1/2026-11-29_20-00-00            # latest model_<it>.pt
    python scripts/export.py --checkpoint runs/balance_g1/<run>/model_300.pt --out /tmp/g1_policy

The export goes to <run>/exported/ unless --out is given. Run it on the robot with realgap.envs.deploy (numpy +
onnxruntime only).
"""

from __future__ import annotations

import argparse


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", required=True, help="run folder (latest model_<it>.pt) or a model_<it>.pt file")
    p.add_argument("--out", default=None, help="export folder (default: <run>/exported)")
    p.add_argument("--task", default=None, help="task id (default: the run's task from params/run.json)")
    p.add_argument("--device", default="cpu", help="device for building the env and loading the checkpoint")
    p.add_argument("--num_checks", type=int, default=64, help="random observations to compare ONNX and torch on")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from realgap.envs.export import export_checkpoint

    meta, result, iteration = export_checkpoint(args.checkpoint, args.task, args.out, args.device, args.num_checks)
    r = meta.rates
    print(f"[realgap] exported iteration {iteration} of {meta.task} to {result.folder}/")
    print(f"  policy.onnx (metadata embedded), policy.pt, policy.json | obs {meta.obs_dim} -> actions "
          f"{meta.action_dim} | physics {r.physics_hz:g} Hz, servo {r.control_hz:g} Hz, policy {r.policy_hz:g} Hz "
          f"({r.target_mode})")  # fmt: skip
    print(f"  onnxruntime vs torch on {result.num_checked} random observations: max |diff| = {result.max_abs_diff:.2e}")
    return 0


if __name__ == "__main__":
    from realgap.envs.cli import run_cli
    from realgap.envs.export_metadata import ExportError
    from realgap.envs.run_dir import CheckpointError

    run_cli(main, extra_errors=(CheckpointError, ExportError))
