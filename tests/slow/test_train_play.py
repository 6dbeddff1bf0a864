"""Slow tier: the README's train command for 2 iterations, then play the checkpoint (in subprocesses, as a user runs
them): checkpoints, progress CSV, TensorBoard logs, resolved configs and git state land in the run folder, play
prints the task metrics and exports ONNX + TorchScript."""

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from shared_run import copy_run

from realgap.envs.run.run_dir import fill_reward_terms, write_progress

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]


def test_train_two_iterations_then_play(tiny_run, tmp_path):
    train_stdout = tiny_run.stdout  # the shared run of the tier (tests/conftest.py): 2 iterations, 8 envs
    progress = [line for line in train_stdout.splitlines() if line.startswith("[realgap] train ")]
    assert [line.split(" [")[0] for line in progress] == ["[realgap] train 1/2 it", "[realgap] train 2/2 it"]
    assert all("ETA" in line and "steps/s=" in line and "survival_rate=" in line for line in progress), progress
    ours = [line for line in train_stdout.splitlines() if line.startswith("[realgap]")]
    assert not [line for line in ours if "nan" in line], ours  # "—" until an episode ends, never nan
    run = copy_run(tiny_run, tmp_path)  # play exports into the run folder
    assert (run / "model_0.pt").is_file() and (run / "model_1.pt").is_file()
    assert list(run.glob("events.out.tfevents.*")), "TensorBoard log missing"
    rows = list(csv.DictReader(open(run / "progress.csv")))
    assert [int(r["iteration"]) for r in rows] == [0, 1]
    assert {"collect_s", "learn_s", "mean_reward", "mean_episode_length"} <= set(rows[0])
    assert {"reward_alive", "reward_fall"} <= set(rows[0])  # each reward term: in the CSV, not the line
    assert not [line for line in ours if "reward_alive=" in line]
    # an older record without them gets the same columns and values back from the run's own TensorBoard log
    terms = sorted(k for k in rows[0] if k.startswith("reward_"))
    older = tmp_path / "older_progress.csv"
    kept = [k for k in rows[0] if k not in terms]
    write_progress(older, kept, [{k: r[k] for k in kept} for r in rows])
    assert sorted(fill_reward_terms(run, older)) == terms
    filled = list(csv.DictReader(open(older)))
    for theirs, mine in zip(rows, filled, strict=True):
        for term in terms:
            a, b = float(theirs[term]), float(mine[term])
            assert (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9), (term, a, b)
    assert any(not math.isnan(float(r[t])) for r in rows for t in terms)  # some value was compared, not only NaNs
    assert (run / "params" / "env.yaml").is_file() and (run / "params" / "agent.yaml").is_file()
    record = json.loads((run / "params" / "run.json").read_text())
    assert record["task"] == "Realgap-Balance-G1-v0" and "--max_iterations" in record["argv"]
    assert len(record["git"].get("commit", "")) in (0, 40)  # a commit hash when run from a git checkout
    env_yaml = (run / "params" / "env.yaml").read_text()
    assert "physics_hz: 200" in env_yaml and "policy_hz: 50" in env_yaml  # the rates are recorded

    play = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts/play.py"),
            "--checkpoint",
            str(run),
            "--episodes",
            "4",
            "--num_envs",
            "4",
            "--episode_s",
            "2",
            "--device",
            "cpu",
            "--json",
            str(tmp_path / "metrics.json"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert play.returncode == 0, play.stderr[-3000:]
    assert "[realgap] survival=" in play.stdout and "(95 % CI " in play.stdout and "time_to_fall_s=" in play.stdout
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["episodes"] == 4 and 0.0 <= metrics["survival_rate"] <= 1.0 and metrics["episode_s"] == 2.0
    assert "| 4 episodes of 2 s" in play.stdout  # a shortened episode is said
    assert metrics["task"] == "Realgap-Balance-G1-Play-v0"
    exported = run / "realgap_export"  # not exported/, where isaaclab play writes its own policy.onnx
    assert (exported / "policy.onnx").is_file() and (exported / "policy.pt").is_file()
    meta = json.loads((exported / "policy.json").read_text())
    assert meta["task"] == "Realgap-Balance-G1-v0" and len(meta["joints"]["names"]) == 29
    assert meta["actions"]["raw_clip"] == 4.0 and meta["rates"]["policy_hz"] == 50


def test_play_the_shipped_grasp_export_names_the_grasp_metrics(tmp_path):
    # The grasp task reports success, drops and the speed reflex, never the balance task's survival or pushes.
    play = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts/play.py"),
            "--policy",
            str(REPO / "configs/policies/grasp_franka"),
            "--episodes",
            "2",
            "--num_envs",
            "2",
            "--episode_s",
            "1",
            "--device",
            "cpu",
            "--json",
            str(tmp_path / "metrics.json"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert play.returncode == 0, play.stderr[-3000:]
    assert "[realgap] success=" in play.stdout and "(95 % CI " in play.stdout
    assert "survival" not in play.stdout and "push_survived" not in play.stdout and "time_to_fall" not in play.stdout
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["task"] == "Realgap-Grasp-Franka-EEPoseDelta-Play-v0" and metrics["episodes"] == 2
    assert set(metrics["summary"]) >= {"episodes", "success", "non_finite_rate", "mean_return"}
