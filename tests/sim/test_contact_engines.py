"""Sim tier (Newton's MuJoCo-Warp on the CPU beside MuJoCo C): the drop lab agrees between the training engine and
MuJoCo C within the tolerances fixed before the first comparison, for a box and the G1's foot; the engine holds the
contact parameters the config gives; the committed comparison is what the code computes."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from realgap.envs.contact import drop, engines, lab
from realgap.envs.contact.params import load

pytestmark = pytest.mark.sim

REPO = Path(__file__).resolve().parents[2]


def test_box_and_g1_foot_agree_between_engines():
    foot = load("g1_ground")["foot_ground"]
    cases = [("base", lab.BASE, replace(lab.BASE_DROP, duration=0.3)), ("g1_foot", foot, drop.g1_foot_spec(0.05, 0.3))]
    rows = engines.compare(cases)
    for r in rows:
        assert all(r["agree"].values()), (r["case"], r["mujoco_c"], r["newton"])
        assert r["newton"]["max_penetration"] > 1e-3  # a real impact, not two engines agreeing on nothing
    plane = rows[1]["newton_model"]["geoms"]["plane"]
    assert plane["solref"] == pytest.approx(list(foot.solref), rel=1e-6)
    assert plane["solimp"] == pytest.approx(list(foot.solimp), rel=1e-6)
    assert plane["friction"] == pytest.approx(list(foot.friction), rel=1e-6)
    assert rows[1]["newton_model"]["option"]["tolerance"] == pytest.approx(engines.TRAINING_SOLVER["tolerance"])


def test_committed_comparison_is_reproduced():
    committed = json.loads((REPO / "docs/results/contact/engines.json").read_text())
    row = committed["rows"][0]
    assert row["case"] == "base" and all(all(r["agree"].values()) for r in committed["rows"])
    spec = drop.DropSpec(**row["drop"])
    fresh = engines.compare([("base", lab.BASE, spec)])[0]
    for k in ("max_penetration", "peak_force", "steady_height"):
        assert fresh["newton"][k] == pytest.approx(row["newton"][k], rel=1e-5)
        assert fresh["mujoco_c"][k] == pytest.approx(row["mujoco_c"][k], rel=1e-9)


def test_foot_drop_refuses_a_slope():
    with pytest.raises(ValueError, match="flat"):
        drop.scene_xml(lab.BASE, replace(drop.g1_foot_spec(), tilt=0.1))
