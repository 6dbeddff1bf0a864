"""play.py on a forged export that passes every integrity check (kp edited in policy.json and the embedded metadata,
digest and SHA256SUMS recomputed) is refused when the env is built, with one message and no traceback: the refusal is
raised inside Isaac Lab's launcher context, which printed a full traceback of anything passing through it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.sim
REPO = Path(__file__).resolve().parents[2]


def test_play_refuses_a_resealed_forged_export_without_a_traceback(tmp_path):
    sys.path.insert(0, str(REPO / "tests" / "unit"))
    from test_signed_exports import _forge, _one_kp

    folder = tmp_path / "forged"
    shutil.copytree(REPO / "configs" / "policies" / "balance_g1", folder)

    def weaken_knee(d: dict) -> None:
        _one_kp(d)
        d["actuators"]["groups"][0]["kp"][3] /= 10  # left knee: 300 -> 30

    _forge(folder, weaken_knee)
    cmd = [
        sys.executable,
        str(REPO / "scripts" / "play.py"),
        "--policy",
        str(folder),
        "--episodes",
        "1",
        "--num_envs",
        "1",
    ]
    out = subprocess.run(
        cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    assert out.returncode == 2, out.stderr[-3000:]
    assert "error: the env's actuators are not the export's" in out.stderr
    assert "kp of left_knee_joint: the export has 30, the env 300" in out.stderr
    assert "Traceback" not in out.stderr + out.stdout
