"""The optional drive stages of an actuator group in the metadata (``actuators.groups[].stages``), and who applies each
on a robot.

A group whose training chain ran any optional stage of :class:`~realgap.actuators.chain.ActuatorChain` (speed
cut-off, command low-pass, current-loop lag, compliant transmission with backlash) carries their per-joint numbers;
a group without ``stages`` ran none of them (every file written before the stages existed, and every export whose
specs set none), and the runtime builds the chain exactly as before.

**Who applies a stage on a robot** (the deploy runtime's :func:`~realgap.envs.deploy.runtime.runtime_stages`, the same
rule as friction and the command delay):

- physical effects of the drive and gearbox, i.e. the current-loop lag (``torque_filter_hz``), the speed cut-off as
  the drive enforces it (``velocity_cutoff``) and the compliant transmission with backlash: the runtime applies them
  only for a *simulated* robot (``Robot.simulated``), which stands in for the plant; a real robot brings them itself,
  and adding them again would count them twice;
- the command low-pass (``position_filter_hz``): a software filter on ``q*`` that the policy was trained behind, so it
  belongs to the controller and the runtime applies it on every robot (simulated or real, torque or position).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from realgap.actuators.chain import ChainStages
from realgap.actuators.spec import ActuatorSpec
from realgap.envs.format.schema import MetadataError, floats, plain

STAGE_RULES: dict[str, str] = {
    "rule": "physical effects of the drive (current loop, speed cut-off, compliant transmission and backlash) are "
    "applied by the runtime only for a simulated robot, like friction: a real robot brings them itself; the command "
    "low-pass is a software filter on q_target and is applied on every robot",
    "velocity_cutoff": "where true: after the envelope, tau_motor = 0 where it would push |qd| further past "
    "velocity_limit (torque cut-off as the drive enforces it; qd is the motor speed where the transmission is "
    "compliant). Applied by: a simulated robot's runtime; a real robot's drive",
    "position_filter_hz": "q_f[k] = q_target[k] + b * (q_f[k-1] - q_target[k]), b = exp(-2*pi*f*dt), after the "
    "command delay and before the PD, every physics step; null: none. Applied by: the runtime on every robot "
    "(a position robot: on the q_target it sends, at its control period)",
    "torque_filter_hz": "tau_i[k] = tau_motor[k] + b * (tau_i[k-1] - tau_motor[k]), b = exp(-2*pi*f*dt), after the "
    "envelope (and cut-off), then the envelope again; null: ideal current loop. Applied by: a simulated robot's "
    "runtime; a real robot's current loop",
    "transmission": "where transmission_stiffness is not null: the motor inertia motor_inertia (joint side) drives the "
    "link through tau_link = k * dz_b(theta_m - q) + c * (dtheta_m - qd), dz_b the dead band of half-width backlash "
    "(contact only), integrated semi-implicitly every physics step; the simulator's joint armature left out "
    "motor_inertia (armature + motor_inertia = N^2 * I_m). Applied by: a simulated robot's runtime; a real robot's "
    "gearbox",
}
"""Written into every ``stages`` object as ``applied_by``: the equations and who applies each stage on a robot."""


@dataclass(frozen=True)
class GroupStages:
    """Per-joint parameters of a group's optional chain stages (arrays follow the group's ``joint_names``).

    Attributes:
        velocity_cutoff: The drive cuts torque past the group's ``velocity_limit`` (``False``: not enforced).
        position_filter_hz: Command low-pass corner, Hz (``None``: none).
        torque_filter_hz: Current-loop bandwidth, Hz (``None``: ideal).
        transmission_stiffness: ``k``, N·m/rad (``None``: rigid).
        transmission_damping: ``c``, N·m·s/rad (0 where rigid).
        backlash: Dead-band half-width ``b``, rad (0 where rigid).
        motor_inertia: ``J_m`` behind the spring, kg·m² (0 where rigid).
    """

    velocity_cutoff: tuple[bool, ...]
    position_filter_hz: tuple[float | None, ...]
    torque_filter_hz: tuple[float | None, ...]
    transmission_stiffness: tuple[float | None, ...]
    transmission_damping: tuple[float, ...]
    backlash: tuple[float, ...]
    motor_inertia: tuple[float, ...]

    def checked(self, n: int, who: str) -> GroupStages:
        """A copy with plain tuples of ``n`` values each (``who`` names the group in errors).

        Raises:
            MetadataError: A field has another length, or ``velocity_cutoff`` holds a non-bool.
        """
        out: dict[str, Any] = {}
        for f in fields(self):
            values, what = getattr(self, f.name), f"{who}.stages.{f.name}"
            if f.name == "velocity_cutoff":
                if len(values) != n or not all(isinstance(v, bool | np.bool_) for v in values):
                    raise MetadataError(f"{what}: need {n} booleans, got {list(values)}")
                out[f.name] = tuple(bool(v) for v in values)
            else:
                out[f.name] = floats(values, n, what, nullable=f.name.endswith(("_hz", "_stiffness")))
        return GroupStages(**out)

    @classmethod
    def from_specs(cls, specs: Sequence[ActuatorSpec]) -> GroupStages | None:
        """The stages the training chain built from ``specs`` ran (:meth:`JointParams.from_specs`); ``None`` when
        none is on for any joint (the group then carries no ``stages``, as before the stages existed)."""
        stages = cls(
            velocity_cutoff=tuple(s.enforce_velocity_limit for s in specs),
            position_filter_hz=tuple(s.position_filter_hz for s in specs),
            torque_filter_hz=tuple(s.torque_filter_hz for s in specs),
            transmission_stiffness=tuple(s.transmission_stiffness for s in specs),
            transmission_damping=tuple(s.transmission_damping for s in specs),
            backlash=tuple(s.backlash for s in specs),
            motor_inertia=tuple(
                0.0 if s.transmission_stiffness is None else s.transmission_motor_inertia for s in specs
            ),
        )
        return stages if stages.trained() != ChainStages() else None

    def trained(self) -> ChainStages:
        """Which stages the training chain ran (:meth:`ChainStages.from_params` of :meth:`columns`)."""
        return ChainStages(
            velocity_limit=any(self.velocity_cutoff),
            position_filter=any(v is not None for v in self.position_filter_hz),
            torque_filter=any(v is not None for v in self.torque_filter_hz),
            transmission=any(v is not None for v in self.transmission_stiffness),
        )

    def columns(self, velocity_limit: Sequence[float]) -> dict[str, list[float | None]]:
        """The stage columns of :meth:`JointParams.from_columns <realgap.actuators.params.JointParams.from_columns>`
        (one value per joint, ``None``: none): the speed limit ``inf`` where the cut-off is off (as
        :meth:`JointParams.from_specs` builds them)."""
        cut = [v if on else math.inf for v, on in zip(velocity_limit, self.velocity_cutoff, strict=True)]
        names = ("position_filter_hz", "torque_filter_hz", "transmission_stiffness", "transmission_damping", "backlash")
        return {"velocity_limit": cut} | {n: list(getattr(self, n)) for n in (*names, "motor_inertia")}

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``applied_by``: :data:`STAGE_RULES`)."""
        return plain({f.name: getattr(self, f.name) for f in fields(self)} | {"applied_by": STAGE_RULES})

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> GroupStages:
        return cls(**{f.name: tuple(d[f.name]) for f in fields(cls)})
