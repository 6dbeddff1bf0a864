"""Unit tier: the Franka Hand's finger speed as the grasp trains and runs it (issue: the fingers closed at 0.79 m/s
against the hand's 0.05 m/s per finger). The setpoint ramp by hand-computed steps, the runtime's binary term with and
without a ``speed`` (old exports keep their idealised hand), and the format's refusal of a speed that is not > 0."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.unit
EXPORT = Path(__file__).resolve().parents[2] / "configs/policies/grasp_franka"


def test_ramp_moves_at_most_one_step_and_stops_on_the_target():
    import torch

    from realgap.actuators.motion import ramp_toward

    step = 0.05 * 0.005  # 0.05 m/s per finger at the 5 ms physics step: 0.25 mm
    s = np.array([[0.04, 0.04]])
    for _ in range(3):
        s = ramp_toward(s, np.array([[0.0, 0.0399]]), step)
    np.testing.assert_allclose(s, [[0.04 - 3 * 0.00025, 0.0399]])  # 39.25 mm; the near target reached, not passed
    t = ramp_toward(torch.tensor([[0.04]]), torch.tensor([[0.0]]), step)
    assert t.item() == pytest.approx(0.03975)
    assert ramp_toward(np.array([0.04]), np.array([0.0]), np.inf)[0] == 0.0  # no speed: the target at once


@pytest.fixture(scope="module")
def meta():
    from realgap.envs.deploy import load_metadata

    return load_metadata(EXPORT / "policy.json")


def _with_speed(meta, speed: float):
    terms = [
        replace(t, params={**t.params, "speed": [speed, speed]}) if t.type == "binary_joint_position" else t
        for t in meta.actions.terms
    ]
    return replace(meta, actions=replace(meta.actions, terms=terms))


def test_the_runtime_ramps_a_hand_with_a_speed_and_jumps_one_without(meta):
    from realgap.envs.deploy.actions import ActionMapper

    close = np.zeros(meta.action_dim, dtype=np.float32)
    close[-1] = -1.0  # the gripper entry below its threshold: close
    q = np.asarray(meta.default_joint_pos, dtype=np.float64).copy()  # fingers open, 0.04 m
    fingers = slice(7, 9)

    legacy = ActionMapper(meta)  # the shipped export has no speed: the target jumps to 0 (what it trained with)
    target = q.copy()
    legacy.apply(close, target, q)
    np.testing.assert_array_equal(target[fingers], [0.0, 0.0])

    sped = _with_speed(meta, 0.05)
    mapper = ActionMapper(sped)
    target, tau_ff = q.copy(), np.zeros_like(q)
    mapper.apply(close, target, q)
    for k in range(1, 5):
        mapper.track(q, target, tau_ff)
        # 0.05 m/s × 5 ms per control period, from the measured 0.04 m
        np.testing.assert_allclose(target[fingers], 0.04 - k * 0.05 * sped.rates.sim_dt, rtol=1e-12)
    assert mapper.tracks

    hand_ramps_itself = ActionMapper(sped, ramp_binary=False)  # a position robot: its driver passes the speed on
    target = q.copy()
    hand_ramps_itself.apply(close, target, q)
    np.testing.assert_array_equal(target[fingers], [0.0, 0.0])


def test_the_format_refuses_a_speed_that_is_not_positive():
    from realgap.envs.format import MetadataError, PolicyMetadata

    raw = json.loads((EXPORT / "policy.json").read_text())
    term = next(t for t in raw["actions"]["terms"] if t["type"] == "binary_joint_position")
    term["params"]["speed"] = [0.05, 0.0]
    with pytest.raises(MetadataError, match="speed must be finite and > 0"):
        PolicyMetadata.from_dict(raw)


def test_the_hand_model_is_the_finger_spec_and_refuses_an_impossible_hand():
    from realgap.envs.robots.panda import FRANKA_HAND, PANDA_ACTUATORS, FrankaHand

    # Franka Hand product data: 0.05 m/s per finger (0.1 m/s closing), 70 N continuous / 140 N peak grasp force;
    # the hand and the chain's finger spec must both say so.
    datasheet = (0.05, 140.0, 70.0)
    assert (FRANKA_HAND.finger_speed_mps, FRANKA_HAND.peak_force_n, FRANKA_HAND.continuous_force_n) == datasheet
    fingers = PANDA_ACTUATORS["fingers"]
    assert (fingers.velocity_limit, fingers.peak_torque, fingers.continuous_torque) == datasheet
    with pytest.raises(ValueError, match="finger_speed_mps"):
        FrankaHand(finger_speed_mps=0.2)  # faster than the driver may command
    with pytest.raises(ValueError, match="continuous"):
        FrankaHand(continuous_force_n=150.0)


def test_grasp_detection_is_libfrankas_window_and_closing_on_nothing_is_not_a_grasp():
    from realgap.envs.deploy import load_metadata
    from realgap.envs.deploy.drivers.franka import HAND_MAX_WIDTH_M, grasp_window
    from realgap.envs.robots.panda import FrankaHand

    meta = load_metadata(EXPORT.parent / "grasp_franka_hand" / "policy.json")
    width, inner, outer = grasp_window(meta)  # the export's 4–5 cm boxes, 5 mm past each end: 45 ± 10 mm
    assert (width, inner, outer) == pytest.approx((0.045, 0.010, 0.010))
    for d, held in ((0.034, False), (0.036, True), (0.0499, True), (0.054, True), (0.056, False), (0.0, False)):
        assert FrankaHand.grasped(d, width, inner, outer) is held, d
    assert grasp_window(replace(meta, scene=None)) == (0.0, HAND_MAX_WIDTH_M, HAND_MAX_WIDTH_M)
    with pytest.raises(ValueError, match="object width range"):
        FrankaHand.grasp_window(0.05, 0.04)


def test_the_suite_cell_closes_the_fingers_at_the_exports_speed(meta):
    """The held-out suite's Panda (a position robot whose simulated finger servo takes each target at once) is driven
    with the hand the export trained with: the runtime moves the finger target by speed · control_dt per control
    period, and the fingers close no faster than that (before the fix the target jumped to 0 and the hand slammed)."""
    from realgap.envs.deploy.runtime import DeployRuntime
    from realgap.envs.eval.suite.draw import draw_robot
    from realgap.envs.eval.suite.plant import grasp_robot
    from realgap.envs.eval.suite.schema import load_suite

    sped = _with_speed(meta, 0.05)
    suite = load_suite(EXPORT.parents[1] / "suites" / "panda_grasp_v1.yaml")
    typical = suite.family("typical")
    draw = draw_robot(suite, typical, 0, sped)
    draw = replace(draw, noise=replace(draw.noise, q_rad=0.0, qd_rads=0.0))  # exact readings: exact setpoints
    robot, _, objects = grasp_robot(sped, suite, draw, typical.values)
    assert robot.command_mode == "position" and not robot.hand_ramps
    close = np.zeros(sped.action_dim, dtype=np.float32)
    close[-1] = -1.0
    runtime = DeployRuntime(sped, robot, lambda obs: close, objects=objects)
    robot.reset()
    runtime.reset()
    fingers = slice(7, 9)
    open_width = robot.read_joints().pos[fingers].copy()
    runtime.step()  # one policy period: the close command, then its control periods
    n, dt = runtime.steps_per_policy, robot.control_dt
    np.testing.assert_allclose(runtime.q_target[fingers], open_width - n * 0.05 * dt, atol=1e-9)
    moved = open_width - robot.read_joints().pos[fingers]
    assert np.all(moved <= n * 0.05 * dt + 1e-4), moved  # no faster than the hand (0.1 mm of servo lag allowed)

    legacy = DeployRuntime(meta, robot, lambda obs: close, objects=objects)  # no speed: the trained idealised hand
    robot.reset()
    legacy.reset()
    legacy.step()
    np.testing.assert_array_equal(legacy.q_target[fingers], [0.0, 0.0])


def test_a_torque_robot_ramps_the_hand_by_default_and_a_position_robot_leaves_it_to_the_driver(meta):
    """``Robot.hand_ramps`` defaults by command mode: a torque robot's finger PD is the runtime's (it ramps), a
    position robot's driver passes the speed on (a real Franka Hand); the suite's robot overrides it (above)."""
    from realgap.envs.deploy.drivers.franka import FrankaRobot
    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.deploy.robot import Robot

    torque = MujocoRobot.for_policy(meta)
    assert torque.command_mode == "torque" and not torque.hand_ramps
    # the real Franka (no hardware here) keeps the default, which for a position robot leaves the speed to the hand
    assert FrankaRobot.command_mode == "position" and FrankaRobot.hand_ramps is Robot.hand_ramps
    assert Robot.hand_ramps.fget(FrankaRobot) is True
