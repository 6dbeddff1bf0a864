"""Suite robots on MuJoCo C (``envs/eval/suite/plant.py``) and the hidden robot's options they use
(``envs/deploy/hidden_robot.py``): a delay per joint, a torque held for a command period, IMU bias, gravity
compensated by the robot, link inertia written through the spec (the compiled model's shortcuts would ignore it), the
grasp cell's object CoM, pads, table and camera bias. Plain MuJoCo C, no Isaac Lab: seconds.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
BALANCE = REPO / "configs" / "policies" / "balance_g1"
GRASP = REPO / "configs" / "policies" / "grasp_franka"
SUITES = REPO / "configs" / "suites"


@pytest.fixture(scope="module")
def g1():
    from realgap.envs.format import load_metadata

    return load_metadata(BALANCE)


@pytest.fixture(scope="module")
def panda():
    from realgap.envs.format import load_metadata

    return load_metadata(GRASP)


def _nominal_truth(meta, delay):
    from realgap.envs.deploy.hidden_robot import HiddenTruth
    from realgap.envs.eval.suite.draw import datasheet

    n = len(meta.joint_names)
    return HiddenTruth(
        np.asarray(delay),
        np.ones(n),
        np.ones(n),
        np.zeros(n),
        np.zeros(n),
        datasheet(meta, "armature"),
        datasheet(meta, "peak_torque"),
    )


def test_each_joint_sees_a_new_target_after_its_own_delay(g1):
    from realgap.envs.deploy.hidden_robot import HiddenRobot

    n = len(g1.joint_names)
    delay = np.zeros(n, dtype=int)
    delay[1], delay[2] = 1, 3
    robot = HiddenRobot(g1, truth=_nominal_truth(g1, delay))  # welded, hanging
    kp, kd = np.full(n, 100.0), np.zeros(n)
    q0 = robot.read_joints().pos
    for _ in range(5):  # fill the delay line with the old target
        robot.send_joint_targets(q0, np.zeros(n), kp, kd)
        robot.step()
    seen = []
    for _ in range(4):
        q = robot.read_joints().pos
        robot.send_joint_targets(q0 + 0.1, np.zeros(n), kp, kd)
        robot.step()
        seen.append(np.abs(robot.read_torque()[:3] - kp[:3] * (q0 + 0.1 - q)[:3]) < 1e-9)  # PD on the new target?
    # joint 0 at once, joint 1 one step late, joint 2 three steps late
    assert [s.tolist() for s in seen] == [
        [True, False, False],
        [True, True, False],
        [True, True, False],
        [True, True, True],
    ]


def test_a_holding_drive_applies_the_pd_of_the_command_period_start(g1):
    from realgap.envs.deploy.hidden_robot import HiddenRobot

    n = len(g1.joint_names)
    robot = HiddenRobot(g1, truth=_nominal_truth(g1, np.zeros(n, dtype=int)), hold_period_steps=4)
    assert robot.control_dt == pytest.approx(4 * robot.sim.control_dt)
    kp, kd = np.full(n, 50.0), np.zeros(n)
    q_start = robot.read_joints().pos
    robot.send_joint_targets(q_start + 0.05, np.zeros(n), kp, kd)
    robot.step()
    # the torque of the period's last physics step is still kp (q* - q measured when the command arrived)
    np.testing.assert_allclose(robot.read_torque(), kp * 0.05, atol=1e-12)
    assert np.abs(robot.read_joints().pos - q_start).max() > 1e-4  # while the joints moved


def test_imu_bias_turns_the_gravity_direction_and_offsets_the_gyro(g1):
    from realgap.envs.deploy.hidden_robot import HiddenRobot, SensorNoise

    noise = SensorNoise(gyro_bias_rads=(0.01, 0.0, -0.02), tilt_bias_rad=(0.05, 0.0))
    imu = HiddenRobot(g1, noise=noise).read_imu()  # welded: true gyro 0, gravity (0, 0, -1)
    np.testing.assert_allclose(imu.ang_vel_b, [0.01, 0.0, -0.02])
    # g + g × δ = (0, -0.05, -1), normalised: the frame rolled by +0.05 rad sees (0, -sin, -cos) to first order
    np.testing.assert_allclose(imu.projected_gravity_b, np.array([0.0, -0.05, -1.0]) / np.hypot(0.05, 1.0))


def test_a_gravity_compensated_panda_holds_its_pose_with_zero_gains(panda):
    from realgap.envs.deploy.hidden_robot import HiddenRobot
    from realgap.envs.deploy.mujoco_robot import MujocoRobot

    n = len(panda.joint_names)
    drift = {}
    for comp in (False, True):
        robot = HiddenRobot(
            panda,
            truth=_nominal_truth(panda, np.zeros(n, dtype=int)),
            sim=MujocoRobot.for_policy(panda),
            gravity_compensated=comp,
        )
        q0 = robot.read_joints().pos
        for _ in range(100):
            robot.send_joint_targets(q0, np.zeros(n), np.zeros(n), np.zeros(n))
            robot.step()
        drift[comp] = np.abs(robot.read_joints().pos - q0).max()
    assert drift[True] < 1e-6 < 0.1 < drift[False]


def _g1_draw(g1, **body):
    from realgap.envs.eval.suite.draw import draw_robot
    from realgap.envs.eval.suite.schema import load_suite

    suite = load_suite(SUITES / "g1_v1.yaml")
    draw = draw_robot(suite, suite.family("typical"), 0, g1, 30)
    return suite, dataclasses.replace(draw, body=draw.body | body)


def test_link_inertia_and_payload_reach_the_dynamics(g1):
    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.eval.suite.plant import balance_robot

    nominal = MujocoRobot.for_policy(g1).model
    shift = np.zeros((30, 3))
    shift[0] = [0.01, 0.0, 0.0]  # the pelvis's mass distribution 1 cm forward
    suite, draw = _g1_draw(g1, link_mass_scale=np.full(30, 1.05), link_com_shift_m=shift, payload_mass_kg=2.0)
    robot = balance_robot(g1, suite, draw)
    m, d = robot.sim.model, robot.sim.data
    # by hand: 1.05 × the links' mass + the 2 kg payload
    assert m.body_mass[1:].sum() == pytest.approx(1.05 * nominal.body_mass[1:].sum() + 2.0, rel=1e-12)
    pelvis = m.body("pelvis").id
    np.testing.assert_allclose(m.body_ipos[pelvis], nominal.body_ipos[pelvis] + [0.01, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(d.xipos[pelvis] - d.xpos[pelvis], d.xmat[pelvis].reshape(3, 3) @ m.body_ipos[pelvis])
    feet = [
        g for g in range(m.ngeom) if m.body(m.geom_bodyid[g]).name.endswith("ankle_roll_link") and m.geom_contype[g]
    ]
    assert np.allclose(m.geom_friction[feet, 0], draw.body["foot_friction"])
    assert np.allclose(m.geom_solref[feet, 0], draw.body["foot_timeconst_s"])
    import mujoco

    d.qpos[2] -= 0.002  # soles 2 mm into the ground: every contact pair takes the foot's values (priority 1)
    mujoco.mj_forward(m, d)
    pairs = [(d.contact[i].solref[0], d.contact[i].friction[0]) for i in range(d.ncon)]
    assert len(pairs) == 8
    assert np.allclose(pairs, [(draw.body["foot_timeconst_s"], draw.body["foot_friction"])] * 8)


def test_an_unchanged_inertia_keeps_every_foot_contact(g1):
    # a compiled model edited in place keeps its old bounding volumes and lost 2 of 4 contacts; the spec route keeps all
    import mujoco

    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.eval.suite.plant import balance_robot

    suite, draw = _g1_draw(g1, link_mass_scale=np.ones(30), link_com_shift_m=np.zeros((30, 3)), payload_mass_kg=0.0)
    robots = [MujocoRobot.for_policy(g1), balance_robot(g1, suite, draw).sim]
    for r in robots:
        r.data.qpos[2] -= 0.002  # 2 mm into the ground: every sole sphere touches
        mujoco.mj_forward(r.model, r.data)
    assert robots[0].data.ncon == robots[1].data.ncon == 8


def test_the_grasp_cell_moves_the_table_the_object_com_and_biases_the_camera(panda):
    from realgap.envs.eval.suite.draw import draw_robot
    from realgap.envs.eval.suite.plant import grasp_robot
    from realgap.envs.eval.suite.schema import load_suite

    suite = load_suite(SUITES / "panda_grasp_v1.yaml")
    worn = suite.family("worn")
    draw = draw_robot(suite, worn, 0, panda)
    body = draw.body | {"object_pos_noise_m": 0.0, "object_rot_noise_rad": 0.0, "table_height_error_m": -0.02}
    robot, scene, objects = grasp_robot(panda, suite, dataclasses.replace(draw, body=body), worn.values)
    assert scene.scene.table_top_z_m == pytest.approx(panda.scene.table_top_z_m - 0.02)
    assert abs(scene.object_lift_m()) < 0.002  # the new box rests on the lowered table
    m, d = scene.model, scene.data
    obj = m.body("object").id
    assert np.linalg.norm(d.xipos[obj] - d.xpos[obj]) == pytest.approx(np.linalg.norm(m.body_ipos[obj]), rel=1e-9)
    assert np.linalg.norm(m.body_ipos[obj]) > 1e-4  # the drawn CoM shift acts in the dynamics
    true_pos, _ = scene.read_object_pose()
    np.testing.assert_allclose(objects.read_object_pose()[0] - true_pos, body["object_pos_bias_m"], atol=1e-12)
    assert robot.gravity_compensated and robot.command_mode == "position"


def test_a_suite_robot_hangs_for_the_identification_motion_with_its_drawn_drives(g1):
    from realgap.envs.eval.suite.draw import draw_robot
    from realgap.envs.eval.suite.plant import excitation_robot
    from realgap.envs.eval.suite.schema import SuiteError, load_suite

    robot = excitation_robot(g1, str(SUITES / "g1_v1.yaml"), "worn", 0, hang_m=0.5)
    suite = load_suite(SUITES / "g1_v1.yaml")
    truth = draw_robot(suite, suite.family("worn"), 0, g1, 30).truth
    assert not robot.sim.floating and robot.fixed_base
    assert robot.root_pos_w[2] == pytest.approx(g1.robot.start_root_pos[2] + 0.5)
    np.testing.assert_array_equal(robot.delay, truth.delay_steps)
    np.testing.assert_allclose(robot.truth.kp_scale, truth.kp_scale)
    with pytest.raises(SuiteError, match="robots 0..15, not 16"):
        excitation_robot(g1, str(SUITES / "g1_v1.yaml"), "worn", 16, hang_m=0.5)
    with pytest.raises(ValueError, match="grasp task on robot 'panda'"):
        excitation_robot(g1, str(SUITES / "panda_grasp_v1.yaml"), "worn", 0, hang_m=0.5)


def test_the_deploy_cli_refuses_a_suite_robot_without_the_identification_motion(tmp_path):
    import subprocess
    import sys

    args = [
        "-m",
        "realgap.scripts.deploy",
        "--policy",
        str(BALANCE),
        "--robot",
        "suite",
        "--suite",
        str(SUITES / "g1_v1.yaml"),
    ]
    proc = subprocess.run([sys.executable, *args], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "--excite" in proc.stderr and "evaluate_suite.py" in proc.stderr
