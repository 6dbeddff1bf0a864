"""Slow tier: the transfer study as a user runs it, on a smoke budget — balance arms (a) and (b), seed 1, 2 iterations
× 4 envs, Play 4 episodes, the suite's first robot of each family × 1 episode: every artifact written, the folder
marked as not the study; a second sitting after the last checkpoint of (b) went missing resumes (b)'s training from
its earlier checkpoint and skips every finished step."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
PROFILE = {"a_s1": ("ablation_a", "implicit_pd"), "b_s1": ("ablation_b", "chain_no_delay")}


def sitting(cmd: list[str], timeout: float) -> subprocess.CompletedProcess:
    """``cmd`` in a process group of its own, killed with every step it started when ``timeout`` runs out."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the study's children (train, export, ...) are in its group
        proc.communicate()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def test_two_balance_arms_on_a_smoke_budget_then_a_sitting_that_resumes_and_skips(tmp_path):
    out = tmp_path / "study"
    cmd = [sys.executable, str(REPO / "scripts" / "transfer_study.py"), "--task", "balance", "--arms", "a,b"]
    cmd += ["--seeds", "1", "--jobs", "2", "--device", "cpu", "--out", str(out), "--max_iterations", "2"]
    cmd += ["--num_envs", "4", "--play_episodes", "4", "--suite_robots", "1", "--suite_episodes", "1"]
    first = sitting(cmd, timeout=600)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    for tag, (profile, model) in PROFILE.items():
        [run] = list((out / "runs").glob(f"*/*_{tag}"))
        assert (run / "model_1.pt").is_file()  # the last checkpoint of 2 iterations
        record = json.loads((run / "params" / "run.json").read_text())
        assert (record["dr_profile"], record["actuator_model"], record["seed"]) == (profile, model, 1)
        assert (record["max_iterations"], record["num_envs_total"]) == (2, 4)
        exported = json.loads((out / "exports" / tag / "policy.json").read_text())
        assert exported["training"]["actuator_model"] == model
        # the export describes the joints it trained: both arms ran without the datasheet's 0-10 ms delay
        assert {tuple(g["command_delay"]["range_s"]) for g in exported["actuators"]["groups"]} == {(0.0, 0.0)}
        play = json.loads((out / "play" / f"{tag}.json").read_text())
        assert play["episodes"] >= 4 and 0.0 <= play["summary"]["survival"]["value"] <= 1.0
        suite = json.loads((out / "suite" / tag / "summary.json").read_text())
        assert suite["all"]["episodes"] == 3 and set(suite["families"]) == {"typical", "worn", "bridge"}
        timing = json.loads((out / "timing" / f"{tag}.json").read_text())
        assert set(timing) == {"train", "export", "play", "suite"}
        assert all(len(t) == 1 and t[0]["exit"] == 0 and t[0]["cpu_s"] > 0 for t in timing.values())
    study = json.loads((out / "study.json").read_text())
    assert not study["is_study"] and [(r["arm"], r["seed"]) for r in study["seeds"]] == [("a", 1), ("b", 1)]
    assert "NOT THE STUDY" in (out / "study.md").read_text() and (out / "study.csv").is_file()

    # a sitting stopped between (b)'s checkpoints: its last one is set aside (kept), the second sitting resumes it
    [run_b] = list((out / "runs").glob("*/*_b_s1"))
    for name in ("model_1.pt", "model_1.env.pt"):  # the checkpoint and the env state saved beside it
        if (run_b / name).is_file():
            (run_b / name).rename(run_b / f"{name}.set_aside")
    second = sitting(cmd, timeout=240)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    ran = [line for line in second.stdout.splitlines() if line.endswith(" …")]
    assert ran == ["[realgap] study b_s1: train …"], ran  # nothing else ran: every other step was done
    assert (run_b / "model_1.pt").is_file() and list((out / "runs").glob("*/*_b_s1")) == [run_b]
    assert len(json.loads((run_b / "params" / "run.json").read_text())["resumes"]) == 1
    timing_b = json.loads((out / "timing" / "b_s1.json").read_text())
    assert [len(timing_b[s]) for s in ("train", "export", "play", "suite")] == [2, 1, 1, 1]
    assert "--resume" in timing_b["train"][1]["command"]
    assert len(json.loads((out / "request.json").read_text())["sittings"]) == 2
