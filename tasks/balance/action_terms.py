"""The balance task's joint-position action: Isaac Lab's, with a nominal pose that may be reached over a ramp.

A policy trained around another nominal pose than the one the robot spawns in (the crouch lever,
``env.actions.joint_pos.offset``) would otherwise start every episode with a step in its servo targets: a knee target
0.9 rad away at t = 0 saturates the drives and knocks the robot over before any push. With ``ramp_s`` > 0 the offset
moves linearly from the robot's default pose (the spawn pose) to the nominal one over ``ramp_s`` seconds after each
reset, counted at the policy rate:

    q_target = offset(k) + scale * a,   offset(k) = q_default + (offset - q_default) * min(1, k * dt_policy / ramp_s)

k policy steps after the reset (k = 0 at the first step). The deploy runtime does the same from its start
(``joint_position_offset`` with ``ramp_s`` in the export, ``docs/policy_format.md``). ``ramp_s`` = 0, the task as
shipped: Isaac Lab's term exactly.

With ``relative_to="measured"`` the target is set about the joint positions measured at that policy step instead:

    q_target = clip(q(k) + scale * a)

(``joint_position_measured`` in the export; ``offset`` and ``ramp_s`` then set no target). A drive that computes its
PD torque once per command and holds it (some bridges do) then gets ``kp·scale·a − kd·q̇``: no stiffness acting on a
stale reading, and a zero action holds the robot where it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch
from isaaclab.envs.mdp.actions import JointPositionActionCfg
from isaaclab.envs.mdp.actions.joint_actions import JointPositionAction
from isaaclab.utils import configclass

from realgap.envs.format.terms import joint_position_measured, joint_position_offset

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedEnv


RELATIVE_TO = ("offset", "measured")
"""What a target is set about: the term's offset (Isaac Lab's) or the joint positions measured at the policy step."""


class RampedJointPositionAction(JointPositionAction):
    """:class:`JointPositionAction` whose offset ramps from the default pose to ``cfg.offset`` after each reset."""

    cfg: RampedJointPositionActionCfg

    def __init__(self, cfg: RampedJointPositionActionCfg, env: ManagerBasedEnv) -> None:
        super().__init__(cfg, env)
        if not cfg.ramp_s >= 0.0:
            raise ValueError(f"actions.{cfg.asset_name} ramp_s must be >= 0 s, got {cfg.ramp_s!r}")
        if cfg.relative_to not in RELATIVE_TO:
            raise ValueError(
                f"actions.{cfg.asset_name} relative_to must be one of {list(RELATIVE_TO)}, got {cfg.relative_to!r}"
            )
        self._measured = cfg.relative_to == "measured"
        shape = (self.num_envs, self.action_dim)
        self._nominal = torch.as_tensor(self._offset, dtype=torch.float32, device=self.device).expand(shape).clone()
        self._start = self._asset.data.default_joint_pos.torch[:, self._joint_ids].clone()
        self._ramp_steps = cfg.ramp_s / env.step_dt
        self._steps = torch.zeros(self.num_envs, device=self.device)
        if self._ramp_steps > 0:
            self._offset = self._start.clone()

    @property
    def nominal_offset(self) -> torch.Tensor:
        """The offset after the ramp (the pose a zero action holds once it is over), ``(E, J)``."""
        return self._nominal

    def next_offset(self) -> torch.Tensor:
        """The offset the next :meth:`process_actions` applies, ``(E, J)``: ``k`` policy steps after each env's reset
        (the term's own count, not ``episode_length_buf``, which rsl-rl randomizes at the start of training); with
        ``relative_to="measured"`` the joint positions measured now."""
        if self._measured:
            return self._asset.data.joint_pos.torch[:, self._joint_ids].clone()
        if self._ramp_steps <= 0:
            return self._nominal
        frac = (self._steps / self._ramp_steps).clamp(max=1.0).unsqueeze(-1)
        return self._start + (self._nominal - self._start) * frac

    def default_pose_action(self) -> torch.Tensor:
        """The action whose targets at the next step are the robot's default pose, ``(q_default - offset) / scale``
        (unclipped), ``(E, J)``: the task's zero action, whatever nominal pose the term acts around."""
        default = self._asset.data.default_joint_pos.torch[:, self._joint_ids]
        return (default - self.next_offset()) / self._scale

    def export_description(self) -> dict[str, Any]:
        """This term in the exported format: ``joint_position_offset`` around :attr:`nominal_offset` (the offset after
        the ramp), with ``ramp_s`` when there is a ramp (:mod:`realgap.envs.format.terms`)."""
        clip = None if self.cfg.clip is None else self._clip
        if self._measured:
            return joint_position_measured(self._joint_names, self._scale, clip)
        return joint_position_offset(self._joint_names, self._scale, self.nominal_offset, clip, None, self.cfg.ramp_s)

    def process_actions(self, actions: torch.Tensor) -> None:
        if self._measured or self._ramp_steps > 0:
            self._offset = self.next_offset()
            self._steps += 1
        super().process_actions(actions)

    def reset(self, env_ids: Sequence[int] | None = None) -> None:
        super().reset(env_ids)
        self._steps[slice(None) if env_ids is None else env_ids] = 0


@configclass
class RampedJointPositionActionCfg(JointPositionActionCfg):
    """:class:`JointPositionActionCfg` plus ``ramp_s``: seconds over which the offset moves from the default pose to
    the nominal one after each reset (0: no ramp, Isaac Lab's term), and ``relative_to``."""

    class_type: type = RampedJointPositionAction
    ramp_s: float = 0.0
    relative_to: str = "offset"
    """``offset``: targets about ``offset`` (Isaac Lab's term); ``measured``: about the joint positions measured at
    each policy step."""
