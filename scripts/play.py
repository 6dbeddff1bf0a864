"""Play a trained policy: run N episodes of the task's evaluation variant, print the task metrics, export the policy.

    python scripts/play.py --checkpoint runs/balance_g1/2026-11-29_20-00-00
    python scripts/play.py --checkpoint runs/balance_g1/<run>/model_300.pt --episodes 200 --num_envs 64
    python scripts/play.py --task Realgap-Balance-G1-v0 --zero_action     # baseline: hold the default pose

Exports ``policy.onnx`` (observation normalizer folded in, metadata embedded), ``policy.pt`` (TorchScript) and
``policy.json`` (joint order, action scale, gains, rates, observation layout...) into <run>/exported/, as
``scripts/export.py`` does.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from realgap.envs.cli import add_push_arg

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", default=None, help="run folder (latest model_<it>.pt) or a model_<it>.pt file")
    p.add_argument("--task", default=None, help="task id (default: the run's task); its Play variant is used")
    p.add_argument("--episodes", type=int, default=64, help="episodes to count")
    p.add_argument("--num_envs", type=int, default=32)
    p.add_argument("--device", default=None, help="cpu | cuda | cuda:N (default: cuda if available, else cpu)")
    p.add_argument("--seed", type=int, default=0)
    add_push_arg(p)
    p.add_argument("--zero_action", action="store_true", help="evaluate the zero action (no checkpoint needed)")
    p.add_argument("--no_export", action="store_true", help="skip the ONNX / TorchScript export")
    p.add_argument("--json", default=None, help="also write the metrics to this JSON file")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from realgap.envs.factory import load_cfgs, make_env, simulation
    from realgap.envs.run_dir import check_checkpoint, latest_checkpoint
    from realgap.tasks import play_task

    checkpoint = None
    if not args.zero_action:
        if args.checkpoint is None:
            raise ValueError("--checkpoint is required (or --zero_action for the hold-the-pose baseline)")
        path = Path(args.checkpoint)
        checkpoint = path if path.is_file() else latest_checkpoint(path)
        check_checkpoint(checkpoint)  # a corrupt file fails here, before an env is built
        run_json = checkpoint.parent / "params" / "run.json"
        if args.task is None and run_json.is_file():
            args.task = json.loads(run_json.read_text()).get("task")
    task = play_task(args.task or "Realgap-Balance-G1-v0")
    env_cfg, agent_cfg = load_cfgs(task, args.device, args.num_envs, args.seed)
    if args.push_mps is not None:
        if getattr(env_cfg.events, "push", None) is None:
            raise ValueError(f"--push_mps: task {task} has no push event")
        env_cfg.events.push.params["magnitude_mps"] = tuple(args.push_mps)

    with simulation(env_cfg):
        import torch
        from isaaclab.utils import to_dict
        from isaaclab_rl.rsl_rl import check_rsl_rl_version, handle_deprecated_rsl_rl_cfg

        from realgap.envs.evaluation import rollout
        from realgap.envs.nan_guard import FiniteVecEnv
        from realgap.envs.runner import RealgapRunner

        agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, check_rsl_rl_version())
        env = make_env(task, env_cfg)
        if checkpoint is None:
            action_dim = env.action_manager.total_action_dim

            def policy(obs):
                return torch.zeros(obs.shape[0], action_dim, device=obs.device)

        else:
            runner = RealgapRunner(FiniteVecEnv(env), to_dict(agent_cfg), log_dir=None, device=agent_cfg.device)
            runner.load(str(checkpoint))
            actor = runner.get_inference_policy(device=env.device)

            def policy(obs):
                return actor({"policy": obs})

        stats = rollout(env, policy, episodes=args.episodes, clip_actions=agent_cfg.clip_actions)
        label = "zero action" if checkpoint is None else str(checkpoint)
        print(f"[realgap] {task} | {label} | {stats.episodes} episodes")
        for key, value in stats.to_dict().items():
            print(f"  {key:>22}: {value:.4g}" if isinstance(value, float) else f"  {key:>22}: {value}")
        if args.json:
            Path(args.json).write_text(json.dumps({"task": task, "policy": label} | stats.to_dict(), indent=2))
        env.close()
    if checkpoint is not None and not args.no_export:
        from realgap.envs.export import export_checkpoint

        _, result, _ = export_checkpoint(checkpoint, args.task, device=args.device)
        print(f"[realgap] exported policy.onnx + policy.pt + policy.json (metadata) to {result.folder}/ "
              f"(onnxruntime vs torch max |diff| {result.max_abs_diff:.1e})")  # fmt: skip
    return 0


if __name__ == "__main__":
    from realgap.envs.cli import run_cli
    from realgap.envs.export_metadata import ExportError
    from realgap.envs.run_dir import CheckpointError

    run_cli(main, extra_errors=(CheckpointError, ExportError))
