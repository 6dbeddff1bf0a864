"""Closed-loop sim2sim: one exported balance policy, the same pushes, in Isaac Lab and in plain MuJoCo C.

Both engines run the policy artefact a robot would run (the ONNX graph through onnxruntime, or the zero action), the
same datasheet actuator chain at the same physics / servo / policy rates, start from the same spawn pose at rest and
face the same push schedule (:func:`realgap.envs.deploy.episode.schedules`, drawn from the seed; one schedule per
episode, replayed in both). MuJoCo runs the deploy runtime (:mod:`realgap.envs.deploy`, numpy only); Isaac Lab runs
the task's evaluation variant with its own pushes switched off and its reset randomization zeroed, one env per
episode, and the scheduled pushes written at the same policy steps. What still differs by design: each engine draws
its own per-env command delays from the datasheet range, and the contact models (MuJoCo C vs MuJoCo-Warp on Newton's
imported colliders).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from realgap.envs.deploy.episode import EpisodeResult, Push, run_episode
from realgap.envs.deploy.mujoco_robot import MujocoRobot
from realgap.envs.deploy.runtime import DeployRuntime, Policy
from realgap.envs.export.actions import check_actions
from realgap.envs.format.metadata import PolicyMetadata
from realgap.envs.format.protocol import BalanceProtocol


def mujoco_episodes(
    meta: PolicyMetadata, policy: Policy, plan: Sequence[Sequence[Push]], protocol: BalanceProtocol, seed: int = 0
) -> list[EpisodeResult]:
    """Run every scheduled episode on the MuJoCo C robot through the deploy runtime."""

    robot = MujocoRobot.for_policy(meta, pose="training_spawn")  # the spawn Isaac Lab resets to, as said above
    runtime = DeployRuntime(meta, robot, policy, seed=seed)
    return [run_episode(runtime, robot, s, protocol) for s in plan]


def prepare_isaac_cfg(env_cfg: Any, episodes: int, duration_s: float) -> None:
    """One env per episode, no own pushes, reset exactly to the spawn pose (the MuJoCo robot's reset)."""
    env_cfg.scene.num_envs = episodes
    env_cfg.episode_length_s = duration_s
    from realgap.envs.dr.push import find_push

    found = find_push(env_cfg.events)
    if found is not None:
        setattr(env_cfg.events, found[0], None)
    env_cfg.events.reset_base.params["pose_range"] = {}
    env_cfg.events.reset_base.params["velocity_range"] = {}
    env_cfg.events.reset_joints.params["position_range"] = (0.0, 0.0)


def isaac_episodes(
    env: Any, meta: PolicyMetadata, policy: Policy, plan: Sequence[Sequence[Push]]
) -> list[EpisodeResult]:
    """Run the scheduled episodes in the (unwrapped) Isaac Lab env prepared by :func:`prepare_isaac_cfg`.

    Env ``e`` runs episode ``e``; the episode ends at the env's first termination (a fall) or time-out. Raw actions
    are clipped to the exported ``raw_clip`` as in training and on the robot. The env must carry the export's action
    terms (:func:`realgap.envs.eval.policies.export_actions` on its cfg): checked here.
    """
    import torch

    from realgap.envs.dr.push import add_root_velocity_xy

    if env.num_envs != len(plan):
        raise ValueError(f"the env has {env.num_envs} envs for {len(plan)} episodes")

    robot = env.scene["robot"]
    clip = meta.actions.raw_clip or math.inf
    check_actions(meta, env)  # the env built with the export's action terms (export_actions)
    queues = [list(s) for s in plan]
    applied = [0] * len(plan)
    results: list[EpisodeResult | None] = [None] * len(plan)
    obs, _ = env.reset()
    with torch.inference_mode():
        for k in range(int(env.max_episode_length)):
            t = k * env.step_dt
            for e, queue in enumerate(queues):
                while queue and queue[0].time_s <= t + 1e-9:
                    dv = torch.tensor(queue.pop(0).dv_xy, device=env.device)
                    add_root_velocity_xy(robot, torch.tensor([e]), dv[0], dv[1])
                    applied[e] += 1
            rows = obs["policy"].cpu().numpy()
            actions = np.clip(np.stack([policy(row) for row in rows]), -clip, clip)
            obs, _, terminated, truncated, _ = env.step(torch.as_tensor(actions, device=env.device))
            for e in (terminated | truncated).nonzero().flatten().tolist():
                if results[e] is None:
                    fell = bool(terminated[e])
                    results[e] = EpisodeResult((k + 1) * env.step_dt, fell, applied[e])
            if all(r is not None for r in results):
                break
    return [
        r if r is not None else EpisodeResult(env.max_episode_length * env.step_dt, False, a)
        for r, a in zip(results, applied, strict=True)
    ]


def compare(
    isaac: Sequence[EpisodeResult], mujoco: Sequence[EpisodeResult], plan: Sequence[Sequence[Push]]
) -> dict[str, Any]:
    """Side-by-side metrics: survival, time up (mean, and of falls), outcome agreement, and each episode
    (``per_episode``: its pushes and both engines' results)."""

    def summary(results: Sequence[EpisodeResult]) -> dict[str, float]:
        n = len(results)
        falls = [r.time_up_s for r in results if r.fell]
        return {
            "survival_rate": sum(not r.fell for r in results) / n,
            "mean_time_up_s": sum(r.time_up_s for r in results) / n,
            "mean_time_to_fall_s": sum(falls) / len(falls) if falls else math.nan,
            "falls": len(falls),
        }

    same = sum(a.fell == b.fell for a, b in zip(isaac, mujoco, strict=True))
    per_episode = [
        {"pushes": [{"time_s": p.time_s, "dv_xy": list(p.dv_xy)} for p in s], "isaac": asdict(a), "mujoco": asdict(b)}
        for s, a, b in zip(plan, isaac, mujoco, strict=True)
    ]
    return {
        "isaac": summary(isaac),
        "mujoco": summary(mujoco),
        "same_outcome_rate": same / len(isaac),
        "per_episode": per_episode,
    }
