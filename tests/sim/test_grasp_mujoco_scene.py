"""Sim tier (MuJoCo C, no Isaac Lab): the grasp export runs end to end in the runtime's MuJoCo robot with every scene
fact taken from its metadata — table, object draws within the recorded ranges (consistent bodies), the object's pose
from the ObjectPose interface — and the success test separates the policy from the zero action."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.sim
EXPORT = Path(__file__).resolve().parents[2] / "configs/policies/grasp_franka"


@pytest.fixture(scope="module")
def loaded():
    from realgap.envs.deploy import load_policy

    return load_policy(EXPORT)


def test_scene_is_the_metadatas_and_objects_stay_in_their_ranges(loaded):
    from realgap.envs.deploy.grasp_scene import MujocoGraspRobot

    meta, _ = loaded
    s = meta.scene
    robot = MujocoGraspRobot(meta, seed=1)
    m = robot.model
    np.testing.assert_allclose(m.geom_size[m.geom("table").id], np.array(s.table_size_m) / 2)
    np.testing.assert_allclose(m.geom_pos[m.geom("table").id], s.table_center_m)
    assert m.nu == 9 and robot.imu_body == "link0" and not robot.floating  # the object's free joint is not the robot's
    lo_m, hi_m = s.object_mass_range_kg
    for _ in range(20):
        robot.reset()
        b = robot._obj_body
        size = robot.size_m
        assert all(lo <= v <= hi for v, (lo, hi) in zip(size, s.object_size_range_m, strict=True))
        assert lo_m <= m.body_mass[b] <= hi_m
        # contact softness reads the inverse weights: recomputed for each drawn object (a free body's is 1/m), as
        # training's engine does after a mass draw (they kept the compile-time 0.1 kg's 10 kg⁻¹ before)
        assert m.body_invweight0[b, 0] == pytest.approx(1 / m.body_mass[b], rel=1e-9)
        i1, i2, i3 = m.body_inertia[b]
        assert i1 + i2 >= i3 and i1 > 0  # a physical body (triangle inequality of the principal moments)
        pos, quat = robot.read_object_pose()
        assert pos[2] == pytest.approx(s.table_top_z_m + size[2] / 2 + s.object_clearance_m)
        assert abs(pos[0] - s.object_nominal_xy_m[0]) <= 0.05 + 1e-12 and abs(pos[1]) <= 0.05 + 1e-12
        yaw = 2 * np.arctan2(quat[3], quat[0])
        assert s.object_yaw_range_rad[0] - 1e-9 <= yaw <= s.object_yaw_range_rad[1] + 1e-9
        assert robot.object_lift_m() == pytest.approx(s.object_clearance_m)


def test_policy_lifts_and_the_zero_action_does_not(loaded):
    from realgap.envs.deploy import ZeroPolicy
    from realgap.envs.deploy.grasp_scene import grasp_report

    meta, policy = loaded
    rep = grasp_report(meta, policy, episodes=4, seed=3)
    assert rep["successes"] >= 3, rep  # Isaac Lab Play: 0.992 over 256 episodes
    zero = grasp_report(meta, ZeroPolicy(meta.action_dim), episodes=2, seed=3)
    assert zero["successes"] == 0 and zero["endings"]["time_out"] == 2, zero


def test_a_grasp_export_without_scene_facts_is_refused(loaded):
    from dataclasses import replace

    from realgap.envs.deploy.grasp_scene import MujocoGraspRobot

    meta, _ = loaded
    with pytest.raises(ValueError, match="has no scene facts .*scripts/export.py --upgrade"):
        MujocoGraspRobot(replace(meta, scene=None))


def test_the_export_trained_at_the_hands_speed_lifts_with_the_hand_ramped():
    """The reference grasp under the hand's own speed (configs/policies/grasp_franka_hand): the runtime ramps its
    fingers at the export's 0.05 m/s and the policy still lifts (its 256-episode figure: docs/results/grasp.md; 4
    here, seed 3)."""
    from realgap.envs.deploy import load_policy
    from realgap.envs.deploy.actions import ActionMapper
    from realgap.envs.deploy.grasp_scene import grasp_report

    meta, policy = load_policy(EXPORT.parent / "grasp_franka_hand")
    gripper = next(t for t in meta.actions.terms if t.type == "binary_joint_position")
    assert gripper.params["speed"] == [0.05, 0.05]
    assert ActionMapper(meta).tracks  # the runtime moves the fingers every control period
    rep = grasp_report(meta, policy, episodes=4, seed=3)
    assert rep["successes"] >= 2, rep
