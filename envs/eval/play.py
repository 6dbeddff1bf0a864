"""Play one policy: N episodes of the task's evaluation variant, the task metrics with their intervals, the export.

What ``scripts/play.py`` runs, callable (and tested) without its command line: :func:`check_request` refuses a bad
combination of inputs, :func:`resolve_policy_source` reads the checkpoint or export (and the task it belongs to) before
any env is built, :func:`play` builds the env, rolls the policy out, writes the optional JSON and exports a checkpoint;
:func:`metric_lines` says the result as play.py prints it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realgap.envs.eval.robustness.evaluation import ZERO_ACTION_TASK
from realgap.envs.run.memory import check_env_memory
from realgap.envs.run.progress import fmt_value
from realgap.envs.run.run_dir import check_checkpoint, latest_checkpoint, run_task
from realgap.envs.run.run_record import policy_settings


@dataclass(frozen=True)
class PlayRequest:
    """A play as scripts/play.py's flags give it (see its ``--help`` for each)."""

    task: str | None = None
    episodes: int = 64
    num_envs: int = 32
    device: str | None = None
    seed: int = 0
    checkpoint: str | None = None
    policy: str | None = None
    episode_s: float | None = None
    push_mps: str | tuple[float, float] | list[float] | None = None
    zero_action: bool = False
    nominal_of: str | None = None
    no_export: bool = False
    json: str | None = None


def check_request(req: PlayRequest) -> None:
    """Refuse a bad combination of inputs before anything is read or built.

    Raises:
        ValueError: Not exactly one of checkpoint, export and zero action; ``nominal_of`` without the zero action; an
            episode length that is not > 0.
    """
    if sum(x is not None and x is not False for x in (req.checkpoint, req.policy, req.zero_action or None)) != 1:
        raise ValueError("give one of --checkpoint RUN, --policy EXPORT_DIR or --zero_action")
    if req.nominal_of is not None and not req.zero_action:
        raise ValueError("--nominal_of EXPORT_DIR goes with --zero_action")
    if req.episode_s is not None and not req.episode_s > 0:
        raise ValueError(f"--episode_s must be > 0 s, got {req.episode_s}")


def resolve_policy_source(req: PlayRequest) -> tuple[str | None, Path | None, tuple[Any, Path] | None]:
    """The task id the policy names (``req.task`` first, then the run's record, realgap's or Isaac Lab's
    (:func:`~realgap.envs.run.run_dir.run_task`), then the export's metadata), the
    checkpoint file and the export ``(metadata, onnx path)``; a corrupt checkpoint or a bad export is refused here.

    Raises:
        CheckpointError: A missing or corrupt checkpoint.
        ExportError: No such folder, no export there, an unreadable graph, another task's export.
    """

    task, checkpoint, export = req.task, None, None
    if req.checkpoint is not None:
        path = Path(req.checkpoint)
        checkpoint = path if path.is_file() else latest_checkpoint(path)
        check_checkpoint(checkpoint)  # a corrupt file fails here, before an env is built
        task = task or run_task(checkpoint)  # realgap's or isaaclab train's record; none is refused
    elif req.policy is not None:
        from realgap.envs.eval.policies import read_export

        export = read_export(req.policy, req.task)  # no folder, no export, corrupted, another task: refused here
        task = task or export[0].task
    return task, checkpoint, export


def metric_lines(task: str, label: str, episodes: int, episode_s: float, summary: list) -> list[str]:
    """The rollout as play.py prints it: a header, then one ``name=value (95 % CI lo-hi)`` line per metric after the
    first (``summary`` as :meth:`realgap.envs.eval.rollout.RolloutStats.summary` gives it)."""

    lines = [f"[realgap] {task} | {label} | {episodes} episodes of {episode_s:g} s"]
    for name, value, ci in summary[1:]:
        shown = fmt_value(value) + (f" (95 % CI {ci[0]:.3f}-{ci[1]:.3f})" if ci else "")
        lines.append(f"[realgap] {name}={shown}")
    return lines


def play(req: PlayRequest, echo: Callable[[str], None] = print) -> dict[str, Any]:
    """Roll the requested policy out, ``echo`` the metrics (and the export of a checkpoint); the JSON record.

    Every input is checked before an env is built (:func:`check_request`, :func:`resolve_policy_source`).

    Raises:
        ValueError: See :func:`check_request`; ``push_mps`` for a task without pushes.
    """
    check_request(req)
    from realgap.envs.run.factory import load_cfgs, make_env, simulation
    from realgap.tasks import play_task

    task_id, checkpoint, export = resolve_policy_source(req)
    task = play_task(task_id or ZERO_ACTION_TASK)
    if not str(req.device or "").startswith("cuda"):  # the envs' estimated memory against the machine's, up front
        check_env_memory(task, req.num_envs)
    env_cfg, agent_cfg = load_cfgs(task, req.device, req.num_envs, req.seed)
    if checkpoint is not None:  # the run's rates and interface overrides (an observation history, a network size)
        policy_settings(checkpoint).apply(env_cfg, agent_cfg)
    nominal = None
    if req.nominal_of is not None:
        from realgap.envs.eval.policies import read_export

        nominal = read_export(req.nominal_of, task_id)[0]
    if export is not None or nominal is not None:  # the export's action terms (another nominal pose, a ramp)
        from realgap.envs.eval.policies import export_actions

        export_actions(env_cfg, export[0] if export is not None else nominal)
    if req.push_mps is not None:
        from realgap.envs.dr.push import set_push_mps

        set_push_mps(env_cfg, req.push_mps, task)
    if req.episode_s is not None:
        env_cfg.episode_length_s = req.episode_s

    with simulation(env_cfg):
        from isaaclab_rl.rsl_rl import check_rsl_rl_version, handle_deprecated_rsl_rl_cfg

        from realgap.envs.eval.policies import checkpoint_policy, exported_policy, zero_policy
        from realgap.envs.eval.rollout import rollout

        agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, check_rsl_rl_version())
        env = make_env(task, env_cfg)
        if checkpoint is not None:
            policy, label = checkpoint_policy(env, agent_cfg, checkpoint), str(checkpoint)
        elif export is not None:
            policy, label = exported_policy(env, *export), f"export {req.policy}"
        elif nominal is not None:
            import torch

            dim = env.action_manager.total_action_dim
            policy = lambda obs: torch.zeros(obs.shape[0], dim, device=obs.device)  # noqa: E731
            label = f"zero raw action through the terms of {req.nominal_of} (its nominal pose)"
        else:
            policy, label = zero_policy(env), "zero action"
        stats = rollout(env, policy, episodes=req.episodes)  # each policy clips its raw actions as in training
        summary = stats.summary(task_has_success=getattr(env_cfg, "episode_success", None) is not None)
        for line in metric_lines(task, label, stats.episodes, env_cfg.episode_length_s, summary):
            echo(line)
        record = {"task": task, "policy": label, "episode_s": env_cfg.episode_length_s} | stats.to_dict()
        record["summary"] = {name: {"value": v, "ci95": ci} for name, v, ci in summary}
        if req.json:
            Path(req.json).write_text(json.dumps(record, indent=2))
        env.close()
    if checkpoint is not None and not req.no_export:
        from realgap.envs.export.writer import export_checkpoint

        _, result, _ = export_checkpoint(checkpoint, task_id, device=req.device)
        echo(
            f"[realgap] exported policy.onnx + policy.pt + policy.json (metadata) to {result.folder}/ "
            f"(onnxruntime vs torch max |diff| {result.max_abs_diff:.1e})"
        )
    return record
