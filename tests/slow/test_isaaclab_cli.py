"""Slow tier: Isaac Lab 3.0's own CLI runs realgap's tasks kitless on the CPU, and realgap reads what it trained.

The installed ``isaaclab`` command of the interpreter running the tests (its ``bin/``) finds realgap's ids through the
``isaaclab.tasks`` entry point (an editable or wheel install of realgap registers it): ``list_envs`` shows every id
with its ``"module:function"`` config; ``train`` trains the balance and the grasp task (4 envs, 2 iterations, no
``--rl_library``: the ids' ``default_agent``); ``play`` plays the balance run's training id (``play_mode()``) and
exports to ``exported/``; ``zero_agent`` and ``random_agent`` step a task. realgap's own ``play`` then evaluates that
run, its task read from Isaac Lab's ``run.json``, and exports to ``realgap_export/`` without touching Isaac Lab's
files. Each command builds one env (tens of seconds); there are six. Isaac Lab's commands use every torch thread on
the CPU unless told: ``OMP_NUM_THREADS=1`` (a learn step 6.9 s against 0.15 s, DESIGN.md).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
ISAACLAB = Path(sys.executable).parent / "isaaclab"
BALANCE, GRASP = "Realgap-Balance-G1-Crouch-v0", "Realgap-Grasp-Franka-EEPoseDelta-v0"
ENV = os.environ | {"OMP_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def isaaclab() -> str:
    """The ``isaaclab`` command; a missing command or entry point fails (never skips): the tier must run it."""
    if not ISAACLAB.is_file():
        pytest.fail(f"no isaaclab command at {ISAACLAB}: install the training stack (README 'Setup')")
    names = {ep.value for ep in importlib.metadata.entry_points(group="isaaclab.tasks")}
    if "realgap.tasks" not in names:
        pytest.fail(f"no 'isaaclab.tasks' entry point for realgap.tasks (found {names}): reinstall, pip install -e .")
    return str(ISAACLAB)


def _run(cmd: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _until_running(cmd: list[str], cwd: Path, marker: str, timeout: float = 900) -> str:
    """Start ``cmd``, wait for ``marker`` in its output (it then loops until Ctrl-C), stop it with SIGINT; the output.
    Exit 0 expected: Isaac Lab's playback ends cleanly on a KeyboardInterrupt."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line)
            if marker in line:
                # Isaac Lab prints the marker just before its loop's try block: a Ctrl-C inside the print itself ends
                # in a traceback (exit 1), so give the loop a moment to start, as a user's Ctrl-C would
                time.sleep(2.0)
                proc.send_signal(signal.SIGINT)
                break
        rest, _ = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
    out = "".join(lines) + rest
    assert marker in out and proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}:\n{out[-4000:]}"
    return out


def _train(isaaclab: str, task: str, cwd: Path) -> Path:
    _run([isaaclab, "train", "--task", task, "--num_envs", "4", "--max_iterations", "2", "--device", "cpu"], cwd)
    (run,) = [p.parent for p in cwd.glob("logs/rsl_rl/*/*/model_1.pt")]
    return run


@pytest.fixture(scope="module")
def balance_run(isaaclab: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``isaaclab train`` on the balance task: the run folder under ``logs/rsl_rl/balance_g1/``."""
    return _train(isaaclab, BALANCE, tmp_path_factory.mktemp("isaaclab_balance"))


@pytest.fixture(scope="module")
def played(isaaclab: str, balance_run: Path) -> str:
    """``isaaclab play --checkpoint latest`` on the run's training id, stopped once playing: its output."""
    cwd = balance_run.parents[3]  # play finds --checkpoint latest under logs/rsl_rl/<experiment>
    return _until_running(
        [isaaclab, "play", "--task", BALANCE, "--checkpoint", "latest", "--num_envs", "4", "--device", "cpu"],
        cwd,
        "Policy playback is running",
    )


def test_list_envs_shows_every_task_with_its_config(isaaclab: str, tmp_path: Path) -> None:
    import gymnasium as gym

    from realgap.tasks import registered_tasks

    out = _run([isaaclab, "list_envs", "--keyword", "Realgap"], tmp_path, timeout=300).stdout
    for task in registered_tasks():
        assert f" {task} " in out and gym.spec(task).kwargs["env_cfg_entry_point"] in out, task
    assert "<function" not in out
    project = _run([isaaclab, "list_envs"], REPO, timeout=300).stdout  # the project view of this repository
    assert sum(f" {task} " in project for task in registered_tasks()) == len(registered_tasks())


def test_train_then_play_the_training_id(balance_run: Path, played: str) -> None:
    import json

    assert json.loads((balance_run / "run.json").read_text())["task"] == BALANCE
    assert "model_1.pt" in played
    assert (balance_run / "exported" / "policy.onnx").is_file()  # Isaac Lab's own export


def test_realgap_play_reads_an_isaaclab_run_and_keeps_its_export(balance_run: Path, played: str) -> None:
    theirs = balance_run / "exported" / "policy.onnx"
    before = hashlib.sha256(theirs.read_bytes()).hexdigest()
    out = _run(
        [
            sys.executable,
            str(REPO / "scripts/play.py"),
            "--checkpoint",
            str(balance_run),
            "--episodes",
            "1",
            "--num_envs",
            "4",
            "--episode_s",
            "0.5",
        ],
        balance_run,
    ).stdout
    assert f"[realgap] {BALANCE.replace('-v0', '-Play-v0')} |" in out  # the run's task, from Isaac Lab's run.json
    meta = (balance_run / "realgap_export" / "policy.json").read_text()
    assert f'"task": "{BALANCE}"' in meta
    assert hashlib.sha256(theirs.read_bytes()).hexdigest() == before  # Isaac Lab's export untouched


def test_train_the_grasp_task(isaaclab: str, tmp_path: Path) -> None:
    import json

    run = _train(isaaclab, GRASP, tmp_path)
    assert json.loads((run / "run.json").read_text())["task"] == GRASP


@pytest.mark.parametrize(("command", "task"), [("zero_agent", BALANCE), ("random_agent", GRASP)])
def test_zero_and_random_agents_step_a_task(isaaclab: str, command: str, task: str, tmp_path: Path) -> None:
    out = _run(
        [isaaclab, command, "--task", task, "--num_envs", "4", "--device", "cpu", "--max_steps", "5"], tmp_path
    ).stdout
    assert f"{command.split('_')[0].capitalize()} agent is running" in out
