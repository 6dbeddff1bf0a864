"""Integrity of an export: a SHA-256 digest over the metadata and the ONNX graph (nodes and weights).

The exporter writes ``realgap_integrity`` into the ONNX ``metadata_props`` beside ``realgap_metadata``, and a
``SHA256SUMS`` file over ``policy.json`` and ``policy.onnx``; every loader recomputes both digests and refuses an
export whose metadata or network changed after export. Stdlib only (no ``onnx`` package): the graph bytes are cut
out of the ONNX protobuf by its wire format, so the torch-free deploy runtime checks the same digest the exporter
wrote.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

INTEGRITY_KEY = "realgap_integrity"
"""ONNX ``metadata_props`` key of the digest (JSON: algorithm, metadata_sha256, graph_sha256)."""
SUMS_FILE = "SHA256SUMS"
"""``sha256sum -c SHA256SUMS`` checks ``policy.json`` and ``policy.onnx`` from the export folder alone."""
SUMMED_FILES = ("policy.json", "policy.onnx")
_GRAPH_FIELD = 7  # ModelProto.graph


class IntegrityError(ValueError):
    """An export whose files disagree with each other or with the digest written at export."""


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if pos >= len(buf):
            raise IntegrityError("the ONNX file ends inside a protobuf field (truncated?)")
        byte = buf[pos]
        value |= (byte & 0x7F) << shift
        pos, shift = pos + 1, shift + 7
        if not byte & 0x80:
            return value, pos


def onnx_graph_bytes(data: bytes) -> bytes:
    """The serialized ``GraphProto`` (nodes, initializers = weights, inputs, outputs) of an ONNX model's bytes.

    Raises:
        IntegrityError: Not a protobuf message, truncated, or no graph in it.
    """
    pos, graph = 0, None
    while pos < len(data):
        key, pos = _varint(data, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, pos = _varint(data, pos)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise IntegrityError("the ONNX file ends inside a protobuf field (truncated?)")
            if field == _GRAPH_FIELD:
                graph = data[pos : pos + size]
            pos += size
        else:
            raise IntegrityError(f"the ONNX file is not a protobuf message (wire type {wire})")
    if pos != len(data) or graph is None:
        raise IntegrityError("the ONNX file holds no graph (truncated, or not an ONNX model)")
    return graph


def canonical(data: Mapping[str, Any]) -> bytes:
    """The metadata as canonical JSON (sorted keys, no spaces, UTF-8): the bytes its digest is taken over."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def digest(metadata: Mapping[str, Any], graph: bytes) -> dict[str, str]:
    """The integrity record of an export: SHA-256 of the canonical metadata and of the graph bytes."""
    return {
        "algorithm": "sha256",
        "metadata_sha256": hashlib.sha256(canonical(metadata)).hexdigest(),
        "graph_sha256": hashlib.sha256(graph).hexdigest(),
    }


def differences(a: Any, b: Any, path: str = "$", limit: int = 5) -> list[str]:
    """JSON paths where ``a`` and ``b`` differ, with both values (at most ``limit``), e.g.
    ``$.joints.names[0]: 'left_hip' vs 'right_hip'``."""
    out: list[str] = []
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                out.append(
                    f"{path}.{key}: {'missing' if key not in a else 'present'} vs "
                    f"{'missing' if key not in b else 'present'}"
                )
            else:
                out += differences(a[key], b[key], f"{path}.{key}", limit - len(out))
            if len(out) >= limit:
                break
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out += differences(x, y, f"{path}[{i}]", limit - len(out))
            if len(out) >= limit:
                break
    elif a != b or type(a) is not type(b):
        out.append(f"{path}: {_short(a)} vs {_short(b)}")
    return out[:limit]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{type(value).__name__} of {len(value)}"


def check(recorded: Mapping[str, Any], metadata: Mapping[str, Any], graph: bytes, source: str) -> None:
    """Refuse ``metadata`` + ``graph`` unless they hash to ``recorded`` (the record written at export).

    Raises:
        IntegrityError: Naming which part (metadata or network weights) changed since export.
    """
    now = digest(metadata, graph)
    if recorded.get("algorithm") != "sha256":
        raise IntegrityError(f"{source}: unknown digest algorithm {recorded.get('algorithm')!r} (expected 'sha256')")
    graph_now, graph_then = now["graph_sha256"], recorded.get("graph_sha256")
    if graph_then != graph_now:
        raise IntegrityError(
            f"{source}: the network (ONNX graph: nodes and weights) changed after export: its "
            f"SHA-256 is {graph_now}, the export recorded {graph_then}"
        )
    meta_now, meta_then = now["metadata_sha256"], recorded.get("metadata_sha256")
    if meta_then != meta_now:
        raise IntegrityError(
            f"{source}: the metadata embedded in policy.onnx changed after export: its SHA-256 is "
            f"{meta_now}, the export recorded {meta_then}"
        )


def sums_text(folder: Path) -> str:
    """``SHA256SUMS`` of ``folder`` in ``sha256sum`` format (two spaces, file name)."""
    return "".join(f"{hashlib.sha256((folder / n).read_bytes()).hexdigest()}  {n}\n" for n in SUMMED_FILES)


def check_sums(folder: Path) -> None:
    """Check ``folder``'s ``SHA256SUMS`` (when present) as ``sha256sum -c`` does.

    Raises:
        IntegrityError: A listed file whose SHA-256 differs (the file named) or a malformed line.
    """
    sums = folder / SUMS_FILE
    if not sums.is_file():
        return
    for line in sums.read_text().splitlines():
        parts = line.split(maxsplit=1)
        if len(parts) != 2 or len(parts[0]) != 64:
            raise IntegrityError(f"{sums}: malformed line {line!r} (expected '<sha256>  <file>')")
        want, name = parts[0], parts[1].lstrip("*").strip()
        path = folder / name
        got = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"
        if got != want:
            raise IntegrityError(f"{path}: SHA-256 {got} differs from {want} recorded in {sums} (edited after export)")
