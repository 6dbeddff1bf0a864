"""Slow tier: ``scripts/evaluate_suite.py`` as a user runs it, on a two-family suite built from the shipped G1 suite
with tiny sizes, checked against what is known by hand.

Family ``standing``: the shipped suite's typical ranges, no pushes, 2 s episodes: the shipped balance policy stands
both episodes (2/2, time up exactly 2 s, Wilson 95 % interval of 2/2 = [0.342, 1]). Family ``weak``: the same robot
with 1 % of its datasheet torque: it collapses in both (0/2, [0, 0.658], time up < 2 s). Either number would come out
otherwise if the drives, the fall test or the statistics were wired wrongly.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
SCRIPT = str(REPO / "scripts" / "evaluate_suite.py")


def _tiny_suite(tmp_path: Path) -> Path:
    data = yaml.safe_load((REPO / "configs" / "suites" / "g1_v1.yaml").read_text())
    typical = data["families"]["typical"]
    weak = json.loads(json.dumps(typical))
    weak["fields"]["peak_torque_scale"]["range"] = [0.01, 0.01]
    typical["robots"] = weak["robots"] = 1
    weak["first_seed"] = 10100
    data["families"] = {"standing": typical, "weak": weak}
    data["episode"].update(duration_s=2.0, push_mps=[0.0, 0.0])
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_evaluate_suite_matches_the_by_hand_expectation(tmp_path: Path):
    out = tmp_path / "out"
    args = [
        SCRIPT,
        "--policy",
        str(REPO / "configs/policies/balance_g1"),
        "--suite",
        str(_tiny_suite(tmp_path)),
        "--episodes",
        "2",
        "--out",
        str(out),
    ]
    proc = subprocess.run([sys.executable, *args], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((out / "summary.json").read_text())
    standing, weak = report["families"]["standing"], report["families"]["weak"]
    assert (standing["successes"], standing["episodes"], standing["mean_time_s"]) == (2, 2, 2.0)
    assert standing["wilson95"] == pytest.approx([0.3424, 1.0], abs=1e-4)  # (p + z²/2n ∓ z·√(z²/4n²)) / (1 + z²/n)
    assert standing["endings"] == {"time_out": 2}
    assert (weak["successes"], weak["episodes"]) == (0, 2) and weak["mean_time_s"] < 2.0
    assert weak["wilson95"] == pytest.approx([0.0, 0.6576], abs=1e-4)  # z² / (n + z²) = 3.8416 / 5.8416
    assert weak["endings"] == {"fall": 2}
    assert report["all"]["successes"] == 2 and report["all"]["episodes"] == 4
    robots = {r["family"]: r for r in report["robots"]}
    meta = json.loads((REPO / "configs/policies/balance_g1/policy.json").read_text())
    peak = meta["actuators"]["groups"][0]["peak_torque"]
    assert robots["weak"]["drives"]["peak_torque"] == pytest.approx([0.01 * p for p in peak])
    assert "| weak | 1 × 2 | 0/2 = 0.000 |" in (out / "summary.md").read_text()
    lines = (out / "episodes.csv").read_text().splitlines()
    assert len(lines) == 5 and lines[0].startswith("family,robot,episode,success")
    for name in ("rates.png", "standing.png"):
        assert (out / name).stat().st_size > 1024


def test_an_export_of_another_task_is_refused_with_one_message(tmp_path: Path):
    args = [
        SCRIPT,
        "--policy",
        str(REPO / "configs/policies/grasp_franka"),
        "--suite",
        str(REPO / "configs/suites/g1_v1.yaml"),
        "--out",
        str(tmp_path / "x"),
    ]
    proc = subprocess.run([sys.executable, *args], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "balance task on robot 'g1'" in proc.stderr and "grasp" in proc.stderr
    assert not (tmp_path / "x").exists()
