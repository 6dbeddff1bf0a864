"""Export a trained policy for a robot: policy.onnx (one file, metadata embedded), policy.pt (TorchScript) and
policy.json, in the documented format realgap.policy/2 (docs/policy_format.md, configs/schema/policy.schema.json):
robot description and its hash, joint order, default and start pose, action terms with their equations, actuator law
and parameters, friction, command delay, rates, observation layout with units, frames and training-only noise, what
the training simulator assumed, task and training commit.

    realgap export --checkpoint runs/balance_g1/2026-11-29_20-00-00            # latest model_<it>.pt
    realgap export --checkpoint runs/balance_g1/<run>/model_300.pt --out /tmp/g1_policy
    realgap export --upgrade configs/policies/balance_g1                       # a realgap.policy/1 export

The export goes to <run>/realgap_export/ unless --out is given (not exported/, where isaaclab play writes its own
policy.onnx). --upgrade rewrites an old export's metadata in place (the network is left unchanged; the metadata is
read again from the task's env and must describe the same policy). Run it on the robot with `realgap deploy` (numpy +
onnxruntime only: the deploy extra, docs/deploy.md).
"""

from __future__ import annotations

import argparse

from realgap.envs.export.upgrade import upgrade_export
from realgap.envs.export.writer import export_checkpoint
from realgap.envs.run.cli import output_dir, parser, positive_int, shared_flags


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = parser(__doc__, shared_flags("task", "device", task=None))
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--checkpoint", help="run folder (latest model_<it>.pt) or a model_<it>.pt file")
    what.add_argument("--upgrade", help="export folder in the old format realgap.policy/1, rewritten in place")
    p.add_argument("--out", type=output_dir, default=None, help="export folder (default: <run>/realgap_export)")
    p.add_argument(
        "--num_checks", type=positive_int, default=64, help="random observations ONNX and torch are compared on"
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.upgrade:
        meta = upgrade_export(args.upgrade, args.device)
        record = meta.training["upgrades"][-1]
        print(
            f"[realgap] {args.upgrade}: upgraded to {record['to']} (task {meta.task}, {len(meta.actions.terms)} "
            f"action term(s)); ONNX graph unchanged, sha256 {record['onnx_graph_sha256'][:12]}…"
        )
        return 0

    meta, result, iteration = export_checkpoint(args.checkpoint, args.task, args.out, args.device, args.num_checks)
    r = meta.rates
    print(f"[realgap] exported iteration {iteration} of {meta.task} to {result.folder}/ ({meta.to_dict()['format']})")
    print(
        f"  policy.onnx (metadata embedded), policy.pt, policy.json | obs {meta.obs_dim} -> actions "
        f"{meta.action_dim} ({', '.join(f'{t.name}: {t.type}' for t in meta.actions.terms)}) | physics "
        f"{r.physics_hz:g} Hz, servo {r.control_hz:g} Hz, policy {r.policy_hz:g} Hz ({r.target_mode})"
    )
    print(f"  onnxruntime vs torch on {result.num_checked} random observations: max |diff| = {result.max_abs_diff:.2e}")
    return 0


if __name__ == "__main__":
    from realgap.envs.export.metadata import ExportError
    from realgap.envs.run.cli import run_cli
    from realgap.envs.run.run_dir import CheckpointError

    run_cli(main, extra_errors=(CheckpointError, ExportError))
