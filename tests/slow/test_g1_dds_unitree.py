"""The G1 driver against the behaviours of a robot and of Unitree's own stack, over loopback (two processes).

- ``g1_dds_sim --bridge unitree`` behaves like Unitree's ``unitree_mujoco`` bridge (tick, state CRC and
  ``mode_machine`` 0, the PD torque computed once per command and held, no motion switcher): the driver refuses it
  by default with the flags that rehearse on it, and runs on it on the arrival clock with them.
- bad state on the wire (``g1_dds_sim --fault``): invalid CRCs, an all-zero quaternion, a tick backwards or jumping
  → the driver damps and names the cause (exit 3).
- the motion switcher: a robot held by a high-level service is refused, or released; a client that does what
  Unitree's ``g1_low_level_example.py`` does (check and release the mode, copy ``mode_machine``, PR then AB
  commands) runs against g1_dds_sim. Unitree's example itself is not on a package index, so the test reproduces its
  protocol steps (docs/robots.md gives the run of the example itself).

Timing conditions asserted (the machine is loaded): at least half of the commands a 200 Hz host-clock loop sends in
the episode reach the simulator (one per 5 ms unless the driver process stalls; measured: all of them).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from slow.test_g1_dds_bridge import POLICY, ROOT, _domain, _driver, _finish, _no_orphans, _sim  # noqa: F401

pytest.importorskip("unitree_sdk2py", reason="needs the unitree extra: pip install '.[deploy,unitree]'")
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("bridge_lock")]  # one bridge at a time
UNITREE_FLAGS = ("--state_crc", "off", "--motion_switcher", "skip")


def _stop(sim: subprocess.Popen, report: Path) -> dict:
    """SIGTERM a simulator that waits for a first command that never came; its report is still written."""
    sim.send_signal(signal.SIGTERM)
    return _finish(sim, report)


@pytest.mark.parametrize(
    ("flags", "text"),
    [([], "every state carries crc = 0"), (["--state_crc", "off"], "--motion_switcher skip")],
    ids=["crc", "motion_switcher"],
)
def test_unitrees_bridge_is_refused_by_default_with_the_flag_that_rehearses_on_it(
    tmp_path: Path, flags: list[str], text: str
) -> None:
    d = _domain(20 + len(flags))
    sim, report = _sim(tmp_path, d, 5.0, "0,0", "--bridge", "unitree")
    drv = _driver(d, "--duration_s", "2", *flags)
    out, _ = drv.communicate(timeout=120)
    assert drv.returncode == 2 and text in out, out
    rep = _stop(sim, report)
    assert rep["commands"] == 0, "a refused connection sent a command"


def test_driver_runs_on_unitrees_bridge_on_the_arrival_clock(tmp_path: Path) -> None:
    d = _domain(23)
    sim, report = _sim(tmp_path, d, 1.0 + 3.0 + 3.0, "0,0", "--bridge", "unitree")  # outlives the driver
    drv = _driver(d, "--duration_s", "3", "--push_mps", "0,0", *UNITREE_FLAGS)
    out, _ = drv.communicate(timeout=180)
    assert drv.returncode == 0, out  # 0 whether it fell or not (the held PD law may fell it: docs/robots.md)
    rep = _finish(sim, report)
    assert "arrival clock" in out and "state CRC not checked" in out and "ended in damping" in out, out
    sent = int(out.rsplit("commands sent ", 1)[1].split(";")[0])
    assert rep["crc_failures"] == 0 and rep["commands"] >= 0.5 * 200 * 4.0, (rep, "fewer than half the commands")
    assert rep["commands"] <= sent and rep["last_kp_max"] == 0.0 and rep["last_kd_min"] > 0, rep
    assert "motion_switcher_calls" not in rep  # Unitree's bridge serves none


def test_watchdog_on_the_arrival_clock(tmp_path: Path) -> None:
    d = _domain(24)
    sim, report = _sim(tmp_path, d, 4.0, "0,0", "--bridge", "unitree")
    drv = _driver(d, "--duration_s", "20", "--fall_tilt", "3.14", *UNITREE_FLAGS)  # the held PD law may tip it
    for line in drv.stdout:  # wait until the episode runs
        if line.startswith("[realgap] G1 over DDS"):
            break
    time.sleep(2.0)
    sim.send_signal(signal.SIGSTOP)
    out, _ = drv.communicate(timeout=120)
    sim.send_signal(signal.SIGCONT)
    _finish(sim, report)
    assert drv.returncode == 3 and "watchdog: no LowState arrived for 250 ms (arrival clock)" in out, out


@pytest.mark.parametrize(
    ("fault", "text"),
    [
        ("crc", "state CRC: 3 invalid LowState CRCs in a row"),
        ("quat", "bad IMU quaternion [0.0, 0.0, 0.0, 0.0]"),
        ("tick_back", "LowState tick went backwards"),
        ("tick_jump", "LowState tick jumped by 10001"),
    ],
)
def test_bad_state_on_the_wire_ends_in_damping_naming_the_cause(tmp_path: Path, fault: str, text: str) -> None:
    d = _domain(30 + ["crc", "quat", "tick_back", "tick_jump"].index(fault))
    sim, report = _sim(tmp_path, d, 1.0 + 3.0 + 1.0, "0,0", "--fault", fault, "--fault_at_s", "1.5")
    drv = _driver(d, "--duration_s", "3", "--push_mps", "0,0")
    out, _ = drv.communicate(timeout=180)
    assert drv.returncode == 3 and text in out and "into the episode (control time" in out, out
    rep = _finish(sim, report)
    assert rep["last_kp_max"] == 0.0 and rep["last_kd_min"] > 0, rep  # damping is the last command received


def test_a_safety_stop_in_the_soft_start_with_log_exits_3_and_writes_no_log(tmp_path: Path) -> None:
    """Before the first policy step there is nothing to log: no crash (issue 59: the log's reshape of 0 samples)."""
    d = _domain(35)
    sim, report = _sim(tmp_path, d, 1.0 + 2.0 + 1.0, "0,0", "--fault", "crc", "--fault_at_s", "0.3")
    log = tmp_path / "never.npz"
    drv = _driver(d, "--duration_s", "2", "--push_mps", "0,0", "--log", str(log))
    out, _ = drv.communicate(timeout=180)
    assert drv.returncode == 3 and "into the soft start (control time" in out and "no log written" in out, out
    assert not log.exists()
    rep = _finish(sim, report)
    assert rep["last_kp_max"] == 0.0, rep


def test_a_held_robot_is_refused_then_released(tmp_path: Path) -> None:
    d = _domain(40)
    sim, report = _sim(tmp_path, d, 1.0 + 2.0 + 2.0, "0,0", "--motion_mode", "ai")
    drv = _driver(d, "--duration_s", "2", "--push_mps", "0,0")
    out, _ = drv.communicate(timeout=120)
    assert drv.returncode == 2 and "'ai' holds the robot" in out and "--motion_switcher release" in out, out
    drv = _driver(d, "--duration_s", "2", "--push_mps", "0,0", "--motion_switcher", "release")
    out, _ = drv.communicate(timeout=180)
    assert drv.returncode == 0 and "motion switcher: released 'ai'" in out, out
    rep = _finish(sim, report)
    assert rep["motion_mode_at_end"] == "" and rep["motion_switcher_calls"]["1003"] >= 1, rep
    assert rep["commands_while_held"] == 0 and rep["commands"] > 0 and rep["last_kp_max"] == 0.0, rep


# What Unitree's g1_low_level_example.py does on the wire, step by step (our code, in a process of its own):
# CheckMode / ReleaseMode until no mode is held, mode_machine copied from the first LowState, 1 s of PR commands
# moving to the zero posture, then 0.5 s of AB commands.
EXAMPLE_STEPS = """
import json, sys, time
from unitree_sdk2py.comm.motion_switcher.motion_switcher_client import MotionSwitcherClient
from unitree_sdk2py.core.channel import ChannelFactoryInitialize, ChannelPublisher, ChannelSubscriber
from unitree_sdk2py.idl.default import unitree_hg_msg_dds__LowCmd_
from unitree_sdk2py.idl.unitree_hg.msg.dds_ import LowCmd_, LowState_
from unitree_sdk2py.utils.crc import CRC

ChannelFactoryInitialize(int(sys.argv[1]), "lo")
msc = MotionSwitcherClient()
msc.SetTimeout(5.0)
msc.Init()
code, result = msc.CheckMode()
held, releases = result["name"], 0
while result["name"]:
    msc.ReleaseMode()
    releases += 1
    code, result = msc.CheckMode()
states = []
sub = ChannelSubscriber("rt/lowstate", LowState_)
sub.Init(states.append, 10)
pub = ChannelPublisher("rt/lowcmd", LowCmd_)
pub.Init()
while not states:
    time.sleep(0.01)
cmd, crc, q0 = unitree_hg_msg_dds__LowCmd_(), CRC(), [states[-1].motor_state[i].q for i in range(29)]
for k in range(750):
    cmd.mode_pr, cmd.mode_machine = (0 if k < 500 else 1), states[0].mode_machine
    for i in range(29):
        m = cmd.motor_cmd[i]
        m.mode, m.q, m.dq, m.tau, m.kp, m.kd = 1, q0[i] * (1 - min(k / 500, 1)), 0.0, 0.0, 40.0, 1.0
    cmd.crc = crc.Crc(cmd)
    pub.Write(cmd)
    time.sleep(0.002)
print(json.dumps({"held": held, "releases": releases, "mode_machine": states[0].mode_machine}))
"""


def test_the_steps_of_unitrees_low_level_example_run_against_g1_dds_sim(tmp_path: Path) -> None:
    d = _domain(41)
    sim, report = _sim(tmp_path, d, 60.0, "0,0", "--motion_mode", "ai")
    cmd = [sys.executable, "-c", EXAMPLE_STEPS, str(d)]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got == {"held": "ai", "releases": 1, "mode_machine": 5}, got
    rep = _stop(sim, report)
    # PR commands applied (the loaded machine may merge some), every AB command refused, none lost to the mode
    assert rep["crc_failures"] == 0 and rep["commands_while_held"] == 0 and rep["motion_mode_at_end"] == "", rep
    assert rep["commands"] >= 250 and rep["ab_commands_refused"] >= 125, rep
