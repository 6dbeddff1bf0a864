"""Robot facts, one module per robot: where its description comes from, joint and body names, default pose,
actuator datasheets, action scale, mirror map, payload and contact bodies.

Pure data (no simulator import). The Isaac Lab articulation configs are built from these in
:mod:`realgap.envs.sim.scene`; the MuJoCo sim2sim robot and the deploy runtime read the same facts.
"""

from collections.abc import Sequence

from realgap.envs.robots.base import RobotSource, SweepTargets
from realgap.envs.robots.g1 import G1, G1_COMPLIANT_TRANSMISSION, G1_SWEEP_TARGETS
from realgap.envs.robots.panda import PANDA, PANDA_COMPLIANT_TRANSMISSION, PANDA_SWEEP_TARGETS

ROBOTS: dict[str, RobotSource] = {G1.name: G1, PANDA.name: PANDA}
TARGETS: dict[str, SweepTargets] = {G1.name: G1_SWEEP_TARGETS, PANDA.name: PANDA_SWEEP_TARGETS}
"""Payload body and contact bodies of each robot for the robustness sweeps (keys of :data:`ROBOTS`)."""
COMPLIANT_TRANSMISSION: dict[str, dict[str, tuple[float, float]]] = {
    G1.name: G1_COMPLIANT_TRANSMISSION,
    PANDA.name: PANDA_COMPLIANT_TRANSMISSION,
}
"""Per robot: spec group → (stiffness N·m/rad, damping N·m·s/rad) of a stand-in compliant transmission, for the
backlash / stiffness randomization and sweeps of a robot whose shipped joints are rigid."""


def robot_name(joint_names: Sequence[str]) -> str:
    """The realgap robot with exactly these joints (``ValueError`` when none matches)."""
    for name, robot in ROBOTS.items():
        if set(robot.joint_names) == set(joint_names):
            return name
    raise ValueError(f"robustness sweeps know the robots {sorted(ROBOTS)}; this articulation's joints match none")


__all__ = ["COMPLIANT_TRANSMISSION", "G1", "PANDA", "ROBOTS", "TARGETS", "RobotSource", "SweepTargets", "robot_name"]
