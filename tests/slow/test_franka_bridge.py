"""The Franka over libfranka, two processes on loopback: franky-sim (a MuJoCo FR3 speaking the libfranka protocol,
headless) and the deploy CLI's franka driver (franky-control) running the grasp export.

franky-sim has no table and no object: the driver runs the export's arm commands from the scene's nominal object
placement, so these tests measure what the bridge can show there — the arm tracking the commanded joint targets, the
hand closing and opening, the refusals — and the grasp itself is measured in the runtime's MuJoCo grasp scene
(tests/sim/test_grasp_mujoco_scene.py).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("franky", reason="needs the franka extra: pip install '.[deploy,franka]'")
pytest.importorskip("franky_sim", reason="needs the franka extra: pip install '.[deploy,franka]'")
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("bridge_lock")]  # one bridge at a time
POLICY = "configs/policies/grasp_franka"
ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"


@pytest.fixture(scope="module")
def franky_sim():
    """franky-sim on 127.0.0.1 for the module (libfranka's ports are fixed: one simulator, tests in turn)."""
    sim = subprocess.Popen(
        [sys.executable, "-m", "franky_sim.run_server", "-s", "mujoco", "--hostname", HOST],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 120
    for line in sim.stdout:
        if "Connect to the server" in line:
            break
        if time.monotonic() > deadline:
            break
    assert sim.poll() is None, "franky-sim did not start"
    yield sim
    sim.send_signal(signal.SIGINT)
    try:
        sim.wait(timeout=20)
    except subprocess.TimeoutExpired:
        sim.kill()


def _driver(*extra: str) -> list[str]:
    # a 1 s watchdog: no test here is about it, and a loaded machine can stall franky-sim's clock past the 0.1 s default
    return [
        sys.executable,
        "-m",
        "realgap.scripts.deploy",
        "--policy",
        POLICY,
        "--robot",
        "franka",
        "--hostname",
        HOST,
        "--connect_timeout_s",
        "30",
        "--watchdog_s",
        "1.0",
        *extra,
    ]


def test_episode_tracks_the_exports_commands_and_the_hand_closes(franky_sim, tmp_path: Path) -> None:
    report = tmp_path / "franka.json"
    res = subprocess.run(
        _driver("--duration_s", "3", "--report", str(report)), cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "episode 1/1: 150 policy steps" in res.stdout and "ended stopped (episode end)" in res.stdout
    rep = json.loads(report.read_text())
    assert rep["steps"] == 150 and rep["fault"] is None
    assert rep["period_robot_ms"]["p50"] == pytest.approx(20.0, abs=0.5)  # paced by the robot's clock
    # |q(k+1) − q*(k)|: the arm follows the IK targets with the export's gains (0.03 rad median measured)
    assert 0.0 < rep["tracking_rad"]["p50"] < 0.1 and rep["tracking_rad"]["max"] < 0.5, rep["tracking_rad"]
    assert rep["gripper_width_m"]["max"] > 0.07  # opened at the start
    assert rep["gripper_width_m"]["min"] < 0.02, rep  # the policy closed the hand at the (absent) object
    # libfranka's grasp rule on the measured width, the export's object widths (45 ± 10 mm): closed on nothing
    assert rep["grasp_window_m"] == pytest.approx([0.045, 0.01, 0.01]) and rep["gripper_grasped_steps"] == 0, rep


def test_hand_opens_and_closes_and_a_non_finite_target_stops(franky_sim) -> None:
    from realgap.envs.deploy import load_metadata
    from realgap.envs.deploy.drivers.franka import FrankaRobot, SafetyStop

    meta = load_metadata(ROOT / POLICY / "policy.json")
    robot = FrankaRobot(meta, HOST, connect_timeout_s=30)
    kp, kd = np.full(9, 400.0), np.full(9, 30.0)
    try:
        q = robot.read_joints().pos
        for fingers, check in ((0.0, lambda w: w < 0.01), (0.04, lambda w: w > 0.07)):
            target = np.concatenate([q[:7], [fingers, fingers]])
            for _ in range(100):
                robot.send_joint_targets(target, np.zeros(9), kp, kd)
                robot.step()
                if check(robot.gripper.width):
                    break
            assert check(robot.gripper.width), (fingers, robot.gripper.width)
        bad = np.concatenate([q[:7], [0.04, 0.04]])
        bad[2] = np.nan
        robot.send_joint_targets(bad, np.zeros(9), kp, kd)
        assert robot.fault == "non-finite target or gain"
        with pytest.raises(SafetyStop, match="non-finite"):
            robot.step()
        assert not robot.robot.is_in_control  # the impedance motion was stopped: the robot holds its pose
    finally:
        robot.close()


def test_missing_robot_is_a_clear_error_after_the_timeout() -> None:
    t0 = time.monotonic()
    cmd = [
        sys.executable,
        "-m",
        "realgap.scripts.deploy",
        "--policy",
        POLICY,
        "--robot",
        "franka",
        "--hostname",
        "127.0.0.2",
        "--connect_timeout_s",
        "1",
    ]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "no Franka at '127.0.0.2' within 1 s" in res.stderr, res.stderr
    assert time.monotonic() - t0 < 100


def test_ctrl_c_stops_the_arm(franky_sim) -> None:
    # a Ctrl-C reaches the driver as from a terminal even where the test runner ignores SIGINT (inherited over exec)
    drv = subprocess.Popen(
        _driver("--duration_s", "60"),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        for line in drv.stdout:
            if line.startswith("[realgap] Franka over franky"):
                break
        time.sleep(4.0)
        drv.send_signal(signal.SIGINT)
        out, _ = drv.communicate(timeout=120)
    finally:  # a failed test must not leave its driver commanding the simulator
        if drv.poll() is None:
            drv.kill()
            drv.wait(timeout=30)
    assert drv.returncode == 130 and "Ctrl-C: arm stopped" in out and "ended stopped (Ctrl-C)" in out, out


def test_non_finite_action_sends_nothing(franky_sim) -> None:
    """A policy returning NaN: the runtime raises before any target reaches the robot (run_franka stops, exit 3)."""
    from realgap.envs.deploy import DeployRuntime, load_metadata
    from realgap.envs.deploy.drivers.franka import FrankaRobot
    from realgap.envs.deploy.objects import StaticObjectPose

    meta = load_metadata(ROOT / POLICY / "policy.json")
    robot = FrankaRobot(meta, HOST, connect_timeout_s=30)
    try:
        nan_policy = lambda obs: np.full(meta.action_dim, np.nan, dtype=np.float32)  # noqa: E731
        runtime = DeployRuntime(meta, robot, nan_policy, objects=StaticObjectPose.nominal(meta))
        with pytest.raises(FloatingPointError, match="non-finite action"):
            runtime.step()
        assert robot._motion is None and not robot.robot.is_in_control  # no controller was started, nothing sent
    finally:
        robot.close()
