"""Sim tier: the grasp_nominal DR profile plugs into the grasp task through the standard seam (load_cfgs / CLI):
its terms follow the task's own, the env steps finite, and the lift metric follows the object collider the profile
resizes. (Own module: the variant fixture of test_grasp_env.py keeps an env alive until its module ends.)"""

import pytest
import torch

from realgap.tasks.grasp import ACTION_SPACE_IDS

pytestmark = pytest.mark.sim


def test_grasp_nominal_profile_plugs_in_and_the_lift_stays_honest():
    from realgap.envs.factory import load_cfgs, make_env, simulation
    from realgap.tasks.grasp.mdp import object_lift_m

    task = ACTION_SPACE_IDS["joint_pd_gravity"]
    cfg, _ = load_cfgs(task, "cpu", num_envs=4, seed=5, dr_profile="grasp_nominal")
    names = [k for k, v in vars(cfg.events).items() if v is not None]
    # the task's own terms first, then the profile's error sources (object payload, pad/object friction, geometry...)
    assert names[:5] == ["reset_scene", "reset_arm", "reset_object", "object_friction", "pad_friction"]
    assert {"dr_payload_object", "dr_contact_geometry", "dr_initial_pose", "dr_command_delay"} <= set(names[5:])
    with simulation(cfg):
        env = make_env(task, cfg)
        try:
            env.reset()
            act = torch.zeros(env.num_envs, env.action_manager.total_action_dim)
            act[:, -1] = 1.0
            for _ in range(10):
                obs, rew, _, _, _ = env.step(act)
                assert torch.isfinite(obs["policy"]).all() and torch.isfinite(rew).all()
            term = env.event_manager.get_term_cfg("reset_object").func
            height = 2.0 * term._scale_view[:, 0, 2]  # collider height now, m (Newton box scale = half extents)
            # the profile rescaled the 5 cm nominal by 0.98-1.02 after the task drew 4-5 cm: the task's draw is stale
            assert float((height - term.size_m[:, 2]).abs().max()) > 1e-3
            assert float(height.min()) > 0.0489 and float(height.max()) < 0.0511
            # the object rests on the table: its lift reads ~0 (soft contact sinks it < 2 mm), not the stale offset
            assert float(object_lift_m(env).abs().max()) < 0.003
        finally:
            env.close()
