"""Humanoid balance task (Unitree G1): registration of the gymnasium ids.

- ``Realgap-Balance-G1-Crouch-v0``: the shipped recipe (``configs/policies/balance_g1``), the G1 acting around its
  deep crouch, reached over the first second of each episode; what ``scripts/train.py`` trains by default.
- ``Realgap-Balance-G1-v0``: the same task acting around the standing pose (the stance the robot spawns in).
- ``Realgap-Balance-G1-Levers-v0``: the standing task with the reward and curriculum terms studied as levers, each off
  until a run sets it (``--set env.rewards.capture_point.weight=-50``); docs/results/balance.md has what each did.

Each has an evaluation variant ``...-Play-v0`` (no observation noise, 32 envs). The configs are built by
:func:`realgap.tasks.balance.env_cfg.balance_env_cfg` and :class:`realgap.tasks.balance.agent_cfg.BalancePPOCfg`;
nothing here imports Isaac Lab.
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym

CROUCH_TASK = "Realgap-Balance-G1-Crouch-v0"
"""The shipped balance recipe: the crouch (docs/results/balance_levers.md says why it ships)."""
STANDING_TASK = "Realgap-Balance-G1-v0"
"""The balance task around the standing pose."""


def _env_cfg_entry(play: bool = False, crouch: bool = False, levers: bool = False) -> Callable[[], object]:
    def env_cfg():
        from realgap.tasks.balance.env_cfg import balance_env_cfg

        return balance_env_cfg(play=play, crouch=crouch, levers=levers)

    return env_cfg


def _agent_cfg() -> object:
    from realgap.tasks.balance.agent_cfg import BalancePPOCfg

    return BalancePPOCfg()


def _register(task_id: str, play: bool = False, crouch: bool = False, levers: bool = False) -> None:
    gym.register(
        id=task_id,
        entry_point="isaaclab.envs:ManagerBasedRLEnv",
        disable_env_checker=True,
        kwargs={"env_cfg_entry_point": _env_cfg_entry(play, crouch, levers), "rsl_rl_cfg_entry_point": _agent_cfg},
    )


_register(STANDING_TASK)
_register("Realgap-Balance-G1-Play-v0", play=True)
_register(CROUCH_TASK, crouch=True)
_register("Realgap-Balance-G1-Crouch-Play-v0", play=True, crouch=True)
_register("Realgap-Balance-G1-Levers-v0", levers=True)
_register("Realgap-Balance-G1-Levers-Play-v0", play=True, levers=True)
