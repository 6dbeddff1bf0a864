"""Sim tier: the deploy runtime runs the grasp export's terms as Isaac Lab does, state for state.

One grasp env (4 envs, the ``ee_pose_delta`` task the shipped export was trained on) is built once. For each env's
state the runtime (numpy + MuJoCo kinematics on the export's MJCF, :mod:`realgap.envs.deploy.task_space`) computes the
IK joint targets and the gravity feed-forward for the same action, and the observation from the same joints and object
pose; each must equal what the Isaac Lab terms wrote.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.sim
EXPORT = Path(__file__).resolve().parents[2] / "configs/policies/grasp_franka"


class _Truth:
    """ObjectPose: the simulator's object pose of one env in its robot's root frame."""

    def __init__(self) -> None:
        self.pos, self.quat_wxyz = np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0])

    def read_object_pose(self) -> tuple[np.ndarray, np.ndarray]:
        return self.pos, self.quat_wxyz


@pytest.fixture(scope="module")
def env():
    from conftest import build_env

    from realgap.tasks.grasp import RECOMMENDED_TASK

    with build_env(RECOMMENDED_TASK, num_envs=4, seed=5) as env:
        yield env


def test_ik_targets_gravity_and_observations_equal_isaac_lab(env) -> None:
    import torch
    from isaaclab.utils.math import subtract_frame_transforms

    from realgap.envs.deploy import load_metadata
    from realgap.envs.deploy.actions import ActionMapper
    from realgap.envs.deploy.objects import task_observation_terms
    from realgap.envs.deploy.observations import ObservationBuilder, Readings
    from realgap.envs.deploy.robot import ImuState, JointState

    meta = load_metadata(EXPORT / "policy.json")
    mapper = ActionMapper(meta)
    truth = _Truth()
    builder = ObservationBuilder(meta, extra_terms=task_observation_terms(meta, mapper.kinematics, truth))
    robot, obj = env.scene["robot"], env.scene["object"]
    cols = [robot.joint_names.index(j) for j in meta.joint_names]
    arm = [robot.joint_names.index(j) for j in meta.actions.terms[0].joint_names]
    term = env.action_manager.get_term("arm")
    gen = torch.Generator().manual_seed(0)
    obs, _ = env.reset()
    for k in range(3):  # three policy steps of random actions: the arms leave their reset poses
        action = (torch.rand(4, 7, generator=gen) * 2 - 1) * 2.0
        before = obs["policy"].clone()
        q_all = robot.data.joint_pos.torch[:, cols].double().numpy()
        qd_all = robot.data.joint_vel.torch[:, cols].double().numpy()
        root_pos, root_quat = robot.data.root_link_pos_w.torch, robot.data.root_link_quat_w.torch
        pos_b, quat_b = subtract_frame_transforms(
            root_pos, root_quat, obj.data.root_link_pos_w.torch, obj.data.root_link_quat_w.torch
        )
        last = env.action_manager.action.clone().numpy()
        term.process_actions(action[:, :6])
        term.apply_actions()
        want_q = robot.actuators.target_command.position.torch[:, arm].double().numpy()
        want_tau = robot.actuators.target_command.effort.torch[:, arm].double().numpy()
        for i in range(4):
            truth.pos = pos_b[i].double().numpy()
            x, y, z, w = quat_b[i].double().numpy()
            truth.quat_wxyz = np.array([w, x, y, z])
            o = builder.build(Readings(JointState(q_all[i], qd_all[i]), ImuState(np.zeros(3), np.zeros(3)), last[i]))
            np.testing.assert_allclose(o, before[i].numpy(), atol=2e-5, err_msg=f"observation, step {k}, env {i}")
            q_target, tau = np.asarray(meta.default_joint_pos, dtype=np.float64).copy(), np.zeros(9)
            mapper.apply(action[i].numpy(), q_target, q_all[i])
            mapper.track(q_all[i], q_target, tau)
            dq = want_q[i] - q_all[i, :7]
            assert np.abs(dq).max() > 1e-3  # the IK moved the arm: the comparison is not of zeros
            np.testing.assert_allclose(q_target[:7], want_q[i], atol=2e-5, err_msg=f"IK target, step {k}, env {i}")
            # g(q): MuJoCo on the MJCF vs torch on the URDF (the same robot; measured 0.02 % apart)
            np.testing.assert_allclose(tau[:7], want_tau[i], rtol=2e-3, atol=2e-3, err_msg=f"g(q), env {i}")
            grip = 0.0 if action[i, 6] < 0 else 0.04
            assert q_target[7] == q_target[8] == grip  # the binary gripper term
        obs, *_ = env.step(action)
