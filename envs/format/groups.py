"""Actuator groups of the metadata: one training actuator chain (one command bus) each, with the per-joint numbers of
the actuator law (:data:`realgap.envs.format.schema.ACTUATOR_LAW`), who applies friction, the command delay, and the
optional drive stages (:mod:`realgap.envs.format.stages`).

The runtime rebuilds the training :class:`~realgap.actuators.chain.ActuatorChain` from these numbers
(:meth:`ActuatorGroup.joint_params`); the datasheet specs they came from travel along for provenance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from realgap.actuators.chain import ChainStages, check_stage_params
from realgap.actuators.delay import latency_range_to_steps
from realgap.actuators.params import JointParams
from realgap.actuators.spec import ActuatorSpec, check_physics_step
from realgap.envs.format.schema import DELAY_SCOPE, FRICTION_EQUATIONS, MetadataError, floats, plain
from realgap.envs.format.stages import GroupStages

GROUP_ARRAYS = (
    "kp",
    "kd",
    "peak_torque",
    "continuous_torque",
    "velocity_limit",
    "armature",
    "coulomb_friction",
    "viscous_friction",
)
"""The per-joint float arrays of a group (one value per joint of ``joint_names``), as
:meth:`~realgap.envs.format.metadata.PolicyMetadata.joint_array` reads them."""


@dataclass(frozen=True)
class ActuatorGroup:
    """One actuator chain (one command bus): per-joint parameters of the actuator law, friction, command delay.

    Attributes:
        name: Isaac Lab actuator group name.
        joint_names: Joints of this group, in the order of every array below.
        kp: N·m/rad (N/m). kd: N·m·s/rad (N·s/m).
        peak_torque: ``τ_peak`` of the envelope, N·m (N). no_load_speed: ``ω_0``, rad/s (``None``: box only).
        continuous_torque: Thermal rating, N·m (not enforced). velocity_limit: rad/s (enforced only where
            ``stages.velocity_cutoff``).
        armature: Joint armature the training simulator got, kg·m² (kg): the reflected inertia ``N²·I_m``, less the
            motor inertia ``stages.motor_inertia`` the chain integrates where the transmission is compliant.
        coulomb_friction: N·m. viscous_friction: N·m·s/rad. friction_velocity_scale: rad/s, ``None`` unless the
            chain applied friction (``tanh(q̇ / v_s)``).
        friction_applied_by: ``"simulator"`` (joint frictionloss / damping) or ``"actuator_chain"``.
        command_delay_s: ``(min, max)`` command latency of the bus, s.
        datasheet: ``{"joint_specs": [...], "specs": {name: ActuatorSpec.to_dict()}}`` the numbers came from.
        stages: The optional chain stages training ran (``None``: none, the chain of every older file).
    """

    name: str
    joint_names: tuple[str, ...]
    kp: tuple[float, ...]
    kd: tuple[float, ...]
    peak_torque: tuple[float, ...]
    no_load_speed: tuple[float | None, ...]
    continuous_torque: tuple[float, ...]
    velocity_limit: tuple[float, ...]
    armature: tuple[float, ...]
    coulomb_friction: tuple[float, ...]
    viscous_friction: tuple[float, ...]
    friction_velocity_scale: tuple[float, ...] | None
    friction_applied_by: str
    command_delay_s: tuple[float, float]
    datasheet: Mapping[str, Any] | None = None
    stages: GroupStages | None = None
    written_gain_conflicts: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        n, who = len(self.joint_names), f"actuators.groups '{self.name}'"
        object.__setattr__(self, "joint_names", tuple(self.joint_names))
        for key in GROUP_ARRAYS:
            object.__setattr__(self, key, floats(getattr(self, key), n, f"{who}.{key}"))
        object.__setattr__(self, "no_load_speed", floats(self.no_load_speed, n, f"{who}.no_load_speed", nullable=True))
        if self.friction_applied_by not in FRICTION_EQUATIONS:
            raise MetadataError(f"{who}.friction.applied_by must be one of {list(FRICTION_EQUATIONS)}")
        if (self.friction_velocity_scale is None) != (self.friction_applied_by == "simulator"):
            raise MetadataError(
                f"{who}.friction.velocity_scale is used only (and then needed) when the actuator chain applies friction"
            )
        if self.friction_velocity_scale is not None:
            scale = floats(self.friction_velocity_scale, n, f"{who}.friction.velocity_scale")
            object.__setattr__(self, "friction_velocity_scale", scale)
        lo, hi = (float(v) for v in self.command_delay_s)
        if not 0 <= lo <= hi:
            raise MetadataError(f"{who}.command_delay.range_s must be 0 <= min <= max, got {[lo, hi]}")
        object.__setattr__(self, "command_delay_s", (lo, hi))
        object.__setattr__(self, "datasheet", plain(self.datasheet))
        if self.stages is not None:
            object.__setattr__(self, "stages", self.stages.checked(n, who))

    @property
    def friction_in_chain(self) -> bool:
        """Whether the actuator chain (not the simulator) applied friction in training."""
        return self.friction_applied_by == "actuator_chain"

    @classmethod
    def from_specs(
        cls, name: str, joint_names: Sequence[str], specs: Sequence[ActuatorSpec], friction_in_chain: bool
    ) -> ActuatorGroup:
        """The group of one training chain from its per-joint datasheet specs (one latency range: one bus).

        Raises:
            MetadataError: The specs mix latency ranges.
        """
        ranges = {tuple(s.latency_range_s) for s in specs}
        if len(ranges) != 1:
            raise MetadataError(f"actuator group '{name}' mixes latency ranges {sorted(ranges)} on one bus")
        return cls(
            name=name,
            joint_names=tuple(joint_names),
            kp=[s.kp for s in specs],
            kd=[s.kd for s in specs],
            peak_torque=[s.peak_torque for s in specs],
            no_load_speed=[s.no_load_speed for s in specs],
            continuous_torque=[s.continuous_torque for s in specs],
            velocity_limit=[s.velocity_limit for s in specs],
            armature=[s.solver_armature for s in specs],
            coulomb_friction=[s.coulomb_friction for s in specs],
            viscous_friction=[s.viscous_friction for s in specs],
            friction_velocity_scale=[s.friction_velocity_scale for s in specs] if friction_in_chain else None,
            friction_applied_by="actuator_chain" if friction_in_chain else "simulator",
            command_delay_s=next(iter(ranges)),
            datasheet={"joint_specs": [s.name for s in specs], "specs": {s.name: s.to_dict() for s in specs}},
            stages=GroupStages.from_specs(specs),
        )

    @property
    def trained_stages(self) -> ChainStages:
        """The optional stages the training chain ran (all off without :attr:`stages`)."""
        return ChainStages() if self.stages is None else self.stages.trained()

    def joint_params(self) -> JointParams:
        """The chain's per-joint parameters, numpy float64 ``(J,)``, through the one constructor
        :meth:`JointParams.from_columns <realgap.actuators.params.JointParams.from_columns>` (``no_load_speed`` ``None``
        → ``inf``; the stage fields ``None`` without :attr:`stages`, as before the stages existed)."""
        scale = self.friction_velocity_scale or (1.0,) * len(self.joint_names)  # unused unless the chain applies it
        columns = {key: getattr(self, key) for key in ("kp", "kd", "peak_torque", "no_load_speed")}
        columns |= {"coulomb_friction": self.coulomb_friction, "viscous_friction": self.viscous_friction}
        columns["friction_velocity_scale"] = scale
        return JointParams.from_columns(
            columns | ({} if self.stages is None else self.stages.columns(self.velocity_limit))
        )

    def check_stages(self, physics_dt: float) -> None:
        """Refuse stages the training physics step cannot realize, with the chain's own checks
        (:func:`~realgap.actuators.chain.check_stage_params` on the arrays: filter cutoffs below the Nyquist rate
        ``1/(2·dt)``, speed limit > 0, stiffness > 0, damping and backlash >= 0, backlash only where compliant) and,
        for a compliant transmission, the datasheet specs' :func:`~realgap.actuators.spec.check_physics_step` (the
        elastic joint must be stable at ``dt``; it needs the link inertia, which only the spec has).

        Raises:
            MetadataError: Naming the group, the field, the value and the limit.
        """
        if self.stages is None:
            return
        try:
            check_stage_params(self.joint_params(), self.trained_stages, physics_dt)
            if self.trained_stages.transmission and self.datasheet is not None:
                check_physics_step([ActuatorSpec.from_dict(s) for s in self.datasheet["specs"].values()], physics_dt)
        except (ValueError, TypeError, KeyError) as err:
            raise MetadataError(
                f"actuators.groups '{self.name}'.stages cannot be realized at the training physics "
                f"step {physics_dt} s: {err}"
            ) from err

    def delay_steps(self, physics_dt: float) -> tuple[int, int]:
        """``(min, max)`` command delay in physics steps (``floor(s / dt + 0.5)``)."""
        return latency_range_to_steps(self.command_delay_s, physics_dt)

    def to_dict(self, physics_dt: float) -> dict[str, Any]:
        """JSON form (``physics_dt`` gives the delay in physics steps)."""
        return plain(
            {
                "name": self.name,
                "joint_names": self.joint_names,
                "kp": self.kp,
                "kd": self.kd,
                "peak_torque": self.peak_torque,
                "no_load_speed": self.no_load_speed,
                "continuous_torque": self.continuous_torque,
                "velocity_limit": self.velocity_limit,
                "armature": self.armature,
                "friction": {
                    "applied_by": self.friction_applied_by,
                    "coulomb": self.coulomb_friction,
                    "viscous": self.viscous_friction,
                    "velocity_scale": self.friction_velocity_scale,
                    "equation": FRICTION_EQUATIONS[self.friction_applied_by],
                },
                "command_delay": {
                    "range_s": self.command_delay_s,
                    "range_physics_steps": self.delay_steps(physics_dt),
                    "scope": DELAY_SCOPE,
                    "robot_value_s": 0.0,
                },
                "datasheet": _without_pd_gains(self.datasheet),
            }
            | ({} if self.stages is None else {"stages": self.stages.to_dict()})
        )

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ActuatorGroup:
        """Read :meth:`to_dict`'s form, and an older file's that wrote kp/kd twice (per group and in each datasheet
        spec's ``gains``): the group's arrays are the gains; where the specs repeat them, :attr:`written_gain_conflicts`
        names any difference (the verifying loader refuses it).

        Raises:
            MetadataError: The group gives no ``kp``/``kd``.
        """
        f, delay = d["friction"], d["command_delay"]
        keys = ("peak_torque", "no_load_speed", "continuous_torque", "velocity_limit", "armature")
        if missing := [k for k in ("kp", "kd") if k not in d]:
            raise MetadataError(
                f"actuators.groups '{d['name']}' gives no {missing[0]}: every export writes it once, here"
            )
        gains = {k: tuple(d[k]) for k in ("kp", "kd")}
        return cls(
            name=d["name"],
            joint_names=tuple(d["joint_names"]),
            **gains,
            **{k: tuple(d[k]) for k in keys},
            coulomb_friction=tuple(f["coulomb"]),
            viscous_friction=tuple(f["viscous"]),
            friction_velocity_scale=None if f["velocity_scale"] is None else tuple(f["velocity_scale"]),
            friction_applied_by=f["applied_by"],
            command_delay_s=tuple(delay["range_s"]),
            datasheet=_with_pd_gains(d.get("datasheet"), d["joint_names"], gains),
            stages=None if d.get("stages") is None else GroupStages.from_dict(d["stages"]),
            written_gain_conflicts=_gain_conflicts(d["name"], d["joint_names"], d.get("datasheet"), gains),
        )


def _gain_conflicts(
    name: str, joints: Sequence[str], datasheet: Mapping[str, Any] | None, gains: Mapping[str, tuple]
) -> tuple[str, ...]:
    """Joints whose spec, as the file writes it, carries PD gains other than the group's: judged on the file only
    (the specs' gains filled in memory for a kp-once file are no second copy: joints sharing a spec may differ)."""
    out = []
    for j, (joint, spec) in enumerate(zip(joints, _joint_specs(datasheet), strict=False)):
        written = spec.get("gains") or {}
        for key in ("kp", "kd") if "kp" in written else ():
            if float(written[key]) != gains[key][j]:
                out.append(
                    f"actuators.groups[{name}].{key} of {joint} is {gains[key][j]!r} but its datasheet spec gives "
                    f"{float(written[key])!r}"
                )
    return tuple(out)


def _joint_specs(datasheet: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """Each joint's datasheet spec dict (empty without a datasheet)."""
    if not datasheet:
        return []
    return [datasheet["specs"][name] for name in datasheet["joint_specs"]]


def _without_pd_gains(datasheet: Mapping[str, Any] | None) -> Any:
    """The datasheet as written: PD gains (``{"kp", "kd"}``) left out of each spec, because the group's per-joint
    ``kp``/``kd`` carry them (kp once); bandwidth gains (natural frequency, damping ratio) are kept."""
    if not datasheet:
        return datasheet
    specs = {n: {k: v for k, v in s.items() if not (k == "gains" and "kp" in v)} for n, s in datasheet["specs"].items()}
    return {**datasheet, "specs": specs}


def _with_pd_gains(datasheet: Mapping[str, Any] | None, joints: Sequence[str], gains: Mapping[str, tuple]) -> Any:
    """The datasheet in memory: a spec written without gains gets its first joint's ``kp``/``kd`` back, only so that
    :meth:`ActuatorSpec.from_dict <realgap.actuators.spec.ActuatorSpec.from_dict>` can build it; the runtime reads
    each joint's gains from the group's arrays, never from a spec (joints sharing a spec may differ)."""
    if not datasheet:
        return datasheet
    specs = {n: dict(s) for n, s in datasheet["specs"].items()}
    for j, name in enumerate(datasheet["joint_specs"][: len(joints)]):
        if "gains" not in specs[name]:
            specs[name]["gains"] = {"kp": gains["kp"][j], "kd": gains["kd"][j]}
    return {**datasheet, "specs": specs}
