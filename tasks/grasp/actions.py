"""Action spaces of the grasp task: six arm interfaces over the same observations, rewards and budget.

Every variant drives the 7 arm joints through realgap's datasheet actuator chain (``actuators/chain.py``: per-env
command delay 1–5 ms, PD at the servo rate, torque envelope; solver-side armature and joint friction) and the gripper
with one binary command (``a < 0`` closes both fingers to 0 m, ``a >= 0`` opens them to 0.04 m, tracked by the
finger PD). What the policy commands and what the chain does with it:

=====================  ========================  ============================================================
name                   policy output (arm)       low-level actuator model
=====================  ========================  ============================================================
``joint_pos``          q* = q_default + 0.5·a    s = rate-limited q*; τ = Kp·(s − q) − Kd·q̇   (datasheet PD)
``joint_pos_delta``    q*_k = q*_{k−1} + 0.05·a  τ = Kp·(q* − q) − Kd·q̇   (target integrated, clipped to limits)
``joint_vel``          q̇* = 1.0·a (rad/s)        τ = Kd·(q̇* − q̇) + g(q)           (Kp = 0, velocity servo)
``joint_torque``       τ_a = τ_scale·a (N·m)     τ = τ_a + g(q)                    (Kp = Kd = 0, torque pass-through)
``joint_pd_gravity``   q* = q_default + 0.5·a    s = rate-limited q*; τ = Kp·(s − q) − Kd·q̇ + g(q)
``ee_pose_delta``      Δx (m), Δθ (rad) of TCP   differential IK (DLS) → q* → τ = Kp·(q* − q) − Kd·q̇ + g(q)
=====================  ========================  ============================================================

g(q) is the nominal Panda's gravity torque on example-robot-data's URDF (the robot's own model, which a real
controller has; it does not know a randomized payload): batched in torch on the env's device (``gravity_source =
"torch"``, the default: :class:`realgap.envs.sim.gravity.TorchGravity`, the URDF read once through pinocchio) or by
pinocchio itself, one RNEA per env on the CPU (``"pinocchio"``, the reference the torch one is tested against); or
the simulator's own gravity bias (``"simulator"``: Newton's inverse dynamics of the simulated, possibly randomized
robot). Franka's torque and velocity interfaces compensate gravity inside the robot, so
the ``joint_vel``, ``joint_torque`` and ``ee_pose_delta`` variants do as well (for the re-based relative IK it is
necessary, see :class:`DifferentialIKGravityAction`). Gravity compensation is recomputed every physics step.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

import numpy as np
import torch
from isaaclab.controllers import DifferentialIKControllerCfg
from isaaclab.envs.mdp.actions import (
    BinaryJointPositionActionCfg,
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
from isaaclab.managers import ActionTermCfg
from isaaclab.utils import configclass
from isaaclab.utils import string as string_utils

from realgap.actuators.motion import check_limits, limit_rate
from realgap.actuators.spec import ActuatorSpec, PDGains
from realgap.envs.robots.panda import (
    PANDA_ACTUATORS,
    PANDA_ARM_JOINTS,
    PANDA_FINGER_JOINTS,
    PANDA_HAND_BODY,
    PANDA_TCP_OFFSET_HAND,
)
from realgap.envs.sim.gravity import TorchGravity, urdf_model

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
        offset = asset.num_base_dofs  # fixed base: 0; gravity_compensation_forces leads with the base DoFs
        return lambda: asset.data.gravity_compensation_forces.torch[:, offset:][:, cols]
    raise ValueError(f"gravity_source must be 'torch', 'pinocchio' or 'simulator', got {source!r}")


class RateLimitedJointPositionAction(JointPositionAction):
    """Absolute joint position targets through the interface's motion generator (:mod:`realgap.actuators.motion`).

    The policy's target ``q*`` (once per policy step) is followed every physics step by a setpoint whose velocity and
    acceleration stay within ``cfg.max_velocity`` / ``cfg.max_acceleration`` (libfranka's ``limitRate``, on by default
    on the real arm); the PD tracks the setpoint. After a reset the setpoint starts at rest at the measured joint
    position. ``max_velocity = None``: no motion generator, the target goes to the PD as is.
    """

    cfg: RateLimitedJointPositionActionCfg

    def __init__(self, cfg: RateLimitedJointPositionActionCfg, env: ManagerBasedEnv) -> None:
        super().__init__(cfg, env)
        self._limited = cfg.max_velocity is not None
        if not self._limited:
            return
        self._v_max = self._per_joint(cfg.max_velocity, "max_velocity")
        self._a_max = self._per_joint(cfg.max_acceleration, "max_acceleration")
        check_limits(self._v_max, self._a_max, f"{type(self).__name__} on {self._joint_names}")
        self._dt = env.physics_dt
        self._setpoint = self._asset.data.default_joint_pos.torch[:, self._joint_ids].clone()
        self._velocity = torch.zeros_like(self._setpoint)
        self._reset_mask = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)

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

    def apply_actions(self) -> None:
        if not self._limited:
            super().apply_actions()
            return
        q = self._asset.data.joint_pos.torch[:, self._joint_ids]
        fresh = self._reset_mask[:, None]  # an episode's setpoint starts at rest where the arm is
        self._setpoint = torch.where(fresh, q, self._setpoint)
        self._velocity = torch.where(fresh, torch.zeros_like(self._velocity), self._velocity)
        self._reset_mask[:] = False
        self._setpoint, self._velocity = limit_rate(
            self._setpoint, self._velocity, self.processed_actions, self._v_max, self._a_max, self._dt
        )
        self._asset.actuators.target_command.set_position_index(value=self._setpoint, joint_ids=self._joint_ids)

    def reset(self, env_ids: Sequence[int] | None = None) -> None:
        super().reset(env_ids)
        if self._limited:
            self._reset_mask[slice(None) if env_ids is None else env_ids] = True


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


class JointTorqueGravityAction(JointEffortAction):
    """Joint torques on top of gravity compensation (Kp = Kd = 0 in the spec): τ = scale·a + g(q)."""

    cfg: JointTorqueGravityActionCfg

    def __init__(self, cfg: JointTorqueGravityActionCfg, env: ManagerBasedEnv) -> None:
        super().__init__(cfg, env)
        self._gravity = _gravity_fn(self, cfg.gravity_source)

    def apply_actions(self) -> None:
        torque = self.processed_actions + self._gravity()
        self._asset.actuators.target_command.set_effort_index(value=torque, joint_ids=self._joint_ids)


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


@configclass
class RateLimitedJointPositionActionCfg(JointPositionActionCfg):
    class_type: type = RateLimitedJointPositionAction
    max_velocity: float | dict[str, float] | None = None
    """Setpoint velocity limit, rad/s (a float or {joint regex: value}); ``None``: no motion generator."""
    max_acceleration: float | dict[str, float] | None = None
    """Setpoint acceleration limit, rad/s² (required with ``max_velocity``)."""


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


@configclass
class GraspActionsCfg:
    """The arm command (one of :data:`ACTION_SPACES`) and the binary gripper command."""

    arm: ActionTermCfg | None = None
    gripper: BinaryJointPositionActionCfg = BinaryJointPositionActionCfg(
        asset_name="robot",
        joint_names=list(PANDA_FINGER_JOINTS),
        open_command_expr={"finger_joint.*": 0.04},  # m per finger: 8 cm opening
        close_command_expr={"finger_joint.*": 0.0},  # the object stops the fingers; PD squeezes with Kp·gap
    )


ARM = list(PANDA_ARM_JOINTS)
# Torque scale: ~1/8 of Franka's peak torque per unit action (87 N·m joints 1–4, 12 N·m joints 5–7); the gravity
# load is compensated, so these torques only accelerate the arm (and the policy can still saturate the envelope).
TORQUE_SCALE = {"joint[1-4]": 10.0, "joint[5-7]": 1.5}
# Differential IK on the tool centre point: per unit action 1 cm translation and 0.02 rad rotation per policy step
# (0.5 m/s and 1 rad/s at 50 Hz) in the robot base frame; damped least squares (λ = 0.05) near singularities. Sized to
# the arm's limits (Franka's Cartesian limits 1.7 m/s and 2.5 rad/s; joints 2.175-2.61 rad/s): at 2 cm and 0.1 rad
# (5 rad/s per unit, twice the Cartesian limit) exploration tripped the joint-speed reflex in 22 % of the episodes and a
# policy trained without the reflex tripped it in every Play episode (measured).
IK_SCALE = (0.01, 0.01, 0.01, 0.02, 0.02, 0.02)
# Motion generator of the absolute position interfaces (libfranka's limitRate, on by default on the real arm): the
# setpoint's velocity at 90 % of the joint-speed reflex limits (2.175 / 2.61 rad/s; the margin absorbs the PD's
# tracking overshoot) and libfranka's joint acceleration limits. Without it the absolute targets had to explore with
# 0.025 rad of noise to stay clear of the reflex and never touched the cube (docs/results/compare_actions/).
SETPOINT_MAX_VELOCITY = {"(panda_)?joint[1-4]": 0.9 * 2.175, "(panda_)?joint[5-7]": 0.9 * 2.61}
SETPOINT_MAX_ACCELERATION = {
    "(panda_)?joint1": 15.0,
    "(panda_)?joint2": 7.5,
    "(panda_)?joint3": 10.0,
    "(panda_)?joint4": 12.5,
    "(panda_)?joint5": 15.0,
    "(panda_)?joint[67]": 20.0,
}
_LIMITED = "setpoint rate-limited to 0.9 × the reflex speed and libfranka's accelerations (limitRate)"


def _specs_with_arm_gains(kp_zero: bool, kd_zero: bool) -> dict[str, ActuatorSpec]:
    """Datasheet specs with the arm's Kp and/or Kd set to 0 (fingers keep their PD)."""
    out = {}
    for key, spec in PANDA_ACTUATORS.items():
        if key == "fingers":
            out[key] = spec
            continue
        out[key] = replace(spec, gains=PDGains(kp=0.0 if kp_zero else spec.kp, kd=0.0 if kd_zero else spec.kd))
    return out


@dataclass(frozen=True)
class ActionSpace:
    """One arm interface: its action term, the actuator specs the chain runs, and a one-line actuator model.

    Attributes:
        name: Key in :data:`ACTION_SPACES`.
        arm_action: Builds a fresh arm action term config.
        specs: Datasheet actuator specs of every robot joint for this interface.
        low_level: The low-level actuator model in words (recorded in ``env_cfg.action_space_info``).
    """

    name: str
    arm_action: Callable[[], ActionTermCfg]
    specs: dict[str, ActuatorSpec]
    low_level: str


_PD = "datasheet chain: explicit PD τ = Kp·(q* − q) − Kd·q̇ at the servo rate, 1–5 ms delay, torque envelope"
ACTION_SPACES: dict[str, ActionSpace] = {
    s.name: s
    for s in (
        ActionSpace(
            "joint_pos",
            lambda: RateLimitedJointPositionActionCfg(
                asset_name="robot",
                joint_names=ARM,
                scale=0.5,
                use_default_offset=True,
                preserve_order=True,
                max_velocity=SETPOINT_MAX_VELOCITY,
                max_acceleration=SETPOINT_MAX_ACCELERATION,
            ),  # fmt: skip
            PANDA_ACTUATORS,
            f"absolute joint position targets q* = q_default + 0.5·a rad, {_LIMITED}; {_PD}",
        ),
        ActionSpace(
            "joint_pos_delta",
            lambda: JointPositionDeltaActionCfg(asset_name="robot", joint_names=ARM, scale=0.05, preserve_order=True),
            PANDA_ACTUATORS,
            f"joint target increments q*_k = clip(q*_(k-1) + 0.05·a) rad; {_PD}",
        ),
        ActionSpace(
            "joint_vel",
            lambda: JointVelocityGravityActionCfg(asset_name="robot", joint_names=ARM, scale=1.0, preserve_order=True),
            _specs_with_arm_gains(kp_zero=True, kd_zero=False),
            "joint velocity targets q̇* = 1.0·a rad/s; velocity servo τ = Kd·(q̇* − q̇) + g(q) (Kp = 0, datasheet Kd),"
            " nominal-model gravity compensation g(q), 1–5 ms delay, torque envelope",
        ),
        ActionSpace(
            "joint_torque",
            lambda: JointTorqueGravityActionCfg(
                asset_name="robot", joint_names=ARM, scale=TORQUE_SCALE, preserve_order=True
            ),  # fmt: skip
            _specs_with_arm_gains(kp_zero=True, kd_zero=True),
            "joint torques τ = (10 | 1.5 N·m)·a + g(q) passed through (Kp = Kd = 0), nominal-model gravity compensation"
            " as Franka's torque interface does, 1–5 ms delay, torque envelope",
        ),
        ActionSpace(
            "joint_pd_gravity",
            lambda: JointPositionGravityActionCfg(
                asset_name="robot",
                joint_names=ARM,
                scale=0.5,
                use_default_offset=True,
                preserve_order=True,
                max_velocity=SETPOINT_MAX_VELOCITY,
                max_acceleration=SETPOINT_MAX_ACCELERATION,
            ),  # fmt: skip
            PANDA_ACTUATORS,
            f"absolute joint position targets q* = q_default + 0.5·a rad, {_LIMITED}; {_PD} + g(q) (nominal model)",
        ),
        ActionSpace(
            "ee_pose_delta",
            lambda: DifferentialIKGravityActionCfg(
                asset_name="robot",
                joint_names=ARM,
                body_name=PANDA_HAND_BODY,
                body_offset=DifferentialInverseKinematicsActionCfg.OffsetCfg(pos=PANDA_TCP_OFFSET_HAND),
                controller=DifferentialIKControllerCfg(
                    command_type="pose", use_relative_mode=True, ik_method="dls", ik_params={"lambda_val": 0.05}
                ),
                scale=IK_SCALE,
            ),
            PANDA_ACTUATORS,
            "TCP pose increments (1 cm, 0.02 rad per unit action, base frame) → Isaac Lab differential IK (DLS) every"
            f" physics step → joint position targets; {_PD} + g(q) (nominal model)",
        ),
    )
}
"""Every arm interface by name; :func:`realgap.tasks.grasp.env_cfg.grasp_env_cfg` selects one."""


def get_action_space(name: str) -> ActionSpace:
    """The action space called ``name``.

    Raises:
        ValueError: Unknown name; the message lists the known ones.
    """
    if name not in ACTION_SPACES:
        raise ValueError(f"unknown grasp action space {name!r}; known: {', '.join(ACTION_SPACES)}")
    return ACTION_SPACES[name]
