"""GPU tier: the user's commands with ``--device cuda``: train 2 iterations, resume with the env snapshot restored on
CUDA (stated as not bitwise exact), then play, evaluate and export the run."""

import csv
import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no CUDA device")]
REPO = Path(__file__).resolve().parents[2]


def _run(tmp_path: Path, script: str, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, str(REPO / "scripts" / script), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, f"{script} {args}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout


def test_train_resume_play_evaluate_export_on_cuda(tmp_path):
    run = tmp_path / "run"
    first = _run(
        tmp_path,
        "train.py",
        "--task",
        "Realgap-Balance-G1-v0",
        "--num_envs",
        "64",
        "--max_iterations",
        "2",
        "--save_interval",
        "1",
        "--seed",
        "3",
        "--device",
        "cuda",
        "--run_dir",
        str(run),
    )
    assert "[realgap] device: cuda:0 (CUDA graphs on)" in first
    resumed = _run(tmp_path, "train.py", "--resume", str(run), "--max_iterations", "3")
    assert "env state restored" in resumed and "not a bitwise" in resumed  # the snapshot came back on CUDA
    rows = list(csv.DictReader(open(run / "progress.csv")))
    assert [int(r["iteration"]) for r in rows] == [0, 1, 2]
    _run(tmp_path, "play.py", "--checkpoint", str(run), "--episodes", "4", "--num_envs", "4", "--device", "cuda")
    _run(tmp_path, "evaluate.py", "--checkpoint", str(run), "--episodes", "4", "--num_envs", "4", "--device", "cuda")
    _run(tmp_path, "export.py", "--checkpoint", str(run), "--device", "cuda")
