"""The balance episode protocol: how a balance policy is pushed and when it has fallen (stdlib only).

A balance policy is trained, and every tool judges it, under one protocol: pushes of random heading and magnitude
``U(push_mps)`` every ``U(push_interval_s)``, a fall when the root drops below ``fall_height_m`` or tilts beyond
``fall_tilt_rad``, episodes of ``episode_s``. :class:`BalanceProtocol` is the format's part and has no defaults (the
numbers are a robot's). :data:`BALANCE_PROTOCOL`, the G1 balance task's, is the one place that task's numbers are
written: its push term and fall terminations, the MuJoCo episode loop, the DDS simulator, the G1 driver and every
script read them from here, and the exporter writes the task's protocol into the export (``protocol``), where the
verifying loader reads it back (:meth:`BalanceProtocol.from_dict`). An export written before the protocol was
recorded runs under the protocol :data:`PROTOCOL_BEFORE_THE_FIELD` knows for its task and robot description (the
shipped G1 balance exports); any other export without one is refused.

Units: m/s, s, m, rad. Ranges are ``[low, high]`` of a uniform draw.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

PUSH_RULE = (
    "every U(interval_s) s of simulated time (the first after U(interval_s) s), a horizontal velocity change of the "
    "root: magnitude U(magnitude_mps) m/s, heading U(0, 2 pi) in the world's xy plane; [0, 0]: no pushes"
)
FALL_RULE = (
    "the robot has fallen (the episode ends, a failure) when the root body's height is below root_height_below_m or "
    "its z axis is tilted from the world's vertical by more than tilt_above_rad"
)
EPISODE_RULE = "an episode ends at length_s (a success: a time-out) or at the first fall"


class ProtocolError(ValueError):
    """A balance protocol that is malformed or out of range (names the field)."""


def parse_range(value: Any, what: str) -> tuple[float, float]:
    """``value`` as a finite ``(low, high)`` with ``0 <= low <= high``: a pair of numbers, or the text ``"LO,HI"``
    (the command-line form of every protocol range).

    Raises:
        ProtocolError: Not two finite numbers, a negative one, or ``low > high``; names ``what`` and the value.
    """
    parts = value.split(",") if isinstance(value, str) else value
    try:
        if not isinstance(parts, Sequence) or len(parts) != 2:
            raise TypeError
        lo, hi = (float(v) for v in parts)
    except (TypeError, ValueError):
        raise ProtocolError(f"{what} takes two numbers LO,HI, got {value!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ProtocolError(f"{what} needs two finite numbers LO,HI, got {lo:g},{hi:g}")
    if not 0 <= lo <= hi:
        raise ProtocolError(f"{what} needs 0 <= LO <= HI, got {lo:g},{hi:g}")
    return lo, hi


def _number(value: Any, what: str, zero: bool = False, upper: float = math.inf) -> float:
    """``value`` as a finite number > 0 (``zero``: >= 0) and <= ``upper``."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ProtocolError(f"{what} must be a number, got {value!r}") from None
    if not (math.isfinite(v) and (v > 0 or (zero and v == 0)) and v <= upper):
        bound = f" and <= {upper:g}" if math.isfinite(upper) else ""
        raise ProtocolError(f"{what} must be a finite number {'>=' if zero else '>'} 0{bound}, got {value!r}")
    return v


@dataclass(frozen=True)
class BalanceProtocol:
    """Pushes, fall rule and episode length of the balance task (module docstring for the rules).

    Attributes:
        push_mps: Range of a push's horizontal velocity change of the root, m/s (``(0, 0)``: no pushes).
        push_interval_s: Range of the time between pushes, s (low > 0).
        fall_height_m: The robot has fallen when its root is below this height, m (0: no height test).
        fall_tilt_rad: The robot has fallen when its root's z axis tilts beyond this angle from vertical, rad, in
            ``(0, pi]``.
        episode_s: Episode length, s.
    """

    push_mps: tuple[float, float]
    push_interval_s: tuple[float, float]
    fall_height_m: float
    fall_tilt_rad: float
    episode_s: float

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "push_mps", parse_range(self.push_mps, "protocol.push_mps"))
        set_(self, "push_interval_s", parse_range(self.push_interval_s, "protocol.push_interval_s"))
        if self.push_interval_s[0] <= 0:
            raise ProtocolError(f"protocol.push_interval_s needs LO > 0 s, got {self.push_interval_s[0]:g}")
        set_(self, "fall_height_m", _number(self.fall_height_m, "protocol.fall_height_m", zero=True))
        set_(self, "fall_tilt_rad", _number(self.fall_tilt_rad, "protocol.fall_tilt_rad", upper=math.pi))
        set_(self, "episode_s", _number(self.episode_s, "protocol.episode_s"))

    @property
    def pushes(self) -> bool:
        """True when the protocol pushes at all (``push_mps`` above zero)."""
        return self.push_mps[1] > 0

    def fell(self, root_height_m: float, tilt_rad: float) -> bool:
        """The fall rule (:data:`FALL_RULE`): root below ``fall_height_m`` or tilted beyond ``fall_tilt_rad``."""
        return root_height_m < self.fall_height_m or tilt_rad > self.fall_tilt_rad

    def with_changes(self, **changes: Any) -> BalanceProtocol:
        """A copy with ``changes`` (fields by name; ``None`` keeps this protocol's value), validated again."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def to_dict(self) -> dict[str, Any]:
        """JSON form, the export's ``protocol`` (read back by :meth:`from_dict`)."""
        return {
            "push": {"magnitude_mps": list(self.push_mps), "interval_s": list(self.push_interval_s), "rule": PUSH_RULE},
            "fall": {
                "root_height_below_m": self.fall_height_m,
                "tilt_above_rad": self.fall_tilt_rad,
                "rule": FALL_RULE,
            },
            "episode": {"length_s": self.episode_s, "rule": EPISODE_RULE},
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BalanceProtocol:
        """Parse :meth:`to_dict` output (the rule texts are for readers and not read back).

        Raises:
            ProtocolError: A missing or malformed field (named).
        """
        try:
            push, fall = d["push"], d["fall"]
            return cls(
                push_mps=push["magnitude_mps"],
                push_interval_s=push["interval_s"],
                fall_height_m=fall["root_height_below_m"],
                fall_tilt_rad=fall["tilt_above_rad"],
                episode_s=d["episode"]["length_s"],
            )
        except (KeyError, TypeError) as err:
            raise ProtocolError(f"protocol: missing or malformed field {err}") from err


BALANCE_PROTOCOL = BalanceProtocol(
    push_mps=(0.2, 0.4), push_interval_s=(3.0, 5.0), fall_height_m=0.45, fall_tilt_rad=1.0, episode_s=10.0
)
"""The G1 balance task's protocol (``Realgap-Balance-G1-v0``); its reasons are facts of the 33 kg G1:

- ``push_mps`` 0.2-0.4 m/s (7-13 N·s): what standing balance absorbs without a step. With the pelvis at h = 0.76 m a
  push of v moves the capture point v / sqrt(g / h) = v / 3.6 s⁻¹; the sole reaches 0.12 m ahead of the ankle and
  0.05 m behind it, so the ankles alone take ~0.4 m/s forward, ~0.2 m/s backward (hip motion beyond that; larger
  pushes need a step: docs/results/balance.md).
- ``push_interval_s`` 3-5 s: a standing robot settles from a push within ~1-2 s, so each push meets a robot at rest,
  and a 10 s episode holds two or three of them.
- ``fall_height_m`` 0.45 m: the stance stands at 0.757 m and a deep squat stays above 0.55 m, so only a collapse
  crosses it.
- ``fall_tilt_rad`` 1 rad (57°): no recoverable stance leans that far; over DDS, where the root height is not
  measured, this is the fall test.
- ``episode_s`` 10 s: long enough for two or three pushes and their recoveries, short enough for many episodes per
  PPO update on a CPU.
"""

PROTOCOL_BEFORE_THE_FIELD: dict[tuple[str, str], BalanceProtocol] = {
    ("Realgap-Balance-G1-v0", "e0807780dc2819afa2bb1434f6e9c29cb74c764af3d53ac2052de6625580cb9b"): BALANCE_PROTOCOL,
}
"""The protocol of exports written before ``protocol`` was recorded, by (task, ``robot.description.sha256``): the
shipped ``configs/policies/balance_g1``, ``balance_g1_70min`` and ``balance_g1_symmetry`` (Menagerie's ``unitree_g1``
MJCF, trained under :data:`BALANCE_PROTOCOL`; their digests are kept, so the field is not written into them). Every
newer balance export carries its own; one without it and not listed here is refused
(:attr:`~realgap.envs.format.metadata.PolicyMetadata.balance_protocol`), not given another robot's numbers."""
