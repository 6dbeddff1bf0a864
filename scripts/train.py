"""Train a realgap task with PPO (rsl-rl-lib through isaaclab_rl).

    python scripts/train.py --task Realgap-Balance-G1-v0
    python scripts/train.py --task Realgap-Balance-G1-v0 --num_envs 4096 --device cuda
    python scripts/train.py --resume runs/balance_g1/2026-11-29_20-00-00

The default device is CUDA when torch sees one, else the CPU. Runs land in runs/<experiment>/<timestamp>/ with
checkpoints, TensorBoard logs (tensorboard --logdir runs), progress.csv and the resolved configs in params/.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", default="Realgap-Balance-G1-v0", help="registered task id")
    p.add_argument("--num_envs", type=int, default=None, help="parallel envs (default: the task's)")
    p.add_argument("--device", default=None, help="cpu | cuda | cuda:N (default: cuda if available, else cpu)")
    p.add_argument("--seed", type=int, default=None, help="seed for env, policy and PPO (default: the agent cfg's)")
    p.add_argument("--max_iterations", type=int, default=None, help="PPO iterations in total (default: agent cfg's)")
    p.add_argument("--resume", default=None, help="run folder to continue (its latest model_<it>.pt)")
    p.add_argument("--run_name", default="", help="suffix of the run folder name")
    p.add_argument("--log_root", default="runs", help="folder holding all runs")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from realgap.envs.factory import load_cfgs, make_env, simulation
    from realgap.envs.run_dir import new_run_dir, write_params
    from realgap.envs.runner import RealgapRunner, latest_checkpoint

    resume_from = None
    if args.resume:
        resume_from = latest_checkpoint(args.resume)  # fails before anything is built or written
        saved = json.loads((Path(args.resume) / "params" / "run.json").read_text())
        args.task = saved.get("task", args.task)
    env_cfg, agent_cfg = load_cfgs(args.task, args.device, args.num_envs, args.seed)
    if args.max_iterations is not None:
        agent_cfg.max_iterations = args.max_iterations

    with simulation(env_cfg):
        from isaaclab.utils import to_dict
        from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper, check_rsl_rl_version, handle_deprecated_rsl_rl_cfg

        agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, check_rsl_rl_version())
        env = RslRlVecEnvWrapper(make_env(args.task, env_cfg), clip_actions=agent_cfg.clip_actions)
        if resume_from is not None:
            run_dir = Path(args.resume)
        else:
            run_dir = new_run_dir(args.log_root, agent_cfg.experiment_name, args.run_name)
            write_params(run_dir, env_cfg, agent_cfg, {"task": args.task, "device": env_cfg.sim.device})
        print(f"[realgap] task {args.task} | {env.num_envs} envs on {env_cfg.sim.device} | run folder {run_dir}")
        runner = RealgapRunner(env, to_dict(agent_cfg), log_dir=str(run_dir), device=agent_cfg.device)
        if resume_from is not None:
            runner.load(str(resume_from))
            print(f"[realgap] resumed from {resume_from} at iteration {runner.current_learning_iteration}")
        remaining = agent_cfg.max_iterations - runner.current_learning_iteration
        if remaining > 0:
            runner.learn(num_learning_iterations=remaining, init_at_random_ep_len=resume_from is None)
        env.close()
    print(f"[realgap] done: {run_dir}")
    return 0


if __name__ == "__main__":
    from realgap.envs.cli import run_cli
    from realgap.envs.runner import CheckpointError

    run_cli(main, extra_errors=(CheckpointError,))
