"""Exports are verified at load: policy.json and the metadata in policy.onnx must agree, the digest written at
export must match metadata and network, SHA256SUMS must match both files, and the numbers must be physical. Each
refusal names what differs. The shipped exports pass every check, carry repository-relative provenance, and
``sha256sum -c SHA256SUMS`` accepts them from the export folder alone."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from realgap.envs.format.integrity import INTEGRITY_KEY, SUMS_FILE, onnx_graph_bytes
from realgap.envs.format.provenance import relative_training, repo_relative
from realgap.envs.format.verify import ExportIntegrityError, load_verified

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted(p.parent for p in (REPO / "configs" / "policies").glob("*/policy.json"))
SOURCE = REPO / "configs" / "policies" / "balance_g1"


def _edit_json(folder: Path, change: Callable[[dict], None]) -> None:
    data = json.loads((folder / "policy.json").read_text())
    change(data)
    (folder / "policy.json").write_text(json.dumps(data, indent=2))


def _edit_onnx(
    folder: Path,
    change_meta: Callable[[dict], None] | None = None,
    *,
    weight: bool = False,
    flat_task: str | None = None,
) -> None:
    """Rewrite policy.onnx as a careless tool would: embedded metadata, one weight, or a flat viewer key."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(folder / "policy.onnx"))
    for prop in model.metadata_props:
        if prop.key == "realgap_metadata" and change_meta is not None:
            data = json.loads(prop.value)
            change_meta(data)
            prop.value = json.dumps(data, indent=2)
        if prop.key == "task" and flat_task is not None:
            prop.value = flat_task
    if weight:
        init = max(model.graph.initializer, key=lambda t: int(np.prod(t.dims)))
        array = numpy_helper.to_array(init).copy()
        array.flat[0] += np.float32(1e-3)
        init.CopyFrom(numpy_helper.from_array(array, init.name))
    onnx.save_model(model, str(folder / "policy.onnx"), save_as_external_data=False)


def _kp(value: float, joint: int = 3) -> Callable[[dict], None]:
    def change(d: dict) -> None:
        d["actuators"]["groups"][0]["kp"][joint] = value

    return change


def _swap_hips(d: dict) -> None:
    names = d["joints"]["names"]
    i, j = names.index("left_hip_pitch_joint"), names.index("right_hip_pitch_joint")
    names[i], names[j] = names[j], names[i]


def _reseal(folder: Path) -> None:
    """Write digest and SHA256SUMS anew, as an export of these numbers would (so only the physical check is left)."""
    from realgap.envs.export.writer import seal

    seal(folder)


def _both(change: Callable[[dict], None], reseal: bool = False) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        _edit_json(folder, change)
        _edit_onnx(folder, change)
        if reseal:
            _reseal(folder)

    return apply


def _drop_digest(folder: Path) -> None:
    import onnx

    model = onnx.load(str(folder / "policy.onnx"))
    kept = [(p.key, p.value) for p in model.metadata_props if p.key != INTEGRITY_KEY]
    del model.metadata_props[:]
    for key, value in kept:
        model.metadata_props.add(key=key, value=value)
    onnx.save_model(model, str(folder / "policy.onnx"), save_as_external_data=False)


def _truncate(name: str, keep: float = 0.5) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        data = (folder / name).read_bytes()
        (folder / name).write_bytes(data[: int(len(data) * keep)])

    return apply


def _reverse_limit(d: dict) -> None:
    lims = d["joints"]["pos_limits"]
    lims["lower"][0], lims["upper"][0] = lims["upper"][0], lims["lower"][0]


CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "kp edited in policy.json": (
        lambda f: _edit_json(f, _kp(30.0)),
        r"policy.json vs policy.onnx.*\$\.actuators\.groups\[0\]\.kp\[3\]: 30\.0 vs 300\.0",
    ),
    "hip joints swapped in policy.json": (
        lambda f: _edit_json(f, _swap_hips),
        r"\$\.joints\.names\[0\]: 'right_hip_pitch_joint' vs 'left_hip_pitch_joint'",
    ),
    "kp edited in policy.onnx only": (
        lambda f: _edit_onnx(f, _kp(30.0)),
        r"\$\.actuators\.groups\[0\]\.kp\[3\]: 300\.0 vs 30\.0",
    ),
    "kp edited in both files": (_both(_kp(30.0)), r"metadata embedded in policy.onnx changed after export"),
    "one network weight changed": (
        lambda f: _edit_onnx(f, weight=True),
        r"network \(ONNX graph: nodes and weights\) changed after export",
    ),
    "policy.json truncated": (_truncate("policy.json"), r"policy.json is not valid JSON.*truncated"),
    "policy.onnx truncated": (_truncate("policy.onnx"), r"policy.onnx is not a readable ONNX model"),
    "policy.json missing": (lambda f: (f / "policy.json").unlink(), r"no policy.json at"),
    "no digest": (_drop_digest, r"carries no integrity digest.*scripts/export.py --upgrade"),
    "flat ONNX key edited": (
        lambda f: _edit_onnx(f, flat_task="other"),
        r"policy.onnx: SHA-256 [0-9a-f]{64} differs from [0-9a-f]{64} recorded in .*SHA256SUMS",
    ),
    "negative kp, sealed": (
        _both(_kp(-300.0), reseal=True),
        r"kp of left_knee_joint is -300\.0, must be finite and > 0",
    ),
    "kp and its datasheet spec differ, sealed": (  # an export from before kp was written once carries it twice
        _both(_kp(250.0), reseal=True),
        r"PD gains written twice with different values.*kp of left_knee_joint is 250\.0 but its datasheet spec gives "
        r"300\.0",
    ),
    "reversed limits, sealed": (
        _both(_reverse_limit, reseal=True),
        r"joints\.pos_limits of left_hip_pitch_joint: lower 2\.8798 is not below upper",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_edited_export_is_refused_naming_the_difference(case, tmp_path):
    folder = tmp_path / "export"
    shutil.copytree(SOURCE, folder)
    load_verified(folder)  # the untouched copy passes
    mutate, message = CASES[case]
    mutate(folder)
    with pytest.raises((ExportIntegrityError, FileNotFoundError), match=f"(?s){message}"):
        load_verified(folder)


@pytest.mark.parametrize("folder", SHIPPED, ids=[p.name for p in SHIPPED])
def test_shipped_exports_verify_and_record_relative_provenance(folder):
    import onnx

    meta, onnx_path = load_verified(folder)
    # the stdlib protobuf cut gives exactly the graph the onnx library serializes
    assert onnx_graph_bytes(onnx_path.read_bytes()) == onnx.load(str(onnx_path)).graph.SerializeToString()
    absolute = [
        v
        for v in (meta.training.get("checkpoint"), meta.training.get("run_dir"), *meta.training["argv"])
        if isinstance(v, str) and v.startswith("/")
    ]
    assert absolute == [] and meta.training["checkpoint"].startswith("runs/")
    done = subprocess.run(["sha256sum", "-c", SUMS_FILE], cwd=folder, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def _drop_spec_gains(d: dict) -> None:
    """The export as it is written now: kp/kd once, in the group (the datasheet specs' PD gains left out)."""
    for group in d["actuators"]["groups"]:
        for spec in group["datasheet"]["specs"].values():
            if "kp" in spec["gains"]:
                del spec["gains"]


def test_an_export_with_kp_once_verifies_to_the_same_groups(tmp_path):
    folder = tmp_path / "export"
    shutil.copytree(SOURCE, folder)
    before, _ = load_verified(folder)
    _both(_drop_spec_gains, reseal=True)(folder)
    after, _ = load_verified(folder)
    assert after.actuator_groups == before.actuator_groups  # same gains, and the specs get theirs back in memory
    assert after.to_dict()["actuators"] == json.loads((folder / "policy.json").read_text())["actuators"]


def test_paths_are_made_relative_to_the_repository():
    assert repo_relative(REPO / "runs" / "a" / "model_1.pt") == "runs/a/model_1.pt"
    assert repo_relative("/elsewhere/checkout/runs/b/model_2.pt") == "runs/b/model_2.pt"
    assert repo_relative("/work/wt/scripts/train.py") == "scripts/train.py"
    assert repo_relative("/opt/data/x.bin") == "/opt/data/x.bin"  # no anchor: kept, not guessed
    assert repo_relative("runs/c") == "runs/c"
    training = relative_training({"argv": ["/x/scripts/train.py", "--log_root", "/x/runs"], "iteration": 3})
    assert training == {"argv": ["scripts/train.py", "--log_root", "runs"], "iteration": 3}
