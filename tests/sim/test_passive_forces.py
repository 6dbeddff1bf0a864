"""Sim tier: the bias forces with retained buffers (realgap.envs.sim.passive_forces) equal Isaac Lab's
gravity_compensation_forces and Newton's own passive inverse dynamics bit for bit, at a state with joint velocities,
and keep their scratch across calls (no allocation per physics step)."""

import pytest
import torch

from realgap.tasks.grasp import ACTION_SPACE_IDS

pytestmark = pytest.mark.sim


def test_retained_bias_forces_equal_newtons_own_calls(env_builder):
    from realgap.envs.sim.passive_forces import PassiveForces

    with env_builder(ACTION_SPACE_IDS["computed_torque"], 4, seed=5, events__reset_arm=None) as env:
        env.reset()
        robot = env.scene["robot"]
        gen = torch.Generator().manual_seed(0)
        q, qd = robot.data.joint_pos.torch.clone(), torch.zeros_like(robot.data.joint_vel.torch)
        q[:, :7] += 0.3 * (2 * torch.rand(4, 7, generator=gen) - 1)
        qd[:, :7] = 2 * torch.rand(4, 7, generator=gen) - 1  # up to 1 rad/s: C(q, q̇)·q̇ is not zero
        robot.write_joint_state_to_sim_index(position=q, velocity=qd)
        env.sim.forward()
        kept = PassiveForces(robot.data, coriolis=True)
        assert kept.retained, "Newton's scratch class was not found: every physics step allocates again"
        scratch = kept._scratch
        g, c = kept.gravity().clone(), kept.coriolis().clone()
        assert torch.equal(g, robot.data.gravity_compensation_forces.torch)  # Isaac Lab's property, same bits
        public = PassiveForces(robot.data, coriolis=True)
        public._scratch = None  # Newton's public call, which allocates its own scratch
        assert torch.equal(c, public.coriolis()) and float(c.abs().max()) > 1e-3
        assert torch.equal(kept.gravity(), g) and kept._scratch is scratch  # called again: same buffers, same values
        # the computed-torque term's h(q, q̇) is g + C·q̇ of its joints
        term = env.action_manager.get_term("arm")
        assert torch.equal(term._bias(), (g + c)[:, term._cols])
