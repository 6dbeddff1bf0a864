"""The scene facts of a manipulation export: what the policy depends on beyond the robot (stdlib only).

A grasp policy was trained on one table, one family of objects, one start pose, one episode length and one success
test; a robot cell must reproduce them or knowingly differ. The exporter reads every value from the live env config
(:mod:`realgap.envs.export.scene`), never from a copy, and the format checks them on load
(:meth:`SceneFacts.from_dict`).

Frames and units: positions in the robot's root body frame (``robot.root_body``, z up; the grasp's fixed base stands
at the world origin), m; angles rad; masses kg; densities kg/m³; times s. Ranges are ``[low, high]`` of a uniform draw.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SCENE_FRAME = "the robot's root body frame (robot.root_body), z up, m"
OBJECT_FRAME = "the box's centre; axes along its edges (x, y, z edges: the drawn size_m)"
SUCCESS_EQUATION = (
    "lift = z_object - z_rest, z_rest = table.top_z_m + size_z / 2 (the drawn box resting upright on the table); "
    "each policy step: hold = hold + 1 if lift >= lift_target_m else 0; the episode succeeds (for good) once "
    "hold >= hold_steps = ceil(hold_s * rates.policy_hz)"
)
START_RULE = (
    "a robot starts every episode at joints.default_pos at rest, gripper open; training added uniform noise "
    "arm_joint_noise_rad to each arm joint at every reset"
)
PLACEMENT_RULE = (
    "upright on the table top: centre at (nominal_xy_m + uniform position_range_m, table.top_z_m + size_z / 2 + "
    "clearance_m), turned about z by uniform yaw_range_rad; at rest"
)
MASS_RULE = (
    "mass = density_kg_m3 * size_x * size_y * size_z * uniform(mass_scale); the centre of mass shifted by "
    "uniform(com_shift_m) per object axis, moving com_moved_fraction of the mass; mass_range_kg: the extremes"
)


class SceneError(ValueError):
    """Scene facts that are missing, malformed or inconsistent (names the field)."""


def _vec(value: Any, n: int, what: str, positive: bool = False) -> tuple[float, ...]:
    if not (isinstance(value, Sequence) and len(value) == n):
        raise SceneError(f"scene.{what}: need {n} numbers, got {value!r}")
    out = tuple(float(v) for v in value)
    if not all(math.isfinite(v) and (v > 0 or not positive) for v in out):
        raise SceneError(f"scene.{what}: need finite{' positive' if positive else ''} numbers, got {value!r}")
    return out


def _range(value: Any, what: str, positive: bool = False) -> tuple[float, float]:
    lo, hi = _vec(value, 2, what, positive)
    if lo > hi:
        raise SceneError(f"scene.{what}: low {lo} > high {hi}")
    return lo, hi


@dataclass(frozen=True)
class SceneFacts:
    """Table, object, start, episode and success test of a grasp export (module docstring for frames and units).

    Attributes:
        tcp_body: Body of the tool centre point. tcp_offset_m: Its position in that body's frame, m.
        table_center_m: Centre of the table box. table_size_m: Its edge lengths (x, y, z).
        object_size_range_m: Edge length ranges of the box, per object axis. object_density_kg_m3: Nominal density.
        object_mass_scale: Range of the mass scale. object_com_shift_m: CoM shift ranges per object axis.
        object_com_moved_fraction: Mass fraction moved to shift the CoM. object_friction: Friction coefficient range
            of the object. pad_friction: Friction coefficient range of the finger pads.
        object_nominal_xy_m: Nominal object position on the table. object_position_range_m: Shift ranges per world
            axis. object_yaw_range_rad: Yaw range. object_clearance_m: Height above the table at placement.
        arm_joint_noise_rad: Training's reset noise per arm joint (a robot starts without it).
        episode_s: Episode length, s. episode_steps: Policy steps per episode.
        lift_target_m: Success height above rest. hold_s: Success hold time. hold_steps: Policy steps of it.
        drop_below_z_m: Training ended an episode when the object's centre fell below this height (off the table).
    """

    tcp_body: str
    tcp_offset_m: tuple[float, float, float]
    table_center_m: tuple[float, float, float]
    table_size_m: tuple[float, float, float]
    object_size_range_m: tuple[tuple[float, float], ...]
    object_density_kg_m3: float
    object_mass_scale: tuple[float, float]
    object_com_shift_m: tuple[tuple[float, float], ...]
    object_com_moved_fraction: float
    object_friction: tuple[float, float]
    pad_friction: tuple[float, float]
    object_nominal_xy_m: tuple[float, float]
    object_position_range_m: tuple[tuple[float, float], ...]
    object_yaw_range_rad: tuple[float, float]
    object_clearance_m: float
    arm_joint_noise_rad: tuple[float, float]
    episode_s: float
    episode_steps: int
    lift_target_m: float
    hold_s: float
    hold_steps: int
    drop_below_z_m: float

    def __post_init__(self) -> None:
        if not (isinstance(self.tcp_body, str) and self.tcp_body):
            raise SceneError(f"scene.tcp.body: need a body name, got {self.tcp_body!r}")
        set_ = object.__setattr__
        set_(self, "tcp_offset_m", _vec(self.tcp_offset_m, 3, "tcp.offset_m"))
        set_(self, "table_center_m", _vec(self.table_center_m, 3, "table.center_m"))
        set_(self, "table_size_m", _vec(self.table_size_m, 3, "table.size_m", positive=True))
        for key, what, positive in (
            ("object_size_range_m", "object.size_range_m", True),
            ("object_com_shift_m", "object.com_shift_m", False),
            ("object_position_range_m", "object.position_range_m", False),
        ):
            value = getattr(self, key)
            if not (isinstance(value, Sequence) and len(value) == 3):
                raise SceneError(f"scene.{what}: need 3 ranges (x, y, z), got {value!r}")
            set_(self, key, tuple(_range(r, f"{what}[{i}]", positive) for i, r in enumerate(value)))
        for key, what in (
            ("object_mass_scale", "object.mass_scale"),
            ("object_friction", "object.friction"),
            ("pad_friction", "pad_friction"),
        ):
            set_(self, key, _range(getattr(self, key), what, positive=True))
        set_(self, "object_yaw_range_rad", _range(self.object_yaw_range_rad, "object.yaw_range_rad"))
        set_(self, "arm_joint_noise_rad", _range(self.arm_joint_noise_rad, "start.arm_joint_noise_rad"))
        set_(self, "object_nominal_xy_m", _vec(self.object_nominal_xy_m, 2, "object.nominal_xy_m"))
        for key, what in (
            ("object_density_kg_m3", "object.density_kg_m3"),
            ("episode_s", "episode.length_s"),
            ("lift_target_m", "success.lift_target_m"),
        ):
            set_(self, key, _vec([getattr(self, key)], 1, what, positive=True)[0])
        set_(self, "hold_s", _vec([self.hold_s], 1, "success.hold_s")[0])
        set_(self, "object_clearance_m", _vec([self.object_clearance_m], 1, "object.clearance_m")[0])
        set_(self, "drop_below_z_m", _vec([self.drop_below_z_m], 1, "success.drop_below_z_m")[0])
        if not 0 < self.object_com_moved_fraction <= 1:
            raise SceneError(f"scene.object.com_moved_fraction must be in (0, 1], got {self.object_com_moved_fraction}")
        for key in ("episode_steps", "hold_steps"):
            if not (isinstance(getattr(self, key), int) and getattr(self, key) >= 1):
                raise SceneError(f"scene.{key}: need an integer >= 1, got {getattr(self, key)!r}")
        (tx, ty, _), (sx, sy, _) = self.table_center_m, self.table_size_m
        for axis, (c, (lo, hi), t, s) in enumerate(
            zip(self.object_nominal_xy_m, self.object_position_range_m[:2], (tx, ty), (sx, sy), strict=True)
        ):
            if c + lo < t - s / 2 or c + hi > t + s / 2:
                raise SceneError(
                    f"scene.object: placements along axis {'xy'[axis]} [{c + lo:g}, {c + hi:g}] m leave "
                    f"the table [{t - s / 2:g}, {t + s / 2:g}] m"
                )

    @property
    def table_top_z_m(self) -> float:
        """Height of the table top, m."""
        return self.table_center_m[2] + self.table_size_m[2] / 2

    @property
    def object_mass_range_kg(self) -> tuple[float, float]:
        """Lightest and heaviest object, kg (:data:`MASS_RULE`)."""
        lo = math.prod(r[0] for r in self.object_size_range_m) * self.object_mass_scale[0]
        hi = math.prod(r[1] for r in self.object_size_range_m) * self.object_mass_scale[1]
        return lo * self.object_density_kg_m3, hi * self.object_density_kg_m3

    def check_rates(self, policy_hz: float) -> None:
        """``episode_steps`` and ``hold_steps`` must follow from the times at the export's policy rate.

        Raises:
            SceneError: Naming the field and both values.
        """
        for what, steps, seconds in (
            ("episode_steps", self.episode_steps, self.episode_s),
            ("hold_steps", self.hold_steps, self.hold_s),
        ):
            want = max(1, math.ceil(seconds * policy_hz - 1e-9))
            if steps != want:
                raise SceneError(f"scene: {what} is {steps}, {seconds:g} s at {policy_hz:g} Hz gives {want}")

    def to_dict(self) -> dict[str, Any]:
        """JSON form (read back by :meth:`from_dict`)."""
        return {
            "frame": SCENE_FRAME,
            "tcp": {
                "body": self.tcp_body,
                "offset_m": list(self.tcp_offset_m),
                "note": "the tool centre point the grasp observations (tcp_pos, object_to_tcp) use",
            },
            "table": {
                "shape": "box",
                "center_m": list(self.table_center_m),
                "size_m": list(self.table_size_m),
                "top_z_m": self.table_top_z_m,
                "note": "static; its contact parameters: simulator.contacts",
            },
            "object": {
                "shape": "box",
                "frame": OBJECT_FRAME,
                "size_range_m": [list(r) for r in self.object_size_range_m],
                "density_kg_m3": self.object_density_kg_m3,
                "mass_scale": list(self.object_mass_scale),
                "com_shift_m": [list(r) for r in self.object_com_shift_m],
                "com_moved_fraction": self.object_com_moved_fraction,
                "mass_range_kg": list(self.object_mass_range_kg),
                "mass_rule": MASS_RULE,
                "friction": list(self.object_friction),
                "pad_friction": list(self.pad_friction),
                "nominal_xy_m": list(self.object_nominal_xy_m),
                "position_range_m": [list(r) for r in self.object_position_range_m],
                "yaw_range_rad": list(self.object_yaw_range_rad),
                "clearance_m": self.object_clearance_m,
                "placement": PLACEMENT_RULE,
            },
            "start": {"arm_joint_noise_rad": list(self.arm_joint_noise_rad), "rule": START_RULE},
            "episode": {"length_s": self.episode_s, "steps": self.episode_steps},
            "success": {
                "lift_target_m": self.lift_target_m,
                "hold_s": self.hold_s,
                "hold_steps": self.hold_steps,
                "equation": SUCCESS_EQUATION,
                "drop_below_z_m": self.drop_below_z_m,
                "drop_rule": "training ended the episode (a failure) when the object's centre fell below "
                "drop_below_z_m",
            },
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SceneFacts:
        """Parse :meth:`to_dict` output; derived entries (``table.top_z_m``, ``object.mass_range_kg``) must agree.

        Raises:
            SceneError: A missing or malformed field, or a derived entry that disagrees (named).
        """
        try:
            obj, succ = d["object"], d["success"]
            facts = cls(
                tcp_body=d["tcp"]["body"],
                tcp_offset_m=d["tcp"]["offset_m"],
                table_center_m=d["table"]["center_m"],
                table_size_m=d["table"]["size_m"],
                object_size_range_m=obj["size_range_m"],
                object_density_kg_m3=obj["density_kg_m3"],
                object_mass_scale=obj["mass_scale"],
                object_com_shift_m=obj["com_shift_m"],
                object_com_moved_fraction=obj["com_moved_fraction"],
                object_friction=obj["friction"],
                pad_friction=obj["pad_friction"],
                object_nominal_xy_m=obj["nominal_xy_m"],
                object_position_range_m=obj["position_range_m"],
                object_yaw_range_rad=obj["yaw_range_rad"],
                object_clearance_m=obj["clearance_m"],
                arm_joint_noise_rad=d["start"]["arm_joint_noise_rad"],
                episode_s=d["episode"]["length_s"],
                episode_steps=d["episode"]["steps"],
                lift_target_m=succ["lift_target_m"],
                hold_s=succ["hold_s"],
                hold_steps=succ["hold_steps"],
                drop_below_z_m=succ["drop_below_z_m"],
            )
        except (KeyError, TypeError) as err:
            raise SceneError(f"scene: missing or malformed field {err}") from err
        derived = (
            ("table.top_z_m", d["table"].get("top_z_m"), facts.table_top_z_m),
            ("object.mass_range_kg", obj.get("mass_range_kg"), list(facts.object_mass_range_kg)),
        )
        for what, got, want in derived:
            if got is None or not all(
                math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) for a, b in zip(_flat(got), _flat(want), strict=True)
            ):
                raise SceneError(f"scene.{what} is {got}, the rest of the scene gives {want}")
        return facts


def _flat(v: Any) -> list[float]:
    return [float(x) for x in (v if isinstance(v, list | tuple) else [v])]
