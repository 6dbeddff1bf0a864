"""Sim tier: realgap's code in the per-step path reads no device value on the host (each read would be a host sync on
CUDA), checked on the CPU by the host-read audit (realgap.envs.sim.sync_audit) for both tasks as shipped.

Short episodes make resets happen during the audited steps, so the per-reset terms (metrics, curriculum, the object
reset, the DR event terms of the "wide" profile) are covered. Steps without a reset must be free of realgap reads;
steps with one may only hold the drawn-body validation checks of the DR modules (RESET_VALIDATION). The gpu tier runs
torch's own sync check on CUDA.
"""

import pytest
import torch

from realgap.envs.sim.nan_guard import FiniteVecEnv
from realgap.envs.sim.sync_audit import HostReadAudit

pytestmark = pytest.mark.sim


@pytest.mark.parametrize(
    ("task", "dr_profile"),
    [
        ("Realgap-Balance-G1-v0", None),
        ("Realgap-Grasp-Franka-v0", None),
        ("Realgap-Balance-G1-v0", "wide"),  # every DR event term at each reset: bodies, actuators, friction, contact
    ],
)
def test_per_step_path_has_no_host_read_of_realgap(env_builder, task, dr_profile):
    from realgap.envs.dr.apply import apply_dr_profile

    def prepare(env_cfg):
        if dr_profile is not None:
            apply_dr_profile(env_cfg, dr_profile, task=task)

    with env_builder(task, 4, prepare=prepare, episode_length_s=0.3) as env:
        vec = FiniteVecEnv(env)
        vec.get_observations()
        act = torch.zeros(4, env.action_manager.total_action_dim)
        for _ in range(3):
            vec.step(act)
        plain, at_reset, resets = [], [], 0
        for _ in range(40):
            with HostReadAudit() as audit:
                vec.step(act)
            reset = bool(env.reset_buf.any())  # the test's own read, outside the audit
            resets += reset
            (at_reset if reset else plain).extend(audit.mine())
            assert any(r.owner == "library" for r in audit.reads)  # the audit sees Isaac Lab's own nonzero each step
        assert resets >= 2, "the audited steps must include resets"
        assert plain == [], f"realgap host reads in steps without a reset: {plain}"
        assert [r for r in at_reset if not r.validation] == [], at_reset
