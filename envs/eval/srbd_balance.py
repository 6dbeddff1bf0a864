"""The balance task's question asked of three controllers on the MuJoCo G1, under the same pushes: the shipped
policy, the zero action (the export's own terms holding its crouch), and the SRBD controller
(:mod:`realgap.envs.srbd.controller`). Episodes and pushes are the deploy CLI's (:mod:`realgap.envs.deploy.sim2sim`):
one schedule per episode drawn from the seed, identical for every arm."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def evaluate(policy_dir: str | Path, episodes: int = 32, duration_s: float = 20.0, seed: int = 0,
             push_mps: tuple[float, float] = (0.2, 0.4)) -> dict[str, Any]:  # fmt: skip
    """Survival (share of episodes without a fall, Wilson 95 %) and mean time up of each arm."""
    from realgap.envs.deploy import DeployRuntime, ZeroPolicy
    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.deploy.sim2sim import run_episode, schedules
    from realgap.envs.eval.sweep import wilson_interval
    from realgap.envs.format import load_policy
    from realgap.envs.srbd.controller import SRBDController

    meta, policy = load_policy(policy_dir)
    plan = schedules(episodes, duration_s, push_mps, (3.0, 5.0), seed)
    robot = MujocoRobot.for_policy(meta)
    arms = {
        "policy": DeployRuntime(meta, robot, policy, seed=seed),
        "zero_action": DeployRuntime(meta, robot, ZeroPolicy(meta.action_dim), seed=seed),
        "srbd_controller": SRBDController(DeployRuntime(meta, robot, None, seed=seed), robot),
    }
    out: dict[str, Any] = {"episodes": episodes, "duration_s": duration_s, "push_mps": list(push_mps), "seed": seed,
                           "arms": {}}  # fmt: skip
    for name, runner in arms.items():
        results = [run_episode(runner, robot, s, duration_s, 0.45, 1.0) for s in plan]
        up = sum(not r.fell for r in results)
        lo, hi = wilson_interval(up, episodes)
        out["arms"][name] = {"survival": up / episodes, "survival_ci95": [lo, hi],
                             "time_up_mean_s": float(np.mean([r.time_up_s for r in results])),
                             "falls": episodes - up}  # fmt: skip
    return out


def single_push(policy_dir: str | Path, values: tuple[float, ...], episodes: int = 16, push_at_s: float = 1.0,
                duration_s: float = 4.0, seed: int = 0) -> dict[str, Any]:  # fmt: skip
    """Single-push survival of the SRBD controller per magnitude (m/s), the protocol of
    :func:`realgap.envs.eval.push_limit.mujoco_single_push`: one push at ``push_at_s`` of a heading drawn from
    ``seed`` (the same headings for every magnitude), stay up until ``duration_s``. The limit is the largest swept
    magnitude survived in at least half the episodes (the rule of ``scripts/push_limit.py``)."""
    import math

    from realgap.envs.deploy import DeployRuntime
    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.deploy.sim2sim import Push, run_episode
    from realgap.envs.eval.sweep import wilson_interval
    from realgap.envs.format import load_policy
    from realgap.envs.srbd.controller import SRBDController

    meta, _ = load_policy(policy_dir)
    headings = np.random.default_rng(seed).uniform(0.0, 2.0 * math.pi, episodes)
    robot = MujocoRobot.for_policy(meta)
    controller = SRBDController(DeployRuntime(meta, robot, None, seed=seed), robot)
    rows = []
    for v in values:
        up = 0
        for h in headings:
            push = Push(push_at_s, (v * math.cos(h), v * math.sin(h)))
            up += not run_episode(controller, robot, [push], duration_s, 0.45, 1.0).fell
        rows.append({"push_mps": v, "survived": up, "episodes": episodes, "survival": up / episodes,
                     "ci95": list(wilson_interval(up, episodes))})  # fmt: skip
    held = [r["push_mps"] for r in rows if r["survival"] >= 0.5]
    return {"episodes": episodes, "push_at_s": push_at_s, "recover_s": duration_s - push_at_s, "seed": seed,
            "rows": rows, "limit_mps": max(held) if held else None}  # fmt: skip
