"""Sim tier: the single-push harness pushes each episode exactly once, at the set time and magnitude, in Isaac Lab and
on MuJoCo; standing still survives no push and a hard one knocks the zero action over in both engines."""

import pytest

pytestmark = pytest.mark.sim

POLICY = "configs/policies/balance_g1"


def test_single_push_survival_in_both_engines():
    from realgap.envs.eval.policies import read_export
    from realgap.envs.eval.push.limit import isaac_single_push, mujoco_single_push

    meta, onnx_path = read_export(POLICY)
    args = dict(labels=["zero action"], values=[0.0, 1.5], episodes=4, push_at_s=0.5, duration_s=2.0, seed=0)
    isaac = isaac_single_push(meta, onnx_path, num_envs=8, **args)
    mujoco = mujoco_single_push(meta, onnx_path, **args)
    for counts in (isaac["zero action"], mujoco["zero action"]):
        assert counts[0] == (4, 4)  # no push: the PD servos hold the stance for 2 s
        assert counts[1][1] == 4 and counts[1][0] == 0  # 1.5 m/s (50 N·s on 33 kg): every episode falls


def test_single_push_is_applied_once_at_its_time():
    import torch
    from conftest import build_env

    from realgap.envs.eval.robustness.prepare import prepare_env_cfg

    with build_env(
        "Realgap-Balance-G1-Play-v0",
        num_envs=4,
        seed=1,
        prepare=lambda cfg: prepare_env_cfg(cfg, 3.0, single_push_at_s=0.5),
    ) as env:
        push = env.event_manager.get_term_cfg("push").func
        push.env_magnitude = torch.full((4,), 0.15)  # small: standing absorbs it, no env resets
        env.reset()
        act = torch.zeros(4, env.action_manager.total_action_dim)
        speeds = []
        for step in range(100):  # 2 s at 50 Hz; the interval would fire again at 1.0 s and 1.5 s
            env.step(act)
            speeds.append(float(push.max_push.max()))
            if step == 30:
                push.env_magnitude = torch.full((4,), 0.3)  # a second push would now show as 0.3
        assert speeds[20] == 0.0 and speeds[30] == pytest.approx(0.15)  # pushed between 0.4 s and 0.6 s
        assert push.max_push.tolist() == pytest.approx([0.15] * 4)  # every env pushed once: no 0.3 push followed


def test_push_headings_are_logged_in_the_robots_frame():
    import math

    import torch
    from conftest import build_env

    from realgap.envs.eval.policies import zero_policy
    from realgap.envs.eval.push.headings import direction, log_pushes, stance_offset

    def prepare(cfg):
        cfg.events.reset_base.params["pose_range"]["yaw"] = (1.0, 1.0)  # every robot faces 1 rad left of +x
        cfg.events.push.interval_range_s = (0.2, 0.2)
        cfg.events.push.params["magnitude_mps"] = (0.1, 0.1)  # small: nobody falls
        cfg.episode_length_s = 0.5

    with build_env("Realgap-Balance-G1-Play-v0", num_envs=4, seed=1, prepare=prepare) as env:
        push = env.event_manager.get_term_cfg("push").func
        records = log_pushes(env, zero_policy(env), steps=60)
        dv_world = push.last_dv.clone()
        # standing without pushes, the zero action holds ξ a few cm ahead of the ankles (the sole: -5 to +12 cm)
        mean, std = stance_offset(env, zero_policy(env), steps=20)
        assert 0.0 < mean < 0.06 and std < 0.03, (mean, std)  # 0.4 s after a reset with joint offsets: not yet still
        assert env.event_manager.get_term_cfg("push").params["magnitude_mps"] == (0.1, 0.1)  # the pushes restored
    assert len(records) >= 8 and not any(r.fell for r in records)  # 1.2 s: 2+ episodes of pushes at 0.2 s, 0.4 s
    for r in records:
        assert r.magnitude == pytest.approx(0.1, abs=1e-6)
        # the root's yaw (it turns a few degrees under the pushes); read as wxyz this quaternion would give pi
        assert abs(math.atan2(math.sin(r.yaw - 1.0), math.cos(r.yaw - 1.0))) < 0.15
        assert -math.pi <= r.heading <= math.pi and direction(r.heading) in ("forward", "left", "backward", "right")
    assert torch.isfinite(dv_world).all()
