"""Humanoid balance task (Unitree G1): registration of the gymnasium ids.

``Realgap-Balance-G1-v0`` trains, ``Realgap-Balance-G1-Play-v0`` evaluates (no observation noise, 32 envs). The configs
are built by :func:`realgap.tasks.balance.env_cfg.balance_env_cfg` and
:class:`realgap.tasks.balance.agent_cfg.BalancePPOCfg`; nothing here imports Isaac Lab.
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym


def _env_cfg_entry(play: bool = False) -> Callable[[], object]:
    def env_cfg():
        from realgap.tasks.balance.env_cfg import balance_env_cfg

        return balance_env_cfg(play=play)

    return env_cfg


def _agent_cfg() -> object:
    from realgap.tasks.balance.agent_cfg import BalancePPOCfg

    return BalancePPOCfg()


def _register(task_id: str, play: bool = False) -> None:
    gym.register(
        id=task_id,
        entry_point="isaaclab.envs:ManagerBasedRLEnv",
        disable_env_checker=True,
        kwargs={"env_cfg_entry_point": _env_cfg_entry(play), "rsl_rl_cfg_entry_point": _agent_cfg},
    )


_register("Realgap-Balance-G1-v0")
_register("Realgap-Balance-G1-Play-v0", play=True)
