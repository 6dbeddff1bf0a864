"""The G1 over DDS, two processes on loopback: g1_dds_sim and the deploy CLI's unitree_g1 driver.

Each test starts the simulator on its own DDS domain, runs the driver, and reads the simulator's report: what it
received (CRC failures, the gains of the last command: damping means kp = 0, kd > 0) and whether the robot fell.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("unitree_sdk2py", reason="needs the unitree extra: pip install '.[deploy,unitree]'")

from realgap.envs.deploy.drivers import g1_dds_sim as dds_sim  # noqa: E402 (after the skip)

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("bridge_lock")]  # one bridge at a time
POLICY = "configs/policies/balance_g1"
ROOT = Path(__file__).resolve().parents[2]


def _domain(k: int) -> int:
    return 100 + (os.getpid() * 7 + k) % 120  # away from 0 (a real robot) and from other test processes


_STARTED: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def _no_orphans(bridge_lock):
    """A failed test must not leave its simulator or driver running (they would outlive the suite); killed before
    the bridge lock is released (this fixture asks for it, so it tears down first): the next bridge test on the other
    worker must not start beside them."""
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


def _sim(tmp: Path, domain: int, duration_s: float, push: str = "0,0", *extra: str) -> tuple[subprocess.Popen, Path]:
    report = tmp / f"sim_{domain}.json"
    cmd = [*dds_sim.command(POLICY, domain, duration_s=duration_s, push_mps=push, report=report), *extra]
    _STARTED.append(subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    return _STARTED[-1], report


def _driver(domain: int, *extra: str) -> subprocess.Popen:
    cmd = [
        sys.executable,
        "-m",
        "realgap.scripts.deploy",
        "--policy",
        POLICY,
        "--robot",
        "unitree_g1",
        "--domain",
        str(domain),
        "--connect_timeout_s",
        "60",
        *extra,
    ]
    # Ctrl-C reaches the driver as from a terminal even where the test runner ignores SIGINT (inherited over exec)
    _STARTED.append(
        subprocess.Popen(
            cmd,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    )
    return _STARTED[-1]


def _finish(sim: subprocess.Popen, report: Path) -> dict:
    out, _ = sim.communicate(timeout=120)
    assert sim.returncode == 0, out
    return json.loads(report.read_text())


def test_pushed_balance_episode_over_dds(tmp_path: Path) -> None:
    d = _domain(0)
    sim, report = _sim(tmp_path, d, 1.0 + 6.0 + 1.0, push="0.2,0.4")  # soft start, episode, damping
    log = tmp_path / "ep.npz"
    drv = _driver(d, "--duration_s", "6", "--push_mps", "0.2,0.4", "--log", str(log), "--watchdog_s", "1.0")
    out, _ = drv.communicate(timeout=180)
    rep = _finish(sim, report)
    assert drv.returncode == 0, out
    assert "no fall" in out and "ended in damping" in out
    assert rep["crc_failures"] == 0 and rep["commands"] > 1000 and rep["pushes"] >= 1
    assert rep["fell_at_s"] is None or rep["fell_at_s"] > 7.0, rep  # after the episode, damping may fold it
    assert rep["last_kp_max"] == 0.0 and rep["last_kd_min"] > 0
    from realgap.envs.deploy.log import load_log

    assert load_log(log).num_samples == 6 * 200


def test_missing_robot_is_a_clear_error_after_the_timeout() -> None:
    t0 = time.monotonic()
    cmd = [
        sys.executable,
        "-m",
        "realgap.scripts.deploy",
        "--policy",
        POLICY,
        "--robot",
        "unitree_g1",
        "--domain",
        str(_domain(1)),
        "--connect_timeout_s",
        "1",
    ]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "no rt/lowstate on DDS domain" in res.stderr, res.stderr
    assert time.monotonic() - t0 < 100


@pytest.mark.parametrize("case", ["watchdog", "ctrl_c", "fall"])
def test_safety_ends_in_damping(tmp_path: Path, case: str) -> None:
    d = _domain(2 + ["watchdog", "ctrl_c", "fall"].index(case))
    sim, report = _sim(tmp_path, d, 4.0)
    extra = ["--fall_tilt", "0.0001"] if case == "fall" else []
    # Ctrl-C and fall: a 1 s watchdog, so a stall of a loaded machine (a process descheduled past the default 0.1 s)
    # cannot end the episode first; the watchdog case keeps the default and trips on the stopped simulator
    extra += ["--watchdog_s", "1.0"] if case != "watchdog" else []
    drv = _driver(d, "--duration_s", "20", *extra)
    if case != "fall":
        for line in drv.stdout:  # wait until the episode runs
            if line.startswith("[realgap] G1 over DDS"):
                break
        time.sleep(2.0)
        if case == "watchdog":
            sim.send_signal(signal.SIGSTOP)
        else:
            drv.send_signal(signal.SIGINT)
    out, _ = drv.communicate(timeout=120)
    if case == "watchdog":
        sim.send_signal(signal.SIGCONT)
    rep = _finish(sim, report)
    want = {"watchdog": (3, "watchdog"), "ctrl_c": (130, "Ctrl-C"), "fall": (0, "fall: tilt")}[case]
    assert drv.returncode == want[0] and want[1] in out, out
    assert rep["crc_failures"] == 0
    if case != "watchdog":  # a stopped simulator cannot receive; the others must hold damping last
        assert rep["last_kp_max"] == 0.0 and rep["last_kd_min"] > 0, rep


def test_non_finite_target_sends_damping_and_stops(tmp_path: Path) -> None:
    """In this process (one DDS participant per process): a NaN target → damping on the wire, then SafetyStop."""
    import numpy as np

    from realgap.envs.deploy.drivers.unitree_g1 import SafetyStop, UnitreeG1Robot
    from realgap.envs.format import load_policy

    d = _domain(10)
    sim, report = _sim(tmp_path, d, 1.0)
    meta, _ = load_policy(ROOT / POLICY)
    robot = UnitreeG1Robot(meta, d, "lo", connect_timeout_s=60)
    kp, kd = np.full(29, 100.0), np.full(29, 2.0)
    q = robot.read_joints().pos
    robot.send_joint_targets(q, np.zeros(29), kp, kd)
    robot.step()
    target = q.copy()
    target[3] = np.nan
    robot.send_joint_targets(target, np.zeros(29), kp, kd)
    assert robot.fault == "non-finite target or gain"
    with pytest.raises(SafetyStop, match="non-finite"):
        robot.step()
    robot.send_joint_targets(q, np.zeros(29), kp, kd)  # latched: a good target after a fault is still damping
    robot.hold_damping(0.1)
    rep = _finish(sim, report)
    assert rep["last_kp_max"] == 0.0 and rep["last_kd_min"] > 0 and rep["crc_failures"] == 0
