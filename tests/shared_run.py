"""One tiny balance training shared by every slow-tier test that needs a run folder (the ``tiny_run`` fixture of
tests/conftest.py).

Train/play, export, evaluate, sim2sim, same-seed and the resume tests each trained their own 1–2 iteration run (about
40 s each, most of it start-up). They now share one: :data:`TINY_RUN_ARGS` (2 iterations of 8 envs, seed 5, a
checkpoint every iteration), trained once per pytest session — once in all, also when pytest-xdist runs the tier on
several workers: the first worker to ask trains it under a file lock, the others wait and reuse it. A test that writes
into a run folder (play and export write ``realgap_export/``, a resume appends checkpoints) works on its own copy
(:func:`copy_run`), so the shared run stays as trained.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from filelock import FileLock  # torch's own dependency

REPO = Path(__file__).resolve().parents[1]
# the standing task, named: the tier's tests were written against it (scripts/train.py's default is the crouch, which
# tests/slow/test_readme_quickstart.py trains)
TRAIN = [
    sys.executable,
    str(REPO / "scripts/train.py"),
    "--task",
    "Realgap-Balance-G1-v0",
    "--num_envs",
    "8",
    "--device",
    "cpu",
]
TINY_RUN_ITERATIONS = 2
TINY_RUN_ARGS = ["--seed", "5", "--save_interval", "1", "--max_iterations", str(TINY_RUN_ITERATIONS)]
"""Arguments of the shared run after :data:`TRAIN`; the same with more iterations is its uninterrupted continuation."""


@dataclass(frozen=True)
class TinyRun:
    """The shared run: its folder (read only: use :func:`copy_run` to write) and the training's stdout."""

    path: Path
    stdout: str


def _shared_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder this session's workers share: under xdist each worker's base temp is ``<session>/popen-gwN``."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared_tiny_run(tmp_path_factory: pytest.TempPathFactory) -> TinyRun:
    """Train :data:`TINY_RUN_ARGS` once into this session's shared folder (or reuse it): checkpoints 0 and 1,
    progress, params, TensorBoard log."""
    root = _shared_root(tmp_path_factory) / "tiny_run"
    root.mkdir(exist_ok=True)
    with FileLock(root / ".lock"):
        done = root / "train_stdout.txt"
        if not done.is_file():
            out = subprocess.run(
                [*TRAIN, *TINY_RUN_ARGS, "--log_root", str(root / "runs")],
                cwd=root,
                capture_output=True,
                text=True,
                timeout=900,
            )
            assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
            done.write_text(out.stdout)  # written last: its presence says the run is complete
    (run,) = list((root / "runs" / "balance_g1").iterdir())
    return TinyRun(run, done.read_text())


def copy_run(run: TinyRun | Path, dest: Path) -> Path:
    """A copy of ``run``'s folder under ``dest`` (same folder name), for a test that writes into it."""
    src = run.path if isinstance(run, TinyRun) else Path(run)
    return Path(shutil.copytree(src, Path(dest) / src.name))
