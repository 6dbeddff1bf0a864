"""Unit tier: the grasp export's scene facts (table, object, start, episode, success test) are the task's live config,
read back as written, and every malformed or inconsistent entry is refused by name."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
GRASP = ROOT / "configs/policies/grasp_franka/policy.json"


@pytest.fixture(scope="module")
def data() -> dict:
    return json.loads(GRASP.read_text())


def test_shipped_grasp_export_carries_the_task_configs_scene(data):
    from realgap.envs.deploy import load_metadata
    from realgap.envs.export.scene import scene_facts
    from realgap.tasks.grasp.env_cfg import grasp_env_cfg

    meta = load_metadata(GRASP)
    live = scene_facts(grasp_env_cfg("ee_pose_delta"))  # what the task config says at this commit
    assert meta.scene == live
    s = meta.scene
    assert s.table_top_z_m == pytest.approx(0.2) and s.episode_steps == 250 and s.hold_steps == 50  # 5 s, 1 s at 50 Hz
    lo, hi = s.object_mass_range_kg  # 800 kg/m³ · (4 cm)³ · 0.75 and · (5 cm)³ · 1.25
    assert lo == pytest.approx(0.0384) and hi == pytest.approx(0.125)
    assert load_metadata(ROOT / "configs/policies/balance_g1").scene is None  # no object: no scene
    assert "scene" in data and data["training"]["upgrades"][-1]["onnx_graph"].startswith("unchanged")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["table"].update(size_m=[0.5, -0.8, 0.2]), "scene.table.size_m: need finite positive"),
        (lambda d: d["object"].update(size_range_m=[[0.05, 0.04]] * 3), "object.size_range_m\\[0\\]: low 0.05 > high"),
        (lambda d: d["object"].update(nominal_xy_m=[0.9, 0.0]), "placements along axis x .* leave the table"),
        (lambda d: d["success"].update(hold_steps=49), "hold_steps is 49, 1 s at 50 Hz gives 50"),
        (lambda d: d["episode"].update(steps=200), "episode_steps is 200, 5 s at 50 Hz gives 250"),
        (lambda d: d["table"].update(top_z_m=0.25), "scene.table.top_z_m is 0.25, the rest of the scene gives 0.2"),
        (lambda d: d["object"].update(mass_range_kg=[0.05, 0.1]), "object.mass_range_kg is \\[0.05, 0.1\\]"),
        (lambda d: d["object"].update(com_moved_fraction=0.0), "com_moved_fraction must be in \\(0, 1\\]"),
        (lambda d: d["object"].pop("density_kg_m3"), "density_kg_m3"),
        (lambda d: d["success"].update(lift_target_m=float("nan")), "lift_target_m"),
    ],
)
def test_bad_scene_facts_are_refused_by_name(data, edit, message):
    from realgap.envs.deploy import MetadataError
    from realgap.envs.format.metadata import PolicyMetadata

    bad = copy.deepcopy(data)
    edit(bad["scene"])
    with pytest.raises(MetadataError, match=message):
        PolicyMetadata.from_dict(bad, "policy.json")


def test_scene_round_trips(data):
    from realgap.envs.format.scene import SceneFacts

    facts = SceneFacts.from_dict(data["scene"])
    assert SceneFacts.from_dict(json.loads(json.dumps(facts.to_dict()))) == facts
