"""Robot facts: where each robot description comes from, joint and body names, default poses.

Pure data (no simulator import). The Isaac Lab articulation configs are built from these in
:mod:`realgap.envs.sim.scene`; the MuJoCo sim2sim robot and the deploy runtime read the same facts.
"""

from realgap.envs.robots.base import RobotSource
from realgap.envs.robots.g1 import G1
from realgap.envs.robots.panda import PANDA

ROBOTS: dict[str, RobotSource] = {G1.name: G1, PANDA.name: PANDA}

__all__ = ["G1", "PANDA", "ROBOTS", "RobotSource"]
