"""Recorded contact parameters are checked on every load by one set of rules
(:func:`realgap.envs.format.contacts.contact_problems`, shared with ``ContactParams``): an export's
``simulator.contacts.geoms`` in the verifying loader, a run folder's ``params/contacts.json`` in play / evaluate /
export of a checkpoint and in resume. Each rule refused names the group and the rule; a record without contacts (older
runs and exports) loads; the shipped exports' records pass."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path

import pytest
import torch

from realgap.envs.format.contacts import contact_problems, geom_row_problems, recorded_contact_problems
from realgap.envs.format.verify import ExportIntegrityError, contact_problems_of, load_verified
from realgap.envs.rates import load_rate_profile
from realgap.envs.run.resume import prepare_resume
from realgap.envs.run.run_dir import CheckpointError
from realgap.envs.run.run_record import policy_settings, recorded_contacts
from realgap.envs.run.training import TrainRequest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted(p.parent for p in (REPO / "configs" / "policies").glob("*/policy.json"))
SOURCE = REPO / "configs" / "policies" / "balance_g1"
DT = 0.005  # s, the shipped tasks' physics step: the smallest time constant it resolves is 0.01 s
GOOD = {
    "owner": "Robot",
    "friction": [0.6, 0.005, 0.0001],
    "priority": 1,
    "condim": 3,
    "solref": [0.02, 1.0],
    "solimp": [0.9, 0.95, 0.001, 0.5, 2.0],
    "margin_m": 0.0,
    "gap_m": 0.0,
    "count": 8,
    "examples": ["left_ankle_roll_link/Sphere_5"],
}


def test_a_good_row_and_both_solref_forms_pass():
    assert geom_row_problems(GOOD, DT) == []
    assert geom_row_problems(GOOD | {"solref": [-20000.0, -100.0]}, DT) == []  # MuJoCo's (-stiffness, -damping)
    assert geom_row_problems(GOOD | {"solref": [0.01, 1.0]}, DT) == []  # exactly 2 * dt
    assert geom_row_problems(GOOD | {"gap_m": 0.01}, DT) == []  # gap beyond a zero margin: detection only
    assert geom_row_problems(GOOD | {"condim": 6, "friction": [0.0, 0.0, 0.0]}, DT) == []


RULES = {
    "timeconst below 2 dt": ({"solref": [0.009, 1.0]}, r"timeconst 0.009 s < 2 \* timestep \(0.01 s\)"),
    "timeconst zero": ({"solref": [0.0, 1.0]}, r"must both be > 0 or \(-stiffness, -damping\) both < 0"),
    "mixed signs": ({"solref": [-100.0, 1.0]}, r"must both be > 0 or \(-stiffness, -damping\) both < 0"),
    "dampratio zero": ({"solref": [0.02, 0.0]}, r"dampratio must be > 0 \(or both < 0"),
    "d0 at 1": ({"solimp": [1.0, 0.95, 0.001, 0.5, 2.0]}, r"solimp d0 must be in \(0, 1\), got 1.0"),
    "dwidth at 0": ({"solimp": [0.9, 0.0, 0.001, 0.5, 2.0]}, r"solimp dwidth must be in \(0, 1\)"),
    "width zero": ({"solimp": [0.9, 0.95, 0.0, 0.5, 2.0]}, r"solimp width must be > 0 m"),
    "midpoint at 1": ({"solimp": [0.9, 0.95, 0.001, 1.0, 2.0]}, r"solimp midpoint must be in \(0, 1\)"),
    "power below 1": ({"solimp": [0.9, 0.95, 0.001, 0.5, 0.5]}, r"solimp power must be >= 1, got 0.5"),
    "solimp short": ({"solimp": [0.9, 0.95]}, r"solimp must be 5 finite numbers"),
    "negative friction": ({"friction": [1.0, -0.1, 0.0]}, r"friction must be 3 values >= 0"),
    "friction NaN": ({"friction": [float("nan"), 0.0, 0.0]}, r"friction must be 3 finite numbers"),
    "condim 2": ({"condim": 2}, r"condim must be 1, 3, 4 or 6, got 2"),
    "negative margin": ({"margin_m": -0.001}, r"margin must be >= 0 m"),
    "negative gap": ({"gap_m": -0.01}, r"gap must be >= 0 m"),
    "priority not an integer": ({"priority": 0.5}, r"priority must be an integer"),
}


@pytest.mark.parametrize("case", list(RULES))
def test_each_rule_is_refused_naming_the_group_and_the_rule(case):
    change, message = RULES[case]
    problems = recorded_contact_problems([GOOD, GOOD | change], DT, "geoms")
    assert len(problems) == 1, problems  # only the broken rule of the broken row
    assert problems[0].startswith("geoms[1] (owner Robot, e.g. left_ankle_roll_link/Sphere_5): ")
    assert re.search(message, problems[0]), problems[0]


def test_a_row_without_a_parameter_and_a_record_that_is_no_list_are_refused():
    row = {k: v for k, v in GOOD.items() if k != "solimp"}
    assert recorded_contact_problems([row], DT, "g") == [
        "g[0] (owner Robot, e.g. left_ankle_roll_link/Sphere_5): missing ['solimp']"
    ]
    assert recorded_contact_problems({"a": 1}, DT, "g") == ["g: must be a list of geom rows, got dict"]
    assert recorded_contact_problems(None, DT, "g") == []  # recorded before contacts were: nothing to check


def test_contact_params_use_the_same_rules_but_only_the_time_constant_form():
    # ContactParams (configs/contact/*.yaml) model solref as (timeconst, dampratio): the stiffness form is refused
    assert contact_problems(
        (-20000.0, -100.0), (0.9, 0.95, 0.001, 0.5, 2.0), (1, 0.005, 0.0001), 3, 0, 0, DT, stiffness_form=False
    ) == ["timeconst must be > 0 s (only the positive solref form is supported), got -20000.0"]


@pytest.mark.parametrize("folder", SHIPPED, ids=[p.name for p in SHIPPED])
def test_the_shipped_exports_recorded_contacts_pass(folder):
    meta, _ = load_verified(folder)
    assert meta.simulator["contacts"]["geoms"], "every shipped export records its contact geoms"
    assert contact_problems_of(meta) == []


def _seal_edit(folder: Path, change) -> None:
    """Edit both files' metadata and write digest and SHA256SUMS anew (only the physical checks are left)."""
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


def test_an_export_with_an_unresolvable_time_constant_is_refused_and_one_without_contacts_loads(tmp_path):
    bad, old = tmp_path / "bad", tmp_path / "old"
    shutil.copytree(SOURCE, bad)
    shutil.copytree(SOURCE, old)

    def soften_feet(d: dict) -> None:
        d["simulator"]["contacts"]["geoms"][2]["solref"] = [0.004, 1.0]  # the foot spheres, below 2 * 5 ms

    _seal_edit(bad, soften_feet)
    message = (
        r"simulator\.contacts\.geoms\[2\] \(owner Robot, e\.g\. left_ankle_roll_link/Sphere_5\): timeconst "
        r"0\.004 s < 2 \* timestep \(0\.01 s\)"
    )
    with pytest.raises(ExportIntegrityError, match=message):
        load_verified(bad)
    _seal_edit(old, lambda d: d["simulator"]["contacts"].pop("geoms"))  # exported before the geoms were recorded
    meta, _ = load_verified(old)
    assert "geoms" not in meta.simulator["contacts"] and contact_problems_of(meta) == []


def _run(folder: Path, contacts: dict | None) -> Path:
    """A run folder (record, checkpoint) with ``params/contacts.json`` as train.py writes it, or without one."""
    (folder / "params").mkdir(parents=True)
    record = {
        "task": "Realgap-Balance-G1-v0",
        "rates": load_rate_profile("default").to_dict(),
        "num_envs_total": 4,
        "num_procs": 1,
        "overrides": [],
        "max_iterations": 5,
        "save_interval": 5,
    }
    (folder / "params" / "run.json").write_text(json.dumps(record))
    if contacts is not None:
        (folder / "params" / "contacts.json").write_text(json.dumps(contacts))
    torch.save({"iter": 2, "actor_state_dict": {}}, folder / "model_2.pt")
    return folder


def _resume_flags(run: Path) -> TrainRequest:
    return TrainRequest(task=None, resume=str(run))


RECORD = {
    "physics_dt": DT,
    "num_substeps": 1,
    "geoms": json.loads((SOURCE / "policy.json").read_text())["simulator"]["contacts"]["geoms"],
}


def test_a_run_folder_with_good_contacts_or_none_loads_on_every_path(tmp_path):
    good, older = _run(tmp_path / "good", RECORD), _run(tmp_path / "older", None)
    assert recorded_contacts(good) == RECORD
    assert recorded_contacts(older) is None  # recorded before contacts were
    for run in (good, older):
        assert policy_settings(run / "model_2.pt").rates == load_rate_profile("default")
        assert prepare_resume(_resume_flags(run))[1].run_dir == run


def _corrupt(record: dict, row: int, **change) -> dict:
    out = copy.deepcopy(record)
    out["geoms"][row].update(change)
    return out


RUN_REFUSALS = {
    "timeconst below 2 dt": (
        _corrupt(RECORD, 0, solref=[0.008, 1.0]),
        r"geoms\[0\] \(owner ground, e\.g\. ground/CollisionPlane_0\): timeconst 0\.008 s < 2",
    ),
    "condim 5": (_corrupt(RECORD, 1, condim=5), r"geoms\[1\] \(owner Robot, .*condim must be 1, 3, 4 or 6, got 5"),
    "another physics step": (
        RECORD | {"physics_dt": 0.002},
        r"physics_dt = 0\.002 s disagrees with the run's "
        r"recorded rates \(sim_dt 0\.005 s\)",
    ),
    "substeps halve the step": (
        _corrupt(RECORD | {"num_substeps": 4}, 0, solref=[0.002, 1.0]),
        r"timeconst 0\.002 s < 2 \* timestep \(0\.0025 s\)",
    ),
    "no geoms": ({"physics_dt": DT}, r"is not a contact record"),
}


@pytest.mark.parametrize("case", list(RUN_REFUSALS))
def test_a_corrupted_contact_record_is_refused_on_play_and_resume_and_nothing_is_lost(tmp_path, case):
    record, message = RUN_REFUSALS[case]
    run = _run(tmp_path / "run", record)
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    with pytest.raises(CheckpointError, match=rf"contacts\.json'.*(?s:.*){message}"):
        policy_settings(run / "model_2.pt")  # play, evaluate and export of a checkpoint
    with pytest.raises(CheckpointError, match=rf"contacts\.json'.*(?s:.*){message}"):
        prepare_resume(_resume_flags(run))
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


def test_an_unreadable_contact_record_is_refused(tmp_path):
    run = _run(tmp_path / "run", None)
    (run / "params" / "contacts.json").write_text('{"physics_dt": 0.005, "geoms": [')  # truncated
    with pytest.raises(CheckpointError, match=r"contacts\.json' is unreadable or not JSON"):
        policy_settings(run / "model_2.pt")


def test_an_export_of_contacts_the_loader_would_refuse_is_not_written():
    from realgap.envs.export.actions import ExportError
    from realgap.envs.export.writer import checked_json
    from realgap.envs.format.metadata import PolicyMetadata

    data = json.loads((SOURCE / "policy.json").read_text())
    assert checked_json(PolicyMetadata.from_dict(data))  # as shipped
    data["simulator"]["contacts"]["geoms"][0]["solimp"][4] = 0.5  # the ground's impedance power below 1
    with pytest.raises(ExportError, match=r"geoms\[0\] \(owner ground, .*\): solimp power must be >= 1, got 0.5"):
        checked_json(PolicyMetadata.from_dict(data))
