"""GPU tier: every task and every grasp action space builds and steps on CUDA with a captured graph and no host sync
of realgap's per step (Isaac Lab's and rsl-rl's own are theirs; the drawn-body checks at resets are counted apart),
and a 4,096-env build of each task keeps its contact/constraint buffers below their caps.

Each build runs in its own process (tests/gpu/cuda_step.py): one Isaac Lab simulation per process.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from realgap.tasks.grasp import ACTION_SPACE_IDS

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no CUDA device")]
REPO = Path(__file__).resolve().parents[2]
TASKS = ["Realgap-Balance-G1-v0", "Realgap-Balance-G1-Crouch-v0", *ACTION_SPACE_IDS.values()]


def _step(task: str, num_envs: int, steps: int, *flags: str) -> dict:
    out = subprocess.run(
        [sys.executable, str(REPO / "tests/gpu/cuda_step.py"), task, str(num_envs), str(steps), *flags],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return json.loads([ln for ln in out.stdout.splitlines() if ln.startswith("{")][-1])


@pytest.mark.parametrize("task", TASKS)
def test_task_steps_on_cuda_with_a_graph_and_no_host_sync(task):
    got = _step(task, 16, 40, "--sync_debug", "--episode_s", "0.3")  # short episodes: resets inside the check
    assert got["device"].startswith("cuda") and got["finite"]
    assert got["graph"], "no CUDA graph was captured: the physics fell back to eager stepping"
    assert not got["overflowed"], got
    assert got["library_syncs"] > 0, "torch reported no sync at all: the check did not run (Isaac Lab syncs each step)"
    assert got["realgap_syncs"] == [], f"host syncs in realgap's per-step code: {got['realgap_syncs']}"


@pytest.mark.parametrize("task", ["Realgap-Balance-G1-v0", "Realgap-Grasp-Franka-EEPoseDelta-v0"])
def test_4096_envs_build_without_buffer_overflow(task):
    got = _step(task, 4096, 10)
    assert got["graph"] and got["finite"]
    assert not got["overflowed"], f"buffers at their caps with 4,096 envs: {got}"
