"""Signed exports: an Ed25519 signature over an export's digest, checked against a trust store on the robot side.

The digest (:mod:`realgap.envs.format.integrity`) catches accidents, not tampering: whoever rewrites ``policy.json``
and the embedded metadata can recompute the digest and ``SHA256SUMS``. A signature says *who* produced an export: the
training side holds a private key (``scripts/sign_export.py keygen``), signs the export's digest
(``scripts/sign_export.py sign``) and writes ``policy.sig`` beside the export; the robot side holds only public keys
(a trust store) and refuses an export whose signature does not verify, whose key it does not trust, or that is
unsigned when a signature is required (``--require_signature``). A forger who edits the files and recomputes the digest
cannot produce a valid signature without the private key.

Signed message: the canonical JSON (:func:`~realgap.envs.format.integrity.canonical`) of ``{"format":
"realgap.signature/1", "metadata_sha256": ..., "graph_sha256": ...}``, the digest recorded in ``policy.onnx`` after
:func:`~realgap.envs.format.verify.load_verified` has checked it against the files. Ed25519 from ``cryptography`` (RFC
8032; deterministic signatures, 32-byte keys, no parameters to choose).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realgap.envs.format.integrity import canonical
from realgap.envs.format.schema import MetadataError

SIGNATURE_FORMAT = "realgap.signature/1"
SIGNATURE_FILE = "policy.sig"
"""Beside ``policy.onnx``: JSON ``{format, algorithm, key_id, metadata_sha256, graph_sha256, signature}``."""
PRIVATE_KEY_MODE = 0o600
"""The private key is readable by its owner only (like ``ssh-keygen``): whoever reads it can sign exports."""


class SignatureError(MetadataError):
    """An export whose signature is missing (where required), malformed, wrong, or by a key not in the trust store."""


def _ed25519() -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ModuleNotFoundError as err:
        raise ModuleNotFoundError(
            "signed exports need the 'cryptography' package: pip install '.[deploy]' in a clone, or the wheel "
            "with [deploy]",
            name=err.name,
        ) from err
    return ed25519


def key_id(public_raw: bytes) -> str:
    """A public key's id: the first 16 hex digits of the SHA-256 of its 32 raw bytes (as named in messages)."""
    return hashlib.sha256(public_raw).hexdigest()[:16]


def signed_message(digest: Mapping[str, Any]) -> bytes:
    """The bytes signed for an export with integrity record ``digest`` (see the module docstring)."""
    fields = {k: digest.get(k) for k in ("metadata_sha256", "graph_sha256")}
    if not all(isinstance(v, str) and len(v) == 64 for v in fields.values()):
        raise SignatureError(f"the export's digest is incomplete, nothing to sign: {dict(digest)}")
    return canonical({"format": SIGNATURE_FORMAT, **fields})


def generate_key(private_path: str | Path) -> tuple[Path, Path]:
    """Write a new Ed25519 key pair: the private key at ``private_path`` (PEM, PKCS#8, owner-only) and the public key
    beside it with ``.pub`` added (PEM); refuses to overwrite either.

    Raises:
        FileExistsError: Either file exists.
    """
    from cryptography.hazmat.primitives import serialization

    private_path = Path(private_path)
    public_path = private_path.with_name(private_path.name + ".pub")
    for path in (private_path, public_path):
        if path.exists() or path.is_symlink():
            raise FileExistsError(f"'{path}' exists; a key is never overwritten (move it away or pick another path)")
    key = _ed25519().Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    private_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_KEY_MODE)
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem)
    public_path.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return private_path, public_path


def _load_private(path: Path) -> Any:
    from cryptography.hazmat.primitives import serialization

    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as err:
        raise SignatureError(f"'{path}' is not a readable unencrypted PEM private key ({err})") from None
    if not isinstance(key, _ed25519().Ed25519PrivateKey):
        raise SignatureError(f"'{path}' holds a {type(key).__name__}, not an Ed25519 private key")
    return key


def _raw_public(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def sign(digest: Mapping[str, Any], private_key: str | Path) -> dict[str, str]:
    """The ``policy.sig`` record of an export with integrity record ``digest``, signed with ``private_key`` (PEM)."""
    key = _load_private(Path(private_key))
    signature = key.sign(signed_message(digest))
    return {
        "format": SIGNATURE_FORMAT,
        "algorithm": "ed25519",
        "key_id": key_id(_raw_public(key.public_key())),
        "metadata_sha256": str(digest["metadata_sha256"]),
        "graph_sha256": str(digest["graph_sha256"]),
        "signature": base64.b64encode(signature).decode(),
    }


@dataclass(frozen=True)
class TrustStore:
    """Public keys an export may be signed with, by key id, and where each came from (for messages)."""

    keys: Mapping[str, Any]
    sources: Mapping[str, str]

    @classmethod
    def load(cls, paths: Sequence[str | Path]) -> TrustStore:
        """Public keys from ``paths``: each a PEM public key file, or a folder whose ``*.pub`` / ``*.pem`` files are
        PEM public keys.

        Raises:
            SignatureError: A path that does not exist, a file that is not an Ed25519 public key, or no key at all.
        """
        from cryptography.hazmat.primitives import serialization

        keys: dict[str, Any] = {}
        sources: dict[str, str] = {}
        for given in paths:
            path = Path(given)
            if path.is_dir():
                files = sorted(p for p in path.iterdir() if p.suffix in (".pub", ".pem") and p.is_file())
            elif path.is_file():
                files = [path]
            else:
                raise SignatureError(f"--trust '{path}' does not exist (a public key file or a folder of *.pub)")
            for file in files:
                try:
                    key = serialization.load_pem_public_key(file.read_bytes())
                except (OSError, ValueError) as err:
                    raise SignatureError(f"--trust '{file}' is not a PEM public key ({err})") from None
                if not isinstance(key, _ed25519().Ed25519PublicKey):
                    raise SignatureError(f"--trust '{file}' holds a {type(key).__name__}, not an Ed25519 public key")
                kid = key_id(_raw_public(key))
                keys[kid], sources[kid] = key, str(file)
        if not keys:
            raise SignatureError(f"--trust {', '.join(map(str, paths))} holds no public key (*.pub or *.pem)")
        return cls(keys, sources)


def read_signature(folder: Path) -> dict[str, Any] | None:
    """``policy.sig`` of the export in ``folder``, parsed and checked for its fields; ``None`` when there is none.

    Raises:
        SignatureError: A file that is not a ``realgap.signature/1`` JSON object with every field.
    """
    path = folder / SIGNATURE_FILE
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise SignatureError(f"{path} is not valid JSON ({err})") from None
    need = ("format", "algorithm", "key_id", "metadata_sha256", "graph_sha256", "signature")
    if not isinstance(record, dict) or any(not isinstance(record.get(k), str) for k in need):
        raise SignatureError(f"{path} is not a signature record (a JSON object with string fields {', '.join(need)})")
    if record["format"] != SIGNATURE_FORMAT or record["algorithm"] != "ed25519":
        raise SignatureError(
            f"{path}: format {record['format']!r} / algorithm {record['algorithm']!r}, expected "
            f"{SIGNATURE_FORMAT!r} / 'ed25519'"
        )
    return record


def check_signature(folder: Path, digest: Mapping[str, Any], trust: TrustStore | None, require: bool) -> str:
    """Check the signature of the export in ``folder`` whose verified integrity record is ``digest``.

    A signature that is present is always checked where a trust store is given; without one it cannot be, and that is
    said. Returns one line saying what was verified (for the command's output).

    Raises:
        SignatureError: ``require`` and no trust store or no signature; a signature over another digest (the export
            changed after signing); a key not in ``trust``; a signature that does not verify.
    """
    if require and trust is None:
        raise SignatureError("--require_signature needs the public keys to trust: give --trust KEY.pub (or a folder)")
    path = folder / SIGNATURE_FILE
    record = read_signature(folder)
    if record is None:
        if require:
            raise SignatureError(
                f"{folder} is not signed (no {SIGNATURE_FILE}) and --require_signature is set: sign "
                "it on the training side with scripts/sign_export.py sign"
            )
        return f"{folder}: unsigned (no {SIGNATURE_FILE}); its digest guards against accidents, not forgery"
    for field in ("metadata_sha256", "graph_sha256"):
        if record[field] != digest.get(field):
            raise SignatureError(
                f"{path} signs {field} {record[field]}, but the export's is {digest.get(field)}: "
                "the export changed after it was signed"
            )
    if trust is None:
        return f"{folder}: signed by key {record['key_id']}, NOT verified (no --trust given)"
    key = trust.keys.get(record["key_id"])
    if key is None:
        raise SignatureError(
            f"{path} is signed by key {record['key_id']}, which is not in the trust store "
            f"(trusted: {', '.join(sorted(trust.keys))})"
        )
    try:
        key.verify(base64.b64decode(record["signature"], validate=True), signed_message(digest))
    except Exception as err:  # InvalidSignature, or a signature that is not base64 / not 64 bytes
        raise SignatureError(
            f"{path}: the signature does not verify with key {record['key_id']} "
            f"({trust.sources[record['key_id']]}; {type(err).__name__}): forged or corrupted"
        ) from None
    return f"{folder}: signature verified, key {record['key_id']} ({trust.sources[record['key_id']]})"
