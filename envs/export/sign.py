"""Sign an export on the training side: ``policy.sig`` beside ``policy.onnx``, over its verified digest.

The key pair comes from :func:`realgap.envs.format.signature.generate_key` (``scripts/sign_export.py keygen``); the
robot side verifies with :func:`realgap.envs.format.verify.check_export_signature` (``realgap deploy
--trust KEY.pub --require_signature``). An export is signed only after every load check passes, so a signature never
vouches for a broken export.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def sign_export(path: str | Path, private_key: str | Path) -> Path:
    """Verify the export at ``path`` (:func:`~realgap.envs.format.verify.load_verified`), sign its digest with the
    Ed25519 ``private_key`` (PEM) and write ``policy.sig`` beside it atomically; returns the file.

    Raises:
        ExportIntegrityError: The export fails a load check (nothing is signed).
        SignatureError: The key is not a readable Ed25519 private key.
    """
    import onnxruntime as ort

    from realgap.envs.format.integrity import INTEGRITY_KEY
    from realgap.envs.format.signature import SIGNATURE_FILE, sign
    from realgap.envs.format.verify import load_verified

    _, onnx_path = load_verified(path)
    props = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"]).get_modelmeta()
    record = sign(json.loads(props.custom_metadata_map[INTEGRITY_KEY]), private_key)
    out = onnx_path.parent / SIGNATURE_FILE
    fd, tmp = tempfile.mkstemp(prefix=".tmp_", suffix=".sig", dir=out.parent)
    with os.fdopen(fd, "w") as fh:
        fh.write(json.dumps(record, indent=2) + "\n")
    os.chmod(tmp, 0o644)  # a public record, like the export's other files (mkstemp makes it owner-only)
    os.replace(tmp, out)
    return out
