"""Sim tier (MuJoCo C): the control loop of docs/policy_format.md, written from the exported files alone, is the
deploy runtime. The page's Python block runs as printed on the MuJoCo G1 with the shipped balance policy and sends the
same torques, step for step, as ``DeployRuntime`` (no command delay: the page's loop is a robot's, which adds none)."""

import re
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.sim

REPO = Path(__file__).resolve().parents[2]
EXPORT = REPO / "configs" / "policies" / "balance_g1"
STEPS = 400  # 2 s at 200 Hz: 100 policy steps


class _Done(Exception):
    pass


def _run_page_loop(robot) -> list[np.ndarray]:
    """Execute the page's first Python block with the robot API bound to ``robot``; the torques it sends."""
    text = (REPO / "docs" / "policy_format.md").read_text()
    code = re.search(r"## The control loop.*?```python\n(.*?)```", text, re.S).group(1)
    sent: list[np.ndarray] = []

    def read_joints():
        j = robot.read_joints()
        return j.pos, j.vel

    def read_imu():
        imu = robot.read_imu()
        return imu.ang_vel_b, imu.projected_gravity_b

    def send_torques(tau):
        sent.append(np.array(tau))
        robot.send_torques(tau)

    def wait_for_next_tick(dt):
        assert dt == robot.control_dt
        robot.step()
        if len(sent) == STEPS:
            raise _Done

    env = {
        "read_joints": read_joints,
        "read_imu": read_imu,
        "send_torques": send_torques,
        "wait_for_next_tick": wait_for_next_tick,
    }
    with pytest.raises(_Done):
        exec(compile(code, "docs/policy_format.md", "exec"), env)
    return sent


def test_the_documented_loop_is_the_runtime(monkeypatch):
    from realgap.envs.deploy import DeployRuntime
    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.format import load_policy

    meta, policy = load_policy(EXPORT)
    monkeypatch.chdir(EXPORT)  # the page opens policy.json and policy.onnx from the working folder
    page = _run_page_loop(MujocoRobot.for_policy(meta))
    robot = MujocoRobot.for_policy(meta)
    ours: list[np.ndarray] = []
    send = robot.send_torques
    robot.send_torques = lambda tau: (ours.append(np.array(tau)), send(tau))
    runtime = DeployRuntime(meta, robot, policy, command_delay=False)
    for _ in range(STEPS // runtime.steps_per_policy):
        runtime.step()
    assert len(page) == len(ours) == STEPS
    np.testing.assert_allclose(np.array(page), np.array(ours), rtol=0, atol=1e-9)
    # it stood, in its crouch (pelvis 0.583 m, reached over the page's ramp): a loop that only agreed while falling
    # would prove less
    assert robot.root_height() > 0.55 and robot.tilt() < 0.2
