"""Isaac Lab glue shared by the tasks: the offline ground and robot articulation configs.

Everything here imports Isaac Lab; import it only from task configs, scripts and sim tests.
"""

from __future__ import annotations

from typing import Any

import isaaclab.sim as sim_utils
from isaaclab.assets import ArticulationCfg, AssetBaseCfg
from isaaclab.sim.spawners.materials import RigidBodyMaterialBaseCfg
from isaaclab_newton.sim.schemas import NewtonArticulationCfg

from realgap.envs.robots.base import RobotSource
from realgap.envs.sim.assets import ground_usd, robot_usd


def ground_cfg(prim_path: str = "/World/ground", friction: float = 1.0) -> AssetBaseCfg:
    """Flat ground from a locally authored USD plane (Isaac Lab's default ground plane downloads from the cloud).

    It must be declared in the scene config: a prim spawned by hand is never imported into the Newton model.
    """
    return AssetBaseCfg(
        prim_path=prim_path,
        spawn=sim_utils.GroundPlaneCfg(
            usd_path=str(ground_usd()),
            # solver-common friction only (physics:*); Isaac Lab 3.1 deprecated RigidBodyMaterialCfg, its PhysX subclass
            physics_material=RigidBodyMaterialBaseCfg(static_friction=friction, dynamic_friction=friction),
        ),
    )


def robot_cfg(
    robot: RobotSource,
    actuators: dict[str, Any],
    prim_path: str = "{ENV_REGEX_NS}/Robot",
    spawn_height_margin: float = 0.01,
    self_collision: bool = False,
) -> ArticulationCfg:
    """Articulation config of ``robot`` from its cached USD, starting in its default pose.

    Args:
        robot: Robot facts (source, default pose, root height).
        actuators: Isaac Lab actuator configs by group name.
        prim_path: Prim path regex for the cloned robots.
        spawn_height_margin: Extra height above the standing root height, m, so feet never start inside the ground.
        self_collision: Self-collisions between links (off: the Menagerie models exclude adjacent links only).
    """
    return ArticulationCfg(
        prim_path=prim_path,
        spawn=sim_utils.UsdFileCfg(
            usd_path=str(robot_usd(robot)),
            articulation_props=NewtonArticulationCfg(self_collision_enabled=self_collision),
        ),
        init_state=ArticulationCfg.InitialStateCfg(
            pos=(0.0, 0.0, robot.root_height + (0.0 if robot.fixed_base else spawn_height_margin)),
            # Every joint by its exact name: no regex overlap, no joint left at the USD's zero by accident.
            joint_pos=dict(zip(robot.joint_names, robot.default_pose(), strict=True)),
            joint_vel={".*": 0.0},
        ),
        soft_joint_pos_limit_factor=0.95,
        actuators=actuators,
    )
