"""Domain-randomization profiles as data: ``configs/dr/<name>.yaml`` → frozen, validated :class:`DRProfile`.

A profile lists, in priority order (largest expected sim-to-real error first), what is randomized and over which
*plausible* real-world range: payload mass and CoM, link mass/inertia, joint friction, actuator gains and torque limit,
command delay, contact friction, contact solref, contact geometry, initial object pose, and (balance) pushes. Every
top-level key must be present (an empty list says "considered, not randomized") except ``actuator_stages`` (the actuator
chain's optional stages: absent or ``[]`` leaves every chain as its specs built it) ``contact_solref`` (absent or
``[]``: every collider keeps the task's solref), ``actuator_model`` (absent: the chain, :data:`ACTUATOR_MODELS`),
``holding_drive_fraction`` (absent or 0: no robot behind a bridge that holds each command's PD torque for the policy
period) and ``width_curriculum`` (absent: every range at full width from the first step); inside a group, omitted fields
mean "not randomized". Body / joint selectors are full-match regular expressions (Isaac Lab's convention) on the names
of the scene entity ``asset`` (``robot``, ``object``). Ranges are ``[lo, hi]`` and uniform; unit suffixes are part of
the key names (``_m``, ``_kg``, ``_s``, ``_nm``, ``_nms_per_rad``, ``_mps``, ``_rad``, ``_hz``); keys without a suffix
are unit-less. Pure Python: no simulator import.

The schema (the groups, their units and checks, :func:`parse_dr_profile`); reading profile files is
:mod:`realgap.envs.dr.profile`, which re-exports these names.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from realgap.envs.dr.inertia_sampling import (
    UNIT_RANGE,
    ZERO_RANGE,
    ZERO_VEC3,
    InertiaRandomization,
    Range,
    Vec3Range,
    validate_fraction,
    validate_range,
)
from realgap.envs.dr.profile_bounds import (  # noqa: F401  (re-exported with the schema)
    INERTIA_BOUNDS,
    MAX_LUMP_TRAVEL_M,
    MIN_TIMECONST_STEPS,
    check_inertia_bounds,
    check_timeconst_range,
)
from realgap.envs.dr.width import LevelController, check_width

PROFILE_PACKAGE = "realgap.configs"
PROFILE_DIR = "dr"
TASKS = ("balance", "grasp")
ACTUATOR_MODELS = ("chain", "chain_no_delay", "implicit_pd")
"""What drives the joints in training: ``chain``, the explicit datasheet chain with its command delay (the default);
``chain_no_delay``, that chain with every spec's latency at zero; ``implicit_pd``, Isaac Lab's implicit solver PD with
the specs' gains, armature, friction and effort limits (no delay, servo hold nor torque–speed line) -- what a user
gets without realgap. The transfer study's arms (b) and (a) (docs/results/transfer.md)."""
CURRICULUM_SIGNALS = ("survival", "success")
"""What moves a width curriculum's level: ``survival``, episodes that reach the time-out (balance: not falling is the
task); ``success``, the task's own episode success (``env_cfg.episode_success``; the grasp, whose failures time out)."""


def _f(kind: str, unit: str = "", default: Any = dataclasses.MISSING) -> Any:
    """Dataclass field whose metadata drives parsing/serialisation (kind: name, text, task, regex, bool,
    fraction, groups, push, a range kind of :func:`validate_range`, or ``vec3:<range kind>``)."""
    return field(default=default, metadata={"kind": kind, "unit": unit})


@dataclass(frozen=True)
class InertiaGroup:
    """Consistent mass / CoM / inertia randomization of the bodies matching ``bodies`` (sampler ranges:
    :class:`realgap.envs.dr.inertia_sampling.InertiaRandomization`, which also validates them)."""

    asset: str = _f("name")
    bodies: tuple[str, ...] = _f("regex")
    mass_scale: Range = _f("scale", default=UNIT_RANGE)
    stretch: Range = _f("scale", default=UNIT_RANGE)
    shear: Range = _f("real", default=ZERO_RANGE)
    com_shift_m: Vec3Range = _f("vec3:real", "m", ZERO_VEC3)
    com_moved_fraction: float = _f("fraction", default=1.0)
    payload_mass_kg: Range = _f("nonneg", "kg", ZERO_RANGE)
    payload_offset_m: Vec3Range = _f("vec3:real", "m", ZERO_VEC3)
    payload_size_m: Vec3Range = _f("vec3:nonneg", "m", ZERO_VEC3)
    payload_random_rotation: bool = _f("bool", default=False)

    def randomization(self) -> InertiaRandomization:
        """Sampler ranges of this group."""
        names = [f.name for f in dataclasses.fields(InertiaRandomization)]
        return InertiaRandomization(**{name: getattr(self, name) for name in names})


@dataclass(frozen=True)
class JointFrictionGroup:
    """Joint friction torque τ_f = −τ_c·sign(q̇) − b·q̇ added at the joints matching ``joints``."""

    asset: str = _f("name")
    joints: tuple[str, ...] = _f("regex")
    coulomb_nm: Range = _f("nonneg", "N·m", ZERO_RANGE)
    viscous_nms_per_rad: Range = _f("nonneg", "N·m·s/rad", ZERO_RANGE)


@dataclass(frozen=True)
class ActuatorGroup:
    """Multiplicative errors of the actuator model at the joints matching ``joints`` (unit-less, > 0)."""

    asset: str = _f("name")
    joints: tuple[str, ...] = _f("regex")
    kp_scale: Range = _f("scale", default=UNIT_RANGE)
    kd_scale: Range = _f("scale", default=UNIT_RANGE)
    torque_limit_scale: Range = _f("scale", default=UNIT_RANGE)


@dataclass(frozen=True)
class ActuatorStagesGroup:
    """Per-env values of the actuator chain's optional stages at the joints matching ``joints``; a field left out
    (``None``) leaves that stage as the specs built it. Absolute ranges for cutoffs and the dead band, scales for the
    speed limit (× the spec's datasheet ``velocity_limit``) and the stiffness (× the spec's ``transmission_stiffness``).
    What the physics step can run (cutoffs below its Nyquist rate, a stable elastic joint) is checked when the profile
    is applied to a task (:func:`realgap.envs.dr.stages.check_stage_ranges`): the step is a property of the task."""

    asset: str = _f("name")
    joints: tuple[str, ...] = _f("regex")
    torque_filter_hz: Range | None = _f("positive", "Hz", None)
    position_filter_hz: Range | None = _f("positive", "Hz", None)
    speed_limit_scale: Range | None = _f("scale", default=None)
    backlash_rad: Range | None = _f("nonneg", "rad", None)
    transmission_stiffness_scale: Range | None = _f("scale", default=None)

    def ranges(self) -> dict[str, Range]:
        """The fields this group sets, by name (in declaration order)."""
        names = [f.name for f in dataclasses.fields(self) if f.name not in ("asset", "joints")]
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}


@dataclass(frozen=True)
class ContactFrictionGroup:
    """Coulomb friction coefficient μ (unit-less, >= 0) of the colliders of the matching bodies."""

    asset: str = _f("name")
    bodies: tuple[str, ...] = _f("regex")
    friction: Range = _f("nonneg")


@dataclass(frozen=True)
class ContactSolrefGroup:
    """MuJoCo contact solref of the colliders of the matching bodies: time constant [s] (smaller: stiffer) and damping
    ratio (1: critical, < 1: the contact rebounds), both > 0; a field left out (``None``) keeps each collider's own
    value. The written value is the pair's against partners of equal or lower priority (MuJoCo's mixing rule, see
    :class:`realgap.envs.dr.contact.ColliderSolref`). The time constant must span 2 physics steps
    (:func:`check_timeconst_range`, checked when the profile is applied to a task: the step is the task's)."""

    asset: str = _f("name")
    bodies: tuple[str, ...] = _f("regex")
    timeconst_s: Range | None = _f("positive", "s", None)
    dampratio: Range | None = _f("positive", default=None)


@dataclass(frozen=True)
class ContactGeometryGroup:
    """Collider size error of the matching bodies: every collider dimension × ``size_scale`` (unit-less, > 0).
    Mass and inertia are randomized separately (they are measured independently of the collider's size)."""

    asset: str = _f("name")
    bodies: tuple[str, ...] = _f("regex")
    size_scale: Range = _f("scale")


@dataclass(frozen=True)
class InitialPoseGroup:
    """Offset of an asset's root pose at reset from its default: position in the world frame [m], yaw [rad]."""

    asset: str = _f("name")
    position_m: Vec3Range = _f("vec3:real", "m", ZERO_VEC3)
    yaw_rad: Range = _f("real", "rad", ZERO_RANGE)


@dataclass(frozen=True)
class PushSpec:
    """External pushes as a root-velocity change: every ``interval_s`` [s], Δv per world axis [m/s]."""

    interval_s: Range = _f("positive", "s")
    velocity_mps: Vec3Range = _f("vec3:real", "m/s", ZERO_VEC3)


@dataclass(frozen=True)
class WidthCurriculumSpec:
    """Training widens every randomization range from ``start_width`` of itself (about its midpoint) to the whole range
    as survival (or, with ``signal: success``, the task's episode success) rises
    (:class:`realgap.envs.dr.curriculum.dr_width_curriculum`; the rule: :mod:`realgap.envs.dr.width`).
    """

    start_width: float = _f("unit")
    step: float = _f("unit")
    promote: float = _f("unit")
    demote: float = _f("unit")
    min_episodes: int = _f("count")
    signal: str = _f("name", default="survival")  # one of CURRICULUM_SIGNALS

    def __post_init__(self) -> None:
        check_width(self.start_width)
        if self.start_width >= 1.0:
            raise ValueError(f"start_width {self.start_width} is no curriculum; give a width below 1")
        LevelController(self.step, self.promote, self.demote, self.min_episodes)  # its own checks
        if self.signal not in CURRICULUM_SIGNALS:
            raise ValueError(f"signal: expected one of {list(CURRICULUM_SIGNALS)}, got {self.signal!r}")


@dataclass(frozen=True)
class DRProfile:
    """A named domain-randomization profile; sections in priority order (largest expected sim-to-real error first)."""

    name: str = _f("name")
    description: str = _f("text")
    task: str | None = _f("task")
    payload: tuple[InertiaGroup, ...] = _f("groups")
    link_inertia: tuple[InertiaGroup, ...] = _f("groups")
    joint_friction: tuple[JointFrictionGroup, ...] = _f("groups")
    actuator: tuple[ActuatorGroup, ...] = _f("groups")
    command_delay_s: Range = _f("nonneg", "s")
    contact_friction: tuple[ContactFrictionGroup, ...] = _f("groups")
    contact_geometry: tuple[ContactGeometryGroup, ...] = _f("groups")
    initial_pose: tuple[InitialPoseGroup, ...] = _f("groups")
    push: PushSpec | None = _f("push")
    actuator_stages: tuple[ActuatorStagesGroup, ...] = _f("groups", default=())
    contact_solref: tuple[ContactSolrefGroup, ...] = _f("groups", default=())
    actuator_model: str = _f("actuator_model", default="chain")
    holding_drive_fraction: float | None = _f("unit", default=None)
    width_curriculum: WidthCurriculumSpec | None = _f("width_curriculum", default=None)

    def to_dict(self) -> dict[str, Any]:
        """Plain YAML/JSON-ready dict with every field resolved; ``parse_dr_profile(p.to_dict()) == p``."""
        return _to_dict(self)


_GROUP_TYPES: dict[str, type] = {
    "payload": InertiaGroup,
    "link_inertia": InertiaGroup,
    "joint_friction": JointFrictionGroup,
    "actuator": ActuatorGroup,
    "actuator_stages": ActuatorStagesGroup,
    "contact_friction": ContactFrictionGroup,
    "contact_solref": ContactSolrefGroup,
    "contact_geometry": ContactGeometryGroup,
    "initial_pose": InitialPoseGroup,
}


def _parse_value(kind: str, unit: str, value: Any, where: str) -> Any:
    if kind == "name":
        if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
            raise ValueError(f"{where}: expected an identifier (letters, digits, _), got {value!r}")
        return value
    if kind == "text":
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{where}: expected a non-empty string, got {value!r}")
        return value
    if kind == "task":
        if value is not None and value not in TASKS:
            raise ValueError(f"{where}: expected one of {list(TASKS)} or null, got {value!r}")
        return value
    if kind == "regex":
        patterns = [value] if isinstance(value, str) else value
        if not isinstance(patterns, list) or not patterns or not all(isinstance(p, str) for p in patterns):
            raise ValueError(f"{where}: expected a regex or a non-empty list of regexes, got {value!r}")
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as err:
                raise ValueError(f"{where}: invalid regex {pattern!r}: {err}") from None
        return tuple(patterns)
    if kind == "actuator_model":
        if value not in ACTUATOR_MODELS:
            raise ValueError(f"{where}: expected one of {list(ACTUATOR_MODELS)}, got {value!r}")
        return value
    if kind == "unit":
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
            raise ValueError(f"{where}: expected a number in [0, 1], got {value!r}")
        return float(value)
    if kind == "count":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{where}: expected a whole number >= 1, got {value!r}")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"{where}: expected true or false, got {value!r}")
        return value
    if kind == "fraction":
        return validate_fraction(where, value)
    if kind.startswith("vec3:"):
        if not isinstance(value, Mapping):
            raise ValueError(f"{where}: expected a mapping with keys among x, y, z, got {value!r}")
        _reject_unknown(value, ("x", "y", "z"), where)
        return tuple(validate_range(f"{where}.{axis}", value.get(axis, ZERO_RANGE), kind[5:], unit) for axis in "xyz")
    return validate_range(where, value, kind, unit)


def _reject_unknown(data: Mapping, known: tuple[str, ...] | list[str], where: str) -> None:
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown}; known keys: {list(known)}")


def _parse_dataclass(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected a mapping for {cls.__name__}, got {type(data).__name__}")
    fields = dataclasses.fields(cls)
    _reject_unknown(data, [f.name for f in fields], where)
    kwargs: dict[str, Any] = {}
    for f in fields:
        key_where = f"{where}.{f.name}"
        kind, unit = f.metadata["kind"], f.metadata["unit"]
        if f.name not in data:
            if f.default is dataclasses.MISSING:
                raise ValueError(f"{where}: missing required key {f.name!r}")
            continue
        value = data[f.name]
        if kind == "groups":
            if not isinstance(value, list):
                raise ValueError(f"{key_where}: expected a list of groups ([] for none), got {value!r}")
            group_cls = _GROUP_TYPES[f.name]
            kwargs[f.name] = tuple(_parse_dataclass(group_cls, v, f"{key_where}[{i}]") for i, v in enumerate(value))
        elif kind in ("push", "width_curriculum"):
            spec = PushSpec if kind == "push" else WidthCurriculumSpec
            kwargs[f.name] = None if value is None else _parse_dataclass(spec, value, key_where)
        else:
            kwargs[f.name] = _parse_value(kind, unit, value, key_where)
    try:
        obj = cls(**kwargs)
        if isinstance(obj, InertiaGroup):
            obj.randomization()  # the sampler's own range rules
            check_inertia_bounds(obj)  # and a body that can exist on a robot
        if isinstance(obj, ActuatorStagesGroup) and not obj.ranges():
            known = [f.name for f in dataclasses.fields(obj)][2:]
            raise ValueError(f"the group randomizes nothing; give at least one of {known}")
        if isinstance(obj, ContactSolrefGroup) and obj.timeconst_s is None and obj.dampratio is None:
            raise ValueError("the group randomizes nothing; give at least one of ['timeconst_s', 'dampratio']")
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None
    return obj


def _to_dict(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value, kind = getattr(obj, f.name), f.metadata["kind"]
        if value is None and f.default is None:
            continue  # an optional field left out stays left out
        if kind == "groups":
            out[f.name] = [_to_dict(g) for g in value]
        elif kind in ("push", "width_curriculum"):
            out[f.name] = None if value is None else _to_dict(value)
        elif kind.startswith("vec3:"):
            out[f.name] = {axis: list(r) for axis, r in zip("xyz", value, strict=True)}
        elif kind == "regex":
            out[f.name] = list(value)
        elif isinstance(value, tuple):
            out[f.name] = list(value)
        else:
            out[f.name] = value
    return out


def parse_dr_profile(data: Any, source: str = "<dict>") -> DRProfile:
    """Validate a profile mapping (as loaded from YAML) into a :class:`DRProfile`.

    Raises:
        ValueError: unknown or missing keys (listing the known ones), lo > hi, a scale <= 0, a negative mass /
            friction / delay / size, a moved fraction outside (0, 1], an invalid regex; the message starts with
            ``source`` and the key path, e.g. ``nominal.yaml: link_inertia[0].mass_scale: lo 1.2 > hi 0.8``.
    """
    return _parse_dataclass(DRProfile, data, source)
