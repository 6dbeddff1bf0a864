"""Sim tier: the grasp_nominal DR profile plugs into the grasp task through the standard seam (load_cfgs / CLI): its
terms follow the task's own, the env steps finite, and the object's body has one owner -- the task's reset_object,
which takes the profile's object ranges -- so the mass, centre of mass and inertia written to the simulator belong to
the collider box drawn in the same reset. (Own module: the variant fixture of test_grasp_env.py keeps an env alive
until its module ends.)"""

import pytest
import torch

from realgap.tasks.grasp import ACTION_SPACE_IDS

pytestmark = pytest.mark.sim

DENSITY = 800.0  # kg/m³, tasks/grasp/env_cfg.py OBJECT_DENSITY


def test_grasp_nominal_profile_plugs_in_and_the_object_has_one_owner():
    from realgap.envs.dr.inertia import check_consistency, default_rtol
    from realgap.envs.dr.sampling import body_from_flat
    from realgap.envs.run.factory import load_cfgs, make_env, simulation
    from realgap.tasks.grasp.mdp import object_lift_m

    task = ACTION_SPACE_IDS["joint_pd_gravity"]
    cfg, _ = load_cfgs(task, "cpu", num_envs=8, seed=5, dr_profile="grasp_nominal")
    names = [k for k, v in vars(cfg.events).items() if v is not None]
    # the task's own terms first, then the profile's error sources; none of them redraws the object's body (the reverse
    # curriculum, a lever absent here, redraws it only through the owner, reset_object.set_body)
    assert names[:5] == ["reset_scene", "reset_arm", "reset_object", "object_friction", "pad_friction"]
    assert names[5:] == [
        "dr_payload",
        "dr_link_inertia",
        "dr_joint_friction",
        "dr_actuator",
        "dr_command_delay",
        "dr_contact_friction_robot",
        "dr_contact_friction_object",
    ]
    assert not [n for n in names if n in ("dr_payload_object", "dr_contact_geometry", "dr_initial_pose")]
    params = cfg.events.reset_object.params  # the profile's object ranges, routed to the owner
    assert params["size_scale_range"] == (0.98, 1.02) and params["inertia"]["mass_scale"] == (0.75, 1.25)
    assert cfg.events.dr_payload.params["asset_cfg"].name == "robot"  # the wrist payload stays a profile term
    with simulation(cfg):
        env = make_env(task, cfg)
        try:
            for _ in range(2):  # twice: a second reset must not compound or drift
                env.reset()
                act = torch.zeros(env.num_envs, env.action_manager.total_action_dim)
                act[:, -1] = 1.0
                for _ in range(5):
                    obs, rew, _, _, _ = env.step(act)
                    assert torch.isfinite(obs["policy"]).all() and torch.isfinite(rew).all()
                term = env.event_manager.get_term_cfg("reset_object").func
                size = term.collider_size_m()  # the collider the simulator holds now
                torch.testing.assert_close(size, term.size_m)  # the owner's draw is the collider
                assert float(size.min()) >= 0.04 * 0.98 - 1e-6 and float(size.max()) <= 0.05 + 1e-6
                data = env.scene["object"].data
                mass, com = data.body_mass.torch[:, 0], data.body_com_pos_b.torch[:, 0]
                # read back: the mass is this collider's solid box at 800 kg/m³ within the profile's ±25 %, not the
                # spawned 5 cm box's (which a redraw from the spawned shape would give: up to 1.95× a 4 cm box)
                nominal = DENSITY * size.prod(-1)
                assert bool(((mass / nominal) >= 0.75 - 1e-4).all() and ((mass / nominal) <= 1.25 + 1e-4).all())
                assert float(com.abs().max()) <= 0.01 + 1e-6  # profile: CoM within ±1 cm per axis
                inertia = data.body_inertia.torch[:, 0].reshape(-1, 3, 3)
                body = body_from_flat(mass[:, None], com[:, None], inertia.reshape(-1, 1, 9))
                check_consistency(body, rtol=default_rtol(torch.float32), what="written object")  # raises if not
                # principal moments of the box about its CoM, for this collider and this mass: within the spread
                # that moving half the mass by <= 2 cm can make (measured bound, generous)
                box = mass[:, None] / 12.0 * (size.pow(2).sum(-1, keepdim=True) - size.pow(2))
                ratio = torch.diagonal(inertia, dim1=-2, dim2=-1) / box
                assert float(ratio.min()) > 0.5 and float(ratio.max()) < 2.0, ratio
                assert float(object_lift_m(env).abs().max()) < 0.003  # resting on the table: lift ~0
        finally:
            env.close()
