"""Sim tier: the ``contact_solref`` DR section on the G1 balance task (4 envs).

Each env's drawn (time constant, damping ratio) of each foot lands in MuJoCo-Warp's per-world ``geom_solref`` of that
foot's contact spheres (with the dominant solmix), inside the profile's ranges, different between envs, and is redrawn
for the envs a reset names; a key a group leaves out keeps the task's value; a time constant under 2 physics steps is
refused before the config is touched.
"""

import pytest
import torch

pytestmark = pytest.mark.sim

TASK = "Realgap-Balance-G1-v0"
NUM_ENVS = 4
TIMECONST_S, DAMPRATIO = (0.01, 0.05), (0.4, 1.6)  # physics step 5 ms: 2·dt = 0.01 s is the stiffest admissible


RIGHT_DAMPRATIO = (1.7, 2.0)  # the right foot's group leaves the time constant out: each sphere keeps its own


def _profile(timeconst_s=TIMECONST_S, more=()):
    from realgap.envs.dr.profile import load_dr_profile, parse_dr_profile

    left = {"asset": "robot", "bodies": "left_ankle_roll_link", "timeconst_s": list(timeconst_s)}
    right = {"asset": "robot", "bodies": "right_ankle_roll_link", "dampratio": list(RIGHT_DAMPRATIO)}
    solref = [left | {"dampratio": list(DAMPRATIO)}, right, *more]
    data = load_dr_profile("none").to_dict() | {"name": "solref_test", "contact_solref": solref}
    return parse_dr_profile(data, "solref_test")


def _foot_solref(env):
    """Per world: the (timeconst, dampratio) rows and solmix of the 8 foot spheres (priority 1 in the Menagerie G1)."""
    model = env.sim.physics_manager._solver.mjw_model
    feet = torch.from_numpy(model.geom_priority.numpy()) == 1
    assert int(feet.sum()) == 8
    solref, solmix = torch.from_numpy(model.geom_solref.numpy()), torch.from_numpy(model.geom_solmix.numpy())
    return solref[:, feet], solmix[:, feet], solref[:, ~feet]


def test_timeconst_under_two_steps_refused_before_anything_is_written():
    from realgap.envs.dr.apply import apply_dr_profile
    from realgap.envs.run.factory import load_cfgs

    env_cfg, _ = load_cfgs(TASK, "cpu", NUM_ENVS, 0)
    assert env_cfg.sim.dt == pytest.approx(0.005)
    events = dict(vars(env_cfg.events))
    with pytest.raises(ValueError) as info:
        apply_dr_profile(env_cfg, _profile(timeconst_s=(0.008, 0.05)))
    message = str(info.value)
    assert message.startswith("solref_test: contact_solref[0].timeconst_s: lo 0.008 s"), message
    assert "dt = 0.005 s" in message and "lo >= 0.01 s" in message
    assert dict(vars(env_cfg.events)) == events and not hasattr(env_cfg.events, "dr_contact_solref")
    # groups on two assets would mix their solrefs where they touch: refused too, before anything is written
    other = {"asset": "object", "bodies": ".*", "dampratio": [0.5, 1.0]}
    with pytest.raises(ValueError, match=r"contact_solref has groups on assets \['object', 'robot'\]"):
        apply_dr_profile(env_cfg, _profile(more=(other,)))
    assert dict(vars(env_cfg.events)) == events


def _split(feet):
    """Per world, the left foot's and the right foot's (timeconst, dampratio) rows (4 spheres each): the right foot's
    damping ratio is drawn from a range above the left's."""
    right = feet[..., 1] >= RIGHT_DAMPRATIO[0] * (1 - 1e-6)
    assert right.sum(dim=1).tolist() == [4] * NUM_ENVS
    return feet[~right].reshape(NUM_ENVS, 4, 2), feet[right].reshape(NUM_ENVS, 4, 2)


def test_drawn_solref_lands_per_world_in_range_and_is_redrawn_at_reset():
    from conftest import build_env

    from realgap.envs.contact.params import DOMINANT_SOLMIX
    from realgap.envs.dr.apply import apply_dr_profile

    with build_env(TASK, NUM_ENVS, prepare=lambda cfg: apply_dr_profile(cfg, _profile())) as env:
        actions = torch.zeros(env.action_space.shape)
        env.reset()
        env.step(actions)  # Newton applies shape-property changes at the next step
        term = env.event_manager.get_term_cfg("dr_contact_solref").func
        ids, value = term.last  # (n, 2 feet, 2): left foot, right foot
        assert ids.tolist() == list(range(NUM_ENVS)) and value.shape == (NUM_ENVS, 2, 2)
        value = value.cpu()
        feet, solmix, others = _foot_solref(env)
        assert bool((solmix == torch.tensor(DOMINANT_SOLMIX, dtype=solmix.dtype)).all())
        left, right = _split(feet)
        # the left foot: both drawn, in range, one pair for its 4 spheres, different between envs
        for k, (lo, hi) in enumerate((TIMECONST_S, DAMPRATIO)):
            assert bool((left[..., k] >= lo * (1 - 1e-6)).all() and (left[..., k] <= hi * (1 + 1e-6)).all())
        assert torch.equal(left, value[:, None, 0].expand(-1, 4, 2))
        assert left[:, 0].unique(dim=0).shape[0] == NUM_ENVS
        # the right foot: its drawn damping ratio, and the time constant it had before any write (Newton's attribute
        # as the term read it at build), the same in every world
        assert torch.equal(right[..., 1], value[:, None, 1, 1].expand(-1, 4))
        assert right[..., 1].unique().numel() == NUM_ENVS
        nominal_tc = term.writer.nominal[0, :, 0].cpu()
        assert torch.equal(right[..., 0], right[:1, :, 0].expand(NUM_ENVS, -1))
        assert bool(torch.isin(right[0, :, 0], nominal_tc).all())
        torch.testing.assert_close(right[..., 0], torch.full((NUM_ENVS, 4), 0.02))  # the G1 feet's (MuJoCo's default)
        assert torch.equal(others, others[:1].expand_as(others))  # the other geoms keep one (the task's) solref

        before = feet.clone()
        env._reset_idx(torch.tensor([1, 3]))  # a reset of envs 1 and 3 redraws theirs only
        env.step(actions)
        after, _, others_after = _foot_solref(env)
        ids, value = term.last
        assert ids.tolist() == [1, 3]
        assert torch.equal(after[[0, 2]], before[[0, 2]])
        left, right = _split(after)
        assert torch.equal(left[[1, 3]], value[:, None, 0].cpu().expand(-1, 4, 2))
        assert torch.equal(right[[1, 3], :, 1], value[:, None, 1, 1].cpu().expand(-1, 4))
        assert not torch.isclose(left[[1, 3]], _split(before)[0][[1, 3]]).any()
        assert torch.equal(others_after, others)
