"""The G1's left-right mirror map (robot facts) against the MJCF itself, and the balance task's symmetry augmentation
on plain tensors (no simulator: the observation layout is passed in)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from realgap.envs.robots.g1 import G1, G1_DEFAULT_JOINT_POS, G1_JOINT_MIRROR, G1_JOINT_NAMES
from realgap.tasks.balance.symmetry import MirrorLayout, mirror_actions, mirror_obs

pytestmark = pytest.mark.unit


def test_mirror_map_is_an_involution_with_signs():
    for name, (other, sign) in G1_JOINT_MIRROR.items():
        assert G1_JOINT_MIRROR[other] == (name, sign)
    assert G1_JOINT_MIRROR["left_hip_roll_joint"] == ("right_hip_roll_joint", -1.0)
    assert G1_JOINT_MIRROR["left_knee_joint"] == ("right_knee_joint", 1.0)
    assert G1_JOINT_MIRROR["waist_yaw_joint"] == ("waist_yaw_joint", -1.0)
    assert G1_JOINT_MIRROR["waist_pitch_joint"] == ("waist_pitch_joint", 1.0)


def test_mirror_map_matches_the_mjcf_axes_and_anchors():
    """In the world frame at q = 0: joint m's anchor is joint j's with y negated, and its axis is j's axis reflected
    as a pseudovector, (−a_x, a_y, −a_z), times the sign."""
    import mujoco

    model = mujoco.MjModel.from_xml_path(str(G1.mjcf_path()))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    for name, (other, sign) in G1_JOINT_MIRROR.items():
        j, m = model.joint(name).id, model.joint(other).id
        np.testing.assert_allclose(data.xanchor[m], data.xanchor[j] * [1, -1, 1], atol=2e-3, err_msg=name)
        np.testing.assert_allclose(data.xaxis[m], sign * data.xaxis[j] * [-1, 1, -1], atol=2e-3, err_msg=name)


def test_default_pose_is_mirror_symmetric():
    pose = dict(zip(G1_JOINT_NAMES, G1.default_pose(), strict=True))
    assert G1_DEFAULT_JOINT_POS  # the stance is not all zeros, so the check below has something to check
    for name, (other, sign) in G1_JOINT_MIRROR.items():
        assert pose[other] == pytest.approx(sign * pose[name]), name


def _layout() -> MirrorLayout:
    # sim joint order differs from the MJCF's on purpose: the layout must follow the names, not positions
    names = list(G1_JOINT_NAMES[::-1])
    terms = {"base_ang_vel": 3, "projected_gravity": 3, "joint_pos": 29, "actions": 29}
    return MirrorLayout.build(names, {"policy": terms, "critic": terms | {"base_height": 1, "base_lin_vel": 3}})


def test_mirrored_state_by_hand():
    layout = _layout()
    names = list(G1_JOINT_NAMES[::-1])
    q = torch.zeros(1, 29)
    q[0, names.index("left_hip_roll_joint")] = 0.3  # leaning the left leg out ...
    q[0, names.index("left_knee_joint")] = 0.5
    obs = torch.cat([torch.tensor([[0.1, 0.2, 0.3]]), torch.tensor([[0.0, 0.4, -0.9]]), q, q], dim=1)
    out = mirror_obs(obs, layout.groups["policy"])
    # ... becomes the right leg leaning out: roll flips sign, the knee keeps it
    qm = out[0, 6:35]
    assert qm[names.index("right_hip_roll_joint")] == pytest.approx(-0.3)
    assert qm[names.index("right_knee_joint")] == pytest.approx(0.5)
    assert qm[names.index("left_knee_joint")] == 0.0
    # angular velocity (pseudovector) (wx, wy, wz) -> (-wx, wy, -wz); gravity (vector) (gx, gy, gz) -> (gx, -gy, gz)
    torch.testing.assert_close(out[0, :3], torch.tensor([-0.1, 0.2, -0.3]))
    torch.testing.assert_close(out[0, 3:6], torch.tensor([0.0, -0.4, -0.9]))
    a = mirror_actions(q, layout)
    torch.testing.assert_close(a, qm[None])


def test_mirror_twice_is_identity_and_critic_terms_follow():
    layout = _layout()
    gen = torch.Generator().manual_seed(0)
    critic = torch.randn(8, 3 + 3 + 29 + 29 + 1 + 3, generator=gen)
    once = mirror_obs(critic, layout.groups["critic"])
    torch.testing.assert_close(mirror_obs(once, layout.groups["critic"]), critic)
    torch.testing.assert_close(once[:, 64], critic[:, 64])  # base height is unchanged
    torch.testing.assert_close(once[:, 65:], critic[:, 65:] * torch.tensor([1.0, -1.0, 1.0]))  # base lin vel


def test_unknown_term_is_refused():
    with pytest.raises(ValueError, match="no mirror rule for observation term 'foot_contact'"):
        MirrorLayout.build(list(G1_JOINT_NAMES), {"policy": {"foot_contact": 2}})


def test_an_observation_history_is_mirrored_frame_by_frame():
    """Terms with a history of 3 frames (Isaac Lab flattens them oldest to newest): each frame mirrored as one."""
    names = list(G1_JOINT_NAMES[::-1])
    one = MirrorLayout.build(names, {"policy": {"base_ang_vel": 3, "joint_pos": 29}})
    three = MirrorLayout.build(names, {"policy": {"base_ang_vel": 9, "joint_pos": 87}})
    gen = torch.Generator().manual_seed(1)
    w, q = torch.randn(4, 3, 3, generator=gen), torch.randn(4, 3, 29, generator=gen)
    obs = torch.cat([w.reshape(4, 9), q.reshape(4, 87)], dim=1)
    out = mirror_obs(obs, three.groups["policy"])
    for k in range(3):
        frame = mirror_obs(torch.cat([w[:, k], q[:, k]], dim=1), one.groups["policy"])
        torch.testing.assert_close(out[:, 3 * k : 3 * k + 3], frame[:, :3])
        torch.testing.assert_close(out[:, 9 + 29 * k : 9 + 29 * k + 29], frame[:, 3:])
    with pytest.raises(ValueError, match="has width 30, expected 29"):
        MirrorLayout.build(names, {"policy": {"joint_pos": 30}})
