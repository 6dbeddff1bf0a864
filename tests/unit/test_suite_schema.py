"""The held-out robot suite's file (``envs/eval/suite/schema.py``) and its draws (``envs/eval/suite/draw.py``).

The shipped suites load; every family states every field with a reason and draws from seeds of its own, at or above
10 000; a bad file fails with one message naming the file and the field; one seed is one robot, inside its ranges.
Pure Python and numpy (the draw reads an export's metadata): seconds.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import yaml

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
G1 = REPO / "configs" / "suites" / "g1_v1.yaml"
PANDA = REPO / "configs" / "suites" / "panda_grasp_v1.yaml"


def _raw(path: Path = G1) -> dict:
    return yaml.safe_load(path.read_text())


def _parse(data: dict):
    from realgap.envs.eval.suite.schema import parse_suite

    return parse_suite(data, "suite.yaml")


@pytest.mark.parametrize("path", [G1, PANDA], ids=["g1", "panda"])
def test_shipped_suites_state_every_field_with_a_reason_and_seeds_of_their_own(path: Path):
    from realgap.envs.eval.suite.schema import FIELDS, MIN_SEED, load_suite

    suite = load_suite(path)
    assert {f.name for f in suite.families} >= {"typical", "worn"}
    seeds = [s for f in suite.families for s in f.seeds]
    assert len(seeds) == len(set(seeds)) and min(seeds) >= MIN_SEED
    for family in suite.families:
        assert set(family.values) == set(FIELDS[suite.task]) == set(family.reasons)
        assert all(len(why) > 10 for why in family.reasons.values())


def _broken(edit) -> str:
    from realgap.envs.eval.suite.schema import SuiteError

    data = copy.deepcopy(_raw())
    edit(data)
    with pytest.raises(SuiteError) as err:
        _parse(data)
    return str(err.value)


def test_an_unknown_field_is_refused_by_name():
    msg = _broken(lambda d: d["families"]["worn"]["fields"].update(backlash_rad={"range": [0, 0.01], "why": "x"}))
    assert "families.worn.fields" in msg and "unknown ['backlash_rad']" in msg


def test_a_missing_field_is_refused_by_name():
    msg = _broken(lambda d: d["families"]["typical"]["fields"].pop("foot_friction"))
    assert "families.typical.fields" in msg and "missing ['foot_friction']" in msg


def test_a_range_out_of_order_or_out_of_bounds_is_refused():
    msg = _broken(lambda d: d["families"]["typical"]["fields"]["kp_scale"].update(range=[1.1, 0.9]))
    assert "families.typical.fields.kp_scale.range: lo 1.1 > hi 0.9" in msg
    msg = _broken(lambda d: d["families"]["typical"]["fields"]["kd_scale"].update(range=[0.9, 1.3]))
    assert "kd_scale.range" in msg and "leaves the allowed [0, 1]" in msg


def test_a_range_without_a_reason_is_refused():
    msg = _broken(lambda d: d["families"]["worn"]["fields"]["viscous_nms"].pop("why"))
    assert "families.worn.fields.viscous_nms" in msg


def test_seeds_below_the_suite_floor_or_shared_between_families_are_refused():
    msg = _broken(lambda d: d["families"]["typical"].update(first_seed=42))
    assert "families.typical.first_seed" in msg and "10000" in msg
    msg = _broken(lambda d: d["families"]["worn"].update(first_seed=10005))
    assert "families.worn.first_seed: seed 10005" in msg and "'typical'" in msg


def test_a_wrong_format_or_task_is_refused():
    assert "format" in _broken(lambda d: d.update(format="realgap.suite/0"))
    assert "task" in _broken(lambda d: d.update(task="walk"))


def test_a_missing_file_names_the_folder_of_shipped_suites(tmp_path: Path):
    from realgap.envs.eval.suite.schema import SuiteError, load_suite

    with pytest.raises(SuiteError, match="configs/suites"):
        load_suite(tmp_path / "nope.yaml")


@pytest.fixture(scope="module")
def g1_meta():
    from realgap.envs.format import load_metadata

    return load_metadata(REPO / "configs" / "policies" / "balance_g1")


def test_one_seed_is_one_robot_and_every_value_lies_in_its_range(g1_meta):
    from realgap.envs.eval.suite.draw import datasheet, draw_robot
    from realgap.envs.eval.suite.schema import load_suite

    suite = load_suite(G1)
    worn = suite.family("worn")
    a, b = draw_robot(suite, worn, 3, g1_meta, 30), draw_robot(suite, worn, 3, g1_meta, 30)
    assert a.to_dict() == b.to_dict() and a.seed == 10103
    assert a.to_dict() != draw_robot(suite, worn, 4, g1_meta, 30).to_dict()
    v, t = worn.values, a.truth
    assert ((v["delay_steps"][0] <= t.delay_steps) & (t.delay_steps <= v["delay_steps"][1])).all()
    assert len(set(t.delay_steps.tolist())) > 1  # one delay per joint, not one per robot
    ratio = t.peak_torque / datasheet(g1_meta, "peak_torque")
    assert (ratio >= v["peak_torque_scale"][0]).all() and (ratio <= v["peak_torque_scale"][1]).all()
    assert a.body["link_com_shift_m"].shape == (30, 3) and np.abs(a.body["link_com_shift_m"]).max() <= 0.01
    assert v["payload_mass_kg"][0] <= a.body["payload_mass_kg"] <= v["payload_mass_kg"][1]
    assert a.hold_period_steps == 1 and a.noise.q_rad == v["encoder_q_noise_rad"]
    assert all(abs(x) <= 0.03 for x in a.noise.tilt_bias_rad)
    bridge = draw_robot(suite, suite.family("bridge"), 0, g1_meta, 30)
    assert bridge.hold_period_steps == 4  # hold_probability 1, period [4, 4]


def test_restored_groups_come_from_the_lending_robot_and_nothing_else_moves(g1_meta):
    from realgap.envs.eval.suite.draw import GROUPS, draw_robot, restore_groups
    from realgap.envs.eval.suite.run import SuiteRequest, check_request
    from realgap.envs.eval.suite.schema import load_suite

    suite = load_suite(G1)
    worn, typical = (draw_robot(suite, suite.family(f), 2, g1_meta, 30) for f in ("worn", "typical"))
    assert restore_groups(worn, typical, ()).to_dict() == worn.to_dict()
    drives = restore_groups(worn, typical, ["drives"])
    assert np.array_equal(drives.truth.kp_scale, typical.truth.kp_scale)
    assert np.array_equal(drives.truth.peak_torque, typical.truth.peak_torque)
    assert np.array_equal(drives.truth.delay_steps, worn.truth.delay_steps)  # the delay is a group of its own
    assert drives.body == worn.body and drives.noise == worn.noise
    both = restore_groups(worn, typical, ["contact", "sensors"])
    assert both.body["foot_friction"] == typical.body["foot_friction"]
    assert both.body["payload_mass_kg"] == worn.body["payload_mass_kg"]
    assert both.noise.tilt_bias_rad == typical.noise.tilt_bias_rad and both.noise.seed == worn.noise.seed
    everything = restore_groups(worn, typical, GROUPS).to_dict()
    assert (everything["seed"], everything["family"]) == (worn.seed, "worn")  # its identity and episodes stay
    assert restore_groups(worn, typical, GROUPS).episode_seed == worn.episode_seed
    assert {k: v for k, v in everything.items() if k not in ("family", "index", "seed", "sensors")} == {
        k: v for k, v in typical.to_dict().items() if k not in ("family", "index", "seed", "sensors")
    }
    with pytest.raises(ValueError, match=r"error groups: unknown error group\(s\) \['gains'\]"):
        restore_groups(worn, typical, ["gains"])
    with pytest.raises(ValueError, match=r"--restore: unknown error group\(s\) \['gains'\]"):
        check_request(SuiteRequest(policy="p", suite=str(G1), restore=("drives", "gains")))


def test_no_training_or_test_code_sets_a_seed_in_the_suite_range():
    # the suite's robots stay held out only while every other seed literal stays below MIN_SEED
    import re

    from realgap.envs.eval.suite.schema import MIN_SEED

    literal = re.compile(r"(seed[a-z_]*\s*[=:]\s*|--[a-z_]*seed[ =]|default_rng\(|manual_seed\()(\d+)")
    suite_files = ("configs/suites/", "envs/eval/suite/", "tests/unit/test_suite_", "tests/slow/test_evaluate_suite")
    found = []
    for folder in ("envs", "tasks", "scripts", "tests", "configs"):
        for path in sorted((REPO / folder).rglob("*")):
            rel = str(path.relative_to(REPO))
            if path.suffix not in (".py", ".yaml") or rel.startswith(suite_files):
                continue
            found += [f"{rel}: {m.group(0)}" for m in literal.finditer(path.read_text()) if int(m.group(2)) >= MIN_SEED]
    assert found == []


def test_paired_differences_by_hand():
    from realgap.envs.eval.suite.report import paired

    def ep(episode: int, success: bool, time_s: float, family: str = "worn") -> dict:
        return {"family": family, "robot": 0, "episode": episode, "success": success, "time_s": time_s}

    a = [ep(0, True, 10.0), ep(1, False, 4.0)]
    b = [ep(1, False, 5.0), ep(0, False, 6.0)]  # any order: matched by family, robot, episode
    g = paired(a, b)["worn"]
    # differences 4 and -1: mean 1.5, sample sd √((2.5² + 2.5²) / 1) = 3.536, standard error 3.536 / √2 = 2.5
    assert (g["episodes"], g["time_diff_s"], g["only_a"], g["only_b"]) == (2, 1.5, 1, 0)
    assert g["time_diff_se_s"] == pytest.approx(2.5)
    with pytest.raises(ValueError, match="same episodes"):
        paired(a, [ep(0, False, 6.0), ep(1, False, 5.0, family="typical")])
