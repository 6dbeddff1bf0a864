"""A resume is the run it resumes: every recorded flag restored, a changed one refused naming both values, a missing
or corrupt record or env state refused naming the file; a failed checkpoint write names the last good one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from realgap.envs.run.resume import prepare_resume, restore_flags
from realgap.envs.run.run_dir import CheckpointError, CheckpointWriteError
from realgap.envs.run.training import TrainRequest

pytestmark = pytest.mark.unit
RECORD = {
    "task": "Realgap-Balance-G1-v0",
    "num_envs_total": 8,
    "num_procs": 1,
    "dr_profile": "nominal",
    "rates": {"physics_hz": 200, "control_hz": 200, "policy_hz": 50, "target_mode": "hold"},
    "max_iterations": 20,
    "save_interval": 5,
    "seed": 3,
    "overrides": [],
}


def flags(**given) -> TrainRequest:
    """train.py's request with nothing given (every restorable flag None, the task too), then ``given``."""
    return TrainRequest(**({"task": None} | given))


def make_run(folder: Path, record: dict | None = RECORD, iteration: int = 4) -> Path:
    (folder / "params").mkdir(parents=True)
    torch.save({"iter": iteration, "actor_state_dict": {}}, folder / f"model_{iteration}.pt")
    if record is not None:
        (folder / "params" / "run.json").write_text(json.dumps(record))
    return folder


def test_a_plain_resume_restores_every_recorded_flag():
    args, notes = restore_flags(flags(), dict(RECORD))
    assert notes == []
    assert (args.task, args.num_envs, args.num_procs, args.max_iterations, args.save_interval) == (
        "Realgap-Balance-G1-v0",
        8,
        1,
        20,
        5,
    )


@pytest.mark.parametrize(
    ("given", "text"),
    [
        ({"num_envs": 16}, "--num_envs 16 cannot change a resumed run, which recorded --num_envs 8"),
        ({"task": "Realgap-Grasp-Franka-v0"}, "recorded --task Realgap-Balance-G1-v0"),
        ({"dr_profile": "none"}, "--dr_profile none cannot change a resumed run, which recorded --dr_profile nominal"),
        ({"num_procs": 2}, "--num_procs 2 cannot change"),
        ({"rates": "default_100hz_missing"}, "no rate profile"),
    ],
)
def test_a_changed_flag_is_refused_naming_both_values(given, text):
    with pytest.raises((ValueError, FileNotFoundError), match=text.replace("(", r"\(")):
        restore_flags(flags(**given), dict(RECORD))


def test_the_same_values_and_the_safe_changes_are_applied_and_stated():
    given = flags(num_envs=8, dr_profile="configs/dr/nominal.yaml", max_iterations=30, save_interval=10)
    args, notes = restore_flags(given, dict(RECORD), from_iteration=5)
    assert args.max_iterations == 30 and args.save_interval == 10
    assert notes == [
        "--max_iterations 30 extends the run's recorded 20",
        "--save_interval 10 replaces the run's recorded 5",
    ]
    args, notes = restore_flags(flags(max_iterations=8), dict(RECORD), from_iteration=5)  # stopped sooner
    assert notes == ["--max_iterations 8 shortens the run's recorded 20"] and args.max_iterations == 8
    with pytest.raises(ValueError, match="--max_iterations 5 leaves nothing to train: the checkpoint continues at"):
        restore_flags(flags(max_iterations=5), dict(RECORD), from_iteration=5)


def test_a_checkpoint_file_resumes_that_checkpoint(tmp_path):
    run = make_run(tmp_path / "run")
    torch.save({"iter": 9, "actor_state_dict": {}}, run / "model_9.pt")
    _, resume = prepare_resume(flags(resume=str(run / "model_4.pt")))
    assert (resume.run_dir, resume.checkpoint.name) == (run, "model_4.pt")
    assert prepare_resume(flags(resume=str(run)))[1].checkpoint.name == "model_9.pt"  # a folder: its latest


@pytest.mark.parametrize(
    ("damage", "text"),
    [
        (lambda run: (run / "params" / "run.json").unlink(), "run.json' is missing"),
        (lambda run: (run / "params" / "run.json").write_text('{"task": "Realgap-Bal'), "run.json' is unreadable"),
        (lambda run: (run / "params" / "run.json").write_text("[1, 2]"), "holds a JSON list"),
        (lambda run: (run / "model_4.env.pt").write_bytes(b"\x80\x02trunc"), "Cannot load the env state"),
        (lambda run: (run / "notes.txt").write_text("x"), None),
    ],
)
def test_a_missing_or_corrupt_record_or_env_state_is_refused_naming_the_file(tmp_path, damage, text):
    run = make_run(tmp_path / "run")
    damage(run)
    target = run / "notes.txt" if text is None else run
    with pytest.raises(CheckpointError, match=text or "give a run folder or a model_<iteration>.pt"):
        prepare_resume(flags(resume=str(target)))


WRITE_UNDER_A_FILE_SIZE_LIMIT = """
import resource, signal, sys, torch
from pathlib import Path
from realgap.envs.run.checkpoint import write_checkpoint
from realgap.envs.run.run_dir import CheckpointWriteError
run = Path(sys.argv[1])
write_checkpoint({"iter": 1, "w": torch.zeros(4)}, run / "model_1.pt", {"env": torch.zeros(4)})
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))
try:
    write_checkpoint({"iter": 2, "w": torch.zeros(100_000)}, run / "model_2.pt", {"env": torch.zeros(10)})
except CheckpointWriteError as err:
    print(err)
"""


def test_a_failed_checkpoint_write_names_the_last_good_one_and_leaves_no_orphan(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    out = subprocess.run(
        [sys.executable, "-c", WRITE_UNDER_A_FILE_SIZE_LIMIT, str(run)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    message = out.stdout.strip()
    assert f"Cannot write checkpoint '{run / 'model_2.pt'}'" in message
    assert f"the last good checkpoint is '{run / 'model_1.pt'}'" in message
    assert f"python scripts/train.py --resume {run}" in message
    assert sorted(p.name for p in run.iterdir()) == ["model_1.env.pt", "model_1.pt"]  # no temp file, no new state
    assert CheckpointWriteError.__mro__[1] is CheckpointError  # train.py reports it as a user-facing error


def test_deterministic_is_a_recorded_flag(monkeypatch):
    from realgap.envs.sim.physics import DETERMINISTIC_ENV, deterministic_requested

    monkeypatch.setenv(DETERMINISTIC_ENV, "0")  # "0": not requested; teardown restores the variable as it was
    args, notes = restore_flags(flags(), dict(RECORD, deterministic=True))
    assert notes == ["--deterministic restored from the run's record"]
    assert args.deterministic is True and deterministic_requested()  # reaches the env config and child processes
    os.environ[DETERMINISTIC_ENV] = "0"  # restore_flags wrote "1" itself: monkeypatch undoes only its own writes
    with pytest.raises(ValueError, match="--deterministic cannot change a resumed run, which was trained without it"):
        restore_flags(flags(deterministic=True), dict(RECORD, deterministic=False))
    assert (
        restore_flags(flags(), dict(RECORD))[1] == [] and not deterministic_requested()
    )  # an older record: nothing set


def test_every_key_a_new_run_records_is_a_known_record_key():
    # a key written by record_new_run but unknown to check_record makes every run of it refuse --resume
    import ast

    from realgap.envs.run.resume import RECORD_KEYS

    source = (Path(__file__).resolve().parents[2] / "envs" / "run" / "training.py").read_text()
    function = next(n for n in ast.walk(ast.parse(source)) if getattr(n, "name", "") == "record_new_run")
    extra = next(
        n.value
        for n in ast.walk(function)
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "extra"
    )
    written = {key.value for key in extra.keys}
    assert "actuator_model" in written and written <= set(RECORD_KEYS), written - set(RECORD_KEYS)
