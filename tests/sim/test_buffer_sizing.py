"""Contact and constraint buffers of each task stay below their caps over a few steps on the CPU (the per-world caps
a 4,096-env GPU build inherits: naconmax = nconmax x worlds, njmax per world)."""

import pytest
import torch

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("task", ["Realgap-Balance-G1-v0", "Realgap-Grasp-Franka-v0"])
def test_buffers_stay_below_their_caps(task):
    from conftest import build_env

    from realgap.envs.sim.buffers import buffer_use

    with build_env(task, num_envs=4, seed=3) as env:
        env.reset()
        gen = torch.Generator().manual_seed(0)
        dim = env.action_manager.total_action_dim
        peak = None
        for _ in range(20):  # random actions: feet and fingers press, the cube is pushed around
            env.step(0.3 * torch.randn(4, dim, generator=gen))
            use = buffer_use()
            peak = use if peak is None or use.rows_peak > peak.rows_peak else peak
            assert not use.overflowed, use
        assert peak.contacts_max >= 4 and peak.rows_peak > 0  # contacts and constraints were really counted
