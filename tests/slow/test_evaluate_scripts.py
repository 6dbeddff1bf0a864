"""Slow tier: the robustness sweep and sim2sim scripts on the tier's shared 2-iteration checkpoint, in subprocesses
as a user runs them — each writes its report with the expected fields, and the sweep its plots (non-empty, decodable
PNGs)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from shared_run import copy_run

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def run_dir(tiny_run, tmp_path_factory):
    """A copy of the tier's shared tiny run (tests/conftest.py): sim2sim exports into the run folder."""
    return copy_run(tiny_run, tmp_path_factory.mktemp("evaluate"))


def _check_png(path: Path) -> None:
    import matplotlib.image

    assert path.stat().st_size > 1024, path
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100


def test_evaluate_writes_report_and_plots(run_dir, tmp_path):
    out = tmp_path / "robustness"
    proc = _run(
        [
            str(REPO / "scripts/evaluate.py"),
            "--checkpoint",
            str(run_dir),
            "--label",
            "ppo",
            "--zero_action",
            "--factors",
            "push_mps,payload_kg,command_delay_s",
            "--values",
            "push_mps=0,1.5",
            "--values",
            "payload_kg=0,10",
            "--values",
            "command_delay_s=0,0.02",
            "--episodes",
            "2",
            "--num_envs",
            "16",
            "--episode_s",
            "1",
            "--device",
            "cpu",
            "--out",
            str(out),
        ],
        tmp_path,
    )
    assert "wrote" in proc.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["task"] == "Realgap-Balance-G1-Play-v0" and report["robot"] == "g1"
    lo, hi = report["reference"]["ppo"]["success_ci95"]  # the headline names the balance task's metric, with its CI
    rate = report["reference"]["ppo"]["success_rate"]
    assert f"[realgap] ppo: survival={rate:.3f} (95 % CI {lo:.3f}-{hi:.3f}, 2 episodes)" in proc.stdout
    assert report["rates"]["physics_hz"] == 200 and report["rates"]["policy_hz"] == 50
    assert report["actuators"]["g1"]["model"] == "RealgapActuatorCfg" and "ankles" in report["actuators"]["g1"]["specs"]
    assert set(report["policies"]) == {"ppo", "zero action"}
    push = report["nominal"]["push_mps"]  # the mean of the task's push range
    assert 0.0 < push < 1.5 and report["nominal"]["payload_kg"] == 0.0
    payload = report["factors"]["payload_kg"]
    assert payload["values"] == [0.0, 10.0] and payload["nominal"] == 0.0 and payload["unit"] == "kg"
    for rows in payload["policies"].values():
        for row in rows:
            assert row["episodes"] == 2 and 0.0 <= row["success_rate"] <= 1.0
            assert row["success_ci95"][0] <= row["success_rate"] <= row["success_ci95"][1]
            assert {"mean", "std", "ci95"} <= set(row["time_up_s"])
    assert report["factors"]["push_mps"]["values"] == [0.0, push, 1.5]  # the nominal is part of every sweep
    assert set(report["reference"]) == {"ppo", "zero action"} and report["reference"]["ppo"]["episodes"] == 2
    heat = report["heatmap"]
    assert (heat["x"], heat["y"]) == ("push_mps", "payload_kg")
    assert len(heat["policies"]["ppo"]["success_rate"]) == 2 and len(heat["policies"]["ppo"]["success_rate"][0]) == 3
    for name in ("push_mps", "payload_kg", "command_delay_s", "heatmap_push_mps_payload_kg"):
        _check_png(out / f"{name}.png")


def test_evaluate_rejects_bad_input_before_building(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts/evaluate.py"),
            "--zero_action",
            "--factors",
            "object_mass_scale",
            "--out",
            str(tmp_path / "x"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2 and "not available for Realgap-Balance-G1-Play-v0" in proc.stderr
    assert not (tmp_path / "x").exists()


def test_sim2sim_writes_report(run_dir, tmp_path):
    out = tmp_path / "sim2sim.json"
    _run(
        [
            str(REPO / "scripts/sim2sim.py"),
            "--checkpoint",
            str(run_dir),
            "--episodes",
            "2",
            "--duration_s",
            "2",
            "--push_interval_s",
            "0.5,1",
            "--open_loop_s",
            "0.1",
            "--fine_dt",
            "0",
            "--out",
            str(out),
        ],
        tmp_path,
    )
    report = json.loads(out.read_text())
    assert (run_dir / "realgap_export" / "policy.onnx").is_file()  # exported on the way
    (ol,) = report["open_loop"]
    assert ol["dt_s"] == 0.005 and ol["steps"] == 20 and ol["trajectory"]["rms_rad"] < 1e-4
    assert {"isaac", "mujoco"} == set(ol["energy"]) and ol["constraint_rows"] == {"isaac": 0, "mujoco": 0}
    closed = report["closed_loop"]
    assert closed["episodes"] == 2 and len(closed["per_episode"]) == 2
    for engine in ("isaac", "mujoco"):
        assert 0.0 <= closed[engine]["survival_rate"] <= 1.0 and closed[engine]["mean_time_up_s"] <= 2.0
    assert report["rates"]["policy_hz"] == 50 and closed["protocol"]["push"]["interval_s"] == [0.5, 1.0]
