"""Sim tier: a profile's width curriculum narrows every randomization term of the balance env to its ranges'
midpoints at level 0 and widens them as its level rises; the curriculum manager logs it. The grasp's curriculum moves
with its episode success and narrows the block its reset term draws."""

import dataclasses

import pytest
import torch

pytestmark = pytest.mark.sim

TASK = "Realgap-Balance-G1-Crouch-v0"
GRASP = "Realgap-Grasp-Franka-EEPoseDelta-v0"


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


def test_grasp_width_curriculum_narrows_the_block_and_moves_with_success():
    from realgap.envs.dr.apply import apply_dr_profile
    from realgap.envs.dr.events import WidthTerm
    from realgap.envs.dr.profile import WidthCurriculumSpec, load_dr_profile
    from realgap.envs.run.factory import load_cfgs, make_env, simulation
    from realgap.envs.sim.managers import curriculum_term
    from realgap.tasks.grasp.env_cfg import OBJECT_DENSITY

    spec = WidthCurriculumSpec(start_width=0.0, step=1.0, promote=0.75, demote=0.25, min_episodes=4, signal="success")
    profile = dataclasses.replace(load_dr_profile("grasp_wide_curriculum"), width_curriculum=spec)
    env_cfg, _ = load_cfgs(GRASP, "cpu", 4, 0)
    apply_dr_profile(env_cfg, profile, task=GRASP)
    assert list(vars(env_cfg.curriculum))[-1] == "dr_width"  # after the metrics term, whose success it reads
    with simulation(env_cfg):
        env = make_env(GRASP, env_cfg)
        try:
            env.reset()
            term = curriculum_term(env, "dr_width")
            owner = env.event_manager.get_term_cfg("reset_object").func
            assert isinstance(owner, WidthTerm) and owner.width == 0.0
            obj = env.scene["object"]

            def mass_scale() -> torch.Tensor:  # the drawn block's mass over the solid box of its size
                return obj.data.body_mass.torch[:, 0] / (OBJECT_DENSITY * owner.size_m.prod(-1))

            lo, hi = next(g for g in profile.payload if g.asset == "object").mass_scale
            assert torch.allclose(mass_scale(), torch.full((4,), 0.5 * (lo + hi)), rtol=1e-4)  # the middle block
            assert owner.size_m.std(0).max() > 0.0  # the object set keeps its sizes at width 0

            hold = env.reward_manager.get_term_cfg("hold").func
            zero = torch.zeros(env.num_envs, env.action_manager.total_action_dim)

            def time_out(lifted: bool) -> None:  # every env reaches the time-out on the next step
                env.episode_length_buf[:] = env.max_episode_length - 1
                hold.succeeded[:] = lifted
                env.step(zero)

            time_out(False)  # the first episodes: not counted
            time_out(False)  # four full episodes reach the time-out, none lifted: survival would widen, success not
            assert term.level == 0.0 and owner.width == 0.0
            time_out(True)  # four lifted: 4 of 4 >= promote
            assert term.level == 1.0 and owner.width == 1.0
            env._reset_idx(torch.arange(4))
            drawn = mass_scale()
            assert drawn.std() > 0.0 and bool(((drawn >= lo - 1e-4) & (drawn <= hi + 1e-4)).all())
        finally:
            env.close()


def test_width_curriculum_refused_where_it_cannot_narrow_or_count():
    from isaaclab.managers import ManagerTermBase

    from realgap.envs.dr.apply import apply_dr_profile
    from realgap.envs.dr.profile import WidthCurriculumSpec, load_dr_profile
    from realgap.envs.run.factory import load_cfgs, make_env, simulation

    class fixed_owner(ManagerTermBase):  # a task's body-owning reset term that cannot narrow its draws
        owns_body = True

    env_cfg, _ = load_cfgs(GRASP, "cpu", 4, 0)
    env_cfg.events.reset_object.func = fixed_owner
    before = set(vars(env_cfg.events))
    with pytest.raises(ValueError, match="draws .*fixed_owner.* itself"):
        apply_dr_profile(env_cfg, "grasp_wide_curriculum")
    assert set(vars(env_cfg.events)) == before  # refused before anything was written

    success = WidthCurriculumSpec(start_width=0.0, step=0.1, promote=0.8, demote=0.5, min_episodes=16, signal="success")
    env_cfg, _ = load_cfgs(TASK, "cpu", 4, 0)  # the balance task: no episode success to count
    apply_dr_profile(env_cfg, dataclasses.replace(load_dr_profile("wide"), width_curriculum=success), task=TASK)
    with simulation(env_cfg), pytest.raises(ValueError, match="signal 'success' needs a task with env_cfg.episode"):
        make_env(TASK, env_cfg)

    env_cfg, _ = load_cfgs(GRASP, "cpu", 4, 0)
    apply_dr_profile(env_cfg, "grasp_wide_curriculum", task=GRASP)
    metrics = env_cfg.curriculum.metrics
    del env_cfg.curriculum.metrics
    env_cfg.curriculum.metrics = metrics  # now after dr_width: the success it would read is the previous episode's
    with simulation(env_cfg), pytest.raises(ValueError, match="'dr_width' .* must come after every other"):
        make_env(GRASP, env_cfg)


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
