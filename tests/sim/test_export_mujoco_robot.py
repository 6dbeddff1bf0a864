"""Sim tier (MuJoCo C, no Isaac Lab): the deploy runtime's test robot is the training robot — the description the
metadata names (found through its import package, checked by its hash over every file), no hidden position servos,
armature = reflected rotor inertia, the training physics step, the start pose with the feet on the ground — and the
runtime holds its stance with the zero action. Also what the exporter reads from the MJCF (root body, joint types
and limits, the start pose) and the description file list against MuJoCo's own."""

import os

import numpy as np
import pytest

from realgap.envs.format.protocol import BALANCE_PROTOCOL

pytestmark = pytest.mark.sim


@pytest.fixture(scope="module")
def meta():
    from unit.test_deploy import g1_metadata, g1_robot  # the balance-task-shaped metadata of the unit tests

    from realgap.envs.robots.g1 import G1
    from realgap.envs.sim.assets import description_hash

    return g1_metadata(robot=g1_robot(description_hash(G1)))


def test_mujoco_robot_is_the_training_robot(meta):
    import mujoco

    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.robots.g1 import G1

    robot = MujocoRobot.for_policy(meta)
    m = robot.model
    assert robot.mjcf_path == G1.mjcf_path()  # located from robot.description (import package + path) alone
    assert robot.joint_names == G1.joint_names and robot.control_dt == 0.005 and robot.imu_body == "pelvis"
    # 29 motors (force = ctrl) replace the MJCF's kp=500 position servos: no bias term pulls any joint anywhere
    assert m.nu == 29 and np.all(m.actuator_biastype == mujoco.mjtBias.mjBIAS_NONE)
    assert np.all(m.actuator_gainprm[:, 0] == 1.0)
    knee = m.joint("left_knee_joint")
    assert m.dof_armature[knee.dofadr[0]] == pytest.approx(0.025101925)  # 7520-22 reflected inertia, not MJCF 0.01
    assert m.dof_frictionloss[knee.dofadr[0]] == pytest.approx(0.3)  # friction.applied_by == "simulator"
    assert m.jnt_actfrcrange[knee.id].tolist() == [-139.0, 139.0]
    assert robot.description_hash == meta.robot.description_sha256
    # the start pose: feet on the ground, upright
    assert robot.root_height() == pytest.approx(0.757) and robot.tilt() == pytest.approx(0.0)
    assert abs(robot.lowest_collider_height()) < 1e-5
    spawn = MujocoRobot.for_policy(meta, pose="training_spawn")
    assert spawn.root_height() == pytest.approx(0.767) and spawn.lowest_collider_height() == pytest.approx(0.01, 1e-3)


def test_mjcf_facts_give_the_start_pose_on_the_ground():
    from realgap.envs.deploy.mujoco_robot import mjcf_facts
    from realgap.envs.robots import G1, PANDA

    g1 = mjcf_facts(G1.mjcf_path(), G1.joint_names, G1.default_pose(), (0.0, 0.0, 0.767), (1, 0, 0, 0), False)
    assert g1.root_body == "pelvis" and set(g1.joint_types) == {"hinge"}
    # G1_ROOT_HEIGHT = 0.757 m was measured the same way (foot spheres touching z = 0 in the stance)
    assert g1.start_root_pos[2] == pytest.approx(0.757, abs=1e-4) and g1.start_clearance_m == pytest.approx(0, abs=1e-6)
    knee = G1.joint_names.index("left_knee_joint")
    assert (g1.pos_lower[knee], g1.pos_upper[knee]) == pytest.approx((-0.087267, 2.8798))  # g1.xml knee range
    panda = mjcf_facts(PANDA.mjcf_path(), PANDA.joint_names, PANDA.default_pose(), (0, 0, 0), (1, 0, 0, 0), True)
    assert panda.root_body == "link0" and panda.joint_types[-2:] == ("slide", "slide")
    assert panda.pos_upper[-1] == 0.04 and panda.start_clearance_m is None and panda.start_root_pos == (0, 0, 0)


@pytest.mark.parametrize("robot_name", ["g1", "panda"])
def test_description_files_are_the_files_mujoco_loads(robot_name):
    import mujoco

    from realgap.envs.format.description import description_files
    from realgap.envs.robots import ROBOTS

    path = ROBOTS[robot_name].mjcf_path()
    spec = mujoco.MjSpec.from_file(str(path))
    loaded = {os.path.normpath(os.path.join(spec.meshdir, m.file)) for m in spec.meshes}
    loaded |= {os.path.normpath(os.path.join(spec.texturedir, t.file)) for t in spec.textures if t.file}
    ours = {f.path for f in description_files(path)}
    assert ours == loaded | {path.name} and len(ours) > 30  # the MJCF and every mesh: 36 files (G1), 68 (Panda)


def test_zero_action_runtime_holds_the_stance(meta):
    from realgap.envs.deploy import DeployRuntime, ZeroPolicy
    from realgap.envs.deploy.mujoco_robot import MujocoRobot

    robot = MujocoRobot.for_policy(meta)
    runtime = DeployRuntime(meta, robot, ZeroPolicy(29), seed=0)
    assert runtime.command_delay  # simulated robot: the training delay (0-2 physics steps) is reproduced
    for _ in range(100):  # 2 s at 50 Hz
        runtime.step()
    assert robot.time == pytest.approx(2.0)
    # the PD chain holds the default stance: the pelvis stays about at the 0.757 m stance height
    assert abs(robot.root_height() - 0.757) < 0.03 and robot.tilt() < 0.1
    q = robot.read_joints().pos
    assert np.abs(q - np.array(meta.default_joint_pos)).max() < 0.1


def test_pushed_zero_action_falls_and_is_timed(meta):
    from realgap.envs.deploy import ZeroPolicy
    from realgap.envs.deploy.episode import Push, run_episode
    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.deploy.runtime import DeployRuntime

    robot = MujocoRobot.for_policy(meta)
    runtime = DeployRuntime(meta, robot, ZeroPolicy(29))
    # a 1.5 m/s shove at 0.5 s (50 N·s on 33 kg): no stance absorbs it
    result = run_episode(runtime, robot, [Push(0.5, (1.5, 0.0))], BALANCE_PROTOCOL.with_changes(episode_s=4.0))
    assert result.fell and 0.5 < result.time_up_s < 4.0 and result.pushes == 1
    calm = run_episode(runtime, robot, [], BALANCE_PROTOCOL.with_changes(episode_s=2.0))
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


def test_deploy_command_runs_the_shipped_balance_policy():
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    args = [
        "--policy",
        "configs/policies/balance_g1",
        "--robot",
        "mujoco",
        "--episodes",
        "2",
        "--duration_s",
        "2",
        "--push_mps",
        "0.3,0.3",
        "--push_interval_s",
        "1,1",
    ]
    out = subprocess.run(
        [sys.executable, "-m", "realgap.scripts.deploy", *args], cwd=repo, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert "description sha256" in lines[1] and "start pose root height 0.757 m" in lines[1]
    # a 0.3 m/s push at 1 s: the policy stays up through the 2 s; each episode printed, then the summary
    assert lines[2] == "episode 1/2: time up 2.00 s, no fall, 1 pushes"
    assert lines[-1].endswith("mean time up 2.00 s, falls 0")
