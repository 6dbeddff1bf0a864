"""Slow tier: a training run records the engine's contact parameters (``params/contacts.json``, from the live
MuJoCo-Warp model) and a corrupted record is refused on load (play / evaluate / export of a checkpoint, and ``train.py
--resume`` as a user runs it) naming the group and the rule, with every file of the run left as it was."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from shared_run import copy_run

from realgap.envs.format.contacts import recorded_contact_problems
from realgap.envs.run.run_dir import CheckpointError
from realgap.envs.run.run_record import policy_settings, recorded_contacts

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]


def test_training_records_its_contacts_and_a_corrupted_record_is_refused(tiny_run, tmp_path):
    record = json.loads((tiny_run.path / "params" / "contacts.json").read_text())
    assert record["physics_dt"] == 0.005 and record["num_substeps"] >= 1  # the balance task's 200 Hz physics
    owners = {row["owner"] for row in record["geoms"]}
    assert {"ground", "Robot"} <= owners, owners  # the ground plane and the robot's colliders of env 0
    assert sum(row["count"] for row in record["geoms"] if row["owner"] == "Robot") > 10
    assert recorded_contact_problems(record["geoms"], 0.005, "geoms") == []
    assert recorded_contacts(tiny_run.path) == record

    run = copy_run(tiny_run, tmp_path)
    robot = next(i for i, row in enumerate(record["geoms"]) if row["owner"] == "Robot")
    record["geoms"][robot]["solref"] = [0.004, 1.0]  # below 2 * 5 ms: MuJoCo would clamp it to 0.01 s
    (run / "params" / "contacts.json").write_text(json.dumps(record, indent=2))
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    message = rf"geoms\[{robot}\] \(owner Robot, e\.g\. .*\): timeconst 0\.004 s < 2 \* timestep \(0\.01 s\)"
    with pytest.raises(CheckpointError, match=message):
        policy_settings(run / "model_1.pt")
    resume = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts/train.py"),
            "--resume",
            str(run),
            "--max_iterations",
            "3",
            "--device",
            "cpu",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert resume.returncode != 0
    said = resume.stderr
    assert "contacts.json" in said and "timeconst 0.004 s < 2 * timestep" in said, said[-2000:]
    assert "Traceback" not in said  # a clear message, not a crash
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before  # nothing written, nothing lost
