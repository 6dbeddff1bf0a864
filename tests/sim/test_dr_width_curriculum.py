"""Sim tier: a profile's width curriculum narrows every randomization term of the balance env to its ranges'
midpoints at level 0 and widens them as its level rises; the curriculum manager logs it."""

import dataclasses

import pytest
import torch

pytestmark = pytest.mark.sim

TASK = "Realgap-Balance-G1-Crouch-v0"


def test_width_curriculum_draws_the_middle_robot_then_widens():
    from realgap.envs.dr.apply import apply_dr_profile
    from realgap.envs.dr.curriculum import dr_width_curriculum
    from realgap.envs.dr.events import WidthTerm
    from realgap.envs.dr.profile import WidthCurriculumSpec, load_dr_profile
    from realgap.envs.run.factory import load_cfgs, make_env, simulation
    from realgap.envs.sim.managers import curriculum_term

    spec = WidthCurriculumSpec(start_width=0.0, step=0.5, promote=0.75, demote=0.25, min_episodes=4)
    profile = dataclasses.replace(load_dr_profile("wide"), width_curriculum=spec)
    env_cfg, _ = load_cfgs(TASK, "cpu", 8, 5)
    apply_dr_profile(env_cfg, profile, task=TASK)
    assert env_cfg.curriculum.dr_width.func is dr_width_curriculum
    with simulation(env_cfg):
        env = make_env(TASK, env_cfg)
        try:
            env.reset()
            term = curriculum_term(env, "dr_width")
            with pytest.raises(KeyError, match="dr_width"):  # a wrong name is refused naming the terms there are
                curriculum_term(env, "dr_widht")
            events = env.event_manager
            terms = {name: events.get_term_cfg(name).func for name in events.active_terms["reset"]}
            drawn = {n: t for n, t in terms.items() if isinstance(t, WidthTerm)}
            assert {"dr_actuator", "dr_command_delay", "dr_payload", "dr_joint_friction"} <= set(drawn)
            assert all(t.width == 0.0 for t in drawn.values())
            assert events.get_term_cfg("push").params["magnitude_mps"] == [0.0, 0.0]  # the pushes scale toward none

            robot = env.scene["robot"]
            gains = drawn["dr_actuator"]
            act, cols, bounds, nominal = gains.plans[0]
            mid = 0.5 * (bounds["kp_scale"][0] + bounds["kp_scale"][1])
            assert torch.allclose(act.chain.params.kp[:, cols], nominal["kp"] * mid)  # every env the middle robot
            delay = act.chain.delay.delay_steps
            assert delay.unique().numel() == 1
            torso = robot.body_names.index("torso_link")
            assert robot.data.body_mass.torch[:, torso].unique().numel() == 1

            term.control.update(8, 8)  # survival 1 >= promote: half width
            term(env, torch.arange(8))
            assert term.width() == 0.5 and all(t.width == 0.5 for t in drawn.values())
            full = load_dr_profile("wide").push.velocity_mps[0][1]  # the push magnitude's upper end, m/s
            assert events.get_term_cfg("push").params["magnitude_mps"] == pytest.approx([0.0, 0.5 * full])
            env._reset_idx(torch.arange(8))
            scale = act.chain.params.kp[:, cols] / nominal["kp"]
            half = 0.5 * (bounds["kp_scale"][1] - bounds["kp_scale"][0])
            assert bool(((scale - mid).abs() <= 0.5 * half + 1e-5).all())
            assert scale.std(0).max() > 0.0 and robot.data.body_mass.torch[:, torso].unique().numel() == 8

            term.control.update(8, 0)  # survival 0 < demote: back to the middle
            assert term(env, torch.arange(8)) == {"width_level": 0.0, "width": 0.0}
        finally:
            env.close()


def test_width_curriculum_refused_where_it_cannot_narrow():
    from realgap.envs.dr.apply import apply_dr_profile
    from realgap.envs.dr.profile import WidthCurriculumSpec, load_dr_profile
    from realgap.envs.run.factory import load_cfgs

    spec = WidthCurriculumSpec(start_width=0.2, step=0.1, promote=0.8, demote=0.5, min_episodes=16)
    grasp = "Realgap-Grasp-Franka-EEPoseDelta-v0"
    env_cfg, _ = load_cfgs(grasp, "cpu", 4, 0)
    before = set(vars(env_cfg.events))
    with pytest.raises(ValueError, match="draws .*reset_object.* itself"):
        apply_dr_profile(env_cfg, dataclasses.replace(load_dr_profile("grasp_nominal"), width_curriculum=spec))
    assert set(vars(env_cfg.events)) == before  # refused before anything was written


def test_width_curriculum_refuses_a_second_curriculum_of_the_pushes():
    from realgap.envs.dr.apply import apply_dr_profile
    from realgap.envs.run.factory import load_cfgs, make_env, simulation

    levers = "Realgap-Balance-G1-Levers-v0"
    for start_mps in (None, [0.0, 0.2]):  # the task's push curriculum off, then on
        env_cfg, _ = load_cfgs(levers, "cpu", 4, 0)
        env_cfg.curriculum.push_level.params["start_mps"] = start_mps
        apply_dr_profile(env_cfg, "wide_curriculum", task=levers)
        with simulation(env_cfg):
            if start_mps is None:  # off: it leaves the pushes to the width curriculum
                make_env(levers, env_cfg).close()
                continue
            with pytest.raises(ValueError, match=r"\['push_level'\] already drive them"):
                make_env(levers, env_cfg)
