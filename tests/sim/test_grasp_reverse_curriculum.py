"""Sim tier: the grasp task's reverse curriculum (``tasks/grasp/reverse_curriculum.py``) starts training episodes from
the shipped scripted-grasp states: robot joints, object collider size, body and pose are those of a recorded row, the
object's body is drawn for the recorded size (one owner), lifted states measure their lift from the table, and the
success of such episodes is kept out of the task's ``success_rate``. Off (the default and Play), nothing changes."""

import math

import numpy as np
import pytest
import torch

pytestmark = pytest.mark.sim

TASK = "Realgap-Grasp-Franka-JointPDGravity-Levers-v0"  # the reverse curriculum is a lever


def _fraction(value: float, path: str | None = None):
    def prepare(env_cfg):
        env_cfg.events.reset_from_states.params["fraction"] = value
        env_cfg.events.reset_from_states.params["path"] = path

    return prepare


def test_every_reset_from_a_recorded_state_writes_that_state_and_keeps_its_success_apart():
    from conftest import build_env

    from realgap.envs.sim.managers import curriculum_term
    from realgap.tasks.grasp import mdp as grasp_mdp
    from realgap.tasks.grasp.reverse_curriculum import DEFAULT_STATES

    with np.load(DEFAULT_STATES) as data:
        rec = {k: torch.as_tensor(data[k]) for k in ("joint_pos", "object_size", "object_pose", "phase")}
    with build_env(TASK, num_envs=8, seed=1, prepare=_fraction(1.0)) as env:
        env.reset()
        term = env.event_manager.get_term_cfg("reset_from_states").func
        assert bool(term.from_states.all())
        q = env.scene["robot"].data.joint_pos.torch.cpu()
        size = env.event_manager.get_term_cfg("reset_object").func.size_m.cpu()
        # each env holds one recorded row: its joints, its object's size and pose
        dist = (q[:, None, :] - rec["joint_pos"][None]).abs().amax(-1)
        row = dist.argmin(-1)
        assert float(dist.min(-1).values.max()) < 1e-4
        assert torch.allclose(size, rec["object_size"][row], atol=1e-6)
        pos = env.scene["object"].data.root_link_pos_w.torch.cpu() - env.scene.env_origins.cpu()
        assert torch.allclose(pos, rec["object_pose"][row, :3], atol=1e-4)
        # the collider's scale follows the size (Newton: half extents), and the lift is measured from the table
        rest = env.event_manager.get_term_cfg("reset_object").func.rest_z_w().cpu() - env.scene.env_origins[:, 2].cpu()
        assert torch.allclose(rest - 0.5 * size[:, 2], rest[:1] - 0.5 * size[:1, 2], atol=1e-6)
        lift = grasp_mdp.object_lift_m(env).cpu()
        lifted = rec["phase"][row] == 3
        assert torch.allclose(lift[~lifted], torch.zeros(int((~lifted).sum())), atol=5e-3)
        # a body drawn for the recorded size: mass = density x volume within the profile's density range
        mass = env.scene["object"].data.body_mass.torch[:, 0].cpu()
        density = mass / size.prod(-1)
        metrics = curriculum_term(env, "metrics")
        nominal = env.cfg.events.reset_object.params["density_kg_m3"]
        assert bool(((density > 0.5 * nominal) & (density < 2.0 * nominal)).all())
        # the arm holds where it was put for a few steps (absolute targets at the recorded joints, gripper closed)
        space_scale = env.action_manager.get_term("arm").cfg.scale
        default = env.scene["robot"].data.default_joint_pos.torch[:, :7]
        action = torch.zeros(env.num_envs, env.action_manager.total_action_dim)
        action[:, :7] = (env.scene["robot"].data.joint_pos.torch[:, :7] - default) / space_scale
        action[:, 7] = -1.0
        for _ in range(3):
            env.step(action)
        assert not bool(env.termination_manager.get_term("joint_speed_reflex").any())
        # end every episode: their outcome goes to success_rate_from_states, never to success_rate
        env.episode_length_buf[:] = env.max_episode_length
        env.step(action)  # the time-out resets every env; the metrics term reads their outcome first
        assert metrics.curriculum_episodes == 8 and metrics.episodes == 0
        assert math.isnan(metrics.success_rate) and not math.isnan(metrics.success_rate_from_states)
        assert bool(term.from_states.all())  # redrawn for the new episodes


def test_off_by_default_touches_nothing_and_reads_no_file(tmp_path):
    from conftest import build_env

    missing = str(tmp_path / "absent.npz")
    with build_env(TASK, num_envs=4, seed=1, prepare=_fraction(0.0, missing)) as env:
        env.reset()
        assert not bool(env.event_manager.get_term_cfg("reset_from_states").func.from_states.any())
    with pytest.raises(FileNotFoundError, match="record_grasp_states"):
        with build_env(TASK, num_envs=4, seed=1, prepare=_fraction(0.5, missing)):
            pass


def test_a_phase_the_file_lacks_is_refused_by_name():
    from conftest import build_env

    def prepare(env_cfg):
        _fraction(0.5)(env_cfg)
        env_cfg.events.reset_from_states.params["phases"] = [7]

    with pytest.raises(ValueError, match=r"no state of phases \[7\]"):
        with build_env(TASK, num_envs=4, seed=1, prepare=prepare):
            pass


def test_the_play_variant_has_no_reverse_curriculum():
    from realgap.tasks.grasp.env_cfg import grasp_env_cfg

    assert grasp_env_cfg("joint_pos", play=True, levers=True).events.reset_from_states is None
    assert grasp_env_cfg("joint_pd_gravity", levers=True).events.reset_from_states.params["fraction"] == 0.0
    assert grasp_env_cfg("joint_pd_gravity").events.reset_from_states is None  # the shipped tasks leave it out
