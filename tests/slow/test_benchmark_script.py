"""Slow tier: the benchmark script runs every section on a tiny budget and writes each figure it prints to its JSON
(figures are not asserted: they depend on the machine; only that they were measured, consistently)."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
BALANCE = "Realgap-Balance-G1-v0"


def test_benchmark_writes_every_section(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts/benchmark.py"),
            "--tasks",
            BALANCE,
            "--num_envs",
            "4",
            "--steps",
            "5",
            "--ppo_iterations",
            "2",
            "--ppo_layouts",
            "one_process,two_processes",
            "--json",
            str(tmp_path / "bench.json"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads((tmp_path / "bench.json").read_text())
    env, bare = result[BALANCE]["env"], result[BALANCE]["bare"]
    assert env["physics_steps"] == bare["physics_steps"] == 5 * 4  # equal physics: 5 policy steps, decimation 4
    assert 0 < env["physics_seconds"] < env["seconds"] and 0 < bare["physics_seconds"] < bare["seconds"]
    assert math.isclose(result[BALANCE]["env_over_bare"], env["physics_steps_per_s"] / bare["physics_steps_per_s"])
    ppo = result["ppo"]  # the layouts asked for, and only those (the third is the second with 2 x n envs)
    assert [(ppo[k]["num_envs"], ppo[k]["num_procs"]) for k in ("one_process", "two_processes")] == [(4, 1), (4, 2)]
    assert "two_processes_double_envs" not in ppo and "speedup_double_envs" not in ppo
    assert math.isclose(ppo["speedup"], ppo["two_processes"]["env_steps_per_s"] / ppo["one_process"]["env_steps_per_s"])
    assert result["mujoco"]["raw_mj_steps_per_s"] > 0 and 0 < result["mujoco"]["runtime_over_raw"]
    assert "env/bare" in out.stdout and "2 processes / 1" in out.stdout and "runtime/raw" in out.stdout
