"""Every checkpoint of a run under the task's evaluation variant: the learning curve in task metrics.

What ``scripts/eval_checkpoints.py`` runs, callable (and tested) without its command line:
:func:`checkpoints_to_evaluate` picks the checkpoints, :func:`eval_checkpoints` evaluates them (after the zero-action
baseline, all under the same seed) and writes ``<run>/eval_checkpoints.csv``, :func:`time_to_balance_line` says when
the run first reached its target.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realgap.envs.run.progress import Progress
from realgap.envs.run.run_dir import (
    CHECKPOINT_RE,
    env_steps_per_iteration,
    latest_checkpoint,
    run_task,
    training_seconds,
)
from realgap.envs.run.run_record import policy_settings


@dataclass(frozen=True)
class CheckpointsRequest:
    """An evaluation of a run's checkpoints as scripts/eval_checkpoints.py's flags give it (see its ``--help``)."""

    run: str
    episodes: int = 64
    num_envs: int = 64
    device: str | None = None
    seed: int = 0
    every: int = 1
    push_mps: str | tuple[float, float] | list[float] | None = None
    target_survival: float = 0.95
    no_baseline: bool = False


def checkpoints_to_evaluate(run: Path, every: int) -> list[tuple[int, Path]]:
    """The run's ``model_<it>.pt`` whose iteration is a multiple of ``every``, and always the last, by iteration.

    Raises:
        CheckpointError: A missing run folder or one without a checkpoint.
        ValueError: ``every`` < 1.
    """

    if every < 1:
        raise ValueError(f"--every must be >= 1, got {every}")
    latest_checkpoint(run)  # raises a clear error for a missing or empty run folder
    ckpts = sorted((int(m.group(1)), p) for p in run.iterdir() if (m := CHECKPOINT_RE.search(p.name)))
    return [(it, p) for it, p in ckpts if it % every == 0 or it == ckpts[-1][0]]


def time_to_balance_line(rows: list[dict[str, Any]], target: float) -> str:
    """The first checkpoint row (iteration >= 0) whose survival reaches ``target``: its training time and env steps,
    or a line saying none did."""
    reached = [r for r in rows if r["iteration"] >= 0 and r["survival_rate"] >= target]
    if not reached:
        return f"[realgap] no checkpoint reached survival >= {target}"
    first = reached[0]
    return (
        f"[realgap] time-to-balance: survival >= {target} first at iteration {first['iteration']} "
        f"after {first['train_s']} s of training ({first['train_s'] / 60:.1f} min, {first['env_steps']} env "
        "steps)"
    )


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """``rows`` as CSV, the first row's keys as the header."""
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _print_now(line: str) -> None:
    print(line, flush=True)


def eval_checkpoints(req: CheckpointsRequest, echo: Callable[[str], None] = _print_now) -> tuple[list[dict], Path]:
    """Evaluate the zero action (unless ``no_baseline``) and each checkpoint of :func:`checkpoints_to_evaluate`, one
    ``echo`` line each; write the rows to ``<run>/eval_checkpoints.csv``. Returns the rows and that path.

    Every policy runs under the same torch seed, so all see the same pushes and resets.

    Raises:
        ValueError: ``push_mps`` for a task without pushes; see :func:`checkpoints_to_evaluate`.
    """
    from realgap.envs.run.factory import load_cfgs, make_env, simulation
    from realgap.envs.run.runner import RealgapRunner
    from realgap.tasks import play_task

    run = Path(req.run)
    ckpts = checkpoints_to_evaluate(run, req.every)
    task = play_task(run_task(ckpts[-1][1]))  # realgap's or isaaclab train's record; none is refused
    env_cfg, agent_cfg = load_cfgs(task, req.device, req.num_envs, req.seed)
    policy_settings(ckpts[-1][1]).apply(env_cfg, agent_cfg)  # one run: one set of rates and interface overrides
    if req.push_mps is not None:
        from realgap.envs.dr.push import set_push_mps

        set_push_mps(env_cfg, req.push_mps, task)
    seconds = training_seconds(run)
    per_iteration = env_steps_per_iteration(run)
    rows = []
    with simulation(env_cfg):
        import torch
        from isaaclab.utils import to_dict
        from isaaclab_rl.rsl_rl import check_rsl_rl_version, handle_deprecated_rsl_rl_cfg

        from realgap.envs.eval.policies import checkpoint_policy, zero_policy
        from realgap.envs.eval.rollout import rollout
        from realgap.envs.sim.nan_guard import FiniteVecEnv

        agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, check_rsl_rl_version())
        env = make_env(task, env_cfg)
        runner = RealgapRunner(FiniteVecEnv(env), to_dict(agent_cfg), log_dir=None, device=agent_cfg.device)
        policies = [] if req.no_baseline else [(-1, "zero action", None)]
        policies += [(it, path.name, path) for it, path in ckpts]
        progress = Progress("[realgap] eval_checkpoints", len(policies), unit="policies", interval_s=0.0, bar=False)
        for it, label, path in policies:
            # the baseline holds the default pose (action 0)
            act = zero_policy(env) if path is None else checkpoint_policy(env, agent_cfg, path, runner=runner)
            torch.manual_seed(req.seed)  # the same pushes and resets for every policy
            stats = rollout(env, act, episodes=req.episodes, clip_actions=agent_cfg.clip_actions)
            row = {
                "iteration": it,
                "policy": label,
                "train_s": round(seconds.get(it, float("nan")), 1),
                "env_steps": (it + 1) * per_iteration if it >= 0 else 0,
            }
            rows.append(row | stats.flat())
            echo(
                f"[realgap] {label:>14}  train {row['train_s']:8.1f} s  survival {stats.survival_rate:.3f}  "
                f"time-to-fall {stats.mean_time_to_fall_s:.2f} s  return {stats.mean_return:.2f}"
            )
            progress.update(1, survival=stats.survival_rate)
        env.close()
    out = run / "eval_checkpoints.csv"
    write_rows(out, rows)
    return rows, out
