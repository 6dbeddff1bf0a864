"""Sim tier: the balance task's joint-position term with ``relative_to="measured"`` sets each policy step's targets
about the joint positions measured at that step, exports as ``joint_position_measured``, and a value it does not know
is refused when the env is built."""

import pytest
import torch

pytestmark = pytest.mark.sim

TASK = "Realgap-Balance-G1-Crouch-v0"


def test_targets_are_the_measured_positions_plus_the_scaled_action(env_builder):
    with env_builder(TASK, 4, 1, actions__joint_pos__relative_to="measured") as env:
        env.reset()
        term = env.action_manager.get_term("joint_pos")
        robot = env.scene["robot"]
        assert term.export_description()["type"] == "joint_position_measured"
        gen = torch.Generator().manual_seed(0)
        for _ in range(3):
            q = robot.data.joint_pos.torch[:, term._joint_ids].clone()
            a = 0.5 * torch.randn(4, term.action_dim, generator=gen)
            env.step(a)
            assert torch.allclose(term.processed_actions, q + term._scale * a, atol=1e-6)
        default = robot.data.default_joint_pos.torch[:, term._joint_ids]
        env.step(term.default_pose_action())  # the task's zero action: targets at the default pose, wherever q is
        assert torch.allclose(term.processed_actions, default, atol=1e-5)


def test_an_unknown_anchor_is_refused(env_builder):
    with pytest.raises(ValueError, match=r"relative_to must be one of \['offset', 'measured'\], got 'target'"):
        with env_builder(TASK, 4, 0, actions__joint_pos__relative_to="target"):
            pass
