"""Robot logs as MCAP: the same ``realgap.robot_log/1`` content, in the container robot teams already record.

MCAP is ROS 2's log format; Foxglove and PlotJuggler open it directly. Every channel is JSON-encoded with a JSON
Schema (``jsonschema``), so a viewer shows named fields without any realgap code, and the field names follow ROS 2's
``sensor_msgs/JointState`` and ``sensor_msgs/Imu`` where those fit. One message per channel per control period, all
with the sample's time as ``log_time`` (ns since the first sample):

========================= ======================================================================================
channel                   message fields (units; arrays in ``joint_names`` order)
========================= ======================================================================================
``/joint_states``         ``name`` (joint names), ``position`` rad (m), ``velocity`` rad/s (m/s), ``effort`` N·m (N;
                          absent when ``tau_source`` is ``none``)
``/joint_commands``       ``position``: the joint target commanded for the period, rad (m)
``/imu``                  ``angular_velocity`` {x, y, z} rad/s and ``projected_gravity`` {x, y, z} (unit vector), both
                          in the IMU body frame
``/policy/action``        ``action``: the policy's raw-clipped action in force during the period
``/excitation/segment``   ``joint_index``: the joint being excited, −1 when none
========================= ======================================================================================

The scalars of the format (``control_dt``, ``physics_dt``, ``command_mode``, ``tau_source``, ``source``,
``fixed_base``, ``joint_names``, ``kp``, ``kd``, ``root_pos_w``, ``metadata_sha256``, ``metadata_json``) are one MCAP
metadata record named ``realgap.robot_log``. A non-finite number is written as JSON ``null`` (JSON has no NaN) and read
back as NaN, so the loader's finiteness check names the sample. numpy and ``mcap`` only (the deploy side holds no
torch). This module is the container only (arrays in, arrays out): :mod:`realgap.envs.deploy.log` validates a log;
convert either way with ``python -m realgap.envs.deploy.log_mcap IN OUT`` (the suffix decides).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

METADATA_NAME = "realgap.robot_log"
"""Name of the MCAP metadata record that holds the log's scalars."""

_XYZ = {"type": "object", "properties": {a: {"type": ["number", "null"]} for a in "xyz"}}
_NUMS = {"type": "array", "items": {"type": ["number", "null"]}}
SCHEMAS: dict[str, tuple[str, dict[str, Any]]] = {
    "/joint_states": (
        "realgap.JointState",
        {
            "type": "object",
            "properties": {
                "name": {"type": "array", "items": {"type": "string"}},
                "position": _NUMS,
                "velocity": _NUMS,
                "effort": _NUMS,
            },
        },
    ),
    "/joint_commands": ("realgap.JointCommand", {"type": "object", "properties": {"position": _NUMS}}),
    "/imu": ("realgap.Imu", {"type": "object", "properties": {"angular_velocity": _XYZ, "projected_gravity": _XYZ}}),
    "/policy/action": ("realgap.PolicyAction", {"type": "object", "properties": {"action": _NUMS}}),
    "/excitation/segment": (
        "realgap.ExcitationSegment",
        {"type": "object", "properties": {"joint_index": {"type": "integer"}}},
    ),
}
"""Channel → (schema name, JSON Schema) of every channel a log holds."""


def _num(x: float) -> float | None:
    """A JSON number, ``None`` for NaN/inf."""
    return float(x) if math.isfinite(x) else None


def _nums(a: np.ndarray) -> list[float | None]:
    return [_num(float(x)) for x in np.asarray(a, dtype=float).ravel()]


def _xyz(v: np.ndarray) -> dict[str, float | None]:
    return dict(zip("xyz", _nums(v), strict=True))


def write_mcap(log: Mapping[str, Any], path: str | Path) -> Path:
    """Write a robot log to ``path`` as MCAP (channels and metadata in the module docstring); returns the path.

    Args:
        log: The log's arrays and scalars keyed as in the ``.npz`` format (what :func:`read_mcap_arrays` returns;
            ``tau`` absent when the log has no torque).
    """
    from mcap.writer import Writer

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    names = [str(n) for n in np.atleast_1d(log["joint_names"])]
    t, tau = np.asarray(log["t"], dtype=float), log.get("tau")
    with path.open("wb") as fh:
        writer = Writer(fh)
        writer.start(profile="", library="realgap")
        channels = {}
        for topic, (schema_name, schema) in SCHEMAS.items():
            sid = writer.register_schema(schema_name, "jsonschema", json.dumps(schema).encode())
            channels[topic] = writer.register_channel(topic, "json", sid)
        writer.add_metadata(
            METADATA_NAME,
            {
                "format": "realgap.robot_log/1",
                "control_dt": repr(float(log["control_dt"])),
                "physics_dt": repr(float(log["physics_dt"])),
                "command_mode": str(log["command_mode"]),
                "tau_source": str(log["tau_source"]),
                "source": str(log.get("source", "policy")),
                "fixed_base": json.dumps(bool(log.get("fixed_base", False))),
                "joint_names": json.dumps(names),
                "kp": json.dumps(_nums(log["kp"])),
                "kd": json.dumps(_nums(log["kd"])),
                "root_pos_w": json.dumps(_nums(log.get("root_pos_w", np.full(3, np.nan)))),
                "metadata_sha256": str(log["metadata_sha256"]),
                "metadata_json": str(log["metadata_json"]),
            },
        )
        for k in range(len(t)):
            stamp = round(float(t[k]) * 1e9)
            state = {"name": names, "position": _nums(log["q"][k]), "velocity": _nums(log["qd"][k])}
            if tau is not None:
                state["effort"] = _nums(tau[k])
            messages = {
                "/joint_states": state,
                "/joint_commands": {"position": _nums(log["q_target"][k])},
                "/imu": {
                    "angular_velocity": _xyz(log["imu_ang_vel_b"][k]),
                    "projected_gravity": _xyz(log["imu_projected_gravity_b"][k]),
                },
                "/policy/action": {"action": _nums(log["action"][k])},
                "/excitation/segment": {"joint_index": int(log["segment"][k])},
            }
            for topic, message in messages.items():
                writer.add_message(channels[topic], stamp, json.dumps(message).encode(), stamp, sequence=k)
        writer.finish()
    return path


def _floats(values: list[float | None] | None) -> np.ndarray:
    return np.array([math.nan if v is None else v for v in values or []], dtype=float)


def read_mcap_arrays(path: Path) -> dict[str, Any]:
    """The arrays and scalars of an MCAP robot log, keyed as in the ``.npz`` format (``load_log`` validates them).

    Raises:
        ValueError: Not an MCAP file, no ``realgap.robot_log`` metadata record, a channel missing or of another
            schema, or channels whose samples do not line up in count or time (each named).
    """
    from mcap.exceptions import McapError
    from mcap.reader import make_reader

    try:
        with path.open("rb") as fh:
            reader = make_reader(fh)
            meta = {m.name: dict(m.metadata) for m in reader.iter_metadata()}
            fh.seek(0)
            reader = make_reader(fh)
            by_topic: dict[str, list[tuple[int, dict[str, Any]]]] = {t: [] for t in SCHEMAS}
            schemas: dict[str, str] = {}
            for schema, channel, message in reader.iter_messages(log_time_order=True):
                if channel.topic in by_topic:
                    schemas[channel.topic] = schema.name if schema else ""
                    by_topic[channel.topic].append((message.log_time, json.loads(message.data)))
    except (McapError, OSError, ValueError, EOFError) as err:
        raise ValueError(f"not a readable MCAP file ({type(err).__name__}: {err})") from None
    if METADATA_NAME not in meta:
        raise ValueError(
            f"no '{METADATA_NAME}' metadata record (records: {sorted(meta) or 'none'}): not a realgap "
            "robot log, or one written by another tool"
        )
    wrong = {t: s for t, s in schemas.items() if s != SCHEMAS[t][0]}
    if wrong:
        raise ValueError(f"channels of another schema: {wrong} (expected { ({t: SCHEMAS[t][0] for t in wrong}) })")
    missing = [t for t, rows in by_topic.items() if not rows]
    if missing:
        raise ValueError(f"channels without messages: {missing}")
    counts = {t: len(rows) for t, rows in by_topic.items()}
    if len(set(counts.values())) != 1:
        raise ValueError(f"channels hold different numbers of samples: {counts}")
    stamps = {t: [s for s, _ in rows] for t, rows in by_topic.items()}
    ref = stamps["/joint_states"]
    if off := [t for t, s in stamps.items() if s != ref]:
        raise ValueError(f"channels {off} are not stamped at the /joint_states sample times")
    m = meta[METADATA_NAME]
    rows = {t: [msg for _, msg in r] for t, r in by_topic.items()}
    # keys in the .npz order: the format, the per-sample arrays, then the scalars
    return {"format": np.array(m.get("format", "<none>"))} | _sample_arrays(ref, rows) | _scalars(m)


def _sample_arrays(ref: list[int], rows: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The per-sample arrays of the log from each channel's messages (``ref``: the sample times, ns); ``tau`` only
    when every ``/joint_states`` message holds an ``effort``.

    Raises:
        ValueError: A message lacks a field of its schema.
    """
    try:
        data: dict[str, Any] = {
            "t": np.array(ref, dtype=float) * 1e-9,
            "q": np.array([_floats(r.get("position")) for r in rows["/joint_states"]]),
            "qd": np.array([_floats(r.get("velocity")) for r in rows["/joint_states"]]),
            "q_target": np.array([_floats(r.get("position")) for r in rows["/joint_commands"]]),
            "imu_ang_vel_b": np.array([_floats([r["angular_velocity"].get(a) for a in "xyz"]) for r in rows["/imu"]]),
            "imu_projected_gravity_b": np.array(
                [_floats([r["projected_gravity"].get(a) for a in "xyz"]) for r in rows["/imu"]]
            ),
            "action": np.array([_floats(r.get("action")) for r in rows["/policy/action"]]),
            "segment": np.array([int(r.get("joint_index", -1)) for r in rows["/excitation/segment"]], dtype=np.int64),
        }
        if all("effort" in r for r in rows["/joint_states"]):
            data["tau"] = np.array([_floats(r["effort"]) for r in rows["/joint_states"]])
    except (KeyError, TypeError, AttributeError) as err:
        raise ValueError(f"messages lack a field of their schema ({type(err).__name__}: {err})") from None
    return data


def _scalars(m: dict[str, str]) -> dict[str, Any]:
    """The log's scalars (and ``kp``, ``kd``, ``root_pos_w``) from the ``realgap.robot_log`` metadata record ``m``.

    Raises:
        ValueError: A scalar missing or unreadable (named).
    """
    try:
        return {
            "control_dt": float(m["control_dt"]),
            "physics_dt": float(m["physics_dt"]),
            "command_mode": m["command_mode"],
            "tau_source": m["tau_source"],
            "source": m.get("source", "policy"),
            "fixed_base": bool(json.loads(m.get("fixed_base", "false"))),
            "joint_names": np.array(json.loads(m["joint_names"])),
            "kp": _floats(json.loads(m["kp"])),
            "kd": _floats(json.loads(m["kd"])),
            "root_pos_w": _floats(json.loads(m.get("root_pos_w", "null")))
            if json.loads(m.get("root_pos_w", "null"))
            else np.full(3, np.nan),
            "metadata_sha256": m["metadata_sha256"],
            "metadata_json": m["metadata_json"],
        }
    except KeyError as err:
        raise ValueError(f"the '{METADATA_NAME}' record lacks {err}") from None
    except (ValueError, TypeError) as err:
        raise ValueError(f"the '{METADATA_NAME}' record holds an unreadable value ({err})") from None
