"""The suite file (``configs/suites/<name>.yaml``, format ``realgap.suite/1``): loaded and validated by pure code.

A suite names its task (``balance`` or ``grasp``), the robot, the bodies its errors act on, the episode settings and
its families. A family draws ``robots`` robots, robot ``k`` from seed ``first_seed + k``, each parameter uniformly in
the family's range. Every field of the task's catalogue (:data:`FIELDS`) must be stated in every family, each as
``{range: [lo, hi], why: ...}`` (``vec3_range``: three ``[lo, hi]``, one per body axis; ``value``: a number), with a
one-line reason why the range is plausible for the real robot; a field the catalogue does not know is an error, so no
number in the file is silently ignored. Seeds start at :data:`MIN_SEED` (every seed training and the tests use is
below it) and no two families share one. numpy-free, simulator-free: a bad file fails before anything is built, with
one message naming the file and the field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

FORMAT = "realgap.suite/1"
MIN_SEED = 10_000
"""Suite seeds start here: every seed the repository trains or tests with is below 1 000 (docs/results/transfer.md)."""


@dataclass(frozen=True)
class FieldSpec:
    """One parameter a family states.

    Attributes:
        kind: ``range`` (uniform float), ``int_range`` (uniform integer, both ends included), ``vec3_range`` (a
            ``range`` per body axis) or ``value`` (one number, e.g. a noise standard deviation).
        lower: Least allowed value. upper: Largest allowed value (``inf``: none).
        unit: Unit, for messages and the docs.
        doc: What it does to the robot.
    """

    kind: str
    lower: float
    upper: float
    unit: str
    doc: str


_INF = math.inf
DRIVE_FIELDS = {
    "kp_scale": FieldSpec("range", 0.05, 3.0, "", "realised / commanded stiffness, per joint"),
    "kd_scale": FieldSpec(
        "range",
        0.0,
        1.0,
        "",
        "realised / commanded damping, per joint (above 1 the explicit PD at "
        "5 ms is unstable in simulation, which no real drive is)",
    ),
    "coulomb_scale": FieldSpec("range", 0.0, 10.0, "", "Coulomb friction / datasheet, per joint"),
    "viscous_nms": FieldSpec("range", 0.0, 5.0, "N·m·s/rad", "viscous friction, per joint (datasheet 0)"),
    "armature_scale": FieldSpec("range", 0.1, 10.0, "", "reflected inertia / datasheet, per joint"),
    "peak_torque_scale": FieldSpec("range", 0.01, 1.5, "", "torque limit / datasheet, per joint"),
    "delay_steps": FieldSpec("int_range", 0, 20, "physics steps", "command delay, per joint"),
    "hold_probability": FieldSpec(
        "value", 0.0, 1.0, "", "chance that the robot's bridge computes the PD torque once per command and holds it"
    ),
    "hold_period_steps": FieldSpec(
        "int_range", 1, 20, "physics steps", "command period of a holding bridge (must divide the policy decimation)"
    ),
    "encoder_q_noise_rad": FieldSpec("value", 0.0, 0.1, "rad", "white noise on the reported joint positions"),
    "encoder_qd_noise_rads": FieldSpec("value", 0.0, 5.0, "rad/s", "white noise on the reported joint velocities"),
}
G1_FIELDS = DRIVE_FIELDS | {
    "link_mass_scale": FieldSpec("range", 0.5, 2.0, "", "density scale of every link (mass and inertia together)"),
    "link_com_shift_m": FieldSpec("vec3_range", -0.1, 0.1, "m", "rigid shift of every link's mass distribution"),
    "payload_mass_kg": FieldSpec("range", 0.0, 20.0, "kg", "box payload fixed to the payload body"),
    "payload_offset_m": FieldSpec("vec3_range", -0.5, 0.5, "m", "payload centre in the payload body's frame"),
    "payload_size_m": FieldSpec("vec3_range", 0.0, 0.5, "m", "payload box edges"),
    "foot_friction": FieldSpec("range", 0.05, 3.0, "", "sliding friction of the foot colliders (they set the pair's)"),
    "foot_timeconst_s": FieldSpec(
        "range", 0.01, 0.2, "s", "contact time constant (softness) of the foot colliders; >= 2 physics steps"
    ),
    "gyro_noise_rads": FieldSpec("value", 0.0, 1.0, "rad/s", "white noise on the IMU angular velocity"),
    "gyro_bias_rads": FieldSpec("vec3_range", -0.5, 0.5, "rad/s", "constant gyro offset per axis, per robot"),
    "attitude_noise_rad": FieldSpec("value", 0.0, 0.2, "rad", "white noise on the IMU gravity direction"),
    "attitude_bias_rad": FieldSpec(
        "vec3_range", -0.2, 0.2, "rad", "constant attitude error about x, y (z unused: state [0, 0]), per robot"
    ),
}
GRASP_FIELDS = DRIVE_FIELDS | {
    "object_size_m": FieldSpec("vec3_range", 0.01, 0.08, "m", "box edge lengths, per episode (the fingers open 8 cm)"),
    "object_mass_scale": FieldSpec("range", 0.1, 10.0, "", "mass / (the export's density × volume), per episode"),
    "object_com_shift_m": FieldSpec(
        "vec3_range", -0.04, 0.04, "m", "CoM shift per box axis (half the mass moved), per episode"
    ),
    "object_friction": FieldSpec("range", 0.05, 3.0, "", "sliding friction of the object, per episode"),
    "pad_friction": FieldSpec("range", 0.05, 3.0, "", "sliding friction of the finger pads, per robot"),
    "pad_timeconst_s": FieldSpec(
        "range",
        0.01,
        0.2,
        "s",
        "contact time constant of the pads, per robot (MuJoCo "
        "mixes it with the object's 0.02 s at equal solmix: the mean)",
    ),
    "table_height_error_m": FieldSpec("range", -0.1, 0.1, "m", "table top above its nominal height, per robot"),
    "object_pos_bias_m": FieldSpec(
        "vec3_range",
        -0.1,
        0.1,
        "m",
        "constant error of the object position the robot is told (camera calibration), per robot",
    ),
    "object_pos_noise_m": FieldSpec("value", 0.0, 0.05, "m", "white noise on the object position, per reading"),
    "object_rot_noise_rad": FieldSpec(
        "value", 0.0, 0.5, "rad", "white noise on the object orientation (rotation vector), per reading"
    ),
}
FIELDS = {"balance": G1_FIELDS, "grasp": GRASP_FIELDS}
"""The catalogue of fields per task: what a family must state, and all it may state."""

BODY_KEYS = {"balance": ("payload_body", "foot_bodies"), "grasp": ("pad_bodies",)}
EPISODE_KEYS = {
    "balance": ("duration_s", "push_mps", "push_interval_s", "fall_height_m", "fall_tilt_rad"),
    "grasp": ("start_noise",),
}


class SuiteError(ValueError):
    """The suite file is invalid; the message names the file and the field."""


@dataclass(frozen=True)
class Family:
    """One family of held-out robots.

    Attributes:
        name: Family name (e.g. ``typical``). description: One paragraph.
        robots: Number of robots. first_seed: Seed of robot 0 (robot ``k``: ``first_seed + k``).
        values: Per field: ``(lo, hi)``, three of those, or a number. reasons: Per field, why it is plausible.
    """

    name: str
    description: str
    robots: int
    first_seed: int
    values: dict[str, Any]
    reasons: dict[str, str]

    @property
    def seeds(self) -> range:
        """The robots' seeds."""
        return range(self.first_seed, self.first_seed + self.robots)


@dataclass(frozen=True)
class Suite:
    """A validated suite file (module docstring)."""

    name: str
    version: int
    task: str
    robot: str
    description: str
    bodies: dict[str, Any]
    episode: dict[str, Any]
    families: tuple[Family, ...]
    source: str

    def family(self, name: str) -> Family:
        """The family called ``name``.

        Raises:
            SuiteError: No such family.
        """
        for f in self.families:
            if f.name == name:
                return f
        raise SuiteError(f"{self.source}: no family {name!r}; it has {', '.join(f.name for f in self.families)}")


def _number(where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SuiteError(f"{where}: expected a finite number, got {value!r}")
    return float(value)


def _range(where: str, value: Any, spec: FieldSpec, integer: bool = False) -> tuple[float, float]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise SuiteError(f"{where}: expected [lo, hi], got {value!r}")
    lo, hi = (_number(where, v) for v in value)
    if integer and (lo != int(lo) or hi != int(hi)):
        raise SuiteError(f"{where}: expected integers, got {value!r}")
    if lo > hi:
        raise SuiteError(f"{where}: lo {lo:g} > hi {hi:g}")
    if lo < spec.lower or hi > spec.upper:
        raise SuiteError(f"{where}: [{lo:g}, {hi:g}] leaves the allowed [{spec.lower:g}, {spec.upper:g}] {spec.unit}")
    return (int(lo), int(hi)) if integer else (lo, hi)


def _field(where: str, value: Any, spec: FieldSpec) -> tuple[Any, str]:
    if not isinstance(value, dict):
        raise SuiteError(f"{where}: expected {{range: ..., why: ...}} or {{value: ..., why: ...}}, got {value!r}")
    key = "value" if spec.kind == "value" else "range"
    extra = sorted(set(value) - {key, "why"})
    if extra or key not in value:
        raise SuiteError(f"{where}: expected the keys {key!r} and 'why', got {sorted(value)}")
    why = value.get("why")
    if not isinstance(why, str) or not why.strip():
        raise SuiteError(f"{where}.why: state in one line why the range is plausible for the real robot")
    raw = value[key]
    if spec.kind == "value":
        number = _number(f"{where}.value", raw)
        if not spec.lower <= number <= spec.upper:
            raise SuiteError(f"{where}.value: {number:g} leaves the allowed [{spec.lower:g}, {spec.upper:g}]")
        return number, why.strip()
    if spec.kind == "vec3_range":
        if not isinstance(raw, list | tuple) or len(raw) != 3:
            raise SuiteError(f"{where}.range: expected three [lo, hi] (x, y, z), got {raw!r}")
        return tuple(_range(f"{where}.range[{i}]", r, spec) for i, r in enumerate(raw)), why.strip()
    return _range(f"{where}.range", raw, spec, spec.kind == "int_range"), why.strip()


def _mapping(where: str, value: Any, keys: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict:
    if not isinstance(value, dict):
        raise SuiteError(f"{where}: expected a mapping, got {value!r}")
    missing, extra = sorted(set(keys) - set(value)), sorted(set(value) - set(keys) - set(optional))
    if missing or extra:
        raise SuiteError(
            f"{where}: "
            + "; ".join(([f"missing {missing}"] if missing else []) + ([f"unknown {extra}"] if extra else []))
        )
    return value


def _episode(where: str, task: str, raw: Any) -> dict[str, Any]:
    ep = dict(_mapping(where, raw, EPISODE_KEYS[task]))
    if task == "grasp":
        if not isinstance(ep["start_noise"], bool):
            raise SuiteError(f"{where}.start_noise: expected true or false, got {ep['start_noise']!r}")
        return ep
    positive = FieldSpec("range", 0.0, _INF, "", "")
    for key in ("duration_s", "fall_height_m", "fall_tilt_rad"):
        if _number(f"{where}.{key}", ep[key]) <= 0:
            raise SuiteError(f"{where}.{key}: must be > 0, got {ep[key]!r}")
    ep["push_mps"] = _range(f"{where}.push_mps", ep["push_mps"], positive)
    ep["push_interval_s"] = _range(f"{where}.push_interval_s", ep["push_interval_s"], positive)
    if ep["push_interval_s"][0] <= 0:
        raise SuiteError(f"{where}.push_interval_s: must be > 0")
    return ep


def _bodies(where: str, task: str, raw: Any) -> dict[str, Any]:
    bodies = dict(_mapping(where, raw, BODY_KEYS[task]))
    for key, value in bodies.items():
        names = [value] if key == "payload_body" else value
        if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
            raise SuiteError(
                f"{where}.{key}: expected {'a body name' if key == 'payload_body' else 'body names'}, got {value!r}"
            )
    return bodies


def _family(where: str, name: str, raw: Any, task: str) -> Family:
    fam = _mapping(where, raw, ("description", "robots", "first_seed", "fields"))
    for key in ("robots", "first_seed"):
        if isinstance(fam[key], bool) or not isinstance(fam[key], int):
            raise SuiteError(f"{where}.{key}: expected an integer, got {fam[key]!r}")
    if fam["robots"] < 1:
        raise SuiteError(f"{where}.robots: must be >= 1, got {fam['robots']}")
    if fam["first_seed"] < MIN_SEED:
        raise SuiteError(
            f"{where}.first_seed: suite seeds start at {MIN_SEED} (below: seeds training and tests use), "
            f"got {fam['first_seed']}"
        )
    if not isinstance(fam["description"], str) or not fam["description"].strip():
        raise SuiteError(f"{where}.description: say what robot this family stands for")
    catalogue = FIELDS[task]
    fields = _mapping(f"{where}.fields", fam["fields"], tuple(catalogue))
    values, reasons = {}, {}
    for key, spec in catalogue.items():
        values[key], reasons[key] = _field(f"{where}.fields.{key}", fields[key], spec)
    return Family(name, fam["description"].strip(), fam["robots"], fam["first_seed"], values, reasons)


def parse_suite(data: Any, source: str = "<suite>") -> Suite:
    """Validate a suite's parsed YAML (module docstring).

    Raises:
        SuiteError: The first problem found, naming ``source`` and the field.
    """
    top = ("format", "name", "version", "task", "robot", "description", "bodies", "episode", "families")
    doc = _mapping(source, data, top)
    if doc["format"] != FORMAT:
        raise SuiteError(f"{source}: format: expected {FORMAT!r}, got {doc['format']!r}")
    task = doc["task"]
    if task not in FIELDS:
        raise SuiteError(f"{source}: task: expected one of {sorted(FIELDS)}, got {task!r}")
    for key in ("name", "robot", "description"):
        if not isinstance(doc[key], str) or not doc[key].strip():
            raise SuiteError(f"{source}: {key}: expected a non-empty string, got {doc[key]!r}")
    if isinstance(doc["version"], bool) or not isinstance(doc["version"], int) or doc["version"] < 1:
        raise SuiteError(f"{source}: version: expected an integer >= 1, got {doc['version']!r}")
    if not isinstance(doc["families"], dict) or not doc["families"]:
        raise SuiteError(f"{source}: families: expected at least one family")
    families = tuple(_family(f"{source}: families.{n}", n, f, task) for n, f in doc["families"].items())
    seen: dict[int, str] = {}
    for fam in families:
        for seed in fam.seeds:
            if seed in seen:
                raise SuiteError(
                    f"{source}: families.{fam.name}.first_seed: seed {seed} is also one of family "
                    f"{seen[seed]!r}'s; families draw from disjoint seeds"
                )
            seen[seed] = fam.name
    return Suite(
        doc["name"].strip(),
        doc["version"],
        task,
        doc["robot"].strip(),
        doc["description"].strip(),
        _bodies(f"{source}: bodies", task, doc["bodies"]),
        _episode(f"{source}: episode", task, doc["episode"]),
        families,
        source,
    )


def load_suite(path: str | Path) -> Suite:
    """Read and validate a suite file.

    Raises:
        SuiteError: The file is missing, not YAML, or invalid (module docstring); the message names the field.
    """
    path = Path(path)
    if not path.is_file():
        raise SuiteError(f"suite file {path} does not exist (shipped suites: configs/suites/)")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise SuiteError(f"{path}: not valid YAML: {err}") from None
    return parse_suite(data, str(path))


def task_of(meta: Any) -> str:
    """The suite task of an export: ``balance`` for a balance export (:attr:`~realgap.envs.format.metadata.
    PolicyMetadata.is_balance`), ``grasp`` for one with scene facts, else ``fixed base, no scene`` (no suite's task:
    the task check refuses it by that name)."""
    if meta.is_balance:
        return "balance"
    return "grasp" if meta.scene is not None else "fixed base, no scene"
