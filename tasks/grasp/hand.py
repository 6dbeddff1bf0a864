"""The Franka Hand as the grasp policy commands it: one binary command, the hand's own controller moving the fingers.

A real Franka Hand is not a joint PD the client drives: behind libfranka's ``Gripper`` (and franky's) its own
controller runs ``move(width, speed)`` and ``grasp(width, speed, force, ε_inner, ε_outer)``, moving each finger at no
more than the commanded speed (datasheet: 0.05 m/s per finger, ``PANDA_FINGER.velocity_limit``) until the width or
the object stops it, then pressing with the commanded force. The policy's binary command maps to those calls: close
= ``grasp`` toward width 0, open = ``move`` to the full 8 cm.

Here each finger's position setpoint moves toward the close or open target at ``max_speed`` per finger, once per
physics step (:func:`realgap.actuators.motion.ramp_toward`), and the finger PD of the actuator chain tracks it, its
force bounded by the chain's torque envelope. After a reset the setpoint starts where the fingers are.
``max_speed = None`` is the idealised hand: the target goes to the PD as is (what exports without ``speed`` ran).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch
from isaaclab.envs.mdp.actions import BinaryJointPositionActionCfg
from isaaclab.envs.mdp.actions.binary_joint_actions import BinaryJointPositionAction
from isaaclab.utils import configclass

from realgap.actuators.motion import ramp_toward
from realgap.envs.format import terms as fmt

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedEnv


class GripperAction(BinaryJointPositionAction):
    """Isaac Lab's binary joint-position action (a < 0: close, else open) with the hand's finger speed (module
    docstring), described for export."""

    cfg: GripperActionCfg

    def __init__(self, cfg: GripperActionCfg, env: ManagerBasedEnv) -> None:
        super().__init__(cfg, env)
        if cfg.max_speed is not None and not cfg.max_speed > 0:
            raise ValueError(f"GripperActionCfg.max_speed must be > 0 m/s per finger (or None), got {cfg.max_speed!r}")
        self._cols, _ = self._asset.find_joints(cfg.joint_names)  # as the base resolves them, as ints (not a wp array)
        step = float("inf") if cfg.max_speed is None else cfg.max_speed * env.physics_dt
        self._step = torch.full((1, len(self._cols)), step, device=self.device)  # on the device: no per-step copy
        self._setpoint = self._asset.data.default_joint_pos.torch[:, self._cols].clone()
        self._reset_mask = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)

    def process_actions(self, actions: torch.Tensor) -> None:
        super().process_actions(actions)
        fresh = self._reset_mask[:, None]  # once per policy step: an episode's setpoint starts where the fingers are
        self._setpoint = torch.where(fresh, self._asset.data.joint_pos.torch[:, self._cols], self._setpoint)
        self._reset_mask[:] = False

    def apply_actions(self) -> None:
        self._setpoint = ramp_toward(self._setpoint, self.processed_actions, self._step)
        self._asset.actuators.target_command.set_position_index(value=self._setpoint, joint_ids=self._cols)

    def reset(self, env_ids: Sequence[int] | None = None) -> None:
        super().reset(env_ids)
        self._reset_mask[slice(None) if env_ids is None else env_ids] = True

    def export_description(self) -> dict[str, Any]:
        """``binary_joint_position`` with the finger speed; a clipped one is refused (``envs/format/terms.py``)."""
        clipped = self.cfg.clip is not None
        speed = None if self.cfg.max_speed is None else [self.cfg.max_speed] * len(self._joint_names)  # per joint
        return fmt.binary_joint_position(self._joint_names, self._open_command, self._close_command, clipped, speed)


@configclass
class GripperActionCfg(BinaryJointPositionActionCfg):
    class_type: type = GripperAction
    max_speed: float | None = None
    """Finger setpoint speed, m/s per finger (the hand's datasheet speed); ``None``: the target jumps (idealised)."""
