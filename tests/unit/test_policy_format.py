"""The exported policy format realgap.policy/2 as a robot team meets it: the shipped exports follow the schema and
agree between policy.json and policy.onnx, the reference balance network is the one that was trained (its outputs on
recorded observations, its graph hash), an old realgap.policy/1 file is refused with the upgrade command, the
description hash follows its written rule (what ``sha256sum`` gives), the description is found through its import
package, and the deploy command refuses bad input with one message and exit status 2."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from realgap.envs.format import MetadataError, OnnxPolicy, load_metadata
from realgap.envs.format.description import DescriptionError, description_files, description_sha256, locate_description
from realgap.envs.format.schema import FORMAT, schema, validate

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted(p.parent for p in (REPO / "configs" / "policies").glob("*/policy.json"))
RECORDED = REPO / "tests" / "data" / "balance_g1_70min_recorded.npz"
"""Observations of the reference balance policy in MuJoCo (125 policy steps with two pushes, then 32 standard normal
rows) and its actions, recorded from the realgap.policy/1 file before its upgrade."""


def test_the_schema_is_a_valid_json_schema():
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(schema())
    assert schema()["properties"]["format"] == {"const": FORMAT}


@pytest.mark.parametrize("folder", SHIPPED, ids=[p.name for p in SHIPPED])
def test_shipped_exports_follow_the_schema(folder):
    data = json.loads((folder / "policy.json").read_text())
    validate(data, str(folder / "policy.json"))
    from_json, from_onnx = load_metadata(folder / "policy.json"), load_metadata(folder / "policy.onnx")
    assert from_json == from_onnx and data["format"] == FORMAT
    assert from_json.robot.description["sha256"] and from_json.actions.terms


def test_the_balance_export_is_shipped():
    assert "balance_g1" in [p.name for p in SHIPPED]


def test_the_upgraded_70_minute_balance_network_is_the_trained_one():
    import onnx

    from realgap.envs.export.upgrade import graph_sha256

    folder = REPO / "configs" / "policies" / "balance_g1_70min"  # the 70-minute reference, upgraded from /1
    recorded = np.load(RECORDED)
    policy = OnnxPolicy(folder / "policy.onnx")
    actions = np.stack([policy(o) for o in recorded["obs"]])
    np.testing.assert_allclose(actions, recorded["actions"], rtol=0, atol=1e-6)
    meta = load_metadata(folder)
    first, *later = meta.training["upgrades"]  # /1 -> /2, then /2 refreshed (relative provenance, digest)
    assert (first["from"], first["to"]) == ("realgap.policy/1", FORMAT)
    assert later and all(u["from"] == u["to"] == FORMAT for u in later)
    graph = graph_sha256(onnx.load(str(folder / "policy.onnx")))
    assert all(u["onnx_graph_sha256"] == graph for u in (first, *later))
    assert meta.training["iteration"] == 224 and meta.training["git"]["commit"].startswith("6d6096b")


def test_a_v1_file_is_refused_with_the_upgrade_command(tmp_path):
    (tmp_path / "policy.json").write_text(json.dumps({"format": "realgap.policy/1", "task": "x"}))
    with pytest.raises(MetadataError, match=r"old format realgap.policy/1.*scripts/export.py --upgrade"):
        load_metadata(tmp_path)


def _tree(root: Path) -> Path:
    """An MJCF with an include, a meshdir, a texturedir and a cube-map texture; returns the MJCF."""
    (root / "inc").mkdir()
    (root / "meshes").mkdir()
    (root / "tex").mkdir()
    (root / "robot.xml").write_text(
        '<mujoco><compiler meshdir="meshes" texturedir="tex"/><include file="inc/parts.xml"/>'
        '<asset><mesh file="b.stl"/><texture name="sky" type="skybox" fileup="up.png" filedown="down.png"/></asset>'
        "</mujoco>"
    )
    (root / "inc" / "parts.xml").write_text(
        '<mujoco><asset><mesh file="a.stl"/><hfield file="h.png"/></asset></mujoco>'
    )
    for name in ("meshes/a.stl", "meshes/b.stl", "meshes/h.png", "tex/up.png", "tex/down.png"):
        (root / name).write_bytes(name.encode())
    return root / "robot.xml"


def test_description_hash_follows_its_rule(tmp_path):
    mjcf = _tree(tmp_path)
    paths = sorted(
        ["robot.xml", "inc/parts.xml", "meshes/a.stl", "meshes/b.stl", "meshes/h.png", "tex/up.png", "tex/down.png"]
    )
    assert [f.path for f in description_files(mjcf)] == paths
    lines = "".join(f"{hashlib.sha256((tmp_path / p).read_bytes()).hexdigest()}  {p}\n" for p in paths)
    assert description_sha256(mjcf) == hashlib.sha256(lines.encode()).hexdigest()
    # the rule as written into every export: `sha256sum <files, sorted> | sha256sum` in the MJCF's folder
    shell = subprocess.run(
        f"sha256sum {' '.join(paths)} | sha256sum", shell=True, cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert shell.stdout.split()[0] == description_sha256(mjcf)
    (tmp_path / "meshes" / "b.stl").write_bytes(b"another mesh")
    assert description_sha256(mjcf) != hashlib.sha256(lines.encode()).hexdigest()  # a mesh is part of the robot
    (tmp_path / "meshes" / "a.stl").unlink()
    with pytest.raises(DescriptionError, match="references .*a.stl, which does not exist"):
        description_sha256(mjcf)


def test_description_is_located_through_its_import_package():
    from realgap.envs.robots import G1

    meta = load_metadata(REPO / "configs" / "policies" / "balance_g1")
    assert locate_description(meta.robot.description) == G1.mjcf_path()
    missing = dict(meta.robot.description, import_package="no_such_assets", distribution="no-such-assets")
    with pytest.raises(DescriptionError, match="not installed: pip install 'no-such-assets==0.4.0'"):
        locate_description(missing)


def _deploy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "realgap.scripts.deploy", *args], cwd=REPO, capture_output=True, text=True, timeout=120
    )


def _v1_onnx(folder: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["obs"], ["actions"])],
        "g",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("actions", TensorProto.FLOAT, [1, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 10
    model.metadata_props.add(key="realgap_metadata", value=json.dumps({"format": "realgap.policy/1"}))
    onnx.save_model(model, str(folder / "policy.onnx"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--push_mps", "0.4,0.2"], "--push_mps needs 0 <= LO <= HI, got 0.4,0.2"),
        (["--push_mps", "fast"], "--push_mps takes two numbers LO,HI"),
        (["--episodes", "0"], "--episodes must be >= 1"),
        (["--policy", "/nonexistent"], "no policy at /nonexistent: expected an export folder with policy.onnx"),
    ],
)
def test_deploy_command_refuses_bad_input(args, message):
    base = {"--policy": "configs/policies/balance_g1", "--robot": "mujoco"}
    for key, value in zip(args[::2], args[1::2], strict=True):
        base[key] = value
    out = _deploy(*[x for kv in base.items() for x in kv])
    assert out.returncode == 2 and message in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


def test_deploy_command_names_the_upgrade_for_an_old_export(tmp_path):
    _v1_onnx(tmp_path)
    out = _deploy("--policy", str(tmp_path), "--robot", "mujoco")
    assert out.returncode == 2 and "old format realgap.policy/1" in out.stderr and "--upgrade" in out.stderr
