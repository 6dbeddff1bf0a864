"""Curriculum-manager terms of the balance task: the task metrics over ended episodes (survival to time-out, time to
fall, push survived) and the push curriculum that widens the push range as training survival rises.

Both are Isaac Lab curriculum terms (called before the ending envs are reset); the task's MDP table names them through
:mod:`realgap.tasks.balance.mdp`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
from isaaclab.managers import ManagerTermBase

from realgap.envs.dr.curriculum import SurvivalCurriculum
from realgap.envs.dr.push import find_push, live_push
from realgap.envs.dr.width import LevelController
from realgap.envs.sim.device_stats import RunningMeans

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv
    from isaaclab.managers import CurriculumTermCfg


class balance_metrics(ManagerTermBase):
    """Task metrics over the episodes that ended, logged every iteration as ``Curriculum/metrics/<name>``.

    Called by the curriculum manager before the ending envs are reset, so the termination buffers still describe the
    episode that just ended. Statistics are running means over about the last ``window`` ended episodes (plain mean
    until that many have ended, exponential weights after), so they are comparable across iterations whatever the
    number of resets per iteration.

    Logged:
        survival_rate: fraction of ended episodes that reached the time-out (not fallen).
        time_to_fall_s: mean time from reset to the fall, over fallen episodes, s.
        push_survived_mps: mean of the largest push (m/s) in episodes that reached the time-out.
        push_fell_mps: mean of the largest push (m/s) in episodes that ended with a fall.

    Params:
        window: Effective number of episodes in the running means. The push term is found by its type
            (:func:`realgap.envs.dr.push.live_push`), whatever its name.
    """

    def __init__(self, cfg: CurriculumTermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        self.start_step = torch.zeros(env.num_envs, dtype=torch.long, device=env.device)
        # An env's first episode is not counted: rsl-rl starts with random episode lengths (start time unknown).
        self.full_episode = torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)
        names = ("survival_rate", "time_to_fall_s", "push_survived_mps", "push_fell_mps")
        self.stats = RunningMeans(names, cfg.params.get("window", 512), env.device)  # on the device: no sync per reset

    def __call__(self, env: ManagerBasedRLEnv, env_ids: torch.Tensor, window: int = 512) -> dict[str, torch.Tensor]:
        if env.common_step_counter == 0:  # the initial reset of all envs ends no episode
            return self.stats.logged()
        timed_out = env.termination_manager.time_outs[env_ids]
        fell = env.termination_manager.terminated[env_ids]
        alive_s = (env.common_step_counter - self.start_step[env_ids]).float() * env.step_dt
        full = self.full_episode[env_ids]
        timed_out, fell = timed_out & full, fell & full
        term = live_push(env)  # pushes may be switched off
        pushed = term is not None
        push = term.max_push[env_ids] if pushed else torch.zeros_like(alive_s)
        self.stats.update(
            torch.stack([timed_out.float(), alive_s, push, push]),
            torch.stack([timed_out | fell, fell, timed_out & pushed, fell & pushed]),
        )
        self.start_step[env_ids] = env.common_step_counter
        self.full_episode[env_ids] = True
        return self.stats.logged()


class push_curriculum(SurvivalCurriculum):
    """Push curriculum: the push term's range grows from ``start_mps`` to the task's range as training survival rises.

    ``level`` runs from 0 to 1 and the push term draws from ``start + level·(target − start)`` m/s, ``target`` being the
    range the push term was configured with (the task's). Whenever ``min_episodes`` full episodes have ended since the
    last decision, ``level`` moves up by ``step`` if their survival (time-outs over ended episodes) is at least
    ``promote`` and down by ``step`` if it is below ``demote``, else stays. An env's first episode is not counted
    (rsl-rl starts training with random episode lengths, as in :class:`balance_metrics`). With ``start_mps`` ``None``
    (the task as shipped) the term does nothing: the task's pushes from the first step. Training only: evaluation (Play
    variant, a loaded checkpoint) never applies training-distribution overrides, so it always sees the task's
    pushes.

    Logged while on (``Curriculum/push_level/<name>``): ``level``, and ``push_max_mps`` (the range's upper end now).

    Params:
        start_mps: (min, max) push range at level 0, m/s, each at most the task's; ``None``: no curriculum.
        step: Level change per decision, in (0, 1].
        promote: Survival at or above which the level rises.
        demote: Survival below which the level falls (<= ``promote``).
        min_episodes: Full episodes that must end between two decisions.
    """

    def __init__(self, cfg: CurriculumTermCfg, env: ManagerBasedRLEnv):
        p = cfg.params
        start = p.get("start_mps")
        self.active = start is not None
        if not self.active:  # off: the push term is not even looked up (a task variant may have none)
            super().__init__(cfg, env, LevelController(1.0, 1.0, 0.0, 1, level=1.0))  # never moved: nothing counted
            self.start = self.target = (math.nan, math.nan)
            return
        super().__init__(cfg, env, LevelController(p["step"], p["promote"], p["demote"], int(p["min_episodes"])))
        found = find_push(env.event_manager)
        if found is None:
            raise ValueError(
                "push_curriculum needs a push event term (realgap.envs.dr.push.push_robot), which this "
                "env does not have"
            )
        self.push_params = found[1].params
        self.target = tuple(float(v) for v in self.push_params["magnitude_mps"])
        self.start = tuple(float(v) for v in start)
        if len(self.start) != 2 or not 0.0 <= self.start[0] <= self.start[1]:
            raise ValueError(f"push_curriculum start_mps must be (min, max) with 0 <= min <= max, got {start}")
        if self.start[0] > self.target[0] or self.start[1] > self.target[1]:
            raise ValueError(f"push_curriculum start_mps {self.start} must not exceed the task's range {self.target}")
        self._write()

    @classmethod
    def drives_pushes(cls, params: dict) -> bool:
        return params.get("start_mps") is not None  # off (None): the task's pushes, untouched

    def range_mps(self) -> tuple[float, float]:
        """The push range at the current level, m/s."""
        return tuple(s + self.level * (t - s) for s, t in zip(self.start, self.target, strict=True))  # type: ignore[return-value]

    def _write(self) -> None:
        # a list, not a tuple: the env snapshot of an exact resume restores list entries in place (tuples are skipped)
        self.push_params["magnitude_mps"] = list(self.range_mps())

    def __call__(
        self,
        env: ManagerBasedRLEnv,
        env_ids: torch.Tensor,
        start_mps: tuple[float, float] | None = None,
        step: float | None = None,
        promote: float | None = None,
        demote: float | None = None,
        min_episodes: int | None = None,
    ) -> dict[str, float]:
        """Count the episodes ``env_ids`` just ended; decide when enough have. The params (named for Isaac Lab's
        signature check) were read and validated at construction; the values here are not used again."""
        if not self.active:
            return {}  # nothing to log
        self.count(env, env_ids)
        self._write()  # every call: the push range is a function of the level (also after a restored snapshot)
        return {"level": self.level, "push_max_mps": self.range_mps()[1]}
