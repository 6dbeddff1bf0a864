"""Action spaces of the grasp task: eight arm interfaces over the same observations, rewards and budget.

Every variant drives the 7 arm joints through realgap's datasheet actuator chain (``actuators/chain.py``: per-env
command delay 1–5 ms, PD at the servo rate, torque envelope; solver-side armature and joint friction) and the gripper
with one binary command (``a < 0`` closes both fingers to 0 m, ``a >= 0`` opens them to 0.04 m, each finger's
setpoint moving at the hand's 0.05 m/s, tracked by the finger PD: :mod:`realgap.tasks.grasp.hand`). What the
policy commands and what the chain does with it:

=======================  ========================  ============================================================
name                     policy output (arm)       low-level actuator model
=======================  ========================  ============================================================
``joint_pos``            q* = q_default + 0.5·a    s = rate-limited q*; τ = Kp·(s − q) − Kd·q̇   (datasheet PD)
``joint_pos_delta``      q*_k = q*_{k−1} + 0.05·a  τ = Kp·(q* − q) − Kd·q̇   (target integrated, clipped to limits)
``joint_vel``            q̇* = 1.0·a (rad/s)        τ = Kd·(q̇* − q̇) + g(q)           (Kp = 0, velocity servo)
``joint_torque``         τ_a = τ_scale·a (N·m)     τ = τ_a + g(q)                    (Kp = Kd = 0, torque pass-through)
``joint_pd_gravity``     q* = q_default + 0.5·a    s = rate-limited q*; τ = Kp·(s − q) − Kd·q̇ + g(q)
``ee_pose_delta``        Δx (m), Δθ (rad) of TCP   differential IK (DLS) → q* → τ = Kp·(q* − q) − Kd·q̇ + g(q)
``computed_torque``      q* = q_default + 0.5·a    s = rate-limited q*; τ = M(q)·(Kp·(s − q) − Kd·q̇) + C(q, q̇)·q̇ + g(q)
``cartesian_impedance``  Δx (m), Δθ (rad) of TCP   τ = Jᵀ·(Kx·(x* − x) − Dx·ẋ) + g(q) + null-space posture torque
=======================  ========================  ============================================================

g(q), the nominal Panda's gravity torque, and the action terms themselves live in
:mod:`realgap.tasks.grasp.action_terms`. Franka's torque and velocity interfaces compensate gravity inside the robot,
so the ``joint_vel``, ``joint_torque`` and ``ee_pose_delta`` variants do as well (for the re-based relative IK it is
necessary, see ``DifferentialIKGravityAction``). The two model-based interfaces (computed torque, Cartesian impedance;
:mod:`realgap.tasks.grasp.model_based_terms`) use the simulated robot's own M(q), g(q) and C(q, q̇)·q̇ every physics
step and pass their torque through the chain with Kp = Kd = 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from isaaclab.controllers import DifferentialIKControllerCfg, OperationalSpaceControllerCfg
from isaaclab.envs.mdp.actions import DifferentialInverseKinematicsActionCfg
from isaaclab.managers import ActionTermCfg
from isaaclab.utils import configclass

from realgap.actuators.spec import ActuatorSpec, PDGains
from realgap.envs.robots.panda import (
    FRANKA_HAND,
    PANDA_ACTUATORS,
    PANDA_ARM_JOINTS,
    PANDA_FINGER_JOINTS,
    PANDA_HAND_BODY,
    PANDA_TCP_OFFSET_HAND,
)
from realgap.tasks.grasp.action_terms import (
    DifferentialIKGravityActionCfg,
    JointPositionDeltaActionCfg,
    JointPositionGravityActionCfg,
    JointTorqueGravityActionCfg,
    JointVelocityGravityActionCfg,
    RateLimitedJointPositionActionCfg,
)
from realgap.tasks.grasp.hand import GripperActionCfg
from realgap.tasks.grasp.model_based_terms import CartesianImpedanceActionCfg, ComputedTorqueActionCfg


@configclass
class GraspActionsCfg:
    """The arm command (one of :data:`ACTION_SPACES`) and the binary gripper command."""

    arm: ActionTermCfg | None = None
    gripper: GripperActionCfg = GripperActionCfg(
        asset_name="robot",
        joint_names=list(PANDA_FINGER_JOINTS),
        open_command_expr={"finger_joint.*": 0.04},  # m per finger: 8 cm opening
        close_command_expr={"finger_joint.*": 0.0},  # the object stops the fingers; PD squeezes with Kp·gap
        max_speed=FRANKA_HAND.finger_speed_mps,  # the hand's own finger speed, m/s (tasks/grasp/hand.py)
    )


ARM = list(PANDA_ARM_JOINTS)
# Torque scale: ~1/8 of Franka's peak torque per unit action (87 N·m joints 1–4, 12 N·m joints 5–7); the gravity
# load is compensated, so these torques only accelerate the arm (and the policy can still saturate the envelope).
TORQUE_SCALE = {"joint[1-4]": 10.0, "joint[5-7]": 1.5}
# Differential IK on the tool centre point: per unit action 1 cm translation and 0.02 rad rotation per policy step
# (0.5 m/s and 1 rad/s at 50 Hz) in the robot base frame; damped least squares (λ = 0.05) near singularities. Sized to
# the arm's limits (Franka's Cartesian limits 1.7 m/s and 2.5 rad/s; joints 2.175-2.61 rad/s): at 2 cm and 0.1 rad
# (5 rad/s per unit, twice the Cartesian limit) exploration trips the joint-speed reflex (docs/results/grasp.md).
IK_SCALE = (0.01, 0.01, 0.01, 0.02, 0.02, 0.02)
# Motion generator of the absolute position interfaces (libfranka's limitRate, on by default on the real arm): the
# setpoint's velocity at 75 % of the joint-speed reflex limits (2.175 / 2.61 rad/s) and libfranka's joint acceleration
# limits. The margin absorbs the PD's tracking overshoot and the joints' coupling of all seven joints driven at once
# (a 90 % limit trips the reflex several times as often); feeding the setpoint's velocity forward to the servo trips it
# more, so the servo keeps τ = Kp·(s − q) − Kd·q̇. Without a motion generator the absolute targets must explore with
# too little noise to reach the cube (docs/results/action_spaces.md).
SETPOINT_MAX_VELOCITY = {"(panda_)?joint[1-4]": 0.75 * 2.175, "(panda_)?joint[5-7]": 0.75 * 2.61}
# Following-error bound of the same motion generator: the setpoint stays within δ of the measured joint. Without it a
# joint held back (the hand on the table or the cube, the wrist's 12 N·m saturated) let the setpoint run ahead by
# 0.2–0.4 rad, and catching up the PD drove it at its terminal speed (Kp/Kd)·|s − q| past the reflex
# (docs/results/grasp.md). The datasheet gains have Kp/Kd = ω/(2ζ) = 2π·10/4 = 15.7 1/s on every joint, so
# δ = 0.12 / 0.14 rad bounds that speed near 1.9 / 2.2 rad/s (below 2.175 / 2.61) and still exceeds the PD's lag
# at the setpoint's top speed (0.104 / 0.125 rad): free motion is not slowed.
SETPOINT_MAX_FOLLOWING_ERROR = {"(panda_)?joint[1-4]": 0.12, "(panda_)?joint[5-7]": 0.14}
SETPOINT_MAX_ACCELERATION = {
    "(panda_)?joint1": 15.0,
    "(panda_)?joint2": 7.5,
    "(panda_)?joint3": 10.0,
    "(panda_)?joint4": 12.5,
    "(panda_)?joint5": 15.0,
    "(panda_)?joint[67]": 20.0,
}
# Computed torque: desired joint acceleration q̈* = Kp·(s − q) − Kd·q̇ with Kp = ω², Kd = 2ω at ω = 20 rad/s (3.2 Hz,
# critically damped error dynamics under a perfect model; well below the 200 Hz physics/servo rate and the 1–5 ms
# delay's phase lag, 0.1 rad at ω). Stiffer gains only saturate the 87 / 12 N·m envelope sooner: M(q)'s diagonal is
# 0.2–1.8 kg·m² with the 0.1 kg·m² armature, so 0.1 rad of error already asks for up to 70 N·m.
CT_KP, CT_KD = 400.0, 40.0
# Cartesian impedance (Isaac Lab's operational-space controller, fixed impedance, no inertial decoupling): Kx = 1000 N/m
# and 50 N·m/rad on the tool centre point; Isaac Lab sets Dx = 2·ζ·√Kx, critical only for a unit mass, so ζ is chosen
# from the TCP's apparent mass Λ = (J·M⁻¹·Jᵀ)⁻¹ at the ready pose (pinocchio, armature included: 12.5 / 5.2 / 6.6 kg,
# 0.25 / 0.69 / 0.10 kg·m²): ζ = √6.5 ≈ 2.5 (translation), √0.25 = 0.5 (rotation) damp it about critically
# (ω ≈ 12–14 rad/s). The pose target is re-based on the measured TCP every policy step (pose_rel), so a zero action
# stops the TCP where it is; an increment d drives it at about Kx·d/Dx: 5 cm, 0.05 rad per unit action → 0.32 m/s,
# 0.35 rad/s. Null space: Isaac Lab's posture term toward the default joint pose, k_n = 10 1/s², critically damped.
IMP_STIFFNESS = (1000.0, 1000.0, 1000.0, 50.0, 50.0, 50.0)
IMP_DAMPING_RATIO = (2.5, 2.5, 2.5, 0.5, 0.5, 0.5)
IMP_SCALE = (0.05, 0.05)  # m, rad per unit action
_LIMITED = (
    "setpoint rate-limited to 0.75 × the reflex speed and libfranka's accelerations (limitRate), "
    "kept within 0.12 / 0.14 rad of the measured joint (following-error bound)"
)


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


def _absolute_targets(cfg_class: type) -> ActionTermCfg:
    """Absolute arm targets q* = q_default + 0.5·a through the motion generator (``SETPOINT_MAX_*``)."""
    return cfg_class(
        asset_name="robot",
        joint_names=ARM,
        scale=0.5,
        use_default_offset=True,
        preserve_order=True,
        max_velocity=SETPOINT_MAX_VELOCITY,
        max_acceleration=SETPOINT_MAX_ACCELERATION,
        max_following_error=SETPOINT_MAX_FOLLOWING_ERROR,
    )


def _computed_torque() -> ComputedTorqueActionCfg:
    """Absolute targets through the motion generator, tracked by computed torque (``CT_KP``, ``CT_KD``)."""
    cfg = _absolute_targets(ComputedTorqueActionCfg)
    cfg.kp, cfg.kd = CT_KP, CT_KD
    return cfg


_PD = "datasheet chain: explicit PD τ = Kp·(q* − q) − Kd·q̇ at the servo rate, 1–5 ms delay, torque envelope"
ACTION_SPACES: dict[str, ActionSpace] = {
    s.name: s
    for s in (
        ActionSpace(
            "joint_pos",
            lambda: _absolute_targets(RateLimitedJointPositionActionCfg),
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
            ),
            _specs_with_arm_gains(kp_zero=True, kd_zero=True),
            "joint torques τ = (10 | 1.5 N·m)·a + g(q) passed through (Kp = Kd = 0), nominal-model gravity compensation"
            " as Franka's torque interface does, 1–5 ms delay, torque envelope",
        ),
        ActionSpace(
            "joint_pd_gravity",
            lambda: _absolute_targets(JointPositionGravityActionCfg),
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
        ActionSpace(
            "computed_torque",
            _computed_torque,
            _specs_with_arm_gains(kp_zero=True, kd_zero=True),
            f"absolute joint position targets q* = q_default + 0.5·a rad, {_LIMITED}; computed torque every physics"
            " step τ = M(q)·(400·(s − q) − 40·q̇) + C(q, q̇)·q̇ + g(q) (ω = 20 rad/s, ζ = 1; M, C·q̇, g of the simulated"
            " robot from Newton) passed through (Kp = Kd = 0), 1–5 ms delay, torque envelope",
        ),
        ActionSpace(
            "cartesian_impedance",
            lambda: CartesianImpedanceActionCfg(
                asset_name="robot",
                joint_names=ARM,
                body_name=PANDA_HAND_BODY,
                body_offset=CartesianImpedanceActionCfg.OffsetCfg(pos=PANDA_TCP_OFFSET_HAND),
                controller_cfg=OperationalSpaceControllerCfg(
                    target_types=["pose_rel"],
                    impedance_mode="fixed",
                    inertial_dynamics_decoupling=False,
                    gravity_compensation=True,
                    motion_stiffness_task=IMP_STIFFNESS,
                    motion_damping_ratio_task=IMP_DAMPING_RATIO,
                    nullspace_control="position",
                    nullspace_stiffness=10.0,
                    nullspace_damping_ratio=1.0,
                ),
                nullspace_joint_pos_target="default",
                position_scale=IMP_SCALE[0],
                orientation_scale=IMP_SCALE[1],
            ),
            _specs_with_arm_gains(kp_zero=True, kd_zero=True),
            "TCP pose increments (5 cm, 0.05 rad per unit action, base frame; target re-based each policy step) →"
            " Isaac Lab operational-space controller every physics step: τ = Jᵀ·(Kx·(x* − x) − Dx·ẋ) + g(q)"
            " + null-space posture torque (Kx = 1000 N/m, 50 N·m/rad; Dx = 2ζ√Kx, ζ = 2.5 / 0.5; g, M of the"
            " simulated robot) passed through (Kp = Kd = 0), 1–5 ms delay, torque envelope",
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
