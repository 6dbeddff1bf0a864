"""Robot logs (format ``realgap.robot_log/1``): what a robot did, one sample per control period, in one ``.npz``.

The deploy runtime records a log when given a :class:`LogRecorder` (``realgap deploy ... --log FILE``);
the excitation routine (:mod:`realgap.envs.identify.excitation`) writes the same format. Identification
(:mod:`realgap.envs.identify.fit`) reads it back with :func:`load_log`, which refuses a log it cannot trust.

Arrays (``T`` control periods, ``J`` joints in ``joint_names`` order, ``A`` policy actions), sample ``k`` taken at the
start of control period ``k``, before its command is sent and the robot is stepped:

============================ ========= ===========================================================================
key                          shape     meaning (units)
============================ ========= ===========================================================================
``t``                        (T,)      time since the first sample, s (``k · control_dt``)
``q_target``                 (T, J)    joint target commanded for period ``k`` after hold/interpolation, before any
                                       bus/drive delay, rad (m)
``q``, ``qd``                (T, J)    measured joint position rad (m), velocity rad/s (m/s)
``tau``                      (T, J)    joint torque N·m (N) of period ``k``; optional (see ``tau_source``)
``imu_ang_vel_b``            (T, 3)    gyro of the IMU body in its own frame, rad/s
``imu_projected_gravity_b``  (T, 3)    unit gravity direction in the IMU body frame
``action``                   (T, A)    the policy's raw-clipped action in force during period ``k``
``segment``                  (T,)      excitation: index of the joint being excited, −1 when none (policy logs: −1)
``kp``, ``kd``               (J,)      gains the runtime commanded (position robots) or ran in its chain (torque)
``root_pos_w``               (3,)      where a fixed base was welded, m (NaN: floating base)
============================ ========= ===========================================================================

Scalars / strings: ``format``, ``control_dt`` (s), ``physics_dt`` (s, of the training metadata), ``command_mode``
(``torque`` / ``position``), ``tau_source`` (``commanded``: the runtime's chain computed and sent it; ``measured``: the
robot reported it, e.g. from motor current; ``none``: no ``tau`` array), ``fixed_base`` (bool), ``source``
(``policy`` / ``excitation``), ``joint_names``, ``metadata_sha256`` (:func:`metadata_sha256` of the export that ran)
and ``metadata_json`` (that export's metadata, so a log is self-contained). numpy only.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from realgap.envs.deploy.mcap_codec import read_mcap_arrays, write_mcap
from realgap.envs.format.metadata import PolicyMetadata

LOG_FORMAT = "realgap.robot_log/1"
REQUIRED = ("t", "q_target", "q", "qd", "imu_ang_vel_b", "imu_projected_gravity_b", "action", "segment", "kp", "kd")
"""Arrays every log must hold (``tau`` is optional: ``tau_source`` says whether and where from)."""
MIN_SAMPLES = 10
TAU_SOURCES = ("commanded", "measured", "none")


class LogError(ValueError):
    """A robot log that cannot be used; the message names the file and what is wrong."""


def metadata_sha256(meta: PolicyMetadata) -> str:
    """SHA-256 of the export's metadata as canonical JSON (sorted keys, no spaces): identifies the export a log ran."""
    text = json.dumps(meta.to_dict(), sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class RobotLog:
    """One robot log in memory (see the module docstring for every field's shape and units)."""

    t: np.ndarray
    q_target: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    imu_ang_vel_b: np.ndarray
    imu_projected_gravity_b: np.ndarray
    action: np.ndarray
    segment: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    joint_names: tuple[str, ...]
    control_dt: float
    physics_dt: float
    command_mode: str
    tau_source: str
    metadata_sha256: str
    metadata_json: str
    source: str = "policy"
    fixed_base: bool = False
    root_pos_w: np.ndarray = field(default_factory=lambda: np.full(3, np.nan))
    tau: np.ndarray | None = None

    @property
    def num_samples(self) -> int:
        """``T``."""
        return int(self.t.shape[0])

    def metadata(self) -> PolicyMetadata:
        """The export's metadata carried in the log."""
        return PolicyMetadata.from_dict(json.loads(self.metadata_json), source="log metadata_json")

    def save(self, path: str | Path) -> Path:
        """Write ``path``: MCAP where it ends in ``.mcap`` (:mod:`realgap.envs.deploy.mcap_codec`), else a compressed
        ``.npz``; returns the path."""
        path = Path(path)
        arrays: dict[str, Any] = {"format": np.array(LOG_FORMAT)}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            arrays[f.name] = np.array(list(value)) if f.name == "joint_names" else np.asarray(value)
        if path.suffix == ".mcap":
            return write_mcap(arrays, path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as fh:
            np.savez_compressed(fh, **arrays)
        return path


def _problems(log: RobotLog) -> list[str]:
    """Shape and value problems of a log (empty: usable)."""
    out = []
    t, j = log.num_samples, len(log.joint_names)
    shapes = {
        "q_target": (t, j),
        "q": (t, j),
        "qd": (t, j),
        "imu_ang_vel_b": (t, 3),
        "imu_projected_gravity_b": (t, 3),
        "segment": (t,),
        "kp": (j,),
        "kd": (j,),
        "root_pos_w": (3,),
    }
    if log.tau is not None:
        shapes["tau"] = (t, j)
    for key, want in shapes.items():
        got = tuple(np.shape(getattr(log, key)))
        if got != want:
            out.append(f"'{key}' has shape {got}, expected {want} ({t} samples, {j} joints)")
    if np.ndim(log.action) != 2 or np.shape(log.action)[0] != t:
        out.append(f"'action' has shape {np.shape(log.action)}, expected ({t}, A)")
    if t < MIN_SAMPLES:
        out.append(f"only {t} samples; a log needs at least {MIN_SAMPLES}")
    if not log.control_dt > 0:
        out.append(f"control_dt must be > 0 s, got {log.control_dt}")
    if log.tau_source not in TAU_SOURCES or (log.tau is None) != (log.tau_source == "none"):
        state = "absent" if log.tau is None else "present"
        out.append(f"tau_source '{log.tau_source}' does not match the log (tau {state})")
    if out:
        return out
    for key in ("t", "q_target", "q", "qd", "imu_ang_vel_b", "imu_projected_gravity_b", "action", "kp", "kd", "tau"):
        a = getattr(log, key)
        if a is None:
            continue
        bad = ~np.isfinite(np.asarray(a, dtype=float))
        if bad.any():
            rows = np.unique(np.nonzero(bad)[0])
            cols = "" if a.ndim == 1 else f" (columns {sorted(set(np.nonzero(bad)[1].tolist()))[:6]})"
            out.append(f"'{key}' has {int(bad.sum())} non-finite values at samples {rows[:6].tolist()}{cols}")
    steps = np.diff(log.t)
    if steps.size and np.abs(steps - log.control_dt).max() > 1e-6 * max(log.control_dt, 1e-9) + 1e-9:
        k = int(np.argmax(np.abs(steps - log.control_dt)))
        out.append(
            f"'t' is not sampled every control_dt {log.control_dt:g} s (step {steps[k]:g} s after sample {k}): "
            "samples were dropped or the clock jumped"
        )
    return out


def load_log(
    path: str | Path, *, joint_names: tuple[str, ...] | list[str] | None = None, metadata_hash: str | None = None
) -> RobotLog:
    """Read and validate a robot log.

    Args:
        path: The ``.npz`` file, or an ``.mcap`` file (:mod:`realgap.envs.deploy.mcap_codec`; same content).
        joint_names: The robot's joints in order; the log must list the same (``None``: not checked).
        metadata_hash: :func:`metadata_sha256` of the export the log must come from (``None``: not checked).

    Raises:
        FileNotFoundError: No file at ``path``.
        LogError: Not a ``realgap.robot_log/1`` file, an empty file, missing channels (named), wrong shapes, non-finite
            samples (the channel and sample indices named), irregular time, another robot's joints or another export's
            metadata.
    """
    path = Path(path)
    log = _log_from_arrays(path, _read_arrays(path))
    problems = _problems(log)
    if joint_names is not None and tuple(joint_names) != log.joint_names:
        want, got = tuple(joint_names), log.joint_names
        if set(want) == set(got):
            problems.append(f"joint order differs from the robot's (log {list(got[:4])}…, robot {list(want[:4])}…)")
        else:
            problems.append(
                f"joints of another robot: missing in the log {sorted(set(want) - set(got))[:6]}, "
                f"unknown to the robot {sorted(set(got) - set(want))[:6]}"
            )
    if metadata_hash is not None and metadata_hash != log.metadata_sha256:
        problems.append(
            f"metadata sha256 {log.metadata_sha256[:12]}… is not the expected export's "
            f"{metadata_hash[:12]}… (the log ran another policy export)"
        )
    if not problems and metadata_sha256(log.metadata()) != log.metadata_sha256:
        problems.append("metadata_json does not hash to metadata_sha256 (the log was edited or corrupted)")
    if problems:
        raise LogError(f"{path}: unusable robot log:\n  - " + "\n  - ".join(problems))
    return log


def _read_arrays(path: Path) -> dict[str, Any]:
    """The arrays of the log file at ``path``, ``.mcap`` or ``.npz`` (never unpickling), before any content check.

    Raises:
        FileNotFoundError: No file at ``path``.
        LogError: An empty file, or one that is not a readable ``.npz`` / ``.mcap`` log.
    """
    if not path.is_file():
        raise FileNotFoundError(f"no robot log at {path}")
    if path.stat().st_size == 0:
        raise LogError(f"{path}: empty file (0 bytes): the recording was interrupted before anything was written")
    if path.suffix == ".mcap":
        try:
            data = read_mcap_arrays(path)
        except ValueError as err:
            raise LogError(f"{path}: {err}") from None
    else:
        with path.open("rb") as fh:
            head = fh.read(6)
        if not head.startswith(b"PK\x03\x04"):  # every .npz is a zip archive of .npy arrays
            raise LogError(
                f"{path}: not an .npz file (a zip archive of arrays, which starts with PK\\x03\\x04): it "
                f"starts with {head!r}; a robot log is .npz or .mcap"
            )
        try:
            data = dict(np.load(path, allow_pickle=False))
        except (OSError, ValueError) as err:
            why = "it holds pickled Python objects, which are never loaded" if "pickle" in str(err) else str(err)
            raise LogError(f"{path}: not a readable .npz file ({why})") from None
    return data


def _log_from_arrays(path: Path, data: dict[str, Any]) -> RobotLog:
    """The :class:`RobotLog` the arrays read from ``path`` hold, typed (its content is checked by the caller).

    Raises:
        LogError: Another format, or missing channels (named; ``tau`` when ``tau_source`` says it was recorded).
    """
    fmt = str(data.get("format", "<none>"))
    if fmt != LOG_FORMAT:
        raise LogError(f"{path}: format '{fmt}', expected '{LOG_FORMAT}'")
    scalars = (
        "joint_names",
        "control_dt",
        "physics_dt",
        "command_mode",
        "tau_source",
        "metadata_sha256",
        "metadata_json",
    )
    missing = [k for k in (*REQUIRED, *scalars) if k not in data]
    tau_source = str(data.get("tau_source", "none"))
    if tau_source != "none" and "tau" not in data:
        missing.append(f"tau (tau_source is '{tau_source}')")
    if missing:
        raise LogError(f"{path}: missing channels {missing}")
    kwargs: dict[str, Any] = {k: np.asarray(data[k], dtype=float) for k in REQUIRED}
    kwargs["segment"] = np.asarray(data["segment"]).astype(np.int64)
    kwargs |= {k: str(data[k]) for k in ("command_mode", "tau_source", "metadata_sha256", "metadata_json")}
    kwargs |= {
        "control_dt": float(data["control_dt"]),
        "physics_dt": float(data["physics_dt"]),
        "joint_names": tuple(str(n) for n in np.atleast_1d(data["joint_names"])),
        "source": str(data.get("source", "policy")),
        "fixed_base": bool(data.get("fixed_base", False)),
        "root_pos_w": np.asarray(data.get("root_pos_w", np.full(3, np.nan)), dtype=float),
        "tau": None if "tau" not in data or tau_source == "none" else np.asarray(data["tau"], dtype=float),
    }
    return RobotLog(**kwargs)


class LogRecorder:
    """Collects one sample per control period (the deploy runtime calls :meth:`record`) and builds a :class:`RobotLog`.

    Args:
        meta: The export being run.
        control_dt: The robot's control period, s.
        command_mode: ``"torque"`` or ``"position"``.
        tau_source: ``"commanded"``, ``"measured"`` or ``"none"`` (see the module docstring).
        source: ``"policy"`` or ``"excitation"``.
        fixed_base: Whether the robot's base is welded to the world. root_pos_w: Where, m.
    """

    def __init__(
        self,
        meta: PolicyMetadata,
        control_dt: float,
        command_mode: str,
        tau_source: str,
        *,
        source: str = "policy",
        fixed_base: bool = False,
        root_pos_w: Any = None,
    ) -> None:
        if tau_source not in TAU_SOURCES:
            raise ValueError(f"tau_source must be one of {TAU_SOURCES}, got {tau_source!r}")
        self.meta, self.control_dt, self.command_mode, self.tau_source = meta, control_dt, command_mode, tau_source
        self.source, self.fixed_base = source, fixed_base
        self.root_pos_w = np.full(3, np.nan) if root_pos_w is None else np.asarray(root_pos_w, dtype=float)
        self.segment = -1
        """Index of the joint being excited (set by the excitation routine), −1 for none."""
        self._rows: dict[str, list[np.ndarray]] = {k: [] for k in ("q_target", "q", "qd", "tau", "gyro", "grav", "act")}
        self._segments: list[int] = []
        self.kp = self.kd = np.zeros(len(meta.joint_names))

    def record(
        self,
        q_target: np.ndarray,
        q: np.ndarray,
        qd: np.ndarray,
        tau: np.ndarray | None,
        ang_vel_b: np.ndarray,
        projected_gravity_b: np.ndarray,
        action: np.ndarray,
    ) -> None:
        """Append one control period's sample (copies every array)."""
        r = self._rows
        for key, value in (
            ("q_target", q_target),
            ("q", q),
            ("qd", qd),
            ("gyro", ang_vel_b),
            ("grav", projected_gravity_b),
            ("act", action),
        ):
            r[key].append(np.array(value, dtype=float))
        if self.tau_source != "none":
            r["tau"].append(np.full(len(q), np.nan) if tau is None else np.array(tau, dtype=float))
        self._segments.append(self.segment)

    def to_log(self) -> RobotLog:
        """The samples so far as a :class:`RobotLog`."""
        r, n = self._rows, len(self._segments)
        return RobotLog(
            t=np.arange(n) * self.control_dt,
            q_target=np.array(r["q_target"]),
            q=np.array(r["q"]),
            qd=np.array(r["qd"]),
            imu_ang_vel_b=np.array(r["gyro"]).reshape(n, 3),
            imu_projected_gravity_b=np.array(r["grav"]).reshape(n, 3),
            action=np.array(r["act"]).reshape(n, -1),
            segment=np.array(self._segments, dtype=np.int64),
            kp=np.asarray(self.kp, dtype=float),
            kd=np.asarray(self.kd, dtype=float),
            joint_names=tuple(self.meta.joint_names),
            control_dt=float(self.control_dt),
            physics_dt=float(self.meta.rates.sim_dt),
            command_mode=self.command_mode,
            tau_source=self.tau_source,
            metadata_sha256=metadata_sha256(self.meta),
            metadata_json=self.meta.to_json(),
            source=self.source,
            fixed_base=self.fixed_base,
            root_pos_w=self.root_pos_w,
            tau=np.array(r["tau"]).reshape(n, -1) if self.tau_source != "none" else None,
        )

    def save(self, path: str | Path) -> Path:
        """Write the samples so far to ``path`` (see :meth:`RobotLog.save`)."""
        return self.to_log().save(path)
