"""Sim tier (Newton's MuJoCo-Warp on the CPU beside MuJoCo C): the drop lab agrees between the training engine and
MuJoCo C within the tolerances fixed before the first comparison, for a box, the G1's foot and the impact phase of the
passive whole G1; the engine holds the contact parameters the config gives; the committed comparison is what the code
computes."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from realgap.envs.contact import drop, engines, engines_g1, lab
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


def test_passive_g1_impact_agrees_between_engines():
    """The whole passive G1 (5 ms): the impact phase within the tolerances fixed before the first run, the engine
    holding the config's sole contact, no actuator and no self-contact; the committed row's impact figures again."""
    foot = load("g1_ground")["foot_ground"]
    row = engines_g1.compare_g1(foot, 0.05, 0.4)  # first contact at ~0.1 s, impact phase to ~0.26 s
    early = ("first_contact_s", "early_max_penetration", "early_peak_force", "early_root_z")
    assert all(row["agree"][k] for k in early), (row["mujoco_c"], row["newton"])
    assert row["newton"]["early_max_penetration"] > 1e-3 and row["newton"]["early_peak_force"] > 1000.0
    held = row["newton_model"]
    assert held["nu"] == 0 and held["self_contacts"] == 0 and held["floor_excluded"] == [] and held["n_sole_geoms"] == 8
    assert held["sole_geom"]["solref"] == pytest.approx(list(foot.solref), rel=1e-6)
    assert held["sole_geom"]["solimp"] == pytest.approx(list(foot.solimp), rel=1e-6)
    assert held["sole_geom"]["friction"] == pytest.approx(list(foot.friction), rel=1e-6)
    committed = json.loads((REPO / "docs/results/contact/engines.json").read_text())["g1_passive"]
    assert committed["tolerances"] == {k: list(v) for k, v in engines_g1.G1_TOLERANCES.items()}
    c5 = next(r for r in committed["rows"] if r["case"] == row["case"])
    assert all(c5["agree"][k] for k in early)
    for k in early:
        assert row["newton"][k] == pytest.approx(c5["newton"][k], rel=1e-5)
        assert row["mujoco_c"][k] == pytest.approx(c5["mujoco_c"][k], rel=1e-9)


def test_passive_g1_scene_has_no_actuators_and_refuses_another_model(tmp_path):
    import mujoco

    foot = load("g1_ground")["foot_ground"]
    m = mujoco.MjModel.from_xml_string(engines_g1.passive_xml(foot))
    assert m.nu == 0 and m.nkey == 1 and m.opt.disableflags == 0
    other = tmp_path / "robot.xml"
    other.write_text("<mujoco><worldbody/></mujoco>")
    with pytest.raises(ValueError, match="not the Menagerie G1"):
        engines_g1.passive_xml(foot, other)
