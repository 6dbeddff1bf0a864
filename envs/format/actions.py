"""Action terms as the metadata describes them (:class:`ActionTerm`, :class:`Actions`): each term maps its slice
``a[start:stop]`` of the raw-clipped policy action to targets (or torques) of its joints by its ``equation``, with the
parameters the equation names. The types are :data:`ACTION_TYPES` (``docs/policy_format.md``, "Action terms"); which
of them the deploy runtime runs, and how, is :mod:`realgap.envs.deploy.actions`. numpy only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from realgap.envs.format.schema import MetadataError, bound, floats, plain

ACTION_TYPES: tuple[str, ...] = (
    "joint_position_offset",
    "joint_position_measured",
    "joint_position_rate_limited",
    "joint_position_delta",
    "joint_velocity",
    "joint_effort",
    "binary_joint_position",
    "ee_pose_delta",
    "joint_computed_torque",
    "ee_impedance",
)
"""Action term types of the format (``docs/policy_format.md``, "Action terms")."""
_PER_JOINT_PARAMS: dict[str, tuple[str, ...]] = {
    "joint_position_offset": ("scale", "offset", "clip_min", "clip_max"),
    "joint_position_measured": ("scale", "clip_min", "clip_max"),
    "joint_position_rate_limited": ("scale", "offset", "clip_min", "clip_max", "max_velocity", "max_acceleration"),
    "joint_position_delta": ("scale", "clip_min", "clip_max"),
    "joint_velocity": ("scale", "offset"),
    "joint_effort": ("scale", "offset"),
    "binary_joint_position": ("open", "close"),
    "ee_pose_delta": (),
    "joint_computed_torque": ("scale", "offset", "clip_min", "clip_max", "max_velocity", "max_acceleration"),
    "ee_impedance": (),
}
_OPTIONAL_PER_JOINT_PARAMS: dict[str, tuple[str, ...]] = {
    "joint_position_rate_limited": ("max_following_error",),
    "joint_computed_torque": ("max_following_error",),
    "binary_joint_position": ("speed",),
}
"""Per-joint parameters an export may carry (absent in exports made before them; ``null`` entries: no bound)."""


@dataclass(frozen=True)
class ActionTerm:
    """One action term: ``a[start:stop]`` → targets (or torques) of :attr:`joint_names` by :attr:`equation`.

    Attributes:
        name: Name of the Isaac Lab action term.
        type: One of :data:`ACTION_TYPES`.
        start: First index in the action vector.
        stop: One past the last index.
        joint_names: Joints the term drives, in the order of its per-joint parameters.
        params: Type-specific parameters (JSON data, ``None`` for an absent bound), see ``docs/policy_format.md``.
        equation: The mapping, with the parameter names as symbols.
        units: Units of what the term outputs.
        feed_forward: ``None``, or the feed-forward torque the term adds (e.g. gravity compensation g(q)).
    """

    name: str
    type: str
    start: int
    stop: int
    joint_names: tuple[str, ...]
    params: Mapping[str, Any]
    equation: str
    units: str
    feed_forward: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "joint_names", tuple(self.joint_names))
        object.__setattr__(self, "params", plain(self.params))
        object.__setattr__(self, "feed_forward", plain(self.feed_forward))
        who = f"actions.terms '{self.name}'"
        if self.type not in ACTION_TYPES:
            raise MetadataError(f"{who}: type {self.type!r} is not one of {list(ACTION_TYPES)}")
        n = len(self.joint_names)
        for key in _PER_JOINT_PARAMS[self.type]:
            if key not in self.params:
                raise MetadataError(f"{who}: params lack '{key}'")
            floats(self.params[key], n, f"{who}.params.{key}", nullable=key.startswith("clip"))
        for key in _OPTIONAL_PER_JOINT_PARAMS.get(self.type, ()):
            if key in self.params:
                floats(self.params[key], n, f"{who}.params.{key}", nullable=True)
        speed = self.params.get("speed")
        if self.type == "binary_joint_position" and speed is not None and not all(0 < v < math.inf for v in speed):
            raise MetadataError(f"{who}.params.speed must be finite and > 0 per joint (m/s or rad/s), got {speed!r}")
        ramp = self.params.get("ramp_s", 0.0)
        if self.type == "joint_position_offset" and not (isinstance(ramp, int | float) and 0.0 <= ramp < math.inf):
            raise MetadataError(f"{who}.params.ramp_s must be a finite number of seconds >= 0, got {ramp!r}")
        want = {"binary_joint_position": 1, "ee_pose_delta": len(self.params.get("scale", ())), "ee_impedance": 6}.get(
            self.type, n
        )
        if self.dim != want:
            raise MetadataError(
                f"{who}: spans [{self.start}, {self.stop}) = {self.dim} entries, its type "
                f"{self.type} over {n} joints takes {want}"
            )

    @property
    def dim(self) -> int:
        """Number of action entries the term reads."""
        return self.stop - self.start

    def array(self, key: str, default: float = 0.0) -> np.ndarray:
        """Per-joint parameter ``key`` as float64 (``None`` entries become ``default``, e.g. ``±inf`` for bounds)."""
        return np.array([bound(v, default) for v in self.params[key]], dtype=np.float64)


@dataclass(frozen=True)
class Actions:
    """The action vector: raw clip, then action terms tiling ``[0, dim)``.

    Attributes:
        terms: Action terms in action-vector order.
        raw_clip: Bound on the raw policy output before any term (rsl-rl's ``clip_actions``; ``None``: none).
    """

    terms: tuple[ActionTerm, ...]
    raw_clip: float | None = None

    def __post_init__(self) -> None:
        pos = 0
        for term in self.terms:
            if term.start != pos:
                raise MetadataError(f"action term '{term.name}' starts at {term.start}, the previous ends at {pos}")
            pos = term.stop
        if not self.terms:
            raise MetadataError("actions.terms is empty")
        if self.raw_clip is not None and not self.raw_clip > 0:
            raise MetadataError(f"actions.raw_clip must be > 0 or null, got {self.raw_clip!r}")

    @property
    def dim(self) -> int:
        """Policy output size."""
        return self.terms[-1].stop

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Joints driven by any term, in term order."""
        return tuple(j for t in self.terms for j in t.joint_names)

    def clip(self, action: np.ndarray) -> np.ndarray:
        """``clip(action, ±raw_clip)`` as float32 (a copy)."""
        a = np.asarray(action, dtype=np.float32).copy()
        return a if self.raw_clip is None else np.clip(a, -self.raw_clip, self.raw_clip)
