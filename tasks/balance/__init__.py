"""Humanoid balance task (Unitree G1): registration of the gymnasium ids.

- ``Realgap-Balance-G1-Crouch-v0``: the shipped recipe (``configs/policies/balance_g1``), the G1 acting around its
  deep crouch, reached over the first second of each episode; what ``scripts/train.py`` trains by default.
- ``Realgap-Balance-G1-v0``: the same task acting around the standing pose (the stance the robot spawns in).
- ``Realgap-Balance-G1-Levers-v0``: the standing task with the reward and curriculum terms studied as levers, each off
  until a run sets it (``--set env.rewards.capture_point.weight=-50``); docs/results/balance.md has what each did.

Each has an evaluation variant ``...-Play-v0`` (no observation noise, 32 envs): the training id's config after
``play_mode()``, which is also what Isaac Lab 3.0's ``isaaclab play --task <training id>`` applies. The configs are
built by :func:`realgap.tasks.balance.env_cfg.balance_env_cfg` and :class:`realgap.tasks.balance.agent_cfg.
BalancePPOCfg`; nothing here imports Isaac Lab.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

CROUCH_TASK = "Realgap-Balance-G1-Crouch-v0"
"""The shipped balance recipe: the crouch (docs/results/balance_levers.md says why it ships)."""
STANDING_TASK = "Realgap-Balance-G1-v0"
"""The balance task around the standing pose."""


# The env configs, one zero-argument function per id, named in the registry as "module:function" strings (Isaac Lab's
# convention: its list_envs prints them and its project view matches them; a callable would show as <function ...>).
def standing_env_cfg() -> Any:
    """``Realgap-Balance-G1-v0``: balance around the standing pose."""
    from realgap.tasks.balance.env_cfg import balance_env_cfg

    return balance_env_cfg()


def standing_play_env_cfg() -> Any:
    """``Realgap-Balance-G1-Play-v0``: its evaluation settings (``BalanceEnvCfg.play_mode``)."""
    from realgap.tasks.balance.env_cfg import balance_env_cfg

    return balance_env_cfg(play=True)


def crouch_env_cfg() -> Any:
    """``Realgap-Balance-G1-Crouch-v0``: the shipped recipe, acting around the deep crouch."""
    from realgap.tasks.balance.env_cfg import balance_env_cfg

    return balance_env_cfg(crouch=True)


def crouch_play_env_cfg() -> Any:
    """``Realgap-Balance-G1-Crouch-Play-v0``: its evaluation settings."""
    from realgap.tasks.balance.env_cfg import balance_env_cfg

    return balance_env_cfg(play=True, crouch=True)


def levers_env_cfg() -> Any:
    """``Realgap-Balance-G1-Levers-v0``: the standing task with the studied reward and curriculum terms, off."""
    from realgap.tasks.balance.env_cfg import balance_env_cfg

    return balance_env_cfg(levers=True)


def levers_play_env_cfg() -> Any:
    """``Realgap-Balance-G1-Levers-Play-v0``: its evaluation settings."""
    from realgap.tasks.balance.env_cfg import balance_env_cfg

    return balance_env_cfg(play=True, levers=True)


def _register(task_id: str, env_cfg: str) -> None:
    gym.register(
        id=task_id,
        entry_point="isaaclab.envs:ManagerBasedRLEnv",
        disable_env_checker=True,
        kwargs={
            "env_cfg_entry_point": f"{__name__}:{env_cfg}",
            "rsl_rl_cfg_entry_point": f"{__name__}.agent_cfg:BalancePPOCfg",
            "default_agent": "rsl_rl",  # isaaclab train / play need no --rl_library
        },
    )


_register(STANDING_TASK, "standing_env_cfg")
_register("Realgap-Balance-G1-Play-v0", "standing_play_env_cfg")
_register(CROUCH_TASK, "crouch_env_cfg")
_register("Realgap-Balance-G1-Crouch-Play-v0", "crouch_play_env_cfg")
_register("Realgap-Balance-G1-Levers-v0", "levers_env_cfg")
_register("Realgap-Balance-G1-Levers-Play-v0", "levers_play_env_cfg")
