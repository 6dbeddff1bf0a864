"""The ``robot`` section of the exported policy format: which robot the policy was trained on, and where it starts.

Positions in m in the world frame, quaternions ``(w, x, y, z)``; the description's hash rule is
:mod:`realgap.envs.format.description`. Read and written by :class:`~realgap.envs.format.metadata.PolicyMetadata`
(stdlib only).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from realgap.envs.format.schema import plain


@dataclass(frozen=True)
class RobotInfo:
    """Which robot the policy was trained on, and where it starts.

    Attributes:
        name: Robot name (a key of ``realgap.envs.robots.ROBOTS``).
        description: ``robot.description``: distribution, version, import_package, path, licence, sha256,
            hash_rule, files (see :mod:`realgap.envs.format.description`).
        fixed_base: True for a base welded to the world.
        root_body: The articulation's root body (the IMU body of the ``base_*`` observations).
        start_root_pos: Start position of the root with the lowest collider on the ground, m, world frame.
        start_root_quat_wxyz: Start orientation of the root.
        spawn_root_pos: Where training resets spawned the root, m, world frame.
        spawn_root_quat_wxyz: Its orientation.
        start_clearance_m: Height of the lowest collider above the ground in the start pose (``None``: fixed base).
    """

    name: str
    description: Mapping[str, Any]
    fixed_base: bool
    root_body: str
    start_root_pos: tuple[float, float, float]
    start_root_quat_wxyz: tuple[float, float, float, float]
    spawn_root_pos: tuple[float, float, float]
    spawn_root_quat_wxyz: tuple[float, float, float, float]
    start_clearance_m: float | None = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "description", plain(self.description))
        for key in ("start_root_pos", "start_root_quat_wxyz", "spawn_root_pos", "spawn_root_quat_wxyz"):
            object.__setattr__(self, key, tuple(float(v) for v in getattr(self, key)))

    @property
    def description_sha256(self) -> str:
        """SHA-256 of the description (MJCF and every file it references)."""
        return self.description["sha256"]

    @property
    def source(self) -> Mapping[str, Any]:
        """The description's source (distribution, version, import package, path)."""
        return self.description

    def to_dict(self) -> dict[str, Any]:
        rule = (
            "the root body placed so that the lowest collision geom of the robot, in the default joint pose, "
            "touches the ground plane z = 0 (MuJoCo signed distance)"
        )
        return plain(
            {
                "name": self.name,
                "description": self.description,
                "fixed_base": self.fixed_base,
                "root_body": self.root_body,
                "start_pose": {
                    "root_pos_w": self.start_root_pos,
                    "root_quat_wxyz": self.start_root_quat_wxyz,
                    "joint_pos": "joints.default_pos",
                    "joint_vel": "joints.default_vel",
                    "lowest_collider_height_m": self.start_clearance_m,
                    "rule": "fixed base: the root is welded here" if self.fixed_base else rule,
                },
                "training_spawn": {
                    "root_pos_w": self.spawn_root_pos,
                    "root_quat_wxyz": self.spawn_root_quat_wxyz,
                    "note": "training resets placed the root here (plus the reset randomization of "
                    "training.randomization) at rest and let it settle; a robot starts from "
                    "start_pose",
                },
            }
        )

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RobotInfo:
        start, spawn = d["start_pose"], d["training_spawn"]
        return cls(
            d["name"],
            d["description"],
            d["fixed_base"],
            d["root_body"],
            start["root_pos_w"],
            start["root_quat_wxyz"],
            spawn["root_pos_w"],
            spawn["root_quat_wxyz"],
            start["lowest_collider_height_m"],
        )
