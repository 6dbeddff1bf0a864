"""Robustness sweeps as data: the factors, their default ranges, the evaluation plan and the statistics (pure Python).

A sweep varies **one factor at a time** around a nominal operating point (every other factor pinned at its nominal
value), plus an optional two-factor grid for a heatmap. The nominal point is part of every sweep and is evaluated once.
Where the task itself draws a quantity per episode (command latency, push magnitude) the nominal point pins it at the
distribution's mean; the :data:`REFERENCE` point, evaluated beside it, keeps the task's own draws, so a report shows
how the pinned nominal compares with the task's evaluation conditions.
The transmission factors (:data:`COMPLIANT_FACTORS`) need joints built with a compliant transmission (the solver's
armature leaves out the motor inertia the chain integrates, fixed when the env is built): the sweep driver builds the
env with the robot's compliant stand-in once, and every value is then written per env in place (no rebuild per value).
Each point is run for a fixed number of episodes; an env runs one point for one counted episode, so the points of all
sweeps are packed into batches of ``num_envs`` envs (on a CPU a batch of 64 envs costs little more per policy step
than one of 16, so packing is what makes a full sweep finish in minutes).

The Isaac Lab side (writing a point into the envs) is :mod:`realgap.envs.eval.robustness.apply`; the plots are
:mod:`realgap.envs.eval.robustness.plots`. No simulator import here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from realgap.envs.eval.robustness.defaults import DEFAULT_VALUES  # noqa: F401  (part of this module's interface)
from realgap.envs.eval.robustness.stats import (  # noqa: F401  (part of this module's interface)
    Episode,
    finite_or_none,
    mean_std_ci,
    summarize,
    wilson_interval,
)

Point = tuple[tuple[str, float], ...]
"""A sweep point: ``((factor, value), ...)`` sorted by factor name, only the factors that differ from nominal."""

REFERENCE: Point = (("task_distribution", 1.0),)
"""The task's own evaluation conditions: every factor nominal, but the quantities the task draws per episode
(:data:`TASK_DRAWN`) drawn from the task's distribution instead of pinned at its mean."""
TASK_DRAWN = ("command_delay_s", "push_mps")
"""Factors whose nominal value is the mean of a distribution the task draws from (datasheet latency, pushes)."""
COMPLIANT_FACTORS = ("backlash_rad", "transmission_stiffness_scale")
"""Factors of a compliant transmission: swept in an env built with compliant joints, not beside the rigid factors."""


@dataclass(frozen=True)
class Factor:
    """One physical quantity a sweep varies.

    Attributes:
        name: CLI / report key (the unit is its suffix).
        unit: Unit of the values ("" for unit-less scales).
        description: What a value means physically.
        nominal: Value of the unmodified model; ``None`` when the task supplies it (read from the env).
        lo: Smallest admissible value (inclusive).
        hi: Largest admissible value (inclusive); ``inf`` when unbounded.
        needs: What the task must have (``"push"``: a push term, ``"object"``: a rigid object, ``"compliant"``: joints
            built with a compliant transmission, or a compliant stand-in to build them with), or ``""``.
        inf_ok: ``inf`` is admissible too: the stage it sets is off (ideal current loop, no speed cut-off).
        below_nyquist: The value is a corner frequency: it must also stay below the Nyquist rate ``1/(2·dt)`` of the
            physics step ``dt`` it is filtered at (checked where ``dt`` is known, see :meth:`check`).
        min_physics_steps: The value is a time constant the physics step must resolve: at least this many steps
            ``dt`` (MuJoCo silently clamps a contact time constant below ``2·dt`` up to it; refused here instead).
    """

    name: str
    unit: str
    description: str
    nominal: float | None
    lo: float = 0.0
    hi: float = math.inf
    needs: str = ""
    inf_ok: bool = False
    below_nyquist: bool = False
    min_physics_steps: float = 0.0

    def check(self, value: float, physics_dt: float | None = None) -> float:
        """``value`` as a float, or a ``ValueError`` naming the factor and its admissible range (with ``physics_dt``,
        s: also the Nyquist rate of a :attr:`below_nyquist` factor)."""
        v = float(value)
        inf = self.inf_ok and v == math.inf
        if not inf and not (math.isfinite(v) and self.lo <= v <= self.hi):
            raise ValueError(
                f"factor {self.name}: value {value!r} outside its admissible range [{self.lo:g}, "
                f"{self.hi:g}]{' or inf' if self.inf_ok else ''} {self.unit}".rstrip()
            )
        if self.below_nyquist and physics_dt is not None and not inf and v >= 0.5 / physics_dt:
            raise ValueError(
                f"factor {self.name}: value {value!r} {self.unit} is not below the Nyquist rate "
                f"1/(2·dt) = {0.5 / physics_dt:g} Hz of the physics step {physics_dt:g} s"
            )
        shortest = self.min_physics_steps * (physics_dt or 0.0)
        if v < shortest * (1.0 - 1e-6):  # float32 values: 0.01 arrives as 0.0099999998
            raise ValueError(
                f"factor {self.name}: value {value!r} {self.unit} is shorter than "
                f"{self.min_physics_steps:g} physics steps ({shortest:g} s at dt = {physics_dt:g} s): "
                "MuJoCo would clamp it up, so the point would not be the one asked for"
            )
        return v


FACTORS: dict[str, Factor] = {
    f.name: f
    for f in (
        Factor("payload_kg", "kg", "solid box rigidly attached to the payload body (G1: torso, Panda: hand)", 0.0),
        Factor("link_mass_scale", "", "every robot link's density × s (mass and inertia, CoM kept)", 1.0, 1e-3),
        Factor(
            "com_shift_m",
            "m",
            "CoM of the payload body moved forward (+x of its frame), whole mass rigidly",
            0.0,
            -math.inf,
        ),
        Factor("inertia_scale", "", "every robot link's rotational inertia about its CoM × s (mass kept)", 1.0, 1e-3),
        Factor(
            "object_mass_scale",
            "",
            "grasped object's density × s, after the task's own draw",
            1.0,
            1e-3,
            needs="object",
        ),
        Factor("command_delay_s", "s", "command latency, rounded to physics steps (nominal: the datasheet mean)", None),
        Factor("pd_gain_scale", "", "servo kp and kd × s", 1.0, 1e-3),
        Factor("torque_limit_scale", "", "peak torque (and stall torque of the torque-speed line) × s", 1.0, 1e-3, 1.0),
        Factor("joint_friction_scale", "", "joint Coulomb and viscous friction × s", 1.0),
        Factor(
            "contact_friction", "", "Coulomb μ of the contact bodies' colliders (G1: feet, Panda: finger pads)", None
        ),
        Factor(
            "contact_timeconst_s",
            "s",
            "contact stiffness as MuJoCo's solref time constant of the contact bodies' colliders (smaller: stiffer; "
            "the pair's value against the ground / the object, see envs/dr/contact.py ColliderSolref)",
            None,
            1e-4,
            1.0,
            min_physics_steps=2.0,
        ),
        Factor(
            "contact_dampratio",
            "",
            "contact damping as MuJoCo's solref damping ratio of the same colliders (1: critical, < 1 rebounds)",
            None,
            1e-3,
            10.0,
        ),
        Factor(
            "torque_filter_hz",
            "Hz",
            "current-loop bandwidth, a first-order lag on every joint's motor torque (inf: ideal; nominal: the specs')",
            None,
            1e-3,
            inf_ok=True,
            below_nyquist=True,
        ),
        Factor(
            "speed_limit_scale",
            "",
            "torque cut-off at s × each joint's datasheet velocity limit (nominal: 1 if the specs enforce their limit, "
            "else inf = none, as G1, Panda)",
            None,
            1e-3,
            inf_ok=True,
        ),
        Factor(
            "backlash_rad",
            "rad",
            "gear backlash: dead-band half-width b of every compliant joint (the env is built with the robot's "
            "compliant stand-in; G1: knees and hip roll; Panda: wrist joints 5-7)",
            None,
            0.0,
            0.1,
            needs="compliant",
        ),
        Factor(
            "transmission_stiffness_scale",
            "",
            "transmission stiffness x s of every compliant joint (built as for backlash_rad; bounded by the elastic "
            "joint's stability at the physics step where a link is lighter than its motor)",
            None,
            1e-3,
            needs="compliant",
        ),
        Factor(
            "push_mps",
            "m/s",
            "every push's horizontal velocity change (random heading, the task's timing)",
            None,
            needs="push",
        ),
    )
}
"""Every factor a sweep can vary, by name."""

NOT_SWEEPABLE: dict[str, str] = {}
"""Physical quantities the actuator chain models but a sweep cannot vary yet, with the reason."""


def parse_values(specs: Sequence[str], physics_dt: float | None = None) -> dict[str, tuple[float, ...]]:
    """``["payload_kg=0,5,10", ...]`` → ``{"payload_kg": (0.0, 5.0, 10.0)}``, each value checked against its factor
    (and, with the physics step ``physics_dt`` in s, a cutoff against its Nyquist rate; ``inf`` parses as ``inf``).

    Raises:
        ValueError: Unknown factor (lists the known ones), a malformed entry, or a value outside the factor's range.
    """
    out: dict[str, tuple[float, ...]] = {}
    for spec in specs:
        name, sep, text = spec.partition("=")
        name = name.strip()
        if not sep or not text.strip():
            raise ValueError(f"--values {spec!r}: expected FACTOR=V1,V2,... (e.g. payload_kg=0,5,10)")
        factor = get_factor(name)
        try:
            values = tuple(factor.check(float(v), physics_dt) for v in text.split(","))
        except ValueError as err:
            raise ValueError(f"--values {spec!r}: {err}") from None
        out[name] = values
    return out


def get_factor(name: str) -> Factor:
    """The factor called ``name`` (``ValueError`` listing the known ones, or saying why it is not sweepable)."""
    if name in NOT_SWEEPABLE:
        raise ValueError(f"factor {name!r} cannot be swept: {NOT_SWEEPABLE[name]}")
    if name not in FACTORS:
        raise ValueError(f"unknown factor {name!r}; known: {', '.join(FACTORS)}")
    return FACTORS[name]


def sweep_values(values: Sequence[float], nominal: float) -> tuple[float, ...]:
    """The sorted, de-duplicated values with the nominal value included."""
    return tuple(sorted({round(float(v), 9) for v in (*values, nominal)}))


def make_point(values: Mapping[str, float], nominal: Mapping[str, float]) -> Point:
    """The canonical point of ``values``: factors at their nominal value are dropped, the rest sorted by name."""
    return tuple(sorted((k, round(float(v), 9)) for k, v in values.items() if abs(v - nominal[k]) > 1e-12))


@dataclass(frozen=True)
class Plan:
    """What to evaluate: the one-factor sweeps, the optional two-factor grid, and the distinct points they need.

    Attributes:
        nominal: Nominal value of every factor in play.
        sweeps: Factor → its values (nominal included, sorted).
        grid: ``(x_factor, y_factor)`` of the heatmap, or ``None``.
        points: Every distinct point: the nominal point ``()`` first, then :data:`REFERENCE`.
    """

    nominal: dict[str, float]
    sweeps: dict[str, tuple[float, ...]]
    grid: tuple[str, str] | None
    points: tuple[Point, ...]

    def sweep_points(self, factor: str) -> list[Point]:
        """The point of each value of ``factor``'s sweep, in value order."""
        return [make_point({factor: v}, self.nominal) for v in self.sweeps[factor]]

    def grid_points(self) -> list[list[Point]]:
        """Rows (y values) × columns (x values) of heatmap points."""
        if self.grid is None:
            return []
        fx, fy = self.grid
        return [[make_point({fx: x, fy: y}, self.nominal) for x in self.sweeps[fx]] for y in self.sweeps[fy]]


def make_plan(
    sweeps: Mapping[str, Sequence[float]], nominal: Mapping[str, float], grid: tuple[str, str] | None = None
) -> Plan:
    """Build the :class:`Plan` of one-factor sweeps (and a grid over two of them).

    Raises:
        ValueError: An unknown factor, a factor without a nominal value, a grid factor that is not swept or
            a grid of one factor twice.
    """
    if not sweeps:
        raise ValueError("no factor to sweep")
    for name in sweeps:
        get_factor(name)
        if name not in nominal:
            raise ValueError(f"factor {name!r} has no nominal value for this task")
    full = {k: sweep_values([FACTORS[k].check(v) for v in vs], nominal[k]) for k, vs in sweeps.items()}
    if grid is not None:
        if len(grid) != 2 or grid[0] == grid[1]:
            raise ValueError(f"--heatmap needs two different factors, got {list(grid)}")
        missing = [g for g in grid if g not in full]
        if missing:
            raise ValueError(f"--heatmap factors {missing} are not among the swept factors {list(full)}")
    plan = Plan(dict(nominal), full, tuple(grid) if grid else None, ())
    ordered: dict[Point, None] = {(): None, REFERENCE: None}
    for name in full:
        ordered.update(dict.fromkeys(plan.sweep_points(name)))
    for row in plan.grid_points():
        ordered.update(dict.fromkeys(row))
    return Plan(plan.nominal, plan.sweeps, plan.grid, tuple(ordered))


def pack(points: Sequence[Point], episodes: int, num_envs: int) -> list[list[Point]]:
    """Assign ``episodes`` env-episodes of every point to batches of at most ``num_envs`` envs (one episode per env).

    Returns:
        Batches; each is the point of every env of that batch (the last batch may be shorter).
    """
    if episodes < 1 or num_envs < 1:
        raise ValueError(f"episodes ({episodes}) and num_envs ({num_envs}) must be >= 1")
    slots = [p for p in points for _ in range(episodes)]
    return [slots[i : i + num_envs] for i in range(0, len(slots), num_envs)]


def point_values(point: Point, nominal: Mapping[str, float]) -> dict[str, float]:
    """Every factor's value at ``point`` (the nominal value where the point does not set it); at :data:`REFERENCE`
    the task-drawn factors are NaN, meaning "drawn by the task"."""
    if point == REFERENCE:
        return dict(nominal) | {k: math.nan for k in TASK_DRAWN if k in nominal}
    return dict(nominal) | dict(point)


def build_report(plan: Plan, results: Mapping[str, Mapping[Point, Sequence[Episode]]]) -> dict[str, object]:
    """The JSON-ready report of a plan's results.

    Args:
        plan: The evaluated plan.
        results: Policy label → point → its episodes.

    Returns:
        ``{"nominal", "reference": {label: stats at :data:`REFERENCE`},
        "factors": {name: {unit, description, nominal, values, policies: {label: [stats per value]}}},
        "heatmap": {x, y, x_values, y_values, policies: {label: {success_rate, success_ci95, episodes}}} | None}``;
        the stats of a value are :func:`summarize`'s plus ``"value"``.
    """
    factors: dict[str, object] = {}
    for name, values in plan.sweeps.items():
        f = FACTORS[name]
        per_policy = {
            label: [{"value": v} | summarize(by_point[p]) for v, p in zip(values, plan.sweep_points(name), strict=True)]
            for label, by_point in results.items()
        }
        factors[name] = {
            "unit": f.unit,
            "description": f.description,
            "nominal": plan.nominal[name],
            "values": list(values),
            "policies": per_policy,
        }
    heatmap = None
    if plan.grid is not None:
        fx, fy = plan.grid
        grid = plan.grid_points()
        policies = {}
        for label, by_point in results.items():
            stats = [[summarize(by_point[p]) for p in row] for row in grid]
            policies[label] = {
                key: [[s[key] for s in row] for row in stats] for key in ("success_rate", "success_ci95", "episodes")
            }
        heatmap = {
            "x": fx,
            "y": fy,
            "x_values": list(plan.sweeps[fx]),
            "y_values": list(plan.sweeps[fy]),
            "policies": policies,
        }
    reference = {label: summarize(by_point[REFERENCE]) for label, by_point in results.items() if REFERENCE in by_point}
    return {"nominal": dict(plan.nominal), "reference": reference, "factors": factors, "heatmap": heatmap}
