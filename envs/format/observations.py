"""Observation terms as the metadata describes them (:class:`ObsTerm`): the policy input's layout, and what each Isaac
Lab observation function measures (:data:`TERM_INFO`, written by the exporter). How the deploy runtime rebuilds them
from a robot's readings is :mod:`realgap.envs.deploy.observations`. Pure Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from realgap.envs.format.schema import NOISE_NOTE, plain

ISAACLAB_OBS_MODULE = "isaaclab.envs.mdp.observations"
"""Module of the Isaac Lab observation functions the format names (``func`` = ``"<module>:<name>"``)."""


@dataclass(frozen=True)
class ObsTerm:
    """One observation term: ``obs[start:stop] = scale · clip(quantity, clip)`` (Isaac Lab's order; training noise,
    added before the clip, is not reproduced on a robot).

    Attributes:
        name: Term name in the task's observation group.
        group: Observation group the term belongs to.
        func: ``"module:function"`` of the Isaac Lab term.
        start: First index in the policy input. stop: One past the last index.
        quantity: What the term measures, in words. units: Its units. frame: Its frame (``None``: not a vector).
        scale: Multiplier after clipping (``None``: 1). clip: ``(min, max)`` before scaling (``None``: none).
        noise: The training noise config (Isaac Lab's, e.g. ``uniform_noise`` with ``n_min``/``n_max``), or None.
        joint_names: Joints the term reads, in order (joint terms only).
        history_length: Stacked past samples (0: none). delay_lag: ``(min, max)`` observation delay, policy steps.
        has_modifiers: Whether custom modifiers post-process the term.
    """

    name: str
    group: str
    func: str
    start: int
    stop: int
    quantity: str = ""
    units: str = ""
    frame: str | None = None
    scale: float | tuple[float, ...] | None = None
    clip: tuple[float, float] | None = None
    noise: Mapping[str, Any] | None = None
    joint_names: tuple[str, ...] | None = None
    history_length: int = 0
    delay_lag: tuple[int, int] = (0, 0)
    has_modifiers: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise", plain(self.noise))
        for key in ("scale", "clip", "joint_names", "delay_lag"):
            if isinstance(getattr(self, key), list):
                object.__setattr__(self, key, tuple(getattr(self, key)))

    @property
    def dim(self) -> int:
        """Number of entries of the term."""
        return self.stop - self.start

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["noise"] = None if self.noise is None else {"applied": NOISE_NOTE, "cfg": self.noise}
        d["equation"] = "obs[start:stop] = scale * clip(quantity, clip[0], clip[1])"
        return plain(d)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ObsTerm:
        kwargs = {f.name: d[f.name] for f in fields(cls)}
        kwargs["noise"] = None if d["noise"] is None else d["noise"]["cfg"]
        return cls(**kwargs)


_JOINT_UNITS = "rad for hinge joints, m for slide joints (joints.types)"
_JOINT_VEL_UNITS = "rad/s for hinge joints, m/s for slide joints (joints.types)"
TERM_INFO: dict[str, tuple[str, str, str | None]] = {
    "base_ang_vel": (
        "angular velocity of the IMU body relative to the world: a gyro on that body",
        "rad/s",
        "IMU body (observations.imu_body)",
    ),
    "projected_gravity": (
        "unit vector along gravity, (0, 0, -1) when the IMU body is level: the accelerometer's "
        "gravity direction at rest",
        "1 (unit vector)",
        "IMU body (observations.imu_body)",
    ),
    "base_lin_vel": ("linear velocity of the root body origin relative to the world", "m/s", "root body"),
    "base_pos_z": ("height of the root body origin above z = 0", "m", "world"),
    "joint_pos": ("positions of joint_names", _JOINT_UNITS, None),
    "joint_pos_rel": ("positions of joint_names minus their joints.default_pos", _JOINT_UNITS, None),
    "joint_vel": ("velocities of joint_names", _JOINT_VEL_UNITS, None),
    "joint_vel_rel": ("velocities of joint_names minus their joints.default_vel", _JOINT_VEL_UNITS, None),
    "last_action": (
        "the action a of the previous policy step after the raw clip (zeros after a reset)",
        "action units (actions.terms)",
        None,
    ),
}
"""``(quantity, units, frame)`` of Isaac Lab observation functions, as the exporter writes them into the metadata."""
