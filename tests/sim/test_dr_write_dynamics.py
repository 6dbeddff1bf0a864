"""Sim tier: a DR mass write between steps changes the trajectory that follows (the CPU twin of the gpu tier's test
under CUDA-graph replay, tests/gpu/test_cuda_path.py)."""

import pytest
import torch
from dr_write_check import dr_write_effect

pytestmark = pytest.mark.sim


def test_a_mass_write_changes_the_dynamics(env_builder):
    with env_builder("Realgap-Balance-G1-v0", 4) as env:
        env.reset()
        env.step(torch.zeros(4, env.action_manager.total_action_dim))
        changed, noise = dr_write_effect(env)
        assert noise == 0.0  # the CPU engine: the same state and actions give the same trajectory
        assert changed > 1e-4, f"doubling the torso mass changed the trajectory by only {changed:.2e}"
