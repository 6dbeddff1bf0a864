"""The push log's binning (envs/eval/push/headings.py) on hand-made pushes: directions in the robot's frame,
magnitude bins with the last one closed, fall rates with their Wilson interval, and bad bin edges refused."""

import math

import pytest

from realgap.envs.eval.push.headings import PushRecord, direction, heading_table, summary

pytestmark = pytest.mark.unit


def test_directions_are_quadrants_centred_on_the_robot_axes():
    degrees = {
        0: "forward",
        44: "forward",
        46: "left",
        134: "left",
        136: "backward",
        180: "backward",
        -179: "backward",
        -134: "right",
        -46: "right",
        -44: "forward",
        360 + 90: "left",
    }
    assert {d: direction(math.radians(d)) for d in degrees} == degrees


def test_table_counts_falls_per_direction_and_bin():
    back, left = math.pi, math.pi / 2
    records = [
        PushRecord(0.25, back, False),
        PushRecord(0.38, back, True),
        PushRecord(0.40, back, True),
        PushRecord(0.36, back, False),
        PushRecord(0.31, left, False),
    ]
    rows = heading_table(records, [0.2, 0.3, 0.35, 0.4])
    got = {(r["direction"], tuple(r["push_mps"])): (r["falls"], r["pushes"]) for r in rows}
    # 0.40 falls in the last, closed bin; bins without a push are left out
    assert got == {("left", (0.3, 0.35)): (0, 1), ("backward", (0.2, 0.3)): (0, 1), ("backward", (0.35, 0.4)): (2, 3)}
    row = next(r for r in rows if r["pushes"] == 3)
    assert row["fall_rate"] == pytest.approx(2 / 3) and row["ci95"][0] < 2 / 3 < row["ci95"][1]
    totals = summary(records)
    assert (totals["pushes"], totals["falls"], totals["sagittal_share_of_falls"]) == (5, 2, 1.0)
    assert totals["largest_push_held_mps"] == pytest.approx(0.36)


@pytest.mark.parametrize("edges", [[0.3], [0.2, 0.2], [0.4, 0.3]])
def test_bad_bin_edges_are_refused(edges):
    with pytest.raises(ValueError, match="magnitude bin edges must be at least two increasing values"):
        heading_table([], edges)


def _fake_env(num_envs: int = 3):
    """What the what-if wrappers read from a balance env: joint names, the push term's counters, the pelvis pose."""
    from types import SimpleNamespace

    import torch

    from realgap.envs.dr.push import push_robot
    from realgap.envs.robots.g1 import G1_JOINT_NAMES

    push = push_robot.__new__(push_robot)  # the live term's counters, without an env to build it in
    push.count, push.last_dv = torch.zeros(num_envs, dtype=torch.long), torch.zeros(num_envs, 2)
    quat = torch.tensor([[0.0, 0.0, 0.0, 1.0]]).repeat(num_envs, 1)  # xyzw identity: heading +x
    robot = SimpleNamespace(
        joint_names=list(G1_JOINT_NAMES), data=SimpleNamespace(root_quat_w=SimpleNamespace(torch=quat))
    )
    # found by its type, whatever it is named
    terms = SimpleNamespace(active_terms={"interval": ["shove"]}, get_term_cfg=lambda name: SimpleNamespace(func=push))
    return SimpleNamespace(scene={"robot": robot}, event_manager=terms, num_envs=num_envs, device="cpu"), push


def test_crouch_offsets_are_the_asked_radians_through_the_action_scale():
    import re

    import torch

    from realgap.envs.eval.push.headings import with_crouch
    from realgap.envs.robots.g1 import G1_ACTION_SCALE, G1_JOINT_NAMES

    env, _ = _fake_env()
    policy = with_crouch(env, lambda obs: torch.zeros(obs.shape[0], len(G1_JOINT_NAMES)), 0.4)
    actions = policy(torch.zeros(3, 5))
    for i, name in enumerate(G1_JOINT_NAMES):
        scale = next(v for expr, v in G1_ACTION_SCALE.items() if re.fullmatch(expr, name))
        rad = 0.4 if "knee" in name else -0.2 if ("hip_pitch" in name or "ankle_pitch" in name) else 0.0
        assert actions[:, i] * scale == pytest.approx(torch.full((3,), rad), abs=1e-6), name


def test_hip_reflex_follows_sagittal_pushes_only_for_its_steps():
    import torch

    from realgap.envs.eval.push.headings import with_hip_reflex
    from realgap.envs.robots.g1 import G1_JOINT_NAMES

    env, push = _fake_env()
    hips = [i for i, n in enumerate(G1_JOINT_NAMES) if n.endswith("_hip_pitch_joint")]
    policy = with_hip_reflex(env, lambda obs: torch.zeros(obs.shape[0], len(G1_JOINT_NAMES)), 2.0, steps=2)
    obs = torch.zeros(3, 5)
    assert torch.all(policy(obs) == 0)  # no push yet
    # env 0: backward 0.35 m/s, env 1: forward 0.3, env 2: lateral 0.4 (no reflex)
    push.last_dv = torch.tensor([[-0.35, 0.0], [0.3, 0.05], [0.0, 0.4]])
    push.count = push.count + 1
    for _ in range(2):
        a = policy(obs)
        assert torch.all(a[0, hips] == -2.0) and torch.all(a[1, hips] == 2.0) and torch.all(a[2] == 0)
    assert torch.all(policy(obs) == 0)  # its steps are over
    push.count = torch.zeros_like(push.count)  # a reset: not a push
    assert torch.all(policy(obs) == 0)


def test_ankle_bias_lands_on_the_ankle_pitches_after_the_clip_and_a_robot_without_them_is_refused():
    import torch

    from realgap.envs.eval.push.headings import with_ankle_pitch_bias
    from realgap.envs.robots.g1 import G1_JOINT_NAMES

    env, _ = _fake_env()
    policy = with_ankle_pitch_bias(env, lambda obs: torch.full((obs.shape[0], len(G1_JOINT_NAMES)), 9.0), -0.5)
    actions = policy(torch.zeros(3, 5))
    for i, name in enumerate(G1_JOINT_NAMES):  # the policy's 9 is clipped to 4 first, then biased
        assert torch.all(actions[:, i] == (3.5 if name.endswith("_ankle_pitch_joint") else 4.0)), name
    env.scene["robot"].joint_names = [n for n in G1_JOINT_NAMES if "ankle" not in n]
    with pytest.raises(ValueError, match="two ankle_pitch_joints, found 0"):
        with_ankle_pitch_bias(env, policy, -0.5)
