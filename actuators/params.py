"""Per-joint actuator parameters as arrays, the form the tensor functions and :class:`ActuatorChain` consume.

Each field is ``(J,)`` (one value per joint, shared by all envs) or ``(E, J)`` (per-env, e.g. randomized gains). The
dataclass is frozen: swap a field with ``dataclasses.replace`` or write rows of an ``(E, J)`` array in place
(``params.kp[env_ids] = sampled``) after :meth:`JointParams.expand`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

import numpy as np

from realgap.actuators._xp import Array, as_like, is_torch
from realgap.actuators.spec import ActuatorSpec

NONE_IS_INF = ("no_load_speed", "velocity_limit", "position_filter_hz", "torque_filter_hz", "transmission_stiffness")
"""Fields where ``None`` (the spec or export has none: no stall line, no limit, no filter, a rigid transmission) is
``inf``."""


@dataclass(frozen=True)
class JointParams:
    """Actuator parameters per joint (or per env and joint).

    Attributes:
        kp: Stiffness, N·m/rad.
        kd: Damping, N·m·s/rad.
        peak_torque: Peak/stall torque ``τ_peak`` (envelope box), N·m.
        no_load_speed: ``ω_0`` of the stall line, rad/s; ``inf`` where the spec has none (box only).
        coulomb_friction: ``f_c``, N·m.
        viscous_friction: ``f_v``, N·m·s/rad.
        friction_velocity_scale: ``v_s``, rad/s.
        velocity_limit: Speed the drive enforces (torque cut-off), rad/s; ``inf``: not enforced.
        position_filter_hz: Command filter corner on ``q*``, Hz; ``inf``: none.
        torque_filter_hz: Current-loop bandwidth ``f_c``, Hz; ``inf``: ideal current loop.
        transmission_stiffness: ``k``, N·m/rad; ``inf``: rigid transmission.
        transmission_damping: ``c``, N·m·s/rad.
        backlash: Dead-band half-width ``b``, rad.
        motor_inertia: ``J_m`` of a compliant transmission, kg·m² (joint side; unused where rigid).

    The last seven fields default to ``None`` (stage off for every joint; the same as the neutral values above), so
    older callers that build the first seven keep working. :meth:`from_specs` always fills them.

    Shape:
        Every field ``(J,)`` or ``(E, J)``, same ``J``, same backend.
    """

    kp: Array
    kd: Array
    peak_torque: Array
    no_load_speed: Array
    coulomb_friction: Array
    viscous_friction: Array
    friction_velocity_scale: Array
    velocity_limit: Array | None = None
    position_filter_hz: Array | None = None
    torque_filter_hz: Array | None = None
    transmission_stiffness: Array | None = None
    transmission_damping: Array | None = None
    backlash: Array | None = None
    motor_inertia: Array | None = None

    def __post_init__(self) -> None:
        n = self.kp.shape[-1]
        backend = is_torch(self.kp)
        for f in fields(self):
            a = getattr(self, f.name)
            if a is None:
                continue
            if is_torch(a) != backend:
                raise ValueError(f"JointParams.{f.name}: mixes numpy and torch arrays")
            if a.ndim not in (1, 2) or a.shape[-1] != n:
                raise ValueError(f"JointParams.{f.name}: shape {tuple(a.shape)} must be ({n},) or (num_envs, {n})")

    @property
    def num_joints(self) -> int:
        """``J``."""
        return int(self.kp.shape[-1])

    @classmethod
    def from_specs(
        cls,
        specs: Sequence[ActuatorSpec],
        *,
        backend: Literal["numpy", "torch"] = "numpy",
        device: Any = None,
        dtype: Any = None,
    ) -> JointParams:
        """Stack one spec per joint (e.g. from :func:`realgap.actuators.spec.resolve_joint_specs`) into ``(J,)`` arrays.

        Args:
            specs: The spec of each joint, in the simulator's joint order.
            backend: ``"numpy"`` (float64 by default) or ``"torch"`` (float32 by default; torch is imported here,
                only when asked for).
            device: Torch device.
            dtype: Array dtype override.
        """
        if not specs:
            raise ValueError("JointParams.from_specs needs at least one joint spec")
        columns = {
            "kp": [s.kp for s in specs],
            "kd": [s.kd for s in specs],
            "peak_torque": [s.peak_torque for s in specs],
            "no_load_speed": [s.no_load_speed for s in specs],
            "coulomb_friction": [s.coulomb_friction for s in specs],
            "viscous_friction": [s.viscous_friction for s in specs],
            "friction_velocity_scale": [s.friction_velocity_scale for s in specs],
            "velocity_limit": [s.velocity_limit if s.enforce_velocity_limit else math.inf for s in specs],
            "position_filter_hz": [s.position_filter_hz for s in specs],
            "torque_filter_hz": [s.torque_filter_hz for s in specs],
            "transmission_stiffness": [s.transmission_stiffness for s in specs],
            "transmission_damping": [s.transmission_damping for s in specs],
            "backlash": [s.backlash for s in specs],
            "motor_inertia": [s.transmission_motor_inertia for s in specs],
        }
        return cls.from_columns(columns, backend=backend, device=device, dtype=dtype)

    @classmethod
    def from_columns(
        cls,
        columns: Mapping[str, Sequence[float | None]],
        *,
        backend: Literal["numpy", "torch"] = "numpy",
        device: Any = None,
        dtype: Any = None,
    ) -> JointParams:
        """The one constructor: per-joint columns (one value per joint, field name → values) as ``(J,)`` arrays.

        :meth:`from_specs` (training: datasheet specs) and the export's actuator groups
        (:meth:`realgap.envs.format.groups.ActuatorGroup.joint_params`: the exported numbers) both build through it, so
        the chain a robot runs gets its gains and limits by the same rule as the chain training ran.

        Args:
            columns: Values per field of this class, units as in its attributes; ``None`` in a field of
                :data:`NONE_IS_INF` means "none" (``inf``). A stage field left out stays ``None`` (stage off).
            backend: ``"numpy"`` (float64 by default) or ``"torch"`` (float32 by default; torch is imported here,
                only when asked for).
            device: Torch device.
            dtype: Array dtype override.
        """
        if backend not in ("numpy", "torch"):
            raise ValueError(f"backend must be 'numpy' or 'torch', got {backend!r}")
        if unknown := sorted(set(columns) - {f.name for f in fields(cls)}):
            raise ValueError(f"JointParams has no field {unknown}")
        values = {k: [math.inf if v is None and k in NONE_IS_INF else v for v in vs] for k, vs in columns.items()}
        if backend == "torch":
            import torch

            dt = dtype or torch.get_default_dtype()
            return cls(**{k: torch.tensor(v, dtype=dt, device=device) for k, v in values.items()})
        return cls(**{k: np.asarray(v, dtype=dtype or np.float64) for k, v in values.items()})

    def expand(self, num_envs: int) -> JointParams:
        """Per-env copies ``(E, J)`` of every field, ready for per-env randomization (rows written in place)."""
        out = {}
        for f in fields(self):
            a = getattr(self, f.name)
            if a is None:
                continue
            shape = (num_envs, self.num_joints)
            out[f.name] = a.expand(shape).clone() if is_torch(a) else np.broadcast_to(a, shape).copy()
        return replace(self, **out)

    def to_like(self, ref: Array) -> JointParams:
        """The same parameters in ``ref``'s backend, dtype and device."""
        present = {f.name: a for f in fields(self) if (a := getattr(self, f.name)) is not None}
        return replace(self, **{name: as_like(a, ref) for name, a in present.items()})

    def active(self, field: str, neutral: float) -> bool:
        """Whether any joint (or env) sets ``field`` to something other than its neutral (stage-off) value."""
        a = getattr(self, field)
        return a is not None and bool((a != neutral).any())
