"""Upgrade a ``realgap.policy/1`` export to ``realgap.policy/2`` without its checkpoint: same network, new metadata.

The v2 metadata is read again from the live env of the export's task (:func:`realgap.envs.export.metadata.
policy_metadata`, one env on the CPU), and accepted only if it describes the *same* policy as the v1 file: robot and
its description file (v1 hashed the MJCF file alone: that hash must equal the installed MJCF's), joint order and
default pose, the action map and raw clip, every actuator spec and who applied friction, the rates, the observation
layout with its noise, the ONNX input and output. Every mismatch is listed and nothing is written. The v1 training
record is kept; an ``upgrades`` entry records when, at which commit, what was derived anew and the SHA-256 of the
ONNX graph, which is left byte for byte as it was (only ``metadata_props`` change). Other files in the folder (a
README) are kept; the folder is swapped in whole (:func:`realgap.envs.export.writer.replace_folder`).

A ``realgap.policy/2`` export is brought up to date without an env (:func:`refresh_v2`): provenance paths made
relative to the repository, the integrity digest and ``SHA256SUMS`` written (:func:`realgap.envs.export.writer.seal`),
the scene facts of a manipulation task added when missing (from the task's env config at this commit, no simulator);
the graph is left as it was, and ``policy.json`` must equal the embedded metadata before anything is written.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from realgap.envs.export.actions import ExportError
from realgap.envs.export.metadata import policy_metadata
from realgap.envs.export.scene import scene_facts
from realgap.envs.export.writer import METADATA_FILE, ONNX_FILE, checked_json, onnx_properties, replace_folder, seal
from realgap.envs.format.integrity import INTEGRITY_KEY, differences
from realgap.envs.format.metadata import PolicyMetadata
from realgap.envs.format.provenance import relative_training
from realgap.envs.format.schema import FORMAT, FORMAT_V1, ONNX_METADATA_KEY, validate
from realgap.envs.robots import ROBOTS
from realgap.envs.run.run_dir import git_state

DERIVED = (
    "robot.description: the hash over the MJCF and every file it references, the file list, the import package",
    "robot.root_body, robot.start_pose, joints.types, joints.pos_limits: from the installed MJCF",
    "observations: quantity, units, frame of every term; observations.imu_body",
    "actions.terms: type and equation; actuators: law and per-joint arrays (from the v1 datasheet specs, checked)",
    "simulator: from the task config and the live solver model at this commit",
    "training.randomization: the task's event terms at this commit",
)


def graph_sha256(model: Any) -> str:
    """SHA-256 of the serialized ONNX graph (nodes, weights, inputs, outputs; not the metadata)."""
    return hashlib.sha256(model.graph.SerializeToString(deterministic=True)).hexdigest()


def _close(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Equal to float32 precision (v1 wrote float32 values in full, v2 as their shortest decimal)."""

    def num(v: Any) -> float:
        return math.inf if v == "inf" else -math.inf if v == "-inf" else math.nan if v is None else float(v)

    if len(a) != len(b):
        return False
    pairs = zip(a, b, strict=True)
    return all((num(x) == num(y)) or abs(num(x) - num(y)) <= 1e-6 * max(1.0, abs(num(x))) for x, y in pairs)


def compare_v1(v1: Mapping[str, Any], meta: PolicyMetadata, mjcf_file_sha256: str) -> list[str]:
    """Every way ``meta`` (read from the live env) describes another policy than the v1 metadata ``v1``."""
    problems = []

    def check(what: str, ok: bool) -> None:
        if not ok:
            problems.append(what)

    robot, desc = v1["robot"], meta.robot.description
    check(f"robot name {robot['name']} vs {meta.robot.name}", robot["name"] == meta.robot.name)
    check(
        "robot description: the v1 hash of the MJCF file differs from the installed MJCF",
        robot["description_sha256"] == mjcf_file_sha256,
    )
    for key in ("distribution", "version", "path"):
        check(f"robot.source.{key}: {robot['source'].get(key)} vs {desc[key]}", robot["source"].get(key) == desc[key])
    check(
        "robot spawn pose",
        _close(robot["init_root_pos"], meta.robot.spawn_root_pos)
        and _close(robot["init_root_quat_wxyz"], meta.robot.spawn_root_quat_wxyz),
    )
    joints = v1["joints"]
    check("joints.names", tuple(joints["names"]) == meta.joint_names)
    check("joints.default_pos", _close(joints["default_pos"], meta.default_joint_pos))
    check("joints.default_vel", _close(joints["default_vel"], meta.default_joint_vel))
    act, terms = v1["actions"], meta.actions.terms
    check(f"actions: one v1 term, the env has {len(terms)}", len(terms) == 1)
    if len(terms) == 1:
        t = terms[0]
        check(
            f"action term {act['term']} vs {t.name} ({t.type})",
            act["term"] == t.name and t.type == "joint_position_offset" and tuple(act["joint_names"]) == t.joint_names,
        )
        for key in ("scale", "offset", "clip_min", "clip_max"):
            check(
                f"actions.{key}",
                _close(act[key], [math.inf * (1 if "max" in key else -1) if v is None else v for v in t.params[key]]),
            )
    check(
        f"actions.raw_clip {act.get('raw_clip')} vs {meta.actions.raw_clip}",
        act.get("raw_clip") == meta.actions.raw_clip,
    )
    groups = v1["actuators"]["groups"]
    check("actuator group names", [g["name"] for g in groups] == [g.name for g in meta.actuator_groups])
    for g1, g2 in zip(groups, meta.actuator_groups, strict=False):
        sheet = g2.datasheet or {}
        check(f"actuator group {g1['name']}: joints", tuple(g1["joint_names"]) == g2.joint_names)
        check(f"actuator group {g1['name']}: joint specs", list(g1["joint_specs"]) == sheet.get("joint_specs"))
        check(
            f"actuator group {g1['name']}: datasheet specs", json.loads(json.dumps(g1["specs"])) == sheet.get("specs")
        )
        check(f"actuator group {g1['name']}: friction in chain", g1["friction_in_chain"] == g2.friction_in_chain)
    check("rates", v1["rates"] == meta.rates.to_dict())
    obs = v1["observations"]
    check(f"observations.dim {obs['dim']} vs {meta.obs_dim}", obs["dim"] == meta.obs_dim)
    keys = (
        "name",
        "group",
        "func",
        "start",
        "stop",
        "scale",
        "clip",
        "noise",
        "joint_names",
        "history_length",
        "delay_lag",
        "has_modifiers",
    )
    new_terms = [t.to_dict() for t in meta.observations]
    for term in new_terms:
        term["noise"] = term["noise"] and term["noise"]["cfg"]
    old_terms = [{k: t[k] for k in keys} for t in obs["terms"]]
    check("observation terms", old_terms == [{k: t[k] for k in keys} for t in new_terms])
    policy = v1["policy"]
    names = (policy["input"]["name"], policy["output"]["name"])
    check("policy input/output", names == (meta.input_name, meta.output_name))
    return problems


def read_v1(folder: Path) -> tuple[dict[str, Any], Any]:
    """The v1 metadata of ``folder``'s ``policy.onnx`` (and its ONNX model), checked against ``policy.json``.

    Raises:
        ExportError: No ONNX file, no metadata, not v1, or a ``policy.json`` that disagrees with the embedded copy.
    """
    import onnx

    onnx_path = folder / "policy.onnx"
    if not onnx_path.is_file():
        raise ExportError(f"--upgrade {folder}: no policy.onnx there")
    model = onnx.load(str(onnx_path))
    props = {p.key: p.value for p in model.metadata_props}
    if ONNX_METADATA_KEY not in props:
        raise ExportError(f"--upgrade {folder}: policy.onnx holds no '{ONNX_METADATA_KEY}' metadata")
    data = json.loads(props[ONNX_METADATA_KEY])
    if data.get("format") == FORMAT:
        raise ExportError(f"--upgrade {folder}: already {FORMAT}")
    if data.get("format") != FORMAT_V1:
        raise ExportError(f"--upgrade {folder}: format {data.get('format')!r}, can upgrade only {FORMAT_V1}")
    json_path = folder / "policy.json"
    if json_path.is_file() and json.loads(json_path.read_text()) != data:
        raise ExportError(f"--upgrade {folder}: policy.json differs from the metadata embedded in policy.onnx")
    return data, model


def upgrade_export(folder: str | Path, device: str = "cpu") -> PolicyMetadata:
    """Rewrite ``folder``'s ``policy.json`` and ONNX metadata as :data:`FORMAT` (see the module docstring).

    Raises:
        ExportError: Not a v1 export, or the live env describes another policy (every difference listed).
    """

    from realgap.envs.run.factory import load_cfgs, make_env, simulation

    folder = Path(folder)
    if _format_of(folder) == FORMAT:
        return refresh_v2(folder, device)
    v1, model = read_v1(folder)
    task, name = v1["task"], v1["robot"]["name"]
    if name not in ROBOTS:
        raise ExportError(f"--upgrade {folder}: unknown robot '{name}' (known: {sorted(ROBOTS)})")
    mjcf_sha = hashlib.sha256(ROBOTS[name].mjcf_path().read_bytes()).hexdigest()
    groups = list(dict.fromkeys(t["group"] for t in v1["observations"]["terms"]))
    before = graph_sha256(model)
    upgrade = {
        "from": FORMAT_V1,
        "to": FORMAT,
        "at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "git": git_state(),
        "command": f"scripts/export.py --upgrade {folder}",
        "onnx_graph_sha256": before,
        "onnx_graph": "unchanged: only metadata_props were rewritten",
        "derived": list(DERIVED),
    }
    training = relative_training(dict(v1.get("training", {})))
    training["upgrades"] = [*training.get("upgrades", []), upgrade]
    env_cfg, _ = load_cfgs(task, device, num_envs=1)
    with simulation(env_cfg):
        env = make_env(task, env_cfg)
        meta = policy_metadata(env, task, groups, training, raw_action_clip=v1["actions"].get("raw_clip"))
        env.close()
    problems = compare_v1(v1, meta, mjcf_sha)
    if problems:
        raise ExportError(
            f"--upgrade {folder}: the task {task} at this commit describes another policy than the "
            "v1 metadata, nothing written:\n  - " + "\n  - ".join(problems)
        )
    text = checked_json(meta)
    del model.metadata_props[:]
    for key, value in onnx_properties(meta).items():
        model.metadata_props.add(key=key, value=value)
    if graph_sha256(model) != before:
        raise ExportError("internal: the ONNX graph changed while rewriting its metadata")

    _rewrite(folder, model, text, before)
    return meta


def _rewrite(folder: Path, model: Any, text: str, graph_before: str) -> None:
    """Replace ``folder`` (atomically, :func:`replace_folder`) with its other files, ``model`` as the ONNX file and
    ``text`` as policy.json, sealed; refused if the written graph is not ``graph_before`` (only metadata may change)."""
    import onnx

    def write(stage: Path) -> None:
        for path in folder.iterdir():
            if path.is_file() and path.name not in (ONNX_FILE, METADATA_FILE):
                shutil.copy2(path, stage / path.name)
        onnx.save_model(model, str(stage / ONNX_FILE), save_as_external_data=False)
        (stage / METADATA_FILE).write_text(text)
        seal(stage)
        if graph_sha256(onnx.load(str(stage / ONNX_FILE))) != graph_before:
            raise ExportError("internal: the ONNX graph changed while rewriting its metadata")

    replace_folder(folder, write)


def _format_of(folder: Path) -> Any:
    import onnx

    path = folder / "policy.onnx"
    if not path.is_file():
        raise ExportError(f"--upgrade {folder}: no policy.onnx there")
    props = {p.key: p.value for p in onnx.load(str(path)).metadata_props}
    return json.loads(props[ONNX_METADATA_KEY]).get("format") if ONNX_METADATA_KEY in props else None


def _missing_scene(data: Mapping[str, Any], device: str) -> dict[str, Any] | None:
    """The scene facts of the export's task from its env config at this commit, when the export lacks them and the
    task has a scene (:func:`realgap.envs.export.scene.scene_facts`); else None."""
    if "scene" in data:
        return None
    from realgap.envs.run.factory import load_cfgs

    env_cfg, _ = load_cfgs(data["task"], device, num_envs=1)
    scene = scene_facts(env_cfg)
    return None if scene is None else scene.to_dict()


def refresh_v2(folder: str | Path, device: str = "cpu") -> PolicyMetadata:
    """Make a :data:`FORMAT` export's provenance relative and seal it with its digest, and add the scene facts of its
    task when it lacks them (see the module docstring).

    Raises:
        ExportError: ``policy.json`` missing or different from the embedded metadata (differences listed), or the
            export already up to date.
    """
    import onnx

    folder = Path(folder)
    model = onnx.load(str(folder / ONNX_FILE))
    props = {p.key: p.value for p in model.metadata_props}
    data = json.loads(props[ONNX_METADATA_KEY])
    json_path = folder / METADATA_FILE
    if not json_path.is_file():
        raise ExportError(f"--upgrade {folder}: no policy.json there")
    diff = differences(json.loads(json_path.read_text()), data)
    if diff:
        raise ExportError(
            f"--upgrade {folder}: policy.json differs from the metadata in policy.onnx, nothing "
            "written:\n  - " + "\n  - ".join(diff)
        )
    training = relative_training(dict(data.get("training", {})))
    scene = _missing_scene(data, device)
    if training == data.get("training") and INTEGRITY_KEY in props and scene is None:
        raise ExportError(f"--upgrade {folder}: already {FORMAT} with relative provenance, a digest and its scene")
    before = graph_sha256(model)
    derived = ["training: paths relative to the repository", "integrity digest and SHA256SUMS"]
    training["upgrades"] = [
        *training.get("upgrades", []),
        {
            "from": FORMAT,
            "to": FORMAT,
            "at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "git": git_state(),
            "command": f"scripts/export.py --upgrade {folder}",
            "onnx_graph_sha256": before,
            "onnx_graph": "unchanged: only metadata_props were rewritten",
            "derived": derived + (["scene: the task's env config at this commit"] if scene else []),
        },
    ]
    # Only the training record (and a missing scene) changes: the file keeps its own texts, checked as it reads.
    data = {**data, "training": training} | ({"scene": scene} if scene else {})
    validate(data, str(json_path))
    meta = PolicyMetadata.from_dict(data, str(json_path))
    text = json.dumps(data, indent=2, allow_nan=False)
    del model.metadata_props[:]
    for key, value in {**onnx_properties(meta), ONNX_METADATA_KEY: text}.items():
        model.metadata_props.add(key=key, value=value)

    _rewrite(folder, model, text, before)
    return meta
