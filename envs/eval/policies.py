"""The policies an evaluation runs, all as ``Policy`` (observation ``(E, D)`` → action ``(E, A)``, torch): the zero
action, an rsl-rl checkpoint's deterministic actor, and an exported ONNX policy (checked against the env first).

The one place a checkpoint becomes a policy (``scripts/play.py``, ``evaluate.py``, ``eval_checkpoints.py``, the
single-push limit); the torch-free deploy runtime has its own :class:`realgap.envs.deploy.ZeroPolicy`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from realgap.envs.rates import RateSpec

Policy = Callable[[torch.Tensor], torch.Tensor]
"""Observation ``(E, D)`` → action ``(E, A)``."""


def zero_policy(env: Any) -> Policy:
    """The zero action of the task (balance: hold the default stance), the baseline every policy must beat: every
    joint-position term's targets at the robot's default pose, ``(q_default - offset) / scale`` (unclipped), zeros on
    other terms. With the task's own terms (offset = the default pose) that is exactly zero; in an env built around
    another nominal pose (an export's or a run's interface, e.g. the crouch lever and its ramp) it is still the task's
    stance, not the policy's nominal pose.
    """
    dim = env.action_manager.total_action_dim
    terms, start = [], 0
    for name in env.action_manager.active_terms:
        term = env.action_manager.get_term(name)
        if hasattr(term, "default_pose_action"):  # realgap's joint-position terms (offset + scale * a)
            terms.append((slice(start, start + term.action_dim), term))
        start += term.action_dim

    def policy(obs: torch.Tensor) -> torch.Tensor:
        actions = torch.zeros(obs.shape[0], dim, device=obs.device)
        for sl, term in terms:
            actions[:, sl] = term.default_pose_action()
        return actions

    return policy


def check_export_rates(meta: Any) -> None:
    """Refuse an export whose rates disagree with the physics step it recorded (``simulator.physics_dt``); the rates
    themselves were built by ``RateSpec.from_dict``, which checks their own ``sim_dt`` and ``decimation``.

    Raises:
        ExportError: Naming both values.
    """
    from realgap.envs.export.metadata import ExportError

    dt = (meta.simulator or {}).get("physics_dt")
    if dt is not None and abs(float(dt) - meta.rates.sim_dt) > 1e-9:
        raise ExportError(
            f"the export's simulator.physics_dt = {dt} s disagrees with its rates {meta.rates.to_dict()} "
            f"(sim_dt {meta.rates.sim_dt} s): the metadata is inconsistent"
        )


def export_actions(env_cfg: Any, meta: Any) -> None:
    """Give ``env_cfg`` the export's interface: its rates (physics step, decimation and chains derived from them, as a
    run's rates are for its checkpoints), its joint-position action terms' offset, scale and ramp (per joint, by
    exact name) and its binary terms' setpoint speed, so that the policy's raw actions mean the same targets as in
    training whatever nominal pose it was trained around (``--set env.actions.joint_pos.offset=...``; for an export
    of the task as defined nothing changes). Call before the env is built; :func:`exported_policy` then checks every
    term and the rates.

    Raises:
        ExportError: Inconsistent rates (:func:`check_export_rates`), an env cfg without an action term of that name,
            or without ``ramp_s`` where the export has a ramp.
    """

    from realgap.envs.export.metadata import ExportError
    from realgap.envs.run.factory import apply_rates

    check_export_rates(meta)

    for term in meta.actions.terms:
        if term.type == "binary_joint_position" and hasattr(getattr(env_cfg.actions, term.name, None), "max_speed"):
            # the hand's speed as the export ran it (absent: the idealised hand of exports made before it)
            speed = term.params.get("speed")
            getattr(env_cfg.actions, term.name).max_speed = None if speed is None else float(speed[0])
        if term.type not in ("joint_position_offset", "joint_position_measured"):
            continue
        cfg = getattr(env_cfg.actions, term.name, None)
        if cfg is None:
            raise ExportError(f"the export's action term '{term.name}' is not an action term of {meta.task}")
        cfg.scale = {re.escape(j): float(v) for j, v in zip(term.joint_names, term.params["scale"], strict=True)}
        if term.type == "joint_position_measured":
            if not hasattr(cfg, "relative_to"):
                raise ExportError(
                    f"the export's action term '{term.name}' sets targets about the measured joint positions; "
                    f"{meta.task}'s term cannot (no relative_to)"
                )
            cfg.relative_to = "measured"
            continue
        cfg.use_default_offset = False
        cfg.offset = {re.escape(j): float(v) for j, v in zip(term.joint_names, term.params["offset"], strict=True)}
        ramp = float(term.params.get("ramp_s", 0.0))
        if ramp > 0 and not hasattr(cfg, "ramp_s"):
            raise ExportError(
                f"the export's action term '{term.name}' ramps into its offset over {ramp:g} s; "
                f"{meta.task}'s term has no ramp_s"
            )
        if hasattr(cfg, "ramp_s"):
            cfg.ramp_s = ramp
    apply_rates(env_cfg, meta.rates)


def checkpoint_policy(env: Any, agent_cfg: Any, checkpoint: str | Path, runner: Any = None) -> Policy:
    """The deterministic actor of an rsl-rl checkpoint (loaded with
    :class:`~realgap.envs.run.runner.RealgapRunner`), its raw actions clipped to the agent's ``clip_actions`` as in
    training and in the exported policy's metadata.

    Args:
        env: The unwrapped env the policy runs in.
        agent_cfg: The task's agent config (after ``handle_deprecated_rsl_rl_cfg``).
        checkpoint: A ``model_<it>.pt`` file.
        runner: A :class:`~realgap.envs.run.runner.RealgapRunner` on ``env`` to load it into (one is built if None;
            pass one to load several checkpoints into the same runner).
    """
    from isaaclab.utils import to_dict

    from realgap.envs.run.runner import RealgapRunner
    from realgap.envs.sim.nan_guard import FiniteVecEnv

    if runner is None:
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
            metadata), inconsistent rates, or an export of another task or robot than ``task``.
    """
    from realgap.envs.export.metadata import ExportError
    from realgap.envs.format import MetadataError
    from realgap.envs.format.verify import ExportIntegrityError, load_verified
    from realgap.tasks import play_task

    folder = Path(folder)
    onnx_path = folder / "policy.onnx"
    if not folder.is_dir():
        raise ExportError(f"--policy {folder}: no such folder")
    if not onnx_path.is_file():
        raise ExportError(f"--policy {folder}: no export there (policy.onnx missing; scripts/export.py writes one)")
    try:
        meta, onnx_path = load_verified(folder)
    except (ExportIntegrityError, FileNotFoundError) as err:
        raise ExportError(f"--policy {folder}: refused: {err}") from err
    except (MetadataError, KeyError, TypeError, ValueError) as err:
        raise ExportError(f"--policy {folder}: policy.onnx holds no valid realgap metadata ({err})") from err
    except Exception as err:  # onnxruntime raises its own types for a file that is not an ONNX model
        raise ExportError(
            f"--policy {folder}: policy.onnx is not a readable ONNX model ({type(err).__name__}: "
            f"{str(err).splitlines()[0]})"
        ) from err
    check_export_rates(meta)
    if task is not None and play_task(task) != play_task(meta.task):
        raise ExportError(
            f"--policy {folder} is an export of task {meta.task} (robot '{meta.robot.name}'), not of {task}"
        )
    return meta, onnx_path


def exported_policy(env: Any, meta: Any, onnx_path: Path) -> Policy:
    """The exported ONNX graph (normalizer folded in) on onnxruntime, its raw actions clipped as the metadata says.

    The graph is exported for one observation at a time (a robot's batch of 1); here its batch axis is relaxed in
    memory so one call serves every env. Before that the export is checked against the env: robot description
    hash, joint names and order, observation size, rates, action terms (the env must be built with
    :func:`export_actions`).

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
        problems.append(
            f"robot '{meta.robot.name}': its description (sha256 {meta.robot.description_sha256[:12]}…) "
            "is not the installed one"
        )
    if tuple(robot.joint_names) != tuple(meta.joint_names):
        problems.append(f"joints: the export drives {list(meta.joint_names)}, the env has {list(robot.joint_names)}")
    if meta.obs_dim != obs_dim:
        problems.append(f"observation size: the export reads {meta.obs_dim}, the env gives {obs_dim}")
    if RateSpec.from_dict(env.cfg.rates) != meta.rates:
        problems.append(
            f"rates: the export was trained at {meta.rates.to_dict()}, the env runs {env.cfg.rates} "
            "(build it with export_actions)"
        )
    if problems:
        raise ExportError(f"{onnx_path.parent} does not fit this env:\n  - " + "\n  - ".join(problems))
    model = onnx.load(str(onnx_path))
    for value in (*model.graph.input, *model.graph.output):
        value.type.tensor_type.shape.dim[0].dim_param = "batch"
    del model.graph.value_info[:]  # intermediate shapes recorded for batch 1: let onnxruntime infer them again
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    raw_clip = meta.actions.raw_clip  # the env's action terms apply scale, offset and target limits themselves
    from realgap.envs.export.actions import check_actions

    check_actions(meta, env)  # built with export_actions(env_cfg, meta): the same terms, so last_action means the same
    from realgap.envs.export.metadata import check_gains

    check_gains(meta, env)  # the export's own kp, kd, peak torque, or a refusal

    def policy(obs: torch.Tensor) -> torch.Tensor:
        out = session.run(None, {name: obs.detach().cpu().numpy().astype(np.float32)})[0]
        action = torch.as_tensor(out, device=obs.device)
        return action if raw_clip is None else action.clamp(-raw_clip, raw_clip)

    return policy
