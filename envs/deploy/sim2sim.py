"""Sim2sim: run an exported policy through the deploy runtime on the MuJoCo robot, with pushes, and time the falls.

The same push schedule (drawn from the seed) is replayed for every policy compared, so a policy and the zero-action
baseline face identical disturbances. Pushes follow the balance task's event: a horizontal velocity change of random
heading and magnitude ``U(push_mps)`` every ``U(push_interval_s)`` seconds, applied between policy steps. An episode
ends at ``duration_s`` or when the root drops below ``fall_height`` or tilts beyond ``fall_tilt`` (the task's
terminations, ``tasks/balance/env_cfg.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from realgap.envs.deploy.metadata import PolicyMetadata
from realgap.envs.deploy.mujoco_robot import MujocoRobot
from realgap.envs.deploy.runtime import DeployRuntime, Policy


@dataclass(frozen=True)
class Push:
    """One push: at ``time_s`` (s after reset), add ``dv_xy`` (m/s) to the base velocity."""

    time_s: float
    dv_xy: tuple[float, float]


@dataclass(frozen=True)
class EpisodeResult:
    """How long the robot stayed up.

    Attributes:
        time_up_s: Time until the fall, or ``duration_s`` when it never fell, s.
        fell: Whether a fall ended the episode.
        pushes: Pushes applied before the end.
    """

    time_up_s: float
    fell: bool
    pushes: int


def push_schedule(rng: np.random.Generator, duration_s: float, push_mps: tuple[float, float],
                  push_interval_s: tuple[float, float]) -> list[Push]:  # fmt: skip
    """Push times and velocity changes for one episode (empty when ``push_mps`` is ``(0, 0)``)."""
    pushes, t = [], 0.0
    while push_mps[1] > 0:
        t += rng.uniform(*push_interval_s)
        if t >= duration_s:
            break
        magnitude, heading = rng.uniform(*push_mps), rng.uniform(0.0, 2.0 * math.pi)
        pushes.append(Push(t, (magnitude * math.cos(heading), magnitude * math.sin(heading))))
    return pushes


def run_episode(runtime: DeployRuntime, robot: MujocoRobot, pushes: Sequence[Push], duration_s: float,
                fall_height: float, fall_tilt: float) -> EpisodeResult:  # fmt: skip
    """Reset ``robot`` and ``runtime``, run policy steps until the fall or ``duration_s``."""
    robot.reset()
    runtime.reset()
    policy_dt = runtime.meta.rates.policy_dt
    queue = list(pushes)
    applied = 0
    for k in range(int(round(duration_s / policy_dt))):
        t = k * policy_dt
        while queue and queue[0].time_s <= t + 1e-9:
            robot.push(queue.pop(0).dv_xy)
            applied += 1
        runtime.step()
        if robot.root_height() < fall_height or robot.tilt() > fall_tilt:
            return EpisodeResult((k + 1) * policy_dt, True, applied)
    return EpisodeResult(duration_s, False, applied)


def survival(meta: PolicyMetadata, policy: Policy, *, episodes: int = 8, duration_s: float = 10.0,
             push_mps: tuple[float, float] = (0.2, 0.4), push_interval_s: tuple[float, float] = (3.0, 5.0),
             fall_height: float = 0.45, fall_tilt: float = 1.0, seed: int = 0) -> list[EpisodeResult]:  # fmt: skip
    """Episodes of ``policy`` on the MuJoCo robot of ``meta`` (pushes drawn from ``seed``: equal across policies).

    Defaults are the balance task's pushes (``tasks/balance/env_cfg.py`` PUSH_MPS) and terminations.
    """
    robot = MujocoRobot.for_policy(meta)
    runtime = DeployRuntime(meta, robot, policy, seed=seed)
    rng = np.random.default_rng(seed)
    schedules = [push_schedule(rng, duration_s, push_mps, push_interval_s) for _ in range(episodes)]
    return [run_episode(runtime, robot, s, duration_s, fall_height, fall_tilt) for s in schedules]
