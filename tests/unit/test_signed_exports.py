"""Signed exports: a forger who edits policy.json and the embedded metadata and recomputes the digest and SHA256SUMS
(everything the digest alone cannot catch) is refused by a robot that requires a signature from a trusted key, before
anything moves. Keys from scripts/sign_export.py keygen; Ed25519 from ``cryptography``."""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from realgap.envs.export.sign import sign_export
from realgap.envs.format.signature import SIGNATURE_FILE, SignatureError, generate_key
from realgap.envs.format.verify import ExportIntegrityError, check_export_signature, load_verified

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "configs" / "policies" / "balance_g1"


def _forge(folder: Path, change: Callable[[dict], None]) -> None:
    """Edit policy.json and the metadata in policy.onnx alike, then write the digest and SHA256SUMS anew: an export
    that passes every integrity check."""
    import onnx

    from realgap.envs.export.writer import seal

    data = json.loads((folder / "policy.json").read_text())
    change(data)
    (folder / "policy.json").write_text(json.dumps(data, indent=2))
    model = onnx.load(str(folder / "policy.onnx"))
    for prop in model.metadata_props:
        if prop.key == "realgap_metadata":
            embedded = json.loads(prop.value)
            change(embedded)
            prop.value = json.dumps(embedded, indent=2)
    onnx.save_model(model, str(folder / "policy.onnx"), save_as_external_data=False)
    seal(folder)


def _one_kp(d: dict) -> None:
    """Write the gains once, in the groups (the layout new exports have): a forger edits the one copy a robot reads."""
    for group in d["actuators"]["groups"]:
        for spec in group.get("datasheet", {}).get("specs", {}).values():
            spec.pop("gains", None)


def _swap_hips_and_weaken_kp(d: dict) -> None:
    _one_kp(d)
    names = d["joints"]["names"]
    i, j = names.index("left_hip_pitch_joint"), names.index("right_hip_pitch_joint")
    names[i], names[j] = names[j], names[i]
    d["actuators"]["groups"][0]["kp"][3] = d["actuators"]["groups"][0]["kp"][3] / 10  # kp 300 -> 30


@pytest.fixture
def keys(tmp_path: Path) -> tuple[Path, Path]:
    return generate_key(tmp_path / "keys" / "lab")


@pytest.fixture
def signed(tmp_path: Path, keys: tuple[Path, Path]) -> Path:
    folder = tmp_path / "export"
    shutil.copytree(SOURCE, folder)
    sign_export(folder, keys[0])
    return folder


def test_keygen_writes_an_owner_only_private_key_and_never_overwrites(keys):
    private, public = keys
    assert stat.S_IMODE(private.stat().st_mode) == 0o600 and public.name == "lab.pub"
    assert b"PRIVATE KEY" in private.read_bytes() and b"PUBLIC KEY" in public.read_bytes()
    with pytest.raises(FileExistsError, match="never overwritten"):
        generate_key(private)


def test_a_signed_export_verifies_with_the_trusted_key(signed, keys):
    line = check_export_signature(signed, [keys[1]], require=True)
    assert "signature verified" in line and str(keys[1]) in line
    assert "NOT verified" in check_export_signature(signed)  # signed, but no trust store: said, not hidden


def test_a_forged_export_with_a_recomputed_digest_passes_integrity_but_not_the_signature(signed, keys):
    _forge(signed, _swap_hips_and_weaken_kp)
    meta, _ = load_verified(signed)  # the digest cannot tell: it was recomputed
    assert meta.joint_names.index("right_hip_pitch_joint") == 0
    with pytest.raises(SignatureError, match="the export changed after it was signed"):
        check_export_signature(signed, [keys[1]], require=True)


def test_unsigned_resigned_by_another_key_and_corrupted_signatures_are_refused(signed, keys, tmp_path):
    other, _ = generate_key(tmp_path / "keys" / "intruder")
    sign_export(signed, other)  # a forger signs with a key of their own
    with pytest.raises(SignatureError, match="not in the trust store"):
        check_export_signature(signed, [keys[1]], require=True)
    record = json.loads((signed / SIGNATURE_FILE).read_text())
    sign_export(signed, keys[0])
    good = json.loads((signed / SIGNATURE_FILE).read_text())
    (signed / SIGNATURE_FILE).write_text(json.dumps(good | {"signature": record["signature"]}))  # a foreign signature
    with pytest.raises(SignatureError, match="does not verify with key"):
        check_export_signature(signed, [keys[1]], require=True)
    (signed / SIGNATURE_FILE).unlink()
    with pytest.raises(SignatureError, match="is not signed"):
        check_export_signature(signed, [keys[1]], require=True)
    assert "unsigned" in check_export_signature(signed, [keys[1]])  # not required: stated
    with pytest.raises(SignatureError, match="needs the public keys to trust"):
        check_export_signature(signed, [], require=True)


def test_a_broken_export_is_never_signed(tmp_path, keys):
    folder = tmp_path / "export"
    shutil.copytree(SOURCE, folder)
    (folder / "policy.json").write_text((folder / "policy.json").read_text().replace('"kp"', '"kP"', 1))
    with pytest.raises(ExportIntegrityError):
        sign_export(folder, keys[0])
    assert not (folder / SIGNATURE_FILE).exists()


def test_the_robot_side_refuses_a_forged_export_before_anything_moves(signed, keys):
    _forge(signed, _swap_hips_and_weaken_kp)
    cmd = [
        sys.executable,
        "-m",
        "realgap.scripts.deploy",
        "--policy",
        str(signed),
        "--robot",
        "mujoco",
        "--trust",
        str(keys[1]),
        "--require_signature",
        "--duration_s",
        "1",
    ]
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 2, out.stderr[-2000:]
    assert out.stderr.startswith("error: ") and "changed after it was signed" in out.stderr
    assert "Traceback" not in out.stderr and "episode" not in out.stdout  # refused before the robot was built


def test_sign_export_cli_round_trip(tmp_path):
    folder, key = tmp_path / "export", tmp_path / "k" / "train"
    shutil.copytree(SOURCE, folder)

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, str(REPO / "scripts" / "sign_export.py"), *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )

    assert cli("keygen", "--key", str(key)).returncode == 0
    assert cli("sign", "--policy", str(folder), "--key", str(key)).returncode == 0
    ok = cli("verify", "--policy", str(folder), "--trust", str(key) + ".pub")
    assert ok.returncode == 0 and "signature verified" in ok.stdout, ok.stderr
    again = cli("keygen", "--key", str(key))
    assert again.returncode == 2 and again.stderr.startswith("error: ") and "never overwritten" in again.stderr
