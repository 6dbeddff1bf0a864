"""Slow tier: the action-space comparison of all eight action spaces on a tiny budget (2 iterations × 8 envs each), as a
user runs it — it trains and evaluates each variant and writes the CSV, the markdown table and non-empty, decodable
plots, every row naming its actuator model, its three rates and its joint-speed-reflex violations."""

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]


def test_compare_all_eight_action_spaces_on_a_tiny_budget(tmp_path):
    from realgap.tasks.grasp import ACTION_SPACE_IDS

    spaces = list(ACTION_SPACE_IDS)
    assert len(spaces) == 8
    out = tmp_path / "compare"
    cmd = [
        sys.executable,
        str(REPO / "scripts/compare_actions.py"),
        "--max_iterations",
        "2",
        "--num_envs",
        "8",
        "--episodes",
        "2",
        "--eval_envs",
        "8",
        "--episode_s",
        "1",
        "--factors",
        "command_delay_s",
        "--values",
        "command_delay_s=0,0.02",
        "--jobs",
        "2",
    ]
    proc = subprocess.run([*cmd, "--out", str(out)], cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # progress: the children's own lines forwarded with their tag, and one line per finished run with an ETA
    for tag in (f"{space}_s0" for space in spaces):
        assert f"[realgap] {tag} | train 2/2 it" in proc.stdout and f"[realgap] {tag} | evaluate " in proc.stdout
    finished = [line for line in proc.stdout.splitlines() if line.startswith("[realgap] compare ")]
    assert [line.split(" [")[0] for line in finished] == [f"[realgap] compare {i}/8 runs" for i in range(1, 9)]
    assert all("ETA" in line for line in finished)
    rows = list(csv.DictReader(open(out / "comparison.csv")))
    assert [r["action_space"] for r in rows] == spaces
    for r in rows:
        assert (r["physics_hz"], r["control_hz"], r["policy_hz"], r["target_mode"]) == ("200", "200", "50", "hold")
        assert 0.0 <= float(r["speed_reflex_rate"]) <= 1.0  # violations per space, from the evaluation
        assert "train_reflex_rate" in r and "train_success_rate" in r
        assert r["iterations"] == "2" and r["num_envs"] == "8" and r["env_steps"] == str(2 * 8 * 24)  # equal budget
        assert r["seed"] == "0" and 0.0 <= float(r["success_rate"]) <= 1.0 and r["eval_episodes"] == "2"
        assert float(r["success_ci95_lo"]) <= float(r["success_rate"]) <= float(r["success_ci95_hi"])
        assert "command_delay_s_mean_success" in r and "command_delay_s_worst_success" in r
    models = {r["action_space"]: r["low_level_actuator_model"] for r in rows}
    assert "Kp·(q* − q)" in models["joint_pos"]  # the datasheet PD of joint position targets
    assert "Kp = Kd = 0" in models["joint_torque"]  # torque pass-through with gravity compensation
    assert "M(q)·(400·(s − q) − 40·q̇)" in models["computed_torque"] and "Jᵀ" in models["cartesian_impedance"]
    table = (out / "comparison.md").read_text()
    assert all(f"| `{space}` |" in table for space in spaces) and "Low-level actuator model" in table
    assert "200 / 200 / 50 Hz, hold" in table and "speed-reflex episodes" in table
    record = json.loads((out / "comparison.json").read_text())
    assert record["settings"]["max_iterations"] == 2 and len(record["rows"]) == 8
    assert record["settings"]["seeds"] == record["settings"]["trained_seeds"] == [0]
    for space in (f"{space}_s0" for space in spaces):
        report = json.loads((out / "eval" / space / "report.json").read_text())
        assert report["action_space"]["name"] == space[: -len("_s0")] and report["success"] == "task success"
    import matplotlib.image

    for name in ("learning_curves", "success", "robustness"):
        path = out / f"{name}.png"
        assert path.stat().st_size > 1024
        assert matplotlib.image.imread(path).ndim == 3
    for tag in (f"{space}_s0" for space in spaces):  # each run's training record kept beside its evaluation
        kept = out / "eval" / tag / "run"
        assert (kept / "progress.csv").is_file() and (kept / "params" / "run.json").is_file()
    # joining this comparison to one that would train the same runs again is refused before anything is written
    again = subprocess.run(
        [*cmd, "--include", str(out), "--out", str(tmp_path / "again")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert again.returncode == 2 and "both included and to be trained" in again.stderr, again.stderr[-2000:]
    assert not (tmp_path / "again").exists()
    # --seeds none trains nothing and rebuilds the same rows, and the per-space summary, from the folder alone
    rebuilt = subprocess.run(
        [*cmd, "--seeds", "none", "--include", str(out), "--out", str(tmp_path / "rebuilt")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert rebuilt.returncode == 0, rebuilt.stderr[-2000:]
    assert "[realgap] train " not in rebuilt.stdout
    rebuilt_record = json.loads((tmp_path / "rebuilt" / "comparison.json").read_text())
    again_rows = rebuilt_record["rows"]
    assert (rebuilt_record["settings"]["seeds"], rebuilt_record["settings"]["trained_seeds"]) == ([0], [])

    def without_run_dir(rows: list[dict]) -> list[dict]:
        return [{k: v for k, v in r.items() if k != "run_dir"} for r in rows]

    assert without_run_dir(again_rows) == without_run_dir(record["rows"])
    summary = (tmp_path / "rebuilt" / "comparison.md").read_text().split("Per run:")[0]
    assert all(f"| `{space}` | 0 | " in summary for space in spaces)


def test_a_sitting_stopped_part_way_keeps_the_runs_it_finished(tmp_path):
    """comparison.json is rewritten after every finished run: a sitting killed during its second run still joins
    the first to a later table (--include), and the run in progress is simply absent."""
    import os
    import signal
    import time

    out = tmp_path / "stopped"
    cmd = [
        sys.executable,
        str(REPO / "scripts/compare_actions.py"),
        "--spaces",
        "joint_pos,joint_vel",
        "--max_iterations",
        "2",
        "--num_envs",
        "8",
        "--episodes",
        "2",
        "--eval_envs",
        "8",
        "--episode_s",
        "1",
        "--factors",
        "command_delay_s",
        "--values",
        "command_delay_s=0,0.02",
        "--jobs",
        "1",
    ]
    proc = subprocess.Popen(
        [*cmd, "--out", str(out)],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 900
        while not (out / "comparison.json").is_file() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        assert proc.poll() is None, "the sitting ended before its second run: nothing was stopped part-way"
        os.killpg(proc.pid, signal.SIGKILL)  # the whole sitting, its training child included
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    record = json.loads((out / "comparison.json").read_text())
    assert [r["action_space"] for r in record["rows"]] == ["joint_pos"]
    rebuilt = subprocess.run(
        [*cmd, "--seeds", "none", "--include", str(out), "--out", str(tmp_path / "rebuilt")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert rebuilt.returncode == 0, rebuilt.stderr[-2000:]
    rows = list(csv.DictReader(open(tmp_path / "rebuilt" / "comparison.csv")))
    assert [(r["action_space"], r["seed"]) for r in rows] == [("joint_pos", "0")]
    # the same command again into the same folder goes on: here as if stopped after joint_pos's training, before its
    # evaluation (its evaluation and the table removed): it is evaluated, not trained again, with its first time
    import shutil

    first_s = json.loads((out / "logs" / "joint_pos_s0.train_s.json").read_text())["train_wall_s"]
    shutil.rmtree(out / "eval" / "joint_pos_s0")
    (out / "comparison.json").unlink()
    again = subprocess.run([*cmd, "--out", str(out)], cwd=tmp_path, capture_output=True, text=True, timeout=1200)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "joint_pos_s0: its training had ended" in again.stdout and "train joint_pos_s0" not in again.stdout
    rows = {r["action_space"]: r for r in csv.DictReader(open(out / "comparison.csv"))}
    assert sorted(rows) == ["joint_pos", "joint_vel"] and float(rows["joint_pos"]["train_wall_s"]) == round(first_s, 1)
    # and once more: both runs are kept, nothing is trained or evaluated
    third = subprocess.run([*cmd, "--out", str(out)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert third.returncode == 0 and "2 runs kept" in third.stdout, third.stdout[-2000:]
    assert "[realgap] train " not in third.stdout and "evaluating it" not in third.stdout
