"""Slow tier: the action-space comparison on a tiny budget (2 iterations × 8 envs per variant), as a user runs it — it
trains and evaluates each variant and writes the CSV, the markdown table and non-empty, decodable plots, every row
naming its actuator model and its three rates."""

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]


def test_compare_two_action_spaces_on_a_tiny_budget(tmp_path):
    out = tmp_path / "compare"
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts/compare_actions.py"), "--spaces", "joint_pos,joint_torque",
         "--max_iterations", "2", "--num_envs", "8", "--episodes", "2", "--eval_envs", "8", "--episode_s", "1",
         "--factors", "command_delay_s", "--values", "command_delay_s=0,0.02", "--out", str(out), "--jobs", "2"],
        cwd=tmp_path, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    # progress: the children's own lines forwarded with their tag, and one line per finished run with an ETA
    for tag in ("joint_pos_s0", "joint_torque_s0"):
        assert f"[realgap] {tag} | train 2/2 it" in proc.stdout and f"[realgap] {tag} | evaluate " in proc.stdout
    finished = [line for line in proc.stdout.splitlines() if line.startswith("[realgap] compare ")]
    assert [line.split(" [")[0] for line in finished] == ["[realgap] compare 1/2 runs", "[realgap] compare 2/2 runs"]
    assert all("ETA" in line for line in finished)
    rows = list(csv.DictReader(open(out / "comparison.csv")))
    assert [r["action_space"] for r in rows] == ["joint_pos", "joint_torque"]
    for r in rows:
        assert (r["physics_hz"], r["control_hz"], r["policy_hz"], r["target_mode"]) == ("200", "200", "50", "hold")
        assert r["iterations"] == "2" and r["num_envs"] == "8" and r["env_steps"] == str(2 * 8 * 24)  # equal budget
        assert r["seed"] == "0" and 0.0 <= float(r["success_rate"]) <= 1.0 and r["eval_episodes"] == "2"
        assert float(r["success_ci95_lo"]) <= float(r["success_rate"]) <= float(r["success_ci95_hi"])
        assert "command_delay_s_mean_success" in r and "command_delay_s_worst_success" in r
    assert "Kp·(q* − q)" in rows[0]["low_level_actuator_model"]  # the datasheet PD of joint position targets
    assert "Kp = Kd = 0" in rows[1]["low_level_actuator_model"]  # torque pass-through with gravity compensation
    table = (out / "comparison.md").read_text()
    assert "| `joint_pos` |" in table and "200 / 200 / 50 Hz, hold" in table and "Low-level actuator model" in table
    record = json.loads((out / "comparison.json").read_text())
    assert record["settings"]["max_iterations"] == 2 and len(record["rows"]) == 2
    for space in ("joint_pos_s0", "joint_torque_s0"):
        report = json.loads((out / "eval" / space / "report.json").read_text())
        assert report["action_space"]["name"] == space[: -len("_s0")] and report["success"] == "task success"
    import matplotlib.image

    for name in ("learning_curves", "success", "robustness"):
        path = out / f"{name}.png"
        assert path.stat().st_size > 1024
        assert matplotlib.image.imread(path).ndim == 3
