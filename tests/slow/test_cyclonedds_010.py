"""The G1 path under CycloneDDS 0.10.2, the version a G1 speaks and Unitree's official SDK pins.

A second environment (``REALGAP_CDDS010_PYTHON``: its Python; .ci/run builds it from Debian's ``cyclonedds-dev``
0.10.2 and ``cyclonedds==0.10.2`` from the package index) runs ``g1_dds_peer.py``, a minimal G1 on the wire:

- against the driver in this project's environment (cyclonedds 11.0.1): the two do **not** exchange the unitree_hg
  messages over loopback. Discovery alone can be made to work (a participant index or a unicast peer on the 11.x
  side), but 0.10.2 rejects 11.x's type information for these types ("ddsi_xt_type_init_impl with invalid type
  object") and never matches the endpoints. The test holds that fact: if it fails, they now interoperate.
- against the driver run under 0.10.2 itself (the second environment holds realgap's runtime): states in, commands
  out, CRCs valid, damping last — the driver runs on the robot's version.

Timing condition: the peer publishes at 500 Hz; the driver must see its tick within the refusal tolerance (a loaded
host can starve the peer: it counts ticks on its own clock, as a robot does) and at least 90 % of the 701 commands
(1 s soft start + 2 s at 200 Hz + the closing damping) must reach the peer (measured: all).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("bridge_lock")]
ROOT = Path(__file__).resolve().parents[2]
PEER = Path(__file__).with_name("g1_dds_peer.py")
PY010 = os.environ.get("REALGAP_CDDS010_PYTHON")
if not PY010:
    pytest.skip("REALGAP_CDDS010_PYTHON is unset (.ci/run builds that environment)", allow_module_level=True)
pytest.importorskip("unitree_sdk2py", reason="needs the unitree extra: pip install '.[deploy,unitree]'")
DRIVER = ["-m", "realgap.scripts.deploy", "--policy", "configs/policies/balance_g1", "--robot", "unitree_g1"]
DRIVER += ["--push_mps", "0,0", "--zero_action", "--motion_switcher", "skip"]


def _run(python: str, domain: int, tmp: Path, *extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    report = tmp / f"peer_{domain}.json"
    cmd = [PY010, str(PEER), str(domain), "25", str(report)]
    peer = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        cmd = [python, *DRIVER, "--domain", str(domain), *extra]
        drv = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=180)
        peer.terminate()
        peer.communicate(timeout=60)
    finally:
        if peer.poll() is None:
            peer.kill()
    return drv, json.loads(report.read_text())


def test_the_peer_runs_cyclonedds_0_10_2() -> None:
    code = "from importlib.metadata import version; print(version('cyclonedds'))"
    res = subprocess.run([PY010, "-c", code], capture_output=True, text=True)
    assert res.stdout.strip() == "0.10.2", res.stdout + res.stderr


def test_11x_and_0_10_2_do_not_exchange_the_g1_messages(tmp_path: Path) -> None:
    drv, rep = _run(sys.executable, 140 + os.getpid() % 50, tmp_path, "--connect_timeout_s", "5", "--duration_s", "1")
    assert drv.returncode == 2 and "no rt/lowstate" in drv.stderr, ("they now interoperate?", drv.stdout, drv.stderr)
    assert rep["commands"] == 0 and rep["states"] > 1000, rep


def test_the_driver_runs_under_0_10_2(tmp_path: Path) -> None:
    drv, rep = _run(PY010, 190 + os.getpid() % 40, tmp_path, "--connect_timeout_s", "20", "--duration_s", "2")
    assert drv.returncode == 0, drv.stdout + drv.stderr
    assert "tick clock" in drv.stdout and "ended in damping (episode end)" in drv.stdout, drv.stdout
    assert rep["cyclonedds"] == "0.10.2" and rep["crc_failures"] == 0, rep
    assert rep["commands"] >= 0.9 * 701, ("fewer than 90 % of the commands reached the peer", rep)
    assert rep["last_kp_max"] == 0.0 and rep["last_kd_min"] > 0, rep  # damping is the last command received
