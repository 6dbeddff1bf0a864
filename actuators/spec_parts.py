"""The parts of an :class:`~realgap.actuators.spec.ActuatorSpec`: its gearbox and its PD gains, and the check helper.

Every number is at the *joint* (output) side, as in :mod:`realgap.actuators.spec`; each part validates itself and
never rewrites a field (derived values are properties).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal


def require(ok: bool, owner: str, field: str, value: object, rule: str) -> None:
    """Raise ``ValueError("<owner>: <field> <rule>, got <value>")`` unless ``ok``: one message names the input.

    Args:
        ok: The rule holds.
        owner: What is being checked, e.g. ``"ActuatorSpec 'g1_7520_22'"``.
        field: The field, with its unit where it has one.
        value: The value given.
        rule: What the value must be, e.g. ``"must be > 0"``.

    Raises:
        ValueError: ``ok`` is false.
    """
    if not ok:
        raise ValueError(f"{owner}: {field} {rule}, got {value!r}")


def is_finite(x: object) -> bool:
    """``x`` is a finite int or float (a bool passes as an int; a string or ``None`` is not finite)."""
    return isinstance(x, int | float) and math.isfinite(x)


@dataclass(frozen=True)
class Gearbox:
    """A rotor followed by ``k`` reduction stages, for the reflected inertia (MuJoCo ``armature``) at the joint.

    Convention: shaft 0 carries the rotor; stage ``i`` (1-based) reduces speed by ``N_i`` from shaft ``i-1`` to shaft
    ``i``; shaft ``k`` is the joint. ``stage_inertias[i]`` is the inertia spinning with shaft ``i`` (``I_0`` the
    rotor, then e.g. the planet carrier of each stage). Kinetic energy gives

        J_reflected = sum_i I_i · (prod_{m > i} N_m)²,        total ratio N = prod_m N_m,

    so a single stage with rotor inertia I_m gives N²·I_m. (mjlab writes the same sum with a leading ratio of 1 for
    the rotor shaft.)

    Attributes:
        stage_ratios: ``(N_1, ..., N_k)``, each > 0 (input turns per output turn).
        stage_inertias: ``(I_0, ..., I_k)``, kg·m², each >= 0; one more entry than ``stage_ratios``.
    """

    stage_ratios: tuple[float, ...]
    stage_inertias: tuple[float, ...]

    def __post_init__(self) -> None:
        require(len(self.stage_ratios) >= 1, "Gearbox", "stage_ratios", self.stage_ratios, "needs at least one stage")
        require(
            len(self.stage_inertias) == len(self.stage_ratios) + 1,
            "Gearbox",
            "stage_inertias",
            self.stage_inertias,
            f"needs len(stage_ratios) + 1 = {len(self.stage_ratios) + 1} entries (rotor first)",
        )
        for i, n in enumerate(self.stage_ratios):
            require(is_finite(n) and n > 0, "Gearbox", f"stage_ratios[{i}]", n, "must be a finite ratio > 0")
        for i, inertia in enumerate(self.stage_inertias):
            require(is_finite(inertia) and inertia >= 0, "Gearbox", f"stage_inertias[{i}]", inertia, "must be >= 0")

    @classmethod
    def single(cls, ratio: float, rotor_inertia: float) -> Gearbox:
        """One stage of ratio ``N`` after a rotor of inertia ``I_m`` (kg·m²): reflected inertia ``N²·I_m``."""
        return cls(stage_ratios=(ratio,), stage_inertias=(rotor_inertia, 0.0))

    @property
    def ratio(self) -> float:
        """Total reduction ``N = prod_i N_i`` (rotor turns per joint turn)."""
        return math.prod(self.stage_ratios)

    @property
    def reflected_inertia(self) -> float:
        """``sum_i I_i · (prod_{m>i} N_m)²``, kg·m² at the joint."""
        total = 0.0
        for i, inertia in enumerate(self.stage_inertias):
            total += inertia * math.prod(self.stage_ratios[i:]) ** 2
        return total


@dataclass(frozen=True)
class PDGains:
    """PD gains given directly: ``kp`` in N·m/rad (N/m), ``kd`` in N·m·s/rad (N·s/m)."""

    kp: float
    kd: float

    def __post_init__(self) -> None:
        require(is_finite(self.kp) and self.kp >= 0, "PDGains", "kp", self.kp, "must be >= 0")
        require(is_finite(self.kd) and self.kd >= 0, "PDGains", "kd", self.kd, "must be >= 0")


@dataclass(frozen=True)
class BandwidthGains:
    """PD gains from a closed-loop natural frequency and damping ratio on an inertia ``J``.

    With ``ω = 2π·natural_freq_hz``: ``kp = J·ω²`` and ``kd = 2·ζ·J·ω``, i.e. the joint modelled as ``J·q̈ = τ``
    has poles at ``ω`` with damping ratio ``ζ``. ``inertia="reflected"`` uses the gearbox's reflected inertia only
    (mjlab's rule; with it the explicit stability margin is ``(ω·dt)²/4 + ζ·ω·dt``, independent of ``J``);
    ``"total"`` adds :attr:`ActuatorSpec.link_inertia`.

    Attributes:
        natural_freq_hz: Natural frequency, Hz, > 0.
        damping_ratio: Damping ratio ζ, > 0.
        inertia: Which inertia ``J`` the gains are sized for.
    """

    natural_freq_hz: float
    damping_ratio: float
    inertia: Literal["reflected", "total"] = "reflected"

    def __post_init__(self) -> None:
        f, z = self.natural_freq_hz, self.damping_ratio
        require(is_finite(f) and f > 0, "BandwidthGains", "natural_freq_hz", f, "must be > 0")
        require(is_finite(z) and z > 0, "BandwidthGains", "damping_ratio", z, "must be > 0")
        require(
            self.inertia in ("reflected", "total"),
            "BandwidthGains",
            "inertia",
            self.inertia,
            "must be 'reflected' or 'total'",
        )

    def resolve(self, inertia: float) -> PDGains:
        """``PDGains(kp=J·ω², kd=2·ζ·J·ω)`` for ``J = inertia`` (kg·m²)."""
        omega = 2.0 * math.pi * self.natural_freq_hz
        return PDGains(kp=inertia * omega**2, kd=2.0 * self.damping_ratio * inertia * omega)
