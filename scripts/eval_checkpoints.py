"""Evaluate every checkpoint of a run under the task's evaluation variant: the learning curve in task metrics.

    python scripts/eval_checkpoints.py --run runs/balance_g1/<timestamp> --episodes 64
    python scripts/eval_checkpoints.py --run runs/balance_g1/<timestamp> --every 50 --target_survival 0.95

For each model_<it>.pt (every ``--every`` iterations), runs ``--episodes`` episodes of the Play variant (for the
balance task: the default pushes at full magnitude from the first second, no curriculum, no observation noise) and
writes <run>/eval_checkpoints.csv with the iteration, the training wall-clock time up to that checkpoint (sum of
collect and learn times in progress.csv), the env steps up to it and the metrics; its first row (iteration -1) is the
zero-action baseline under the same seed, pushes and resets. Also prints the first checkpoint reaching
``--target_survival`` (time-to-balance: minutes and env steps) when one does.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from realgap.envs.run.cli import add_push_arg, nonnegative_float, parser, positive_int, shared_flags

    p = parser(__doc__, shared_flags("episodes", "num_envs", "device", "seed", episodes=64, num_envs=64))
    p.add_argument("--run", required=True, help="run folder")
    p.add_argument("--every", type=positive_int, default=1, help="evaluate iterations that are multiples of N")
    add_push_arg(p)
    p.add_argument("--target_survival", type=nonnegative_float, default=0.95)
    p.add_argument("--no_baseline", action="store_true", help="skip the zero-action baseline row")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from realgap.envs.run.factory import load_cfgs, make_env, simulation
    from realgap.envs.run.run_dir import (
        CHECKPOINT_RE,
        env_steps_per_iteration,
        latest_checkpoint,
        policy_settings,
        training_seconds,
    )
    from realgap.envs.run.runner import RealgapRunner
    from realgap.tasks import play_task

    run = Path(args.run)
    latest_checkpoint(run)  # raises a clear error for a missing or empty run folder
    ckpts = sorted((int(m.group(1)), p) for p in run.iterdir() if (m := CHECKPOINT_RE.search(p.name)))
    ckpts = [(it, p) for it, p in ckpts if it % args.every == 0 or it == ckpts[-1][0]]
    task = play_task(json.loads((run / "params" / "run.json").read_text())["task"])
    env_cfg, agent_cfg = load_cfgs(task, args.device, args.num_envs, args.seed)
    policy_settings(ckpts[-1][1]).apply(env_cfg, agent_cfg)  # one run: one set of rates and interface overrides
    if args.push_mps is not None:
        if getattr(env_cfg.events, "push", None) is None:
            raise ValueError(f"--push_mps: task {task} has no push event")
        env_cfg.events.push.params["magnitude_mps"] = tuple(args.push_mps)
    seconds = training_seconds(run)
    per_iteration = env_steps_per_iteration(run)
    rows = []
    with simulation(env_cfg):
        import torch
        from isaaclab.utils import to_dict
        from isaaclab_rl.rsl_rl import check_rsl_rl_version, handle_deprecated_rsl_rl_cfg

        from realgap.envs.eval.policies import checkpoint_policy, zero_policy
        from realgap.envs.eval.rollout import rollout
        from realgap.envs.run.progress import Progress
        from realgap.envs.sim.nan_guard import FiniteVecEnv

        agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, check_rsl_rl_version())
        env = make_env(task, env_cfg)
        runner = RealgapRunner(FiniteVecEnv(env), to_dict(agent_cfg), log_dir=None, device=agent_cfg.device)
        policies = [] if args.no_baseline else [(-1, "zero action", None)]
        policies += [(it, path.name, path) for it, path in ckpts]
        progress = Progress("[realgap] eval_checkpoints", len(policies), unit="policies", interval_s=0.0, bar=False)
        for it, label, path in policies:
            # the baseline holds the default pose (action 0)
            act = zero_policy(env) if path is None else checkpoint_policy(env, agent_cfg, path, runner=runner)
            torch.manual_seed(args.seed)  # the same pushes and resets for every policy
            stats = rollout(env, act, episodes=args.episodes, clip_actions=agent_cfg.clip_actions)
            row = {"iteration": it, "policy": label, "train_s": round(seconds.get(it, float("nan")), 1),
                   "env_steps": (it + 1) * per_iteration if it >= 0 else 0}  # fmt: skip
            rows.append(row | stats.flat())
            print(
                f"[realgap] {label:>14}  train {row['train_s']:8.1f} s  survival {stats.survival_rate:.3f}  "
                f"time-to-fall {stats.mean_time_to_fall_s:.2f} s  return {stats.mean_return:.2f}",
                flush=True,
            )
            progress.update(1, survival=stats.survival_rate)
        env.close()
    with open(run / "eval_checkpoints.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    reached = [r for r in rows if r["iteration"] >= 0 and r["survival_rate"] >= args.target_survival]
    if reached:
        first = reached[0]
        print(f"[realgap] time-to-balance: survival >= {args.target_survival} first at iteration {first['iteration']} "
              f"after {first['train_s']} s of training ({first['train_s'] / 60:.1f} min, {first['env_steps']} env "
              "steps)")  # fmt: skip
    else:
        print(f"[realgap] no checkpoint reached survival >= {args.target_survival}")
    print(f"[realgap] wrote {run / 'eval_checkpoints.csv'}")
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli
    from realgap.envs.run.run_dir import CheckpointError

    run_cli(main, extra_errors=(CheckpointError,))
