"""Franka Panda grasp-and-lift task: registration of the gymnasium ids, one per arm action space.

The recommended interface is ``ee_pose_delta`` (:data:`RECOMMENDED_TASK`, ``Realgap-Grasp-Franka-EEPoseDelta-v0``):
end-effector pose increments through differential IK, the shipped export ``configs/policies/grasp_franka``; of the
interfaces compared at one equal budget it is one of the three that learn to lift, and the joint-position ones lift
nothing (docs/results/action_spaces.md).

``Realgap-Grasp-Franka-v0`` uses joint position targets; every other action space has its own id,
``Realgap-Grasp-Franka-<Variant>-v0`` (table below). Each has its evaluation variant ``...-Play-v0`` (the task's normal
resets only, 32 envs: the training id's config after ``play_mode()``, which Isaac Lab 3.0's ``isaaclab play --task
<training id>`` also applies), and ``...-Levers-v0`` (with ``-Levers-Play-v0``) holds the terms studied as levers, off
until a run sets them (the reverse curriculum, the speed-margin penalty). The configs are built by
:func:`realgap.tasks.grasp.env_cfg.grasp_env_cfg` and :func:`realgap.tasks.grasp.agent_cfg.grasp_ppo_cfg`; nothing
here imports Isaac Lab.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym

ACTION_SPACE_IDS: dict[str, str] = {
    "joint_pos": "Realgap-Grasp-Franka-v0",
    "joint_pos_delta": "Realgap-Grasp-Franka-JointPosDelta-v0",
    "joint_vel": "Realgap-Grasp-Franka-JointVel-v0",
    "joint_torque": "Realgap-Grasp-Franka-JointTorque-v0",
    "joint_pd_gravity": "Realgap-Grasp-Franka-JointPDGravity-v0",
    "ee_pose_delta": "Realgap-Grasp-Franka-EEPoseDelta-v0",
    "computed_torque": "Realgap-Grasp-Franka-ComputedTorque-v0",
    "cartesian_impedance": "Realgap-Grasp-Franka-CartesianImpedance-v0",
}
"""Gymnasium id of each arm action space (keys equal ``actions.ACTION_SPACES``)."""

RECOMMENDED_ACTION_SPACE = "ee_pose_delta"
"""The arm interface to train a grasp with: the shipped export's (configs/policies/grasp_franka)."""
RECOMMENDED_TASK = ACTION_SPACE_IDS[RECOMMENDED_ACTION_SPACE]
"""``Realgap-Grasp-Franka-EEPoseDelta-v0``: what ``configs/policies/grasp_franka`` was trained on, with no overrides."""


def _cfg_name(action_space: str, play: bool, levers: bool) -> str:
    """The module attribute building one id's env config: ``ee_pose_delta_env_cfg``, ``..._levers_play_env_cfg``."""
    return f"{action_space}{'_levers' if levers else ''}{'_play' if play else ''}_env_cfg"


def _env_cfg_entry(action_space: str, play: bool, levers: bool) -> Callable[[], Any]:
    def env_cfg() -> Any:
        from realgap.tasks.grasp.env_cfg import grasp_env_cfg

        return grasp_env_cfg(action_space, play=play, levers=levers)

    env_cfg.__name__ = env_cfg.__qualname__ = _cfg_name(action_space, play, levers)
    env_cfg.__doc__ = f"The grasp task's env config: {action_space} actions, play={play}, levers={levers}."
    return env_cfg


def _agent_cfg_entry(action_space: str) -> Callable[[], Any]:
    def agent_cfg() -> Any:
        from realgap.tasks.grasp.agent_cfg import grasp_ppo_cfg

        return grasp_ppo_cfg(action_space)

    agent_cfg.__name__ = agent_cfg.__qualname__ = f"{action_space}_ppo_cfg"
    agent_cfg.__doc__ = f"The grasp task's PPO config for {action_space} actions."
    return agent_cfg


def _register(task_id: str, action_space: str, play: bool = False, levers: bool = False) -> None:
    # Each config is a module attribute named in the registry as a "module:function" string (Isaac Lab's convention:
    # its list_envs prints it and its project view matches it; a callable would show as <function ...>).
    env_cfg, agent_cfg = _env_cfg_entry(action_space, play, levers), _agent_cfg_entry(action_space)
    globals()[env_cfg.__name__], globals()[agent_cfg.__name__] = env_cfg, agent_cfg
    gym.register(
        id=task_id,
        entry_point="isaaclab.envs:ManagerBasedRLEnv",
        disable_env_checker=True,
        kwargs={
            "env_cfg_entry_point": f"{__name__}:{env_cfg.__name__}",
            "rsl_rl_cfg_entry_point": f"{__name__}:{agent_cfg.__name__}",
            "default_agent": "rsl_rl",  # isaaclab train / play need no --rl_library
        },
    )


def levers_task(task: str) -> str:
    """The Levers variant of a grasp id: ``Realgap-Grasp-Franka-JointPDGravity-v0`` ->
    ``Realgap-Grasp-Franka-JointPDGravity-Levers-v0``."""
    return task.replace("-v0", "-Levers-v0")


for _space, _id in ACTION_SPACE_IDS.items():
    _register(_id, _space)
    _register(_id.replace("-v0", "-Play-v0"), _space, play=True)  # evaluation: the task's normal resets only
    # the same interface with the terms studied as levers (reverse curriculum, speed margin), off until set
    _register(levers_task(_id), _space, levers=True)
    _register(levers_task(_id).replace("-v0", "-Play-v0"), _space, play=True, levers=True)
