"""Sim tier (MuJoCo C, no Isaac Lab): the deploy runtime's test robot is the training robot — same MJCF, no hidden
position servos, armature = reflected rotor inertia, the training physics step — and the runtime holds its stance
with the zero action."""

import numpy as np
import pytest

pytestmark = pytest.mark.sim


@pytest.fixture(scope="module")
def meta():
    from unit.test_deploy import g1_metadata  # the balance-task-shaped metadata of the unit tests

    from realgap.envs.assets import description_hash
    from realgap.envs.deploy.metadata import RobotInfo
    from realgap.envs.robots.g1 import G1

    return g1_metadata(robot=RobotInfo("g1", description_hash(G1), {}, False, (0.0, 0.0, 0.767), (1.0, 0.0, 0.0, 0.0)))


def test_mujoco_robot_is_the_training_robot(meta):
    import mujoco

    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.robots.g1 import G1

    robot = MujocoRobot.for_policy(meta)
    m = robot.model
    assert robot.joint_names == G1.joint_names and robot.control_dt == 0.005
    # 29 motors (force = ctrl) replace the MJCF's kp=500 position servos: no bias term pulls any joint anywhere
    assert m.nu == 29 and np.all(m.actuator_biastype == mujoco.mjtBias.mjBIAS_NONE)
    assert np.all(m.actuator_gainprm[:, 0] == 1.0)
    knee = m.joint("left_knee_joint")
    assert m.dof_armature[knee.dofadr[0]] == pytest.approx(0.025101925)  # 7520-22 reflected inertia, not MJCF 0.01
    assert m.dof_frictionloss[knee.dofadr[0]] == pytest.approx(0.3)
    assert m.jnt_actfrcrange[knee.id].tolist() == [-139.0, 139.0]
    assert robot.description_hash == meta.robot.description_sha256
    assert robot.root_height() == pytest.approx(0.767) and robot.tilt() == pytest.approx(0.0)


def test_zero_action_runtime_holds_the_stance(meta):
    from realgap.envs.deploy import DeployRuntime, ZeroPolicy
    from realgap.envs.deploy.mujoco_robot import MujocoRobot

    robot = MujocoRobot.for_policy(meta)
    runtime = DeployRuntime(meta, robot, ZeroPolicy(29), seed=0)
    assert runtime.command_delay  # simulated robot: the training delay (0-2 physics steps) is reproduced
    for _ in range(100):  # 2 s at 50 Hz
        runtime.step()
    assert robot.time == pytest.approx(2.0)
    # the PD chain holds the default stance: pelvis settles from the 0.767 m spawn to about the 0.757 m stance height
    assert abs(robot.root_height() - 0.757) < 0.03 and robot.tilt() < 0.1
    q = robot.read_joints().pos
    assert np.abs(q - np.array(meta.default_joint_pos)).max() < 0.1


def test_pushed_zero_action_falls_and_is_timed(meta):
    from realgap.envs.deploy import ZeroPolicy
    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.deploy.runtime import DeployRuntime
    from realgap.envs.deploy.sim2sim import Push, run_episode

    robot = MujocoRobot.for_policy(meta)
    runtime = DeployRuntime(meta, robot, ZeroPolicy(29))
    # a 1.5 m/s shove at 0.5 s (50 N·s on 33 kg): no stance absorbs it
    result = run_episode(runtime, robot, [Push(0.5, (1.5, 0.0))], duration_s=4.0, fall_height=0.45, fall_tilt=1.0)
    assert result.fell and 0.5 < result.time_up_s < 4.0 and result.pushes == 1
    calm = run_episode(runtime, robot, [], duration_s=2.0, fall_height=0.45, fall_tilt=1.0)
    assert not calm.fell and calm.time_up_s == 2.0


def test_imu_reads_the_root_frame(meta):
    import mujoco

    from realgap.envs.deploy.mujoco_robot import MujocoRobot

    robot = MujocoRobot.for_policy(meta)
    m, d = robot.model, robot.data
    # tilt 0.3 rad about x: gravity in the body frame is Rx(0.3)ᵀ·(0, 0, −1) = (0, −sin 0.3, −cos 0.3)
    d.qpos[3:7] = [np.cos(0.15), np.sin(0.15), 0.0, 0.0]
    d.qvel[3:6] = [0.1, -0.2, 0.3]
    mujoco.mj_forward(m, d)
    imu = robot.read_imu()
    np.testing.assert_allclose(imu.projected_gravity_b, [0.0, -np.sin(0.3), -np.cos(0.3)], atol=1e-12)
    # MuJoCo's own body-frame velocity of the pelvis (rotation part) agrees with the free-joint reading
    vel = np.zeros(6)
    mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_XBODY, m.body("pelvis").id, vel, 1)
    np.testing.assert_allclose(imu.ang_vel_b, vel[:3], atol=1e-12)
    assert robot.tilt() == pytest.approx(0.3)
