"""Actuator datasheets: Unitree G1 (29 DoF) and Franka Emika Panda (7 arm joints + 2 finger joints).

Every number names its source. "Estimate" marks an engineering value where the maker publishes nothing.

Link-side inertia lower bounds (``link_inertia``) were computed once with MuJoCo from the Menagerie models the tasks
load (``unitree_g1/g1.xml``, ``franka_emika_panda/panda.xml`` in the PyPI wheels named in pyproject.toml):
``1/(M⁻¹)_ii − armature_i`` (the inertia joint ``i`` presents when every other joint and the floating base move
freely, with the datasheet armature below on all other joints), minimised over the models' keyframe, the zero pose
and 200–300 uniformly random poses within the joint ranges; the group minimum is given. They only feed the
explicit-integration stability check and ``BandwidthGains(inertia="total")``.

Explicit-PD stability at dt = 5 ms, ``ρ = (kp·dt² + 2·(kd + f_c/v_s)·dt) / (4·(J_refl + J_link))`` (stable < 1),
is asserted for every spec below by ``tests/unit/test_actuator_datasheets.py``.
"""

from __future__ import annotations

from dataclasses import replace

from realgap.actuators.spec import ActuatorSpec, BandwidthGains, Gearbox, PDGains

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
# PD gains: measured with explicit PD at dt = 5 ms on the G1 (probes, DESIGN.md "Stable G1 PD gains found"): legs and
# waist 300/5, ankles 150/2, arms 100/1. Weaker gains fall sooner; kd 10/5/5 went NaN (explicit damping bound).
# Ankles raised to 300/2 in the knees-bent stance of the balance task: with this datasheet chain (reflected inertia,
# 0-10 ms delay) and 32 envs holding the stance without pushes for 5 s, ankles 150/2 and 250/2 fell in 43-44 of 32+
# episodes (first fall at 1.8 s) while 300/2 fell in none. kd stays at 2: 300/5 fails the explicit bound
# (margin 1.92 on the free foot's inertia).
G1_LEG_GAINS = PDGains(kp=300.0, kd=5.0)
G1_ANKLE_GAINS = PDGains(kp=300.0, kd=2.0)
G1_ARM_GAINS = PDGains(kp=100.0, kd=1.0)


def _g1(name: str, exprs: tuple[str, ...], gearbox: Gearbox, peak: float, vel: float, gains: PDGains,
        link: float) -> ActuatorSpec:  # fmt: skip
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
        "g1_7520_14", (".*_hip_pitch_joint", ".*_hip_yaw_joint", "waist_yaw_joint"),
        GEARBOX_7520_14, 88.0, 32.0, G1_LEG_GAINS, link=0.0048,
    ),
    "hip_roll_knee": _g1(
        "g1_7520_22", (".*_hip_roll_joint", ".*_knee_joint"), GEARBOX_7520_22, 139.0, 20.0, G1_LEG_GAINS, link=0.0289,
    ),
    "waist_roll_pitch": _g1(
        "g1_2x5020_waist", ("waist_roll_joint", "waist_pitch_joint"), GEARBOX_2X5020, 50.0, 30.0, G1_LEG_GAINS,
        link=0.0268,
    ),
    "ankles": _g1(
        "g1_2x5020_ankle", (".*_ankle_pitch_joint", ".*_ankle_roll_joint"), GEARBOX_2X5020, 50.0, 30.0,
        G1_ANKLE_GAINS, link=0.00028,
    ),
    "arms": _g1(
        "g1_5020", (".*_shoulder_pitch_joint", ".*_shoulder_roll_joint", ".*_shoulder_yaw_joint", ".*_elbow_joint",
                    ".*_wrist_roll_joint"),
        GEARBOX_5020, 25.0, 37.0, G1_ARM_GAINS, link=0.00034,
    ),
    "wrists": _g1(
        "g1_4010", (".*_wrist_pitch_joint", ".*_wrist_yaw_joint"), GEARBOX_4010, 5.0, 22.0, G1_ARM_GAINS,
        link=0.00066,
    ),
}  # fmt: skip
"""G1 29-DoF actuators by group; keys are group names, ``joint_names_expr`` selects the joints."""

# mjlab's gain rule: natural frequency 10 Hz, damping ratio 2 on the reflected inertia (kp = J·ω², kd = 2ζJω).
# Explicit margin at 5 ms: (ω·dt)²/4 + ζ·ω·dt = 0.025 + 0.628 = 0.653 on the reflected inertia alone, for every group.
# Much softer than the measured gains (legs 7520-22: kp 99, kd 6.3), which DESIGN.md found too weak to stand.
G1_BANDWIDTH_GAINS = BandwidthGains(natural_freq_hz=10.0, damping_ratio=2.0, inertia="reflected")
G1_ACTUATORS_BANDWIDTH: dict[str, ActuatorSpec] = {
    k: replace(s, gains=G1_BANDWIDTH_GAINS) for k, s in G1_ACTUATORS.items()
}

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

PANDA_ACTUATORS: dict[str, ActuatorSpec] = {f"joint{i}": _panda_joint(i) for i in range(1, 8)} | {
    "fingers": PANDA_FINGER
}
"""Panda actuators: one spec per arm joint (friction differs per joint) and one for both fingers."""
