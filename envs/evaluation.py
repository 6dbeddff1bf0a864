"""Roll a policy out in an Isaac Lab env for a number of episodes and measure the task metrics.

Used by ``scripts/play.py``, ``scripts/evaluate.py`` and the slow tests. Episodes are counted exactly: each env runs
until ``episodes`` episodes have ended in total (envs keep running and auto-resetting in between), and the episodes
that were still running at the start are not counted (every counted episode starts from a reset).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch


@dataclass
class EpisodeStats:
    """Task metrics over the counted episodes.

    Attributes:
        episodes: Number of episodes counted.
        success_rate: Fraction of successful episodes: the task's ``env_cfg.episode_success`` when it defines one
            (grasp: lifted and held), else the survival rate (balance: reached the time-out standing).
        survival_rate: Fraction that reached the time-out without a termination (fall, drop, NaN).
        mean_time_to_fall_s: Mean duration of the terminated episodes, s (NaN if none terminated).
        mean_episode_s: Mean episode duration, s.
        mean_return: Mean undiscounted episode return (reward already scaled by the step dt, as Isaac Lab does).
        push_survived_mps: Mean largest push in survived episodes, m/s (NaN if the task has no pushes).
    """

    episodes: int
    success_rate: float
    survival_rate: float
    mean_time_to_fall_s: float
    mean_episode_s: float
    mean_return: float
    push_survived_mps: float

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def _push_term(env) -> object | None:
    events = getattr(env, "event_manager", None)
    if events is None or "push" not in sum(events.active_terms.values(), []):
        return None
    return events.get_term_cfg("push").func


@torch.inference_mode()
def rollout(
    env,
    policy: Callable[[torch.Tensor], torch.Tensor],
    episodes: int,
    max_steps: int = 100_000,
    clip_actions: float | None = None,
) -> EpisodeStats:
    """Run ``policy`` on the (unwrapped, ManagerBasedRLEnv) ``env`` for at least ``episodes`` episodes.

    Every env runs the same number of episodes, ``ceil(episodes / num_envs)``, and all of them are counted: counting
    the first episodes to end instead would over-count falls (they end before the time-out).

    Args:
        env: The Isaac Lab env (reset here).
        policy: Maps the ``policy`` observation group, shape (num_envs, obs_dim), to actions (num_envs, act_dim).
        episodes: Episodes to count (rounded up to a multiple of ``num_envs``).
        max_steps: Safety bound on policy steps.
        clip_actions: Clip actions to ``±clip_actions`` as training did (the agent config's ``clip_actions``).
    """
    obs, _ = env.reset()
    n = env.num_envs
    ret = torch.zeros(n, device=env.device)
    steps = torch.zeros(n, dtype=torch.long, device=env.device)
    push = _push_term(env)
    success_fn = getattr(env.cfg, "episode_success", None)
    survived, succeeded, durations, returns, pushes_survived, fall_times = [], [], [], [], [], []
    per_env = -(-episodes // n)
    counted = [0] * n
    for _ in range(max_steps):
        actions = policy(obs["policy"])
        if clip_actions is not None:
            actions = actions.clamp(-clip_actions, clip_actions)
        max_push = push.max_push.clone() if push is not None else None  # read before the step's auto-reset clears it
        obs, rew, terminated, truncated, _ = env.step(actions)
        ret += rew
        steps += 1
        done = (terminated | truncated).nonzero().flatten()
        success = success_fn(env) if success_fn is not None and len(done) else None
        for i in done.tolist():
            if counted[i] >= per_env:
                continue
            counted[i] += 1
            ok = bool(truncated[i]) and not bool(terminated[i])
            duration = float(steps[i]) * env.step_dt
            survived.append(ok)
            succeeded.append(ok if success is None else bool(success[i]))
            durations.append(duration)
            returns.append(float(ret[i]))
            if not ok:
                fall_times.append(duration)
            elif max_push is not None:
                pushes_survived.append(float(max_push[i]))
        ret[done] = 0.0
        steps[done] = 0
        if min(counted) >= per_env:
            break

    def mean(values: list[float]) -> float:
        return sum(values) / len(values) if values else math.nan

    k = len(survived)
    return EpisodeStats(
        episodes=k,
        success_rate=mean([float(s) for s in succeeded]),
        survival_rate=mean([float(s) for s in survived]),
        mean_time_to_fall_s=mean(fall_times),
        mean_episode_s=mean(durations),
        mean_return=mean(returns),
        push_survived_mps=mean(pushes_survived),
    )
