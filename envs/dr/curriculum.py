"""Curricula driven by training survival: a level in [0, 1] that rises while episodes survive to the time-out.

:class:`SurvivalCurriculum` counts the full episodes that end (an env's first episode is not counted: rsl-rl starts
training with random episode lengths) and moves its :class:`~realgap.envs.dr.width.LevelController`; a subclass says
what the level does. :class:`dr_width_curriculum` narrows every randomization term of the env
(:class:`~realgap.envs.dr.events.WidthTerm`) to ``start + level·(1 − start)`` of its ranges about their midpoints, and
scales the push range toward zero by the same width (a push is a disturbance: its nominal is no push, not the middle of
its range): automatic domain randomization in its simplest form, one width for every model error drawn (an
``initial_pose`` term, a task's reset rather than a model error, keeps its range). Survival means reaching the time-out,
so it suits tasks whose success is not falling (balance); with ``signal="success"`` the level moves with the task's own
episode success instead (``env_cfg.episode_success``: the grasp, whose failures also reach the time-out). Isaac Lab
curriculum terms, called before the ending envs are reset.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from isaaclab.managers import ManagerTermBase

from realgap.envs.dr.events import WidthTerm
from realgap.envs.dr.profile_schema import CURRICULUM_SIGNALS, WidthCurriculumSpec
from realgap.envs.dr.push import find_push
from realgap.envs.dr.width import LevelController
from realgap.envs.sim.device_stats import HostMirror

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv
    from isaaclab.managers import CurriculumTermCfg


class SurvivalCurriculum(ManagerTermBase):
    """Counts full episodes ended by time-out (survived) or termination (fell) and moves ``self.control``.

    With ``signal="success"`` an ended episode counts as survived when the task's ``env_cfg.episode_success`` says it
    succeeded. That function reads what another curriculum term (the task's metrics) stores for the ending envs, so
    this term must come after every other curriculum term of the table (checked here). Every ended episode counts,
    those a task started from recorded states (the grasp's reverse curriculum) included.
    """

    def __init__(
        self, cfg: CurriculumTermCfg, env: ManagerBasedRLEnv, control: LevelController, signal: str = "survival"
    ):
        if signal not in CURRICULUM_SIGNALS:  # before the env is touched: a typo must not count survival instead
            raise ValueError(f"{type(self).__name__} signal {signal!r}: expected one of {list(CURRICULUM_SIGNALS)}")
        super().__init__(cfg, env)
        self.control = control
        self.full_episode = torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)
        self._counts = HostMirror()  # episode counts reach the host without a sync (at once on the CPU)
        self.success = None
        if signal == "success":
            self.success = getattr(env.cfg, "episode_success", None)
            if self.success is None:
                raise ValueError(
                    f"{type(self).__name__} signal 'success' needs a task with env_cfg.episode_success (the grasp); "
                    "this task has none: use signal 'survival'"
                )
            names = [n for n, t in vars(env.cfg.curriculum).items() if t is not None]
            mine = [n for n in names if _term_class(getattr(env.cfg.curriculum, n)) is type(self)]
            if mine and mine[-1] != names[-1]:
                raise ValueError(
                    f"curriculum term {mine[-1]!r} (signal 'success') must come after every other curriculum term, "
                    f"so the task's metrics have stored the ending episodes' success first; the table's order: {names}"
                )

    @classmethod
    def drives_pushes(cls, params: dict) -> bool:
        """Whether a term of this class configured with ``params`` moves the push range (two such terms would fight
        over it). False here; a subclass that writes the pushes says when."""
        return False

    @property
    def level(self) -> float:
        """The curriculum's level in [0, 1]."""
        return self.control.level

    def count(self, env: ManagerBasedRLEnv, env_ids: torch.Tensor) -> None:
        """Count the episodes ``env_ids`` just ended; the level moves once enough have."""
        if env.common_step_counter == 0:  # the initial reset of all envs ends no episode
            return
        full = self.full_episode[env_ids]
        timed_out = env.termination_manager.time_outs[env_ids] & full
        fell = env.termination_manager.terminated[env_ids] & full
        survived = timed_out if self.success is None else self.success(env)[env_ids] & (timed_out | fell)
        self._counts.put(torch.stack([(timed_out | fell).sum(), survived.sum()]))
        self.full_episode[env_ids] = True
        for ended, survived in self._counts.ready():
            self.control.update(int(ended), int(survived))


class dr_width_curriculum(SurvivalCurriculum):
    """The width of every randomization term grows from ``start_width`` to 1 as training survival rises.

    Logged (``Curriculum/<name>/``): ``width_level`` and ``width`` (progress.csv columns of the same names). Training
    only: Play and evaluation build the task without the profile's terms.

    Params:
        start_width: Width at level 0, in [0, 1) (0: every term draws its ranges' midpoints).
        step, promote, demote, min_episodes: The level rule (:class:`~realgap.envs.dr.width.LevelController`).
        signal: What counts as a good episode for the rule: ``survival`` (the time-out reached) or ``success`` (the
            task's episode success; :class:`SurvivalCurriculum`).
    """

    def __init__(self, cfg: CurriculumTermCfg, env: ManagerBasedRLEnv):
        spec = WidthCurriculumSpec(**cfg.params)  # the profile's checks, also for params set by hand
        control = LevelController(spec.step, spec.promote, spec.demote, spec.min_episodes)
        super().__init__(cfg, env, control, spec.signal)
        self.start = spec.start_width
        self.terms = _width_terms(env)
        if not self.terms:
            raise ValueError(
                "dr_width_curriculum needs randomization event terms (a DR profile with at least one section "
                "drawn by realgap's terms); this env has none"
            )
        terms = vars(env.cfg.curriculum).items()  # this term among them (a copy of its cfg: found by class)
        others = [n for n, t in terms if t is not None and _drives_pushes(t) and _term_class(t) is not type(self)]
        if others:
            raise ValueError(
                f"dr_width_curriculum scales the pushes, and curriculum term(s) {others} already drive them; "
                "turn one of them off"
            )
        found = find_push(env.event_manager)
        self.push_params = None if found is None else found[1].params
        self.push_target = None if found is None else tuple(float(v) for v in self.push_params["magnitude_mps"])
        self._write()

    @classmethod
    def drives_pushes(cls, params: dict) -> bool:
        return True  # the push range scales with the width

    def width(self) -> float:
        """The terms' width at the current level."""
        return self.start + self.level * (1.0 - self.start)

    def _write(self) -> None:
        w = self.width()
        for term in self.terms:
            term.width = w
        if self.push_params is not None:  # a list: an exact resume's snapshot restores list entries in place
            self.push_params["magnitude_mps"] = [w * v for v in self.push_target]

    def __call__(
        self,
        env: ManagerBasedRLEnv,
        env_ids: torch.Tensor,
        start_width: float | None = None,
        step: float | None = None,
        promote: float | None = None,
        demote: float | None = None,
        min_episodes: int | None = None,
        signal: str | None = None,
    ) -> dict[str, float]:
        """Count the ended episodes and set the terms' width (every call: also after a restored snapshot). The params
        (named for Isaac Lab's signature check) were read and validated at construction."""
        self.count(env, env_ids)
        self._write()
        return {"width_level": self.level, "width": self.width()}


def _term_class(term_cfg: CurriculumTermCfg) -> type:
    """A term's class: its ``func`` is the class, or its instance once the manager has built it."""
    func = term_cfg.func
    return func if isinstance(func, type) else type(func)


def _drives_pushes(term_cfg: CurriculumTermCfg) -> bool:
    """A survival curriculum configured to move the push range."""
    cls = _term_class(term_cfg)
    return issubclass(cls, SurvivalCurriculum) and cls.drives_pushes(term_cfg.params)


def _width_terms(env: ManagerBasedRLEnv) -> list[WidthTerm]:
    manager = env.event_manager
    terms = []
    for names in manager.active_terms.values():
        for name in names:
            func = manager.get_term_cfg(name).func
            if isinstance(func, WidthTerm) and func not in terms:
                terms.append(func)
    return terms
