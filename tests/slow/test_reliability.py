"""Slow tier, reliability: a training run killed with SIGKILL resumes from its last checkpoint and continues with the
next iteration; the same seed on the CPU gives the same first iterations (metrics and weights); a run stopped and
resumed from its newest checkpoint continues exactly as the uninterrupted run (losses, rewards, episode statistics,
weights)."""

import csv
import json
import math
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import torch
import yaml
from shared_run import REPO, TINY_RUN_ARGS, TINY_RUN_ITERATIONS, TRAIN, copy_run

pytestmark = pytest.mark.slow


def _iterations(run: Path) -> list[int]:
    return [int(r["iteration"]) for r in csv.DictReader(open(run / "progress.csv"))]


def _rows(run: Path) -> list[dict[str, str]]:
    """Every logged metric of every iteration, timings (``*_s``) excluded."""
    return [{k: v for k, v in r.items() if not k.endswith("_s")} for r in csv.DictReader(open(run / "progress.csv"))]


def test_kill_9_then_resume_continues(tmp_path):
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [*TRAIN, "--max_iterations", "200", "--save_interval", "1", "--seed", "4", "--log_root", str(runs)],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 900
        while time.time() < deadline and not list(runs.glob("*/*/model_2.pt")):
            time.sleep(1.0)
        assert list(runs.glob("*/*/model_2.pt")), "training did not reach iteration 2"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    (run,) = list((runs / "balance_g1").iterdir())
    from realgap.envs.run.run_dir import CHECKPOINT_RE

    checkpoints = [p for p in run.iterdir() if CHECKPOINT_RE.search(p.name)]
    last = max(int(CHECKPOINT_RE.search(p.name).group(1)) for p in checkpoints)
    for p in checkpoints:  # every checkpoint on disk is complete (atomic writes)
        assert "iter" in torch.load(p, weights_only=False, map_location="cpu")
    # env state: the newest checkpoint always has its own; a kill between two writes may leave one more file
    # (the previous checkpoint's state, or the state of a checkpoint not yet written), never older ones
    states = {p.name for p in run.glob("*.env.pt")}
    assert f"model_{last}.env.pt" in states
    assert states <= {f"model_{i}.env.pt" for i in (last - 1, last, last + 1)}, states

    out = subprocess.run(
        [*TRAIN, "--resume", str(run), "--max_iterations", str(last + 3)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert f"at iteration {last + 1}" in out.stdout
    assert "| seed 4 |" in out.stdout  # resumed without --seed: the run's recorded seed, not the task's 42
    (resume,) = json.loads((run / "params" / "run.json").read_text())["resumes"]  # the continuation is on record
    assert "--resume" in resume["argv"] and resume["from_iteration"] == last + 1
    # the progress log continues without a gap or a repeat: 0..last from the first run, then last+1..last+2
    assert _iterations(run) == list(range(last + 3))
    assert (run / f"model_{last + 2}.pt").is_file()
    assert not list(run.glob(".tmp_*"))


@pytest.fixture(scope="module")
def whole_run(tmp_path_factory) -> Path:
    """The tier's shared tiny run (tests/conftest.py) uninterrupted to 4 iterations: the same command and seed."""
    root = tmp_path_factory.mktemp("whole")
    args = [*TINY_RUN_ARGS[:-1], "4"]
    out = subprocess.run(
        [*TRAIN, *args, "--log_root", str(root)], cwd=root, capture_output=True, text=True, timeout=900
    )
    assert out.returncode == 0, out.stderr[-3000:]
    (run,) = list((root / "balance_g1").iterdir())
    return run


def test_same_seed_same_first_iterations(tiny_run, whole_run):
    """Two processes with the same seed (the shared 2-iteration run and the 4-iteration one) log the same first two
    iterations and hold the same weights after them."""
    a, b = _rows(tiny_run.path), _rows(whole_run)[:TINY_RUN_ITERATIONS]
    assert [r["iteration"] for r in a] == ["0", "1"] and a == b  # rewards, episode lengths, task metrics
    wa, wb = (
        torch.load(run / "model_1.pt", weights_only=False, map_location="cpu")["actor_state_dict"]
        for run in (tiny_run.path, whole_run)
    )
    assert wa.keys() == wb.keys()
    for name in wa:
        assert torch.equal(wa[name], wb[name]), name


def test_resume_is_exact(tiny_run, whole_run, tmp_path):
    """Stopped after iteration 1 (the shared run) and resumed, a run's iterations 2 and 3 equal those of the same run
    uninterrupted: every logged metric (rewards, episode lengths, survival, push statistics; timings excluded) and
    every weight."""
    run = copy_run(tiny_run, tmp_path)
    rest = subprocess.run(
        [*TRAIN, "--resume", str(run), "--max_iterations", "4"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert rest.returncode == 0, rest.stderr[-3000:]
    assert "an exact continuation" in rest.stdout
    a, b = _rows(whole_run), _rows(run)
    assert [r["iteration"] for r in b] == ["0", "1", "2", "3"]
    assert a == b  # iterations 2 and 3 after the resume included
    assert float(a[3]["mean_episode_length"]) > 0  # episodes ended after the resume: the statistics are not empty
    wa = torch.load(whole_run / "model_3.pt", weights_only=False, map_location="cpu")
    wb = torch.load(run / "model_3.pt", weights_only=False, map_location="cpu")
    for part in ("actor_state_dict", "critic_state_dict"):
        for name in wa[part]:
            assert torch.equal(wa[part][name], wb[part][name]), f"{part}.{name}"


def test_resume_from_an_older_checkpoint_says_it_is_not_exact(tiny_run, tmp_path):
    """Only the newest checkpoint carries the env state; resuming an older one says so and still continues."""
    run = copy_run(tiny_run, tmp_path)
    assert not (run / "model_0.env.pt").exists() and (run / "model_1.env.pt").is_file()
    (run / "model_1.pt").unlink()
    rest = subprocess.run(
        [*TRAIN, "--resume", str(run), "--max_iterations", "3"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert rest.returncode == 0, rest.stderr[-3000:]
    assert "no model_0.env.pt beside it" in rest.stdout and "not exact" in rest.stdout


def _stopped_and_resumed(tmp_path: Path, profile: dict, stop: int, total: int) -> tuple[list[dict], list[dict], str]:
    """The crouch task with ``profile`` and 0.5 s episodes (so episodes end within a few iterations): the progress
    rows of a run of ``total`` iterations uninterrupted, of the same run stopped after ``stop`` and resumed, and the
    resume's stdout."""
    (tmp_path / "profile.yaml").write_text(yaml.safe_dump(profile))
    args = [*TRAIN[:2], "--task", "Realgap-Balance-G1-Crouch-v0", *TRAIN[4:], "--seed", "5", "--save_interval", "1"]
    args += ["--dr_profile", str(tmp_path / "profile.yaml"), "--set", "env.episode_length_s=0.5"]
    resume = [*TRAIN[:2], "--device", "cpu", "--max_iterations", str(total), "--resume"]
    runs = {}
    for name, cmd in (
        ("whole", [*args, "--max_iterations", str(total)]),
        ("part", [*args, "--max_iterations", str(stop)]),
    ):
        out = subprocess.run([*cmd, "--log_root", str(tmp_path / name)], capture_output=True, text=True, timeout=900)
        assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
        (runs[name],) = list((tmp_path / name / "balance_g1").iterdir())
    out = subprocess.run([*resume, str(runs["part"])], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "an exact continuation" in out.stdout
    return _rows(runs["whole"]), _rows(runs["part"]), out.stdout


def test_resume_is_exact_under_a_width_curriculum(tmp_path):
    """Class-based manager terms (the width curriculum's level, each randomization term's generator) live only in
    their configs; stopped while the width is rising and resumed, the run logs the same iterations as uninterrupted:
    the level goes on from where it was, not from 0. A quick rule so the width moves within a few iterations; the
    inertia sections are left out (their known drift: the next test)."""
    profile = yaml.safe_load((REPO / "configs/dr/wide_curriculum.yaml").read_text())
    profile["width_curriculum"].update(step=0.02, promote=0.0, demote=0.0, min_episodes=4)
    profile.update(name="wide_quick_curriculum", payload=[], link_inertia=[])
    a, b, said = _stopped_and_resumed(tmp_path, profile, stop=4, total=8)
    assert "known drift" not in said
    assert 0.0 < float(a[3]["width_level"]) < float(a[7]["width_level"]) < 1.0  # the level moves across the stop
    assert [r["iteration"] for r in b] == [str(i) for i in range(8)]
    assert a == b


def test_resume_with_inertia_randomization_drifts_within_what_it_says(tmp_path):
    """Known, not found yet: with link or payload inertia randomized, something below the randomized bodies is not
    restored bit for bit. The resume says so, and the drift stays small: episode statistics equal, the mean reward
    within 1e-4 relative and every reward term within 5e-4 over the two resumed iterations (measured: 1.3e-5 and
    5e-5)."""
    profile = yaml.safe_load((REPO / "configs/dr/nominal.yaml").read_text())
    a, b, said = _stopped_and_resumed(tmp_path, profile, stop=3, total=5)
    assert "with body inertia randomized, to about 1e-5 relative in the mean reward" in said

    def rewards(key: str) -> bool:
        return key.startswith(("reward_", "mean_reward"))

    for ra, rb in zip(a, b, strict=True):
        assert {k: v for k, v in ra.items() if not rewards(k)} == {k: v for k, v in rb.items() if not rewards(k)}
        assert math.isclose(float(ra["mean_reward"]), float(rb["mean_reward"]), rel_tol=1e-4), ra["iteration"]
        for k in (k for k in ra if k.startswith("reward_")):
            assert abs(float(ra[k]) - float(rb[k])) <= 5e-4, (ra["iteration"], k)
