"""Datasheet-level actuator specification: gearbox, torque/speed envelope, friction, latency, PD gains.

Every number is at the *joint* (output) side: torques in N·m (N for a prismatic joint), speeds in rad/s (m/s),
inertias in kg·m² (kg). The spec only validates; it never rewrites a field (derived values are properties).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from realgap.actuators.filters import check_cutoff
from realgap.actuators.models import explicit_pd_stability_margin
from realgap.actuators.spec_parts import BandwidthGains, Gearbox, PDGains, is_finite, require
from realgap.actuators.transmission import elastic_stability_margin

# the parts live in spec_parts.py; they stay importable from here, where every caller imports them
__all__ = [
    "ActuatorSpec",
    "BandwidthGains",
    "Gearbox",
    "PDGains",
    "check_explicit_stability",
    "check_physics_step",
    "resolve_joint_specs",
]


@dataclass(frozen=True)
class ActuatorSpec:
    """One joint actuator (drive + gearbox) from datasheet numbers, at the joint side.

    Torque envelope (see :func:`realgap.actuators.models.torque_speed_bounds`): instantaneous motoring torque is
    bounded by the stall line ``τ_peak·(1 − |q̇|/ω_0)`` clipped to ``[0, τ_peak]``; braking (torque against the
    velocity) up to ``τ_peak`` is always allowed. ``continuous_torque`` is the thermal (RMS) rating: validated and
    exported, not used to clip. Friction ``τ_f = −(f_c·tanh(q̇/v_s) + f_v·q̇)``.

    Attributes:
        name: Group name, e.g. ``"g1_7520_22"``.
        joint_names_expr: Regexes (``re.fullmatch``) selecting the joints this spec drives.
        peak_torque: Peak (stall) torque ``τ_peak``, N·m, > 0. Box limit of the envelope.
        continuous_torque: Continuous (RMS, thermal) torque, N·m, in ``(0, peak_torque]``.
        velocity_limit: Joint velocity limit for the simulator, rad/s, > 0.
        gains: :class:`PDGains` or :class:`BandwidthGains`.
        gearbox: Rotor + stages; gives the reflected inertia. Exactly one of ``gearbox`` / ``armature``.
        armature: Reflected inertia given directly, kg·m², >= 0 (when no gear data is published).
        no_load_speed: ``ω_0``, rad/s, > 0, where the stall line reaches zero torque; ``None``: box limit only.
        link_inertia: Lower bound of the link-side inertia about the joint axis, kg·m², >= 0. Used by
            ``BandwidthGains(inertia="total")`` and the explicit-integration stability check, never by the simulator.
        coulomb_friction: ``f_c``, N·m, >= 0.
        viscous_friction: ``f_v``, N·m·s/rad, >= 0.
        friction_velocity_scale: ``v_s`` of the tanh-smoothed Coulomb term, rad/s, > 0. Its slope ``f_c/v_s`` acts
            as damping at rest and enters the stability check.
        latency_range_s: ``(min, max)`` command latency, s, ``0 <= min <= max``.
        enforce_velocity_limit: The drive cuts torque that would push ``|q̇|`` further past ``velocity_limit``
            (:func:`realgap.actuators.models.clip_velocity_limit`); ``False``: the limit is only recorded.
        position_filter_hz: Corner of the drive's first-order command filter on ``q*``, Hz, > 0; ``None``: none.
        torque_filter_hz: Current-loop bandwidth ``f_c`` (first-order lag on the torque), Hz, > 0; ``None``: ideal.
        transmission_stiffness: Torsional stiffness ``k`` between motor and link, N·m/rad, > 0; ``None``: rigid.
        transmission_damping: ``c`` of the transmission, N·m·s/rad, >= 0 (needs ``transmission_stiffness``).
        backlash: Half-width ``b`` of the dead band (total play ``2·b``), rad, >= 0 (needs
            ``transmission_stiffness``: contact of the teeth is resolved as that spring).
        motor_inertia: Motor-side inertia ``J_m`` of a compliant transmission, kg·m² at the joint side, in
            ``(0, reflected inertia]`` (the part of the rotor/gear inertia before the spring); ``None``: the whole
            reflected inertia. The chain integrates it, so the simulator's armature leaves it out
            (:attr:`solver_armature`: counted once).
        Filter cutoffs (below the Nyquist rate) and the elastic joint's stability need the physics step: see
        :func:`check_physics_step`.
    """

    name: str
    joint_names_expr: tuple[str, ...]
    peak_torque: float
    continuous_torque: float
    velocity_limit: float
    gains: PDGains | BandwidthGains
    gearbox: Gearbox | None = None
    armature: float | None = None
    no_load_speed: float | None = None
    link_inertia: float = 0.0
    coulomb_friction: float = 0.0
    viscous_friction: float = 0.0
    friction_velocity_scale: float = 0.1
    latency_range_s: tuple[float, float] = (0.0, 0.0)
    enforce_velocity_limit: bool = False
    position_filter_hz: float | None = None
    torque_filter_hz: float | None = None
    transmission_stiffness: float | None = None
    transmission_damping: float = 0.0
    backlash: float = 0.0
    motor_inertia: float | None = None

    def __post_init__(self) -> None:
        # validation only, no field rewritten; the checks run in this order, so the first broken rule is reported
        # (the transmission and bandwidth checks read the reflected inertia, so gearbox/armature is checked before)
        who = f"ActuatorSpec '{self.name}'"
        self._check_joint_names(who)
        self._check_signs(who)
        self._check_relations(who)
        self._check_transmission(who)
        self._check_bandwidth_inertia(who)

    def _check_joint_names(self, who: str) -> None:
        # at least one joint regex, and each one compiles (resolve_joint_specs matches them with re.fullmatch)
        require(len(self.joint_names_expr) > 0, who, "joint_names_expr", self.joint_names_expr, "must not be empty")
        for expr in self.joint_names_expr:
            try:
                re.compile(expr)
            except re.error as err:
                raise ValueError(f"{who}: joint_names_expr {expr!r} is not a valid regex ({err})") from err

    def _check_signs(self, who: str) -> None:
        # every number finite; rates, limits and scales > 0 (an optional one only where given), the rest >= 0
        positive = {
            "peak_torque [N·m]": self.peak_torque,
            "continuous_torque [N·m]": self.continuous_torque,
            "velocity_limit [rad/s]": self.velocity_limit,
            "friction_velocity_scale [rad/s]": self.friction_velocity_scale,
        }
        optional_positive = {
            "no_load_speed [rad/s]": self.no_load_speed,
            "position_filter_hz [Hz]": self.position_filter_hz,
            "torque_filter_hz [Hz]": self.torque_filter_hz,
            "transmission_stiffness [N·m/rad]": self.transmission_stiffness,
            "motor_inertia [kg·m²]": self.motor_inertia,
        }
        positive.update({k: v for k, v in optional_positive.items() if v is not None})
        non_negative = {
            "link_inertia [kg·m²]": self.link_inertia,
            "coulomb_friction [N·m]": self.coulomb_friction,
            "viscous_friction [N·m·s/rad]": self.viscous_friction,
            "transmission_damping [N·m·s/rad]": self.transmission_damping,
            "backlash [rad]": self.backlash,
        }
        if self.armature is not None:
            non_negative["armature [kg·m²]"] = self.armature
        for field, value in positive.items():
            require(is_finite(value) and value > 0, who, field, value, "must be > 0")
        for field, value in non_negative.items():
            require(is_finite(value) and value >= 0, who, field, value, "must be >= 0")

    def _check_relations(self, who: str) -> None:
        # the torque ratings ordered, the parts of the right kind, one inertia source, a (min, max) latency range
        require(
            self.continuous_torque <= self.peak_torque,
            who,
            "continuous_torque [N·m]",
            self.continuous_torque,
            f"must not exceed peak_torque ({self.peak_torque} N·m)",
        )
        require(
            isinstance(self.gains, PDGains | BandwidthGains),
            who,
            "gains",
            self.gains,
            "must be PDGains or BandwidthGains",
        )
        require(
            (self.gearbox is None) != (self.armature is None),
            who,
            "gearbox/armature",
            (self.gearbox, self.armature),
            "needs exactly one of the two",
        )
        require(len(self.latency_range_s) == 2, who, "latency_range_s", self.latency_range_s, "must be (min, max)")
        lo, hi = self.latency_range_s
        require(is_finite(lo) and lo >= 0, who, "latency_range_s min [s]", lo, "must be >= 0")
        require(is_finite(hi) and hi >= lo, who, "latency_range_s max [s]", hi, f"must be >= min ({lo} s)")
        require(
            isinstance(self.enforce_velocity_limit, bool),
            who,
            "enforce_velocity_limit",
            self.enforce_velocity_limit,
            "must be a bool",
        )

    def _check_transmission(self, who: str) -> None:
        # damping, backlash and a motor inertia exist only behind a spring; a compliant one needs both inertias > 0
        if self.transmission_stiffness is None:
            for field, value in (
                ("transmission_damping [N·m·s/rad]", self.transmission_damping),
                ("backlash [rad]", self.backlash),
            ):
                require(value == 0, who, field, value, "needs transmission_stiffness (a rigid transmission has none)")
            require(
                self.motor_inertia is None,
                who,
                "motor_inertia [kg·m²]",
                self.motor_inertia,
                "needs transmission_stiffness (a rigid joint's rotor is the armature)",
            )
        else:
            require(
                self.transmission_motor_inertia > 0,
                who,
                "motor inertia [kg·m²]",
                self.transmission_motor_inertia,
                "must be > 0 for a compliant transmission (motor_inertia or the reflected inertia)",
            )
            require(
                self.link_inertia > 0,
                who,
                "link_inertia [kg·m²]",
                self.link_inertia,
                "must be > 0 with transmission_stiffness (it bounds the resonance for the stability check)",
            )
            require(
                self.transmission_motor_inertia <= self.reflected_inertia,
                who,
                "motor_inertia [kg·m²]",
                self.motor_inertia,
                f"must not exceed the reflected inertia ({self.reflected_inertia:.6g} kg·m²) "
                "it is the motor-side part of",
            )

    def _check_bandwidth_inertia(self, who: str) -> None:
        # gains from a bandwidth scale with the inertia they are sized for: a zero inertia would give zero gains
        if isinstance(self.gains, BandwidthGains):
            j = self.reflected_inertia if self.gains.inertia == "reflected" else self.total_inertia
            require(
                j > 0, who, f"{self.gains.inertia} inertia [kg·m²]", j, "must be > 0 to derive gains from a bandwidth"
            )

    @property
    def reflected_inertia(self) -> float:
        """Reflected rotor/gear inertia at the joint (MuJoCo ``armature``), kg·m²."""
        return self.gearbox.reflected_inertia if self.gearbox is not None else float(self.armature)

    @property
    def total_inertia(self) -> float:
        """``reflected_inertia + link_inertia``, kg·m²: the smallest inertia the joint can present."""
        return self.reflected_inertia + self.link_inertia

    @property
    def transmission_motor_inertia(self) -> float:
        """``J_m`` of a compliant transmission: :attr:`motor_inertia`, else :attr:`reflected_inertia`, kg·m²."""
        return self.reflected_inertia if self.motor_inertia is None else self.motor_inertia

    @property
    def solver_armature(self) -> float:
        """Armature the simulator must add to the joint, kg·m²: :attr:`reflected_inertia` where the transmission is
        rigid; ``reflected_inertia − J_m`` (:attr:`transmission_motor_inertia`) where it is compliant, because the
        actuator chain integrates the motor inertia ``J_m`` as its own state behind the spring (counted once)."""
        if self.transmission_stiffness is None:
            return self.reflected_inertia
        return self.reflected_inertia - self.transmission_motor_inertia

    @property
    def pd_gains(self) -> PDGains:
        """Resolved gains (``kp`` N·m/rad, ``kd`` N·m·s/rad)."""
        if isinstance(self.gains, PDGains):
            return self.gains
        j = self.reflected_inertia if self.gains.inertia == "reflected" else self.total_inertia
        return self.gains.resolve(j)

    @property
    def kp(self) -> float:
        """Proportional gain, N·m/rad."""
        return self.pd_gains.kp

    @property
    def kd(self) -> float:
        """Derivative gain, N·m·s/rad."""
        return self.pd_gains.kd

    def friction_slope(self) -> float:
        """``dτ_f/dq̇`` magnitude at rest, ``f_c/v_s + f_v`` (N·m·s/rad): the damping the friction model adds."""
        return self.coulomb_friction / self.friction_velocity_scale + self.viscous_friction

    def explicit_stability_margin(self, dt: float, *, include_friction: bool = True) -> float:
        """Explicit-PD stability margin on :attr:`total_inertia` (stable iff < 1), see
        :func:`realgap.actuators.models.explicit_pd_stability_margin`."""
        kd = self.kd + (self.friction_slope() if include_friction else 0.0)
        return float(explicit_pd_stability_margin(self.kp, kd, self.total_inertia, dt))

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form (JSON/YAML-safe) for run folders and exported policy metadata."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ActuatorSpec:
        """Inverse of :meth:`to_dict` (lists become tuples; unknown keys raise ``TypeError``)."""
        d = dict(data)
        g = dict(d.pop("gains"))
        gains: PDGains | BandwidthGains = PDGains(**g) if "kp" in g else BandwidthGains(**g)
        gb = d.pop("gearbox", None)
        gearbox = None if gb is None else Gearbox(tuple(gb["stage_ratios"]), tuple(gb["stage_inertias"]))
        d["joint_names_expr"] = tuple(d["joint_names_expr"])
        if "latency_range_s" in d:
            d["latency_range_s"] = tuple(d["latency_range_s"])
        return cls(gains=gains, gearbox=gearbox, **d)


def check_explicit_stability(specs: Sequence[ActuatorSpec], dt: float, *, include_friction: bool = True) -> None:
    """Raise ``ValueError`` naming every spec whose explicit PD (+ friction slope) is unstable at step ``dt`` (s)."""
    bad = []
    for s in specs:
        margin = s.explicit_stability_margin(dt, include_friction=include_friction)
        if margin >= 1.0:
            slope = s.friction_slope() if include_friction else 0.0
            bad.append(
                f"'{s.name}' (kp={s.kp:.4g}, kd={s.kd:.4g}, friction slope={slope:.4g}, J={s.total_inertia:.4g} kg·m²)"
                f": margin {margin:.3f} >= 1"
            )
    if bad:
        raise ValueError(
            f"explicit PD at dt={dt} s blows up for: "
            + "; ".join(bad)
            + ". Need (kp·dt² + 2·(kd + f_c/v_s + f_v)·dt) / (4·J) < 1: lower kd, raise friction_velocity_scale, "
            "use a smaller dt or implicit PD."
        )


def check_physics_step(specs: Sequence[ActuatorSpec], dt: float) -> None:
    """Refuse stages the physics step ``dt`` (s) cannot represent, naming the spec, the field, the value and the limit.

    - ``position_filter_hz``, ``torque_filter_hz``: below the Nyquist rate ``1/(2·dt)``.
    - ``transmission_stiffness``: the engaged two-mass joint as integrated (motor implicit in the spring, link
      explicit) must be stable, ``(k·dt² + 2·c·dt)·(1/J_l − 1/J_m)/4 < 1`` with ``J_l`` =
      :attr:`ActuatorSpec.link_inertia` (the lower bound: a lighter link binds) — always true when ``J_l >= J_m`` —
      and the PD, which closes on the motor there, must be stable on the motor inertia alone,
      ``(kp·dt² + 2·kd·dt)/(4·J_m) < 1``.
    """
    for s in specs:
        who = f"ActuatorSpec '{s.name}'"
        for field in ("position_filter_hz", "torque_filter_hz"):
            if getattr(s, field) is not None:
                check_cutoff(getattr(s, field), dt, who, field)
        if s.transmission_stiffness is not None:
            k, c = s.transmission_stiffness, s.transmission_damping
            jm, jl = s.transmission_motor_inertia, s.link_inertia
            margin = float(elastic_stability_margin(k, c, jm, jl, dt))
            if margin >= 1.0:
                gap = 1.0 / jl - 1.0 / jm
                k_max = (4.0 / gap - 2.0 * c * dt) / dt**2
                need = f"k < {k_max:.4g} N·m/rad" if k_max > 0 else f"transmission_damping < {2 / (gap * dt):.4g}"
                raise ValueError(
                    f"{who}: transmission_stiffness [N·m/rad] {k!r} makes the elastic joint unstable at dt = {dt} s: "
                    f"(k·dt² + 2·c·dt)·(1/J_l − 1/J_m)/4 = {margin:.3f} >= 1 with c = {c}, J_l = {jl:.4g}, "
                    f"J_m = {jm:.4g} kg·m²; need {need} (or a smaller dt, a heavier link)"
                )
            pd_margin = float(explicit_pd_stability_margin(s.kp, s.kd, jm, dt))
            if pd_margin >= 1.0:
                raise ValueError(
                    f"{who}: the PD (kp {s.kp}, kd {s.kd}) closes on the motor of the compliant transmission, whose "
                    f"inertia J_m = {jm:.4g} kg·m² it cannot hold at dt = {dt} s: (kp·dt² + 2·kd·dt)/(4·J_m) = "
                    f"{pd_margin:.3f} >= 1; need kd < {(4 * jm - s.kp * dt**2) / (2 * dt):.4g} N·m·s/rad (or a "
                    "heavier motor_inertia, a smaller dt)"
                )


def resolve_joint_specs(joint_names: Sequence[str], actuators: Mapping[str, ActuatorSpec]) -> list[ActuatorSpec]:
    """The spec of each joint, matched by ``re.fullmatch`` against every spec's ``joint_names_expr``.

    Raises:
        ValueError: A joint matches no spec or more than one (names the joint and the specs).
    """
    out = []
    for joint in joint_names:
        hits = [key for key, s in actuators.items() if any(re.fullmatch(e, joint) for e in s.joint_names_expr)]
        if len(hits) != 1:
            raise ValueError(f"joint '{joint}' matches {len(hits)} actuator specs {hits}; expected exactly one")
        out.append(actuators[hits[0]])
    return out
