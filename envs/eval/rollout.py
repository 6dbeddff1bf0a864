"""Roll a policy out in an Isaac Lab env for a number of episodes and measure the task metrics.

Used by ``scripts/play.py``, ``scripts/evaluate.py`` and the slow tests. Episodes are counted exactly: each env runs
until ``episodes`` episodes have ended in total (envs keep running and auto-resetting in between), and the episodes
that were still running at the start are not counted (every counted episode starts from a reset).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

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
        ended_by: Termination term -> share of the counted episodes it ended (``time_out`` included; an episode two
            terms end in the same step counts for both).
        ended_at_s: Termination term -> mean duration of the episodes it ended, s.
    """

    episodes: int
    success_rate: float
    survival_rate: float
    mean_time_to_fall_s: float
    mean_episode_s: float
    mean_return: float
    push_survived_mps: float
    ended_by: dict[str, float] = field(default_factory=dict)
    ended_at_s: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, float]:
        return asdict(self)

    def flat(self) -> dict[str, float]:
        """:meth:`to_dict` with the per-term dicts as ``ended_by/<term>`` and ``ended_at_s/<term>`` columns."""
        out = {k: v for k, v in self.to_dict().items() if not isinstance(v, dict)}
        for key in ("ended_by", "ended_at_s"):
            out |= {f"{key}/{name}": v for name, v in getattr(self, key).items()}
        return out

    def summary(self, task_has_success: bool) -> list[tuple[str, float | int, tuple[float, float] | None]]:
        """The task's metrics named for what they are: ``(name, value, 95 % Wilson interval or None)``.

        A task with a success definition (grasp) reports success, the share of episodes that dropped the object
        and when, and the share ended by the joint-speed reflex; a balance task reports survival (episodes reaching
        the time-out), when the others fell, and the largest push survived.
        """
        from realgap.envs.eval.robustness.sweep import wilson_interval

        def rate(value: float) -> tuple[str, float, tuple[float, float]]:
            return value, wilson_interval(round(value * self.episodes), self.episodes)

        rows: list[tuple[str, float | int, tuple[float, float] | None]] = [("episodes", self.episodes, None)]
        if task_has_success:
            rows.append(("success", *rate(self.success_rate)))
            if "object_dropped" in self.ended_by:
                rows.append(("drop_rate", *rate(self.ended_by["object_dropped"])))
                rows.append(("time_to_drop_s", self.ended_at_s["object_dropped"], None))
            if "joint_speed_reflex" in self.ended_by:
                rows.append(("speed_reflex_rate", *rate(self.ended_by["joint_speed_reflex"])))
        else:
            rows.append(("survival", *rate(self.survival_rate)))
            rows.append(("time_to_fall_s", self.mean_time_to_fall_s, None))
            rows.append(("push_survived_mps", self.push_survived_mps, None))
        non_finite = sum(v for k, v in self.ended_by.items() if k.startswith("non_finite"))
        rows.append(("non_finite_rate", non_finite, None))
        rows.append(("mean_return", self.mean_return, None))
        return rows


def _push_term(env) -> object | None:
    from realgap.envs.dr.push import live_push

    return None if getattr(env, "event_manager", None) is None else live_push(env)


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
    term_names = list(env.termination_manager.active_terms)
    ended: dict[str, list[float]] = {name: [] for name in term_names}
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
        fired = torch.stack([env.termination_manager.get_term(t) for t in term_names], -1) if len(done) else None
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
            for name, hit in zip(term_names, fired[i].tolist(), strict=True):
                if hit:
                    ended[name].append(duration)
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
        ended_by={name: len(d) / k if k else math.nan for name, d in ended.items()},
        ended_at_s={name: mean(d) for name, d in ended.items()},
    )
