"""Play a trained policy: run N episodes of the task's evaluation variant, print the task metrics, export the policy.

    python scripts/play.py --checkpoint runs/balance_g1/2026-11-29_20-00-00
    python scripts/play.py --checkpoint runs/balance_g1/<run>/model_300.pt --episodes 200 --num_envs 64
    python scripts/play.py --task Realgap-Balance-G1-v0 --zero_action     # baseline: hold the default pose
    python scripts/play.py --policy configs/policies/balance_g1 --episodes 256 --num_envs 128   # a shipped export

Prints the task's metrics with 95 % Wilson intervals: ``success=`` (grasp: lifted and held; with the drop rate,
the time to drop and the joint-speed-reflex rate) or ``survival=`` (balance: reached the time-out; with the time to
fall and the push survived). ``--policy`` evaluates an exported policy (ONNX + metadata, e.g. one committed in
configs/policies/) without its training run folder.

Exports ``policy.onnx`` (observation normalizer folded in, metadata embedded), ``policy.pt`` (TorchScript) and
``policy.json`` (joint order, action scale, gains, rates, observation layout...) into <run>/exported/, as
``scripts/export.py`` does.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from realgap.envs.run.progress import fmt_value


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from realgap.envs.run.cli import add_push_arg, finite_float, parser, shared_flags

    p = parser(
        __doc__,
        shared_flags(
            "task", "episodes", "num_envs", "device", "seed", "checkpoint", task=None, episodes=64, num_envs=32
        ),
    )
    p.add_argument(
        "--policy", default=None, help="export folder (policy.onnx with its metadata), e.g. configs/policies/…"
    )
    p.add_argument("--episode_s", type=finite_float, default=None,
                   help="episode length, s (default: the task's; a shorter one is a quick check, not the task's "
                        "metric)")  # fmt: skip
    add_push_arg(p)
    p.add_argument("--zero_action", action="store_true", help="evaluate the zero action (no checkpoint needed)")
    p.add_argument("--nominal_of", default=None, metavar="EXPORT_DIR",
                   help="with --zero_action: raw zero actions through that export's action terms, i.e. holding the "
                        "pose its policy acts around (e.g. the crouch) instead of the task's stance")  # fmt: skip
    p.add_argument("--no_export", action="store_true", help="skip the ONNX / TorchScript export")
    p.add_argument("--json", default=None, help="also write the metrics to this JSON file")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from realgap.envs.run.factory import load_cfgs, make_env, simulation
    from realgap.envs.run.run_dir import check_checkpoint, latest_checkpoint, policy_settings
    from realgap.tasks import play_task

    if sum(x is not None and x is not False for x in (args.checkpoint, args.policy, args.zero_action or None)) != 1:
        raise ValueError("give one of --checkpoint RUN, --policy EXPORT_DIR or --zero_action")
    if args.nominal_of is not None and not args.zero_action:
        raise ValueError("--nominal_of EXPORT_DIR goes with --zero_action")
    if args.episode_s is not None and not args.episode_s > 0:
        raise ValueError(f"--episode_s must be > 0 s, got {args.episode_s}")
    checkpoint = export = None
    if args.checkpoint is not None:
        path = Path(args.checkpoint)
        checkpoint = path if path.is_file() else latest_checkpoint(path)
        check_checkpoint(checkpoint)  # a corrupt file fails here, before an env is built
        run_json = checkpoint.parent / "params" / "run.json"
        if args.task is None and run_json.is_file():
            args.task = json.loads(run_json.read_text()).get("task")
    elif args.policy is not None:
        from realgap.envs.eval.policies import read_export

        export = read_export(args.policy, args.task)  # no folder, no export, corrupted, another task: refused here
        args.task = args.task or export[0].task
    task = play_task(args.task or "Realgap-Balance-G1-v0")
    env_cfg, agent_cfg = load_cfgs(task, args.device, args.num_envs, args.seed)
    if checkpoint is not None:  # the run's rates and interface overrides (an observation history, a network size)
        policy_settings(checkpoint).apply(env_cfg, agent_cfg)
    nominal = None
    if args.nominal_of is not None:
        from realgap.envs.eval.policies import read_export

        nominal = read_export(args.nominal_of, args.task)[0]
    if export is not None or nominal is not None:  # the export's action terms (another nominal pose, a ramp)
        from realgap.envs.eval.policies import export_actions

        export_actions(env_cfg, export[0] if export is not None else nominal)
    if args.push_mps is not None:
        if getattr(env_cfg.events, "push", None) is None:
            raise ValueError(f"--push_mps: task {task} has no push event")
        env_cfg.events.push.params["magnitude_mps"] = tuple(args.push_mps)
    if args.episode_s is not None:
        env_cfg.episode_length_s = args.episode_s

    with simulation(env_cfg):
        from isaaclab_rl.rsl_rl import check_rsl_rl_version, handle_deprecated_rsl_rl_cfg

        from realgap.envs.eval.policies import checkpoint_policy, exported_policy, zero_policy
        from realgap.envs.eval.rollout import rollout

        agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, check_rsl_rl_version())
        env = make_env(task, env_cfg)
        if checkpoint is not None:
            policy, label = checkpoint_policy(env, agent_cfg, checkpoint), str(checkpoint)
        elif export is not None:
            policy, label = exported_policy(env, *export), f"export {args.policy}"
        elif nominal is not None:
            import torch

            dim = env.action_manager.total_action_dim
            policy = lambda obs: torch.zeros(obs.shape[0], dim, device=obs.device)  # noqa: E731
            label = f"zero raw action through the terms of {args.nominal_of} (its nominal pose)"
        else:
            policy, label = zero_policy(env), "zero action"
        stats = rollout(env, policy, episodes=args.episodes)  # each policy clips its raw actions as in training
        summary = stats.summary(task_has_success=getattr(env_cfg, "episode_success", None) is not None)
        print(f"[realgap] {task} | {label} | {stats.episodes} episodes of {env_cfg.episode_length_s:g} s")
        for name, value, ci in summary[1:]:
            shown = fmt_value(value) + (f" (95 % CI {ci[0]:.3f}-{ci[1]:.3f})" if ci else "")
            print(f"[realgap] {name}={shown}")
        if args.json:
            record = {"task": task, "policy": label, "episode_s": env_cfg.episode_length_s} | stats.to_dict()
            record["summary"] = {name: {"value": v, "ci95": ci} for name, v, ci in summary}
            Path(args.json).write_text(json.dumps(record, indent=2))
        env.close()
    if checkpoint is not None and not args.no_export:
        from realgap.envs.export.writer import export_checkpoint

        _, result, _ = export_checkpoint(checkpoint, args.task, device=args.device)
        print(f"[realgap] exported policy.onnx + policy.pt + policy.json (metadata) to {result.folder}/ "
              f"(onnxruntime vs torch max |diff| {result.max_abs_diff:.1e})")  # fmt: skip
    return 0


if __name__ == "__main__":
    from realgap.envs.export.metadata import ExportError
    from realgap.envs.run.cli import run_cli
    from realgap.envs.run.run_dir import CheckpointError

    run_cli(main, extra_errors=(CheckpointError, ExportError))
