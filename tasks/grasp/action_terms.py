"""Action terms of the grasp task (Isaac Lab's joint and IK actions, extended): gravity feed-forward g(q) of the
nominal Panda, the motion generator of the absolute position interfaces and the integrated joint-target increments.
:mod:`realgap.tasks.grasp.actions` puts them together into the six arm interfaces.

g(q) is the nominal Panda's gravity torque on example-robot-data's URDF (the robot's own model, which a real
controller has; it does not know a randomized payload): batched in torch on the env's device (``gravity_source =
"torch"``, the default: :class:`realgap.envs.sim.gravity.TorchGravity`, the URDF read once through pinocchio) or by
pinocchio itself, one RNEA per env on the CPU (``"pinocchio"``, the reference the torch one is tested against); or
the simulator's own gravity bias (``"simulator"``: Newton's inverse dynamics of the simulated, possibly randomized
robot). Gravity compensation is recomputed every physics step.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import torch
from isaaclab.envs.mdp.actions import (
    DifferentialInverseKinematicsActionCfg,
    JointEffortActionCfg,
    JointPositionActionCfg,
    JointVelocityActionCfg,
)
from isaaclab.envs.mdp.actions.actions_cfg import JointActionCfg
from isaaclab.envs.mdp.actions.joint_actions import (
    JointAction,
    JointEffortAction,
    JointPositionAction,
    JointVelocityAction,
)
from isaaclab.envs.mdp.actions.task_space_actions import DifferentialInverseKinematicsAction
from isaaclab.utils import configclass, to_dict
from isaaclab.utils import string as string_utils

from realgap.actuators.motion import check_limits, limit_rate
from realgap.envs.format import terms as fmt
from realgap.envs.sim.gravity import TorchGravity, urdf_model
from realgap.envs.sim.passive_forces import PassiveForces

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedEnv

GravitySource = Literal["torch", "pinocchio", "simulator"]
PANDA_URDF = "cmeel.prefix/share/example-robot-data/robots/panda_description/urdf/panda.urdf"
"""Path of the Panda URDF inside the ``example-robot-data`` wheel (a cmeel prefix; the wheel has no Python module)."""


class PandaGravity:
    """Nominal gravity torque g(q) of the Panda from pinocchio (example-robot-data URDF, hand and fingers included).

    Args:
        joint_names: Simulator joint names of the columns of ``q`` (``joint1``.., ``finger_joint1``..); the URDF's
            ``panda_`` prefix is matched either way.

    The URDF and Menagerie's MJCF agree in masses, inertias and kinematics (measured: holding torques equal g(q)
    to 0.02 %).
    """

    def __init__(self, joint_names: Sequence[str]) -> None:
        import pinocchio as pin

        dist = importlib.metadata.distribution("example-robot-data")
        self._pin = pin
        self.model = pin.buildModelFromUrdf(str(dist.locate_file(PANDA_URDF)))
        self.data = self.model.createData()
        pin_names = [self.model.names[i].removeprefix("panda_") for i in range(1, self.model.njoints)]
        missing = [n for n in joint_names if n.removeprefix("panda_") not in pin_names]
        if missing:
            raise ValueError(f"joints {missing} are not in the pinocchio Panda model (joints: {pin_names})")
        # column of each pinocchio joint in the simulator's q (all Panda joints are 1-DoF: q index = v index)
        sim = [n.removeprefix("panda_") for n in joint_names]
        pairs = [(k, sim.index(n)) for k, n in enumerate(pin_names) if n in sim]
        self._pin_idx, self._sim_idx = (np.array(idx, dtype=np.int64) for idx in zip(*pairs, strict=True))
        self._q_neutral = pin.neutral(self.model)

    def __call__(self, q: torch.Tensor) -> torch.Tensor:
        """g(q), N·m (N for the fingers), in the column order of ``q``.

        Shape:
            q: ``(E, J)`` rad / m → ``(E, J)``.
        """
        q_np = q.detach().to("cpu", torch.float64).numpy()
        q_pin = np.tile(self._q_neutral, (q_np.shape[0], 1))
        q_pin[:, self._pin_idx] = q_np[:, self._sim_idx]
        # pinocchio has no batched call: one RNEA per env (the "simulator" gravity source is vectorized)
        g_pin = np.stack([self._pin.computeGeneralizedGravity(self.model, self.data, qi) for qi in q_pin])
        out = np.zeros_like(q_np)
        out[:, self._sim_idx] = g_pin[:, self._pin_idx]
        return torch.as_tensor(out, dtype=q.dtype, device=q.device)


def _gravity_fn(
    action: JointAction | DifferentialInverseKinematicsAction, source: GravitySource
) -> Callable[[], torch.Tensor]:
    """A function returning g(q) of the action term's joints, ``(E, len(joints))`` N·m, from ``source``."""
    asset = action._asset
    cols = action._joint_ids
    if source == "torch":
        batched = TorchGravity.from_pinocchio(urdf_model(PANDA_URDF), asset.joint_names, prefixes=("panda_",))
        return lambda: batched(asset.data.joint_pos.torch)[:, cols]
    if source == "pinocchio":
        model = PandaGravity(asset.joint_names)
        return lambda: model(asset.data.joint_pos.torch)[:, cols]
    if source == "simulator":
        offset = asset.num_base_dofs  # fixed base: 0; the bias forces lead with the base DoFs
        forces = PassiveForces(asset.data)  # Isaac Lab's gravity_compensation_forces, its buffers kept
        return lambda: forces.gravity()[:, offset:][:, cols]
    raise ValueError(f"gravity_source must be 'torch', 'pinocchio' or 'simulator', got {source!r}")


class RateLimitedJointPositionAction(JointPositionAction):
    """Absolute joint position targets through the interface's motion generator (:mod:`realgap.actuators.motion`).

    The policy's target ``q*`` (once per policy step) is followed every physics step by a setpoint whose velocity and
    acceleration stay within ``cfg.max_velocity`` / ``cfg.max_acceleration`` (libfranka's ``limitRate``, on by default
    on the real arm); the PD tracks the setpoint. With ``cfg.max_following_error`` the setpoint also stays within
    that distance of the measured position (a drive's following-error limit), which bounds the joint speed a lagging
    joint reaches when it catches up. After a reset the setpoint starts at rest at the measured joint position.
    ``max_velocity = None``: no motion generator, the target goes to the PD as is.
    """

    cfg: RateLimitedJointPositionActionCfg

    def __init__(self, cfg: RateLimitedJointPositionActionCfg, env: ManagerBasedEnv) -> None:
        super().__init__(cfg, env)
        self._limited = cfg.max_velocity is not None
        if not self._limited:
            return
        self._v_max = self._per_joint(cfg.max_velocity, "max_velocity")
        self._a_max = self._per_joint(cfg.max_acceleration, "max_acceleration")
        self._max_error = (
            None if cfg.max_following_error is None else self._per_joint(cfg.max_following_error, "max_following_error")
        )
        check_limits(self._v_max, self._a_max, f"{type(self).__name__} on {self._joint_names}", self._max_error)
        self._dt = env.physics_dt
        self._setpoint = self._asset.data.default_joint_pos.torch[:, self._joint_ids].clone()
        self._velocity = torch.zeros_like(self._setpoint)
        self._reset_mask = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)

    @property
    def setpoint(self) -> torch.Tensor:
        """The motion generator's position setpoint last sent to the drives, rad. Shape: ``(E, J)``."""
        if not self._limited:
            raise AttributeError(f"{type(self).__name__} has no motion generator (max_velocity is None)")
        return self._setpoint

    @property
    def max_following_error(self) -> torch.Tensor | None:
        """The setpoint's bound on its distance from the measured joint, rad (None: unbounded). Shape: ``(1, J)``."""
        if not self._limited:
            raise AttributeError(f"{type(self).__name__} has no motion generator (max_velocity is None)")
        return self._max_error

    def _per_joint(self, value: float | dict[str, float] | None, field: str) -> torch.Tensor:
        """A per-joint ``(1, J)`` tensor from a float or a {joint regex: value} dict (every joint must match)."""
        if value is None:
            raise ValueError(f"{type(self).__name__}: {field} is required with max_velocity")
        if isinstance(value, int | float):
            return torch.full((1, self.action_dim), float(value), device=self.device)
        ids, _, values = string_utils.resolve_matching_names_values(value, self._joint_names, preserve_order=True)
        if len(ids) != self.action_dim:
            missing = sorted(set(self._joint_names) - {self._joint_names[i] for i in ids})
            raise ValueError(f"{type(self).__name__}: {field} does not cover joints {missing}")
        out = torch.empty((1, self.action_dim), device=self.device)
        out[0, ids] = torch.tensor(values, device=self.device)
        return out

    def process_actions(self, actions: torch.Tensor) -> None:
        super().process_actions(actions)
        if self._limited:  # once per policy step: an episode's setpoint starts at rest where the arm is
            fresh = self._reset_mask[:, None]
            self._setpoint = torch.where(fresh, self._asset.data.joint_pos.torch[:, self._joint_ids], self._setpoint)
            self._velocity = torch.where(fresh, torch.zeros_like(self._velocity), self._velocity)
            self._reset_mask[:] = False

    def apply_actions(self) -> None:
        if not self._limited:
            super().apply_actions()
            return
        self._setpoint, self._velocity = limit_rate(
            self._setpoint,
            self._velocity,
            self.processed_actions,
            self._v_max,
            self._a_max,
            self._dt,
            measured=self._asset.data.joint_pos.torch[:, self._joint_ids],
            max_error=self._max_error,
        )
        self._asset.actuators.target_command.set_position_index(value=self._setpoint, joint_ids=self._joint_ids)

    def reset(self, env_ids: Sequence[int] | None = None) -> None:
        super().reset(env_ids)
        if self._limited:
            self._reset_mask[slice(None) if env_ids is None else env_ids] = True

    def default_pose_action(self) -> torch.Tensor:
        """The action whose target is the robot's default pose, ``(q_default - offset) / scale`` (unclipped),
        ``(E, J)``: the task's zero action."""
        return (self._asset.data.default_joint_pos.torch[:, self._joint_ids] - self._offset) / self._scale

    def motion_params(self) -> dict[str, Any]:
        """Target and motion-generator parameters in the exported format (requires ``max_velocity``)."""
        clip = None if self.cfg.clip is None else self._clip
        return fmt.rate_limited_params(
            len(self._joint_names), self._scale, self._offset, clip, self._v_max, self._a_max, self._max_error
        )

    def export_description(self) -> dict[str, Any]:
        """``joint_position_rate_limited``, or ``joint_position_offset`` without a motion generator; plus g(q) where
        the cfg has a ``gravity_source`` (:mod:`realgap.envs.format.terms`)."""
        ff = fmt.gravity_feed_forward(getattr(self.cfg, "gravity_source", None))
        if self._limited:
            return fmt.joint_position_rate_limited(self._joint_names, self.motion_params(), ff)
        clip = None if self.cfg.clip is None else self._clip
        return fmt.joint_position_offset(self._joint_names, self._scale, self._offset, clip, ff)


class JointPositionGravityAction(RateLimitedJointPositionAction):
    """Joint position targets plus gravity feed-forward: τ = Kp·(q* − q) − Kd·q̇ + g(q)."""

    cfg: JointPositionGravityActionCfg

    def __init__(self, cfg: JointPositionGravityActionCfg, env: ManagerBasedEnv) -> None:
        super().__init__(cfg, env)
        self._gravity = _gravity_fn(self, cfg.gravity_source)

    def apply_actions(self) -> None:
        super().apply_actions()
        self._asset.actuators.target_command.set_effort_index(value=self._gravity(), joint_ids=self._joint_ids)


class JointVelocityGravityAction(JointVelocityAction):
    """Joint velocity targets with gravity compensation (Kp = 0 in the spec): τ = Kd·(q̇* − q̇) + g(q)."""

    cfg: JointVelocityGravityActionCfg

    def __init__(self, cfg: JointVelocityGravityActionCfg, env: ManagerBasedEnv) -> None:
        super().__init__(cfg, env)
        self._gravity = _gravity_fn(self, cfg.gravity_source)

    def apply_actions(self) -> None:
        super().apply_actions()
        self._asset.actuators.target_command.set_effort_index(value=self._gravity(), joint_ids=self._joint_ids)

    def export_description(self) -> dict[str, Any]:
        """``joint_velocity`` plus g(q) (:mod:`realgap.envs.format.terms`)."""
        ff = fmt.gravity_feed_forward(self.cfg.gravity_source)
        return fmt.joint_velocity(self._joint_names, self._scale, self._offset, ff)


class JointTorqueGravityAction(JointEffortAction):
    """Joint torques on top of gravity compensation (Kp = Kd = 0 in the spec): τ = scale·a + g(q)."""

    cfg: JointTorqueGravityActionCfg

    def __init__(self, cfg: JointTorqueGravityActionCfg, env: ManagerBasedEnv) -> None:
        super().__init__(cfg, env)
        self._gravity = _gravity_fn(self, cfg.gravity_source)

    def apply_actions(self) -> None:
        torque = self.processed_actions + self._gravity()
        self._asset.actuators.target_command.set_effort_index(value=torque, joint_ids=self._joint_ids)

    def export_description(self) -> dict[str, Any]:
        """``joint_effort`` plus g(q) (:mod:`realgap.envs.format.terms`)."""
        ff = fmt.gravity_feed_forward(self.cfg.gravity_source)
        return fmt.joint_effort(self._joint_names, self._scale, self._offset, ff)


class DifferentialIKGravityAction(DifferentialInverseKinematicsAction):
    """Isaac Lab's differential IK (joint position targets every physics step) plus gravity feed-forward g(q).

    Without it the re-based relative IK cannot hold the arm: the PD torque ``Kp·J⁺·e`` needs a pose error of a few
    centimetres to carry gravity, which every policy step re-bases away, so the hand sags and tilts (measured; Isaac
    Lab's own Franka IK tasks switch the arm's gravity off instead). Franka's Cartesian interface compensates gravity
    inside the robot as well.
    """

    cfg: DifferentialIKGravityActionCfg

    def __init__(self, cfg: DifferentialIKGravityActionCfg, env: ManagerBasedEnv) -> None:
        super().__init__(cfg, env)
        self._gravity = _gravity_fn(self, cfg.gravity_source)

    def apply_actions(self) -> None:
        super().apply_actions()
        self._asset.actuators.target_command.set_effort_index(value=self._gravity(), joint_ids=self._joint_ids)

    def export_description(self) -> dict[str, Any]:
        """``ee_pose_delta`` plus g(q) (:mod:`realgap.envs.format.terms`); relative pose commands only."""
        ff = fmt.gravity_feed_forward(self.cfg.gravity_source)
        return fmt.ee_pose_delta(
            self._joint_names,
            self._body_name,
            self.cfg.body_offset,
            self._scale,
            self._offset,
            self.action_dim,
            to_dict(self.cfg.controller),
            ff,
        )


class JointPositionDeltaAction(JointAction):
    """Joint position increments integrated on the target: q*_k = clip(q*_{k−1} + scale·a_k, soft limits).

    The target starts at the measured joint position after every reset. Integrating on the previous *target* (not on
    the measured position) keeps a zero action from drifting under gravity sag; the clip keeps the target inside the
    joint's soft limits so it cannot wind up beyond them.
    """

    cfg: JointPositionDeltaActionCfg

    def __init__(self, cfg: JointPositionDeltaActionCfg, env: ManagerBasedEnv) -> None:
        super().__init__(cfg, env)
        self._target = self._asset.data.default_joint_pos.torch[:, self._joint_ids].clone()
        self._reset_mask = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)

    def process_actions(self, actions: torch.Tensor) -> None:
        super().process_actions(actions)
        q = self._asset.data.joint_pos.torch[:, self._joint_ids]
        self._target = torch.where(self._reset_mask[:, None], q, self._target)  # fresh episodes start from q
        self._reset_mask[:] = False
        limits = self._asset.data.soft_joint_pos_limits.torch[:, self._joint_ids]
        self._target = torch.clamp(self._target + self.processed_actions, limits[..., 0], limits[..., 1])

    def apply_actions(self) -> None:
        self._asset.actuators.target_command.set_position_index(value=self._target, joint_ids=self._joint_ids)

    def reset(self, env_ids: Sequence[int] | None = None) -> None:
        super().reset(env_ids)
        self._reset_mask[slice(None) if env_ids is None else env_ids] = True

    def export_description(self) -> dict[str, Any]:
        """``joint_position_delta`` within the soft joint limits of env 0 (:mod:`realgap.envs.format.terms`)."""
        limits = self._asset.data.soft_joint_pos_limits.torch[0, self._joint_ids]
        return fmt.joint_position_delta(self._joint_names, self._scale, limits, None)


@configclass
class RateLimitedJointPositionActionCfg(JointPositionActionCfg):
    class_type: type = RateLimitedJointPositionAction
    max_velocity: float | dict[str, float] | None = None
    """Setpoint velocity limit, rad/s (a float or {joint regex: value}); ``None``: no motion generator."""
    max_acceleration: float | dict[str, float] | None = None
    """Setpoint acceleration limit, rad/s² (required with ``max_velocity``)."""
    max_following_error: float | dict[str, float] | None = None
    """Bound on ``|setpoint − q|``, rad (a float or {joint regex: value}); ``None``: unbounded. Only with
    ``max_velocity``."""


@configclass
class JointPositionGravityActionCfg(RateLimitedJointPositionActionCfg):
    class_type: type = JointPositionGravityAction
    gravity_source: str = "torch"
    """``"torch"`` (nominal robot model, batched on the env's device), ``"pinocchio"`` (the same model, one RNEA per
    env on the CPU: the reference) or ``"simulator"`` (Newton's inverse dynamics of the simulated robot)."""


@configclass
class JointVelocityGravityActionCfg(JointVelocityActionCfg):
    class_type: type = JointVelocityGravityAction
    gravity_source: str = "torch"
    """See :attr:`JointPositionGravityActionCfg.gravity_source`."""


@configclass
class JointTorqueGravityActionCfg(JointEffortActionCfg):
    class_type: type = JointTorqueGravityAction
    gravity_source: str = "torch"
    """See :attr:`JointPositionGravityActionCfg.gravity_source`."""


@configclass
class DifferentialIKGravityActionCfg(DifferentialInverseKinematicsActionCfg):
    class_type: type = DifferentialIKGravityAction
    gravity_source: str = "torch"
    """See :attr:`JointPositionGravityActionCfg.gravity_source`."""


@configclass
class JointPositionDeltaActionCfg(JointActionCfg):
    class_type: type = JointPositionDeltaAction
