"""The Franka arm's joint-speed limits as grasp MDP terms: the controller's reflex (a termination) and a penalty on the
band below it (a reward term, off as shipped).

Speeds in rad/s, limits from the datasheet (``envs/robots/panda.py``), joints named by regex as in Isaac Lab's
``find_joints``. Re-exported by :mod:`realgap.tasks.grasp.mdp`, where the task's config reads its terms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from isaaclab.managers import ManagerTermBase, SceneEntityCfg

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv
    from isaaclab.managers import RewardTermCfg, TerminationTermCfg

ROBOT = SceneEntityCfg("robot")  # default entity, a value: Isaac Lab deep-copies a term's defaults into its params


class joint_speed_reflex(ManagerTermBase):
    """Termination: the Franka's joint-velocity reflex. True for envs where a joint's speed exceeds its limit,
    ``|q̇_i| > q̇_max,i`` (rad/s).

    The real arm's controller stops the robot with a reflex error ("joint_velocity_violation") when a limit is
    crossed, and the episode is over; the simulator enforces no limit (a joint was driven to 10.9 rad/s against
    2.175), so the task ends the episode as the robot would. The robot checks every controller cycle, so the term
    checks every physics step: the peak speed since the last policy step from the actuator chain
    (``RealgapActuator.pop_peak_speed``) and the speed now; in an episode's first policy step the speed at its end
    only (the physics then resolves the state the reset wrote, e.g. a reverse-curriculum state mid-grasp). A policy
    that breaks the limits cannot succeed, and the share of episodes this term ends is reported per action space.

    Params:
        limits_rad_s: Joint-name regex -> velocity limit, rad/s (the datasheet's, ``envs/robots/panda.py``).
    """

    def __init__(self, cfg: TerminationTermCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        self.robot, self.joint_ids, self.limits = _speed_limits(env, cfg.params, "joint_speed_reflex")

    def __call__(
        self, env: ManagerBasedRLEnv, limits_rad_s: dict[str, float], asset_cfg: SceneEntityCfg = ROBOT
    ) -> torch.Tensor:
        speed = self.robot.data.joint_vel.torch.abs()
        # the speeds of the physics steps since the last policy step; not in an episode's first policy step, where
        # the physics resolves the state a reset wrote (a jump no robot makes), only the speed at its end
        settled = (env.episode_length_buf > 1)[:, None]
        for actuator in self.robot.actuators.values():
            if hasattr(actuator, "pop_peak_speed"):
                cols = actuator.joint_indices
                peak = torch.where(settled, actuator.pop_peak_speed(), 0.0)
                speed[:, cols] = torch.maximum(speed[:, cols], peak)
        return (speed[:, self.joint_ids] > self.limits).any(dim=-1)


def _speed_limits(env: ManagerBasedRLEnv, params: dict, term: str) -> tuple[Any, torch.Tensor, torch.Tensor]:
    """The robot, the joint ids and the velocity limits (rad/s) that ``params["limits_rad_s"]`` names by regex."""
    robot = env.scene[params.get("asset_cfg", ROBOT).name]
    ids, limits = [], []
    for expr, limit in params["limits_rad_s"].items():
        try:
            found, _ = robot.find_joints(expr)  # Isaac Lab's regex matching (raises when nothing matches)
        except ValueError as err:
            raise ValueError(f"{term}: no joint matches {expr!r} (joints: {robot.joint_names})") from err
        ids += list(found)
        limits += [float(limit)] * len(found)
    return robot, torch.tensor(ids, device=env.device), torch.tensor(limits, device=env.device)


class joint_speed_margin(ManagerTermBase):
    """Reward (a penalty with a negative weight): how far the arm's joints run into the band below the speed reflex,
    ``Σ_i clip((|q̇_i|/q̇_max,i − onset) / (1 − onset), 0, ∞)²`` — 0 below ``onset`` × the limit, 1 per joint at the
    limit. The reflex ends the episode at the limit (:class:`joint_speed_reflex`), which tells the policy only that
    it went too fast, one step too late; this term says so on the way there, with a gradient. Off in the task as
    shipped (weight 0); ``--set env.rewards.speed_margin.weight=-W`` turns it on.

    Params:
        limits_rad_s: Joint-name regex -> velocity limit, rad/s (as :class:`joint_speed_reflex`).
        onset: Fraction of the limit where the penalty starts (0 < onset < 1).
    """

    def __init__(self, cfg: RewardTermCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        onset = float(cfg.params.get("onset", 0.7))
        if not 0.0 < onset < 1.0:
            raise ValueError(f"joint_speed_margin: onset must lie in (0, 1), got {onset}")
        self.robot, self.joint_ids, self.limits = _speed_limits(env, cfg.params, "joint_speed_margin")
        self.onset = onset

    def __call__(
        self,
        env: ManagerBasedRLEnv,
        limits_rad_s: dict[str, float],
        onset: float = 0.7,
        asset_cfg: SceneEntityCfg = ROBOT,
    ) -> torch.Tensor:
        ratio = self.robot.data.joint_vel.torch[:, self.joint_ids].abs() / self.limits
        return ((ratio - self.onset).clamp(min=0.0) / (1.0 - self.onset)).square().sum(dim=-1)
