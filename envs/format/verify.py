"""The one verifying loader of an export: every command that runs a policy reads it through :func:`load_verified`
(:func:`load_policy` adds the ONNX graph on onnxruntime, :class:`OnnxPolicy`).

An export folder is accepted only when (1) ``policy.json`` parses and equals the metadata embedded in
``policy.onnx`` field for field, (2) the digest written at export (:mod:`realgap.envs.format.integrity`) matches the
embedded metadata and the ONNX graph (nodes and weights), (3) ``SHA256SUMS``, where present, matches both files,
(4) the metadata follows the schema and (5) its physical quantities make sense (gains > 0, ordered limits, positive
torques, recorded contact parameters the engine accepts at the recorded step; rates are checked by
:class:`~realgap.envs.rates.RateSpec`) and (6) an older export's PD gains, written twice (per group and in its
datasheet specs), agree. Each refusal names what differs, so an edited, truncated or mismatched export never moves a
robot or counts as evaluated.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from realgap.envs.format.contacts import recorded_contact_problems, solver_step
from realgap.envs.format.integrity import (
    INTEGRITY_KEY,
    IntegrityError,
    check,
    check_sums,
    differences,
    onnx_graph_bytes,
)
from realgap.envs.format.metadata import PolicyMetadata
from realgap.envs.format.schema import ONNX_METADATA_KEY, UPGRADE_HINT, MetadataError, check_format
from realgap.envs.format.signature import TrustStore, check_signature

JSON_FILE, ONNX_FILE = "policy.json", "policy.onnx"


class ExportIntegrityError(MetadataError):
    """An export whose files disagree with each other, with their digest, or with physics (the difference named)."""


def _json(text: str, source: str) -> dict:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ExportIntegrityError(f"{source} is not valid JSON ({err}; truncated?)") from err
    if not isinstance(data, dict):
        raise ExportIntegrityError(f"{source} is not a JSON object")
    return data


def physical_problems(meta: PolicyMetadata) -> list[str]:
    """What in ``meta`` no physical robot can have: gains, torques and limits, each named by its field and joint."""
    out = []
    for g in meta.actuator_groups:
        for what, values, ok in (
            ("kp", g.kp, lambda v: v > 0),
            ("kd", g.kd, lambda v: v >= 0),
            ("peak_torque", g.peak_torque, lambda v: v > 0),
        ):
            for joint, v in zip(g.joint_names, values, strict=True):
                if not (math.isfinite(v) and ok(v)):
                    sign = ">= 0" if what == "kd" else "> 0"
                    out.append(f"actuators.groups[{g.name}].{what} of {joint} is {v!r}, must be finite and {sign}")
    for joint, lo, hi in zip(meta.joint_names, meta.joint_pos_lower, meta.joint_pos_upper, strict=True):
        if lo is not None and hi is not None and not lo < hi:
            out.append(f"joints.pos_limits of {joint}: lower {lo!r} is not below upper {hi!r}")
    return out + contact_problems_of(meta)


def contact_problems_of(meta: PolicyMetadata) -> list[str]:
    """What in the recorded contact parameters (``simulator.contacts.geoms``) the engine would not simulate as written,
    by :func:`~realgap.envs.format.contacts.recorded_contact_problems`, with time constants checked against the
    export's physics step (``rates.sim_dt`` / ``simulator.solver.num_substeps``). An export recorded without contacts
    (an older one) has nothing to check and passes."""
    contacts = (meta.simulator or {}).get("contacts") or {}
    step = solver_step(meta.simulator, meta.rates.sim_dt)
    return recorded_contact_problems(contacts.get("geoms"), step, "simulator.contacts.geoms")


def load_verified(path: str | Path) -> tuple[PolicyMetadata, Path]:
    """The metadata of the export at ``path`` (a folder, its ``policy.onnx`` or its ``policy.json``) and the path of
    its ``policy.onnx``, after every check in the module docstring.

    Raises:
        FileNotFoundError: No ``policy.onnx`` or ``policy.json`` there.
        ExportIntegrityError: The files disagree, the digest differs, or a physical check fails (what differs named).
        MetadataError: The metadata violates the schema or is in an old format (the upgrade command given).
    """
    import onnxruntime as ort

    path = Path(path)
    folder = path if path.is_dir() else path.parent
    onnx_path, json_path = folder / ONNX_FILE, folder / JSON_FILE
    if not onnx_path.is_file():
        raise FileNotFoundError(
            f"no policy.onnx at {folder}: an export folder holds policy.onnx and policy.json "
            "(scripts/export.py writes both)"
        )
    try:
        props = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"]).get_modelmeta()
    except Exception as err:  # onnxruntime raises its own types for a file that is not an ONNX model
        first = str(err).splitlines()[0] if str(err) else ""
        raise ExportIntegrityError(f"{onnx_path} is not a readable ONNX model ({type(err).__name__}: {first})") from err
    embedded_text = props.custom_metadata_map.get(ONNX_METADATA_KEY)
    if embedded_text is None:
        raise ExportIntegrityError(f"{onnx_path} has no '{ONNX_METADATA_KEY}' metadata (not exported by realgap?)")
    embedded = _json(embedded_text, f"the metadata embedded in {onnx_path}")
    check_format(embedded, str(onnx_path))  # an old format gets the upgrade command, not a list of differences
    if not json_path.is_file():
        raise FileNotFoundError(
            f"no policy.json at {folder}: an export folder holds policy.onnx and policy.json "
            "(scripts/export.py writes both)"
        )
    from_json = _json(json_path.read_text(), str(json_path))
    diff = differences(from_json, embedded)
    if diff:
        raise ExportIntegrityError(
            f"{json_path} differs from the metadata embedded in {onnx_path} "
            "(policy.json vs policy.onnx):\n  - " + "\n  - ".join(diff)
        )
    recorded = props.custom_metadata_map.get(INTEGRITY_KEY)
    if recorded is None:
        raise ExportIntegrityError(f"{onnx_path} carries no integrity digest ('{INTEGRITY_KEY}'): {UPGRADE_HINT}")
    try:
        check(
            _json(recorded, f"'{INTEGRITY_KEY}' of {onnx_path}"),
            embedded,
            onnx_graph_bytes(onnx_path.read_bytes()),
            str(onnx_path),
        )
        check_sums(folder)
    except IntegrityError as err:
        raise ExportIntegrityError(str(err)) from err
    meta = PolicyMetadata.from_dict(embedded, source=str(json_path))
    problems = physical_problems(meta)
    if problems:
        raise ExportIntegrityError(f"{json_path}: physically impossible values:\n  - " + "\n  - ".join(problems))
    # an export before kp was written once carries the gains twice (the group's arrays, each datasheet spec's gains)
    if conflicts := [c for g in meta.actuator_groups for c in g.written_gain_conflicts]:
        raise ExportIntegrityError(
            f"{json_path}: PD gains written twice with different values (the group's kp/kd vs its datasheet specs; "
            "a robot would not know which to use):\n  - " + "\n  - ".join(conflicts)
        )
    return meta, onnx_path


def check_export_signature(path: str | Path, trust: Sequence[str | Path] = (), require: bool = False) -> str:
    """Verify the export at ``path`` (:func:`load_verified`), then its signature (``policy.sig``) against the public
    keys ``trust`` (:mod:`realgap.envs.format.signature`); returns one line saying what was verified.

    Raises:
        ExportIntegrityError: As :func:`load_verified`.
        SignatureError: ``require`` without a signature or a trust store, a signature over another digest, by an
            untrusted key, or one that does not verify.
    """
    import onnxruntime as ort

    if require and not trust:  # refused before any file is read
        check_signature(Path(path), {}, None, require)
    store = TrustStore.load(trust) if trust else None
    _, onnx_path = load_verified(path)
    props = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"]).get_modelmeta()
    digest = _json(props.custom_metadata_map[INTEGRITY_KEY], f"'{INTEGRITY_KEY}' of {onnx_path}")
    return check_signature(onnx_path.parent, digest, store, require)


class OnnxPolicy:
    """The exported ONNX graph (observation normalizer inside) on onnxruntime's CPU provider, batch 1.

    Args:
        path: ``policy.onnx`` (weights embedded).
        threads: Intra-op threads (1: lowest latency for a small MLP, deterministic).
    """

    def __init__(self, path: str | Path, threads: int = 1) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.input = self.session.get_inputs()[0]
        self.output_name = self.session.get_outputs()[0].name

    @property
    def obs_dim(self) -> int:
        """Input size of the graph."""
        return int(self.input.shape[-1])

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """Shape: ``obs`` ``(D,)``; output ``(A,)`` float32."""
        x = np.asarray(obs, dtype=np.float32).reshape(1, -1)
        return self.session.run([self.output_name], {self.input.name: x})[0][0]


def load_policy(path: str | Path) -> tuple[PolicyMetadata, OnnxPolicy]:
    """Metadata and ONNX policy from an export folder or its ``policy.onnx``, verified by :func:`load_verified`
    (files agree, digest matches, physical checks pass): what every command that runs a policy calls."""
    path = Path(path)
    onnx_path = path / "policy.onnx" if path.is_dir() else path
    if not onnx_path.is_file():
        raise FileNotFoundError(
            f"no policy at {path}: expected an export folder with policy.onnx (and policy.json), or a policy.onnx file"
        )
    meta, onnx_path = load_verified(onnx_path)  # policy.json, policy.onnx and their digest must agree
    return meta, OnnxPolicy(onnx_path)
