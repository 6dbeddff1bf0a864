"""Run a robustness :class:`~realgap.envs.eval.sweep.Plan`: batches of envs, one point and one counted episode per env.

Used by ``scripts/evaluate.py`` (and, through it, ``scripts/compare_actions.py``). The env must be built from a config
passed through :func:`realgap.envs.eval.robustness.prepare_env_cfg`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch

from realgap.envs.eval.robustness import pin_term
from realgap.envs.eval.sweep import Episode, Plan, Point, pack, point_values
from realgap.envs.run.progress import Progress

Policy = Callable[[torch.Tensor], torch.Tensor]
"""Observation ``(E, D)`` → action ``(E, A)``."""


def zero_policy(env: Any) -> Policy:
    """The zero action (balance: hold the default stance), the baseline every policy must beat."""
    dim = env.action_manager.total_action_dim

    def policy(obs: torch.Tensor) -> torch.Tensor:
        return torch.zeros(obs.shape[0], dim, device=obs.device)

    return policy


def checkpoint_policy(env: Any, agent_cfg: Any, checkpoint: str | Path) -> Policy:
    """The deterministic actor of an rsl-rl checkpoint (loaded with
    :class:`~realgap.envs.run.runner.RealgapRunner`), its raw actions clipped to the agent's ``clip_actions`` as in
    training and in the exported policy's metadata.

    Args:
        env: The unwrapped env the policy runs in.
        agent_cfg: The task's agent config (after ``handle_deprecated_rsl_rl_cfg``).
        checkpoint: A ``model_<it>.pt`` file.
    """
    from isaaclab.utils import to_dict

    from realgap.envs.run.runner import RealgapRunner
    from realgap.envs.sim.nan_guard import FiniteVecEnv

    runner = RealgapRunner(FiniteVecEnv(env), to_dict(agent_cfg), log_dir=None, device=agent_cfg.device)
    runner.load(str(checkpoint))
    actor = runner.get_inference_policy(device=env.device)
    clip = agent_cfg.clip_actions

    def policy(obs: torch.Tensor) -> torch.Tensor:
        action = actor({"policy": obs})
        return action if clip is None else action.clamp(-clip, clip)

    return policy


def read_export(folder: str | Path, task: str | None = None) -> tuple[Any, Path]:
    """The metadata and ``policy.onnx`` of an export folder (as committed in ``configs/policies/``), checked before
    an env is built.

    Args:
        folder: The export folder.
        task: The task it is meant for (``--task``); None takes the export's own.

    Raises:
        ExportError: No folder, no ``policy.onnx`` in it, a file that is not a realgap export (corrupted, or no
            metadata), or an export of another task or robot than ``task``.
    """
    from realgap.envs.deploy import MetadataError, load_metadata
    from realgap.envs.export.metadata import ExportError
    from realgap.tasks import play_task

    folder = Path(folder)
    onnx_path = folder / "policy.onnx"
    if not folder.is_dir():
        raise ExportError(f"--policy {folder}: no such folder")
    if not onnx_path.is_file():
        raise ExportError(f"--policy {folder}: no export there (policy.onnx missing; scripts/export.py writes one)")
    try:
        meta = load_metadata(onnx_path)
    except (MetadataError, KeyError, TypeError, ValueError) as err:
        raise ExportError(f"--policy {folder}: policy.onnx holds no valid realgap metadata ({err})") from err
    except Exception as err:  # onnxruntime raises its own types for a file that is not an ONNX model
        raise ExportError(f"--policy {folder}: policy.onnx is not a readable ONNX model ({type(err).__name__}: "
                          f"{str(err).splitlines()[0]})") from err  # fmt: skip
    if task is not None and play_task(task) != play_task(meta.task):
        raise ExportError(f"--policy {folder} is an export of task {meta.task} (robot '{meta.robot.name}'), "
                          f"not of {task}")  # fmt: skip
    return meta, onnx_path


def exported_policy(env: Any, meta: Any, onnx_path: Path) -> Policy:
    """The exported ONNX graph (normalizer folded in) on onnxruntime, its raw actions clipped as the metadata says.

    The graph is exported for one observation at a time (a robot's batch of 1); here its batch axis is relaxed in
    memory so one call serves every env. Before that the export is checked against the env: robot description
    hash, joint names and order, observation size.

    Raises:
        ExportError: Listing each mismatch with the env.
    """
    import numpy as np
    import onnx
    import onnxruntime as ort

    from realgap.envs.export.metadata import ExportError
    from realgap.envs.robots import ROBOTS
    from realgap.envs.sim.assets import description_hash

    robot = env.scene["robot"]
    obs_dim = env.observation_manager.group_obs_dim["policy"][0]
    problems = []
    source = ROBOTS.get(meta.robot.name)
    if source is None or description_hash(source) != meta.robot.description_sha256:
        problems.append(f"robot '{meta.robot.name}': its description (sha256 {meta.robot.description_sha256[:12]}…) "
                        "is not the installed one")  # fmt: skip
    if tuple(robot.joint_names) != tuple(meta.joint_names):
        problems.append(f"joints: the export drives {list(meta.joint_names)}, the env has {list(robot.joint_names)}")
    if meta.obs_dim != obs_dim:
        problems.append(f"observation size: the export reads {meta.obs_dim}, the env gives {obs_dim}")
    if problems:
        raise ExportError(f"{onnx_path.parent} does not fit this env:\n  - " + "\n  - ".join(problems))
    model = onnx.load(str(onnx_path))
    for value in (*model.graph.input, *model.graph.output):
        value.type.tensor_type.shape.dim[0].dim_param = "batch"
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    raw_clip = meta.actions.raw_clip  # the env's action terms apply scale, offset and target limits themselves

    def policy(obs: torch.Tensor) -> torch.Tensor:
        out = session.run(None, {name: obs.detach().cpu().numpy().astype(np.float32)})[0]
        action = torch.as_tensor(out, device=obs.device)
        return action if raw_clip is None else action.clamp(-raw_clip, raw_clip)

    return policy


@torch.inference_mode()
def first_episodes(env: Any, policy: Policy) -> list[Episode]:
    """Reset every env and run until each has ended one episode; that first episode of each env, in env order.

    Success is the task's ``env_cfg.episode_success`` when it defines one (grasp), else survival to the time-out.
    """
    obs, _ = env.reset()
    n = env.num_envs
    ret = torch.zeros(n, device=env.device)
    steps = torch.zeros(n, dtype=torch.long, device=env.device)
    ended = torch.zeros(n, dtype=torch.bool, device=env.device)
    out: list[Episode | None] = [None] * n
    success_fn = getattr(env.cfg, "episode_success", None)
    for _ in range(int(env.max_episode_length) + 2):
        obs, rew, terminated, truncated, _ = env.step(policy(obs["policy"]))
        ret += rew
        steps += 1
        done = (terminated | truncated) & ~ended
        if bool(done.any()):
            success = success_fn(env) if success_fn is not None else None
            for i in done.nonzero().flatten().tolist():
                survived = bool(truncated[i]) and not bool(terminated[i])
                ok = survived if success is None else bool(success[i])
                out[i] = Episode(ok, survived, float(steps[i]) * env.step_dt, float(ret[i]))
            ended |= done
        if bool(ended.all()):
            break
    if not bool(ended.all()):
        raise RuntimeError(f"{int((~ended).sum())} envs did not end an episode within the episode length")
    return [e for e in out if e is not None]


def run_plan(
    env: Any,
    policies: Mapping[str, Policy],
    plan: Plan,
    episodes: int,
    seed: int = 0,
    progress_interval_s: float = 30.0,
) -> dict[str, dict[Point, list[Episode]]]:
    """Evaluate every policy at every point of ``plan`` for ``episodes`` episodes each.

    Points are packed into batches of ``env.num_envs`` envs (spare envs of the last batch run the nominal point and
    are not counted). Every policy sees the same batches with the same torch seed (``seed`` + batch index), so the
    resets and pushes they face are drawn alike.

    Progress (episodes done of points × episodes × policies, with an ETA) is shown every ``progress_interval_s``.

    Returns:
        Policy label → point → its episodes.
    """
    term = pin_term(env)
    batches = pack(plan.points, episodes, env.num_envs)
    results: dict[str, dict[Point, list[Episode]]] = {label: {p: [] for p in plan.points} for label in policies}
    progress = Progress("[realgap] evaluate", len(plan.points) * episodes * len(policies), unit="episodes",
                        interval_s=progress_interval_s)  # fmt: skip
    for b, batch in enumerate(batches):
        rows = [point_values(p, plan.nominal) for p in batch]
        rows += [dict(plan.nominal)] * (env.num_envs - len(batch))
        term.set_values({k: torch.tensor([r[k] for r in rows]) for k in plan.nominal})
        for label, policy in policies.items():
            torch.manual_seed(seed + b)
            for point, episode in zip(batch, first_episodes(env, policy), strict=False):
                results[label][point].append(episode)
            progress.update(len(batch), batch=f"{b + 1}/{len(batches)}", policy=label)
    progress.close()
    return results
