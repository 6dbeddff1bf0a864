"""Randomization of the actuator chain's optional stages (pure torch): what a value means, what the physics step can
run, and the per-env draws.

A DR profile's ``actuator_stages`` group (:class:`realgap.envs.dr.profile.ActuatorStagesGroup`) gives a uniform range
per field; :data:`STAGE_FIELDS` says which :class:`~realgap.actuators.params.JointParams` entry it writes, which chain
stage must be on, and what a value is relative to:

- ``torque_filter_hz`` [Hz]: current-loop bandwidth ``f_c`` (first-order lag on the motor torque), absolute;
- ``position_filter_hz`` [Hz]: the drive's command low-pass on ``q*``, absolute;
- ``speed_limit_scale``: torque cut-off at ``s ×`` the spec's datasheet ``velocity_limit``;
- ``backlash_rad`` [rad]: dead-band half-width ``b`` of a compliant transmission, absolute;
- ``transmission_stiffness_scale``: ``k = s ×`` the spec's ``transmission_stiffness`` (compliant joints only).

Which values the physics step can run is decided by the checks the chain is built with, applied to the worst value of
each range (:func:`check_stage_ranges`): ``ActuatorSpec`` validation (a dead band needs a compliant joint, is >= 0)
and :func:`~realgap.actuators.spec.check_physics_step` (cutoffs below the Nyquist rate ``1/(2·dt)``, elastic joint
and its motor-side PD stable). No simulator import here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import torch
from torch import Tensor

from realgap.actuators.spec import ActuatorSpec, check_physics_step
from realgap.envs.dr.inertia_sampling import Range
from realgap.envs.dr.width import draw_unit_width


@dataclass(frozen=True)
class StageField:
    """One randomizable stage value.

    Attributes:
        param: The :class:`~realgap.actuators.params.JointParams` field written.
        stage: The :class:`~realgap.actuators.chain.ChainStages` flag that must be on for it to act.
        reference: Spec attribute a drawn scale multiplies (``None``: the value is absolute).
        unit: Unit of a drawn value ("" for scales).
    """

    param: str
    stage: str
    reference: str | None
    unit: str


STAGE_FIELDS: dict[str, StageField] = {
    "torque_filter_hz": StageField("torque_filter_hz", "torque_filter", None, "Hz"),
    "position_filter_hz": StageField("position_filter_hz", "position_filter", None, "Hz"),
    "speed_limit_scale": StageField("velocity_limit", "velocity_limit", "velocity_limit", ""),
    "backlash_rad": StageField("backlash", "transmission", None, "rad"),
    "transmission_stiffness_scale": StageField("transmission_stiffness", "transmission", "transmission_stiffness", ""),
}
"""Profile field → what it writes, in draw order."""

NEEDS_COMPLIANT = ("backlash_rad", "transmission_stiffness_scale")
"""Fields that only exist on a joint built with a compliant transmission (``transmission_stiffness`` in its spec)."""


def _worst_spec(spec: ActuatorSpec, name: str, hi: float) -> ActuatorSpec:
    """``spec`` at the largest value of field ``name`` (the one the physics step is most likely to refuse)."""
    if name in NEEDS_COMPLIANT and spec.transmission_stiffness is None:
        raise ValueError(
            f"spec '{spec.name}' is built rigid (no transmission_stiffness): {name} needs a compliant transmission "
            "(its motor inertia leaves the solver's armature when the env is built, so it cannot be switched on later)"
        )
    if name == "speed_limit_scale":
        return replace(spec, velocity_limit=spec.velocity_limit * hi, enforce_velocity_limit=True)
    if name == "backlash_rad":
        return replace(spec, backlash=hi)
    if name == "transmission_stiffness_scale":
        return replace(spec, transmission_stiffness=spec.transmission_stiffness * hi)
    return replace(spec, **{name: hi})


def check_stage_ranges(ranges: Mapping[str, Range], specs: Sequence[ActuatorSpec], dt: float, where: str) -> None:
    """Refuse ranges the chain could not run at the physics step ``dt`` (s) on joints with these specs.

    Each range's largest value is written into every spec and checked as the chain's construction checks it
    (``ActuatorSpec`` validation, then :func:`~realgap.actuators.spec.check_physics_step`).

    Args:
        ranges: Field of :data:`STAGE_FIELDS` → ``(lo, hi)``.
        specs: The specs of the selected joints.
        dt: Physics step, s.
        where: Prefix of the message, e.g. ``"actuator_stages.yaml: actuator_stages[1]"``.

    Raises:
        ValueError: ``"<where>.<field> [lo, hi] <unit>: <the chain's reason, naming the spec and the limit>"``.
    """
    unique = list({s.name: s for s in specs}.values())
    for name, (lo, hi) in ranges.items():
        if name not in STAGE_FIELDS:
            raise ValueError(f"{where}: unknown stage field {name!r}; known: {list(STAGE_FIELDS)}")
        unit = f" {STAGE_FIELDS[name].unit}" if STAGE_FIELDS[name].unit else ""
        try:
            for spec in unique:
                check_physics_step([_worst_spec(spec, name, hi)], dt)
        except ValueError as err:
            raise ValueError(f"{where}.{name} [{lo:g}, {hi:g}]{unit}: {err}") from None


def with_transmission(
    specs: Mapping[str, ActuatorSpec], transmission: Mapping[str, tuple[float, float]], dt: float
) -> dict[str, ActuatorSpec]:
    """``specs`` with the groups named in ``transmission`` built compliant (stiffness N·m/rad, damping N·m·s/rad).

    Raises:
        ValueError: A group ``specs`` lacks, or a stiffness the elastic joint cannot run at ``dt``.
    """
    missing = sorted(set(transmission) - set(specs))
    if missing:
        raise ValueError(f"compliant transmission for spec groups {missing}, which these actuators lack: {list(specs)}")
    out = dict(specs)
    for group, (k, c) in transmission.items():
        out[group] = replace(specs[group], transmission_stiffness=float(k), transmission_damping=float(c))
        check_physics_step([out[group]], dt)
    return out


def sample_stages(
    bounds: Mapping[str, tuple[Tensor, Tensor]], n: int, generator: torch.Generator, width: float = 1.0
) -> dict[str, Tensor]:
    """One value per env and column from U[lo_c, hi_c] for each field, drawn in :data:`STAGE_FIELDS` order (so a
    seed reproduces every field, whatever order ``bounds`` lists them in).

    Args:
        bounds: Field → ``(lo, hi)`` per column, shape ``(C,)`` each.
        n: Number of envs drawn.
        generator: Source of randomness.
        width: Each range narrowed to this fraction about its midpoint (:mod:`realgap.envs.dr.width`).

    Shape:
        Each output ``(n, C)`` on ``lo``'s device.
    """
    out = {}
    for name in STAGE_FIELDS:
        if name in bounds:
            lo, hi = bounds[name]
            unit = torch.rand((n, lo.shape[0]), generator=generator, device=generator.device, dtype=lo.dtype)
            unit = draw_unit_width(unit, width)
            out[name] = lo + (hi - lo) * unit.to(lo.device)
    return out


def stage_param_value(name: str, drawn: Tensor, reference: Tensor | None) -> Tensor:
    """The :class:`JointParams` value of a draw: ``drawn`` (absolute) or ``drawn × reference`` (a scale field).

    Shape:
        ``drawn`` ``(n, C)``, ``reference`` ``(C,)`` or ``(n, C)``; output ``(n, C)``.
    """
    if STAGE_FIELDS[name].reference is None:
        return drawn
    return drawn * reference
