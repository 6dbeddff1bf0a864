"""The three time scales of a task: physics step, servo (control) update, policy action.

A fair comparison reports all three and whether targets are held or interpolated between policy steps, so a
:class:`RateSpec` is validated here, written into every run folder (``to_dict``) and into exported policy metadata.
Pure Python (PyYAML is imported only by :func:`load_rate_profile`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Literal

_RATIO_TOL = 1e-6  # relative tolerance on a rate ratio being a whole number (absorbs float rounding only)

RATES_DIR = Path(__file__).resolve().parent.parent / "configs" / "rates"
"""Named rate profiles, ``configs/rates/<name>.yaml`` (the same relative place in the repo and in the wheel)."""


def _whole_ratio(fast_name: str, fast_hz: float, slow_name: str, slow_hz: float) -> int:
    ratio = fast_hz / slow_hz
    n = round(ratio)
    if n < 1 or abs(ratio - n) > _RATIO_TOL * ratio:
        raise ValueError(
            f"RateSpec: {fast_name} ({fast_hz:g} Hz) / {slow_name} ({slow_hz:g} Hz) = {ratio:.6g} is not a whole "
            f"number; the slower loop must run every N steps of the faster one"
        )
    return int(n)


@dataclass(frozen=True)
class RateSpec:
    """Physics, servo and policy rates, and how policy targets are spread across physics steps.

    Attributes:
        physics_hz: Physics integration rate, Hz (``sim_dt = 1/physics_hz``).
        control_hz: Servo (PD) update rate, Hz, <= ``physics_hz`` and dividing it; the torque is held between
            updates.
        policy_hz: Policy action rate, Hz, <= ``control_hz`` and dividing it.
        target_mode: ``"hold"`` (zero-order hold of the policy target) or ``"interpolate"`` (linear from the
            previous to the new target across the policy period, reaching it on the last physics step).
    """

    physics_hz: float
    control_hz: float
    policy_hz: float
    target_mode: Literal["hold", "interpolate"] = "hold"

    def __post_init__(self) -> None:
        for f in ("physics_hz", "control_hz", "policy_hz"):
            v = getattr(self, f)
            if not (isinstance(v, int | float) and math.isfinite(v) and v > 0):
                raise ValueError(f"RateSpec: {f} must be a finite rate > 0 Hz, got {v!r}")
        if self.control_hz > self.physics_hz * (1 + _RATIO_TOL):
            raise ValueError(
                f"RateSpec: control_hz ({self.control_hz:g} Hz) exceeds physics_hz ({self.physics_hz:g} Hz); the "
                "servo cannot update faster than the physics steps"
            )
        if self.policy_hz > self.control_hz * (1 + _RATIO_TOL):
            raise ValueError(
                f"RateSpec: policy_hz ({self.policy_hz:g} Hz) exceeds control_hz ({self.control_hz:g} Hz); the "
                "policy cannot act faster than the servo"
            )
        _whole_ratio("physics_hz", self.physics_hz, "control_hz", self.control_hz)
        _whole_ratio("control_hz", self.control_hz, "policy_hz", self.policy_hz)
        if self.target_mode not in ("hold", "interpolate"):
            raise ValueError(f"RateSpec: target_mode must be 'hold' or 'interpolate', got {self.target_mode!r}")

    @property
    def sim_dt(self) -> float:
        """Physics step, s."""
        return 1.0 / self.physics_hz

    @property
    def control_dt(self) -> float:
        """Servo period, s."""
        return 1.0 / self.control_hz

    @property
    def policy_dt(self) -> float:
        """Policy period, s (Isaac Lab's ``step_dt = sim_dt · decimation``)."""
        return 1.0 / self.policy_hz

    @property
    def servo_period_steps(self) -> int:
        """Physics steps per servo update, ``physics_hz / control_hz``."""
        return _whole_ratio("physics_hz", self.physics_hz, "control_hz", self.control_hz)

    @property
    def decimation(self) -> int:
        """Physics steps per policy step, ``physics_hz / policy_hz`` (Isaac Lab's ``decimation``)."""
        return self.servo_period_steps * _whole_ratio("control_hz", self.control_hz, "policy_hz", self.policy_hz)

    def to_dict(self) -> dict[str, Any]:
        """The four fields plus the derived steps, for run folders and exported metadata (read back by
        :meth:`from_dict`)."""
        return {
            **asdict(self),
            "sim_dt": self.sim_dt,
            "decimation": self.decimation,
            "servo_period_steps": self.servo_period_steps,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RateSpec:
        """Build from :meth:`to_dict` output or a YAML profile.

        Derived keys (``sim_dt``, ``decimation``, ``servo_period_steps``) are checked against the rates, so a
        hand-edited file cannot disagree with itself. Unknown keys raise ``ValueError``.
        """
        names = {f.name for f in fields(cls)}
        derived = {"sim_dt", "decimation", "servo_period_steps"}
        unknown = set(data) - names - derived
        if unknown:
            raise ValueError(f"RateSpec: unknown keys {sorted(unknown)}; expected {sorted(names)}")
        missing = {"physics_hz", "control_hz", "policy_hz"} - set(data)
        if missing:
            raise ValueError(f"RateSpec: missing keys {sorted(missing)}")
        spec = cls(**{k: data[k] for k in names if k in data})
        for key in derived & set(data):
            want = getattr(spec, key)
            got = data[key]
            if not math.isclose(float(got), float(want), rel_tol=1e-9):
                raise ValueError(f"RateSpec: {key}={got!r} disagrees with the rates, which give {want!r}")
        return spec


def load_rate_profile(name_or_path: str | Path) -> RateSpec:
    """Load and validate a rate profile: a name in ``configs/rates/`` (``"default"``) or a path to a YAML file."""
    import yaml

    path = Path(name_or_path)
    if path.suffix not in (".yaml", ".yml"):
        path = RATES_DIR / f"{name_or_path}.yaml"
    if not path.is_file():
        available = sorted(p.stem for p in RATES_DIR.glob("*.yaml"))
        raise FileNotFoundError(f"no rate profile {str(name_or_path)!r} (looked for {path}); available: {available}")
    try:
        with path.open() as fh:
            data = yaml.safe_load(fh)
    except yaml.YAMLError as err:
        raise ValueError(f"rate profile {path} is not valid YAML: {err}".replace("\n", " ")) from None
    if not isinstance(data, Mapping):
        raise ValueError(f"rate profile {path} must be a mapping of physics_hz/control_hz/policy_hz/target_mode")
    try:
        return RateSpec.from_dict(data)
    except ValueError as err:
        raise ValueError(f"rate profile {path}: {err}") from err
