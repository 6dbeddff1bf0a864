"""Sim tier: the exported metadata read from the live Isaac Lab balance env, and the deploy runtime's observation
builder and action map reproducing Isaac Lab's own observations and joint targets from the same robot state."""

import numpy as np
import pytest
import torch

from realgap.envs.deploy import ObservationBuilder, PolicyMetadata
from realgap.envs.deploy.observations import Readings
from realgap.envs.deploy.robot import ImuState, JointState
from realgap.envs.rates import RateSpec
from realgap.envs.robots.g1 import G1

pytestmark = pytest.mark.sim

TASK = "Realgap-Balance-G1-Play-v0"  # no observation noise: the comparison below is exact


@pytest.fixture(scope="module")
def env():
    from conftest import build_env

    with build_env(TASK, num_envs=2, seed=3) as e:
        yield e


@pytest.fixture(scope="module")
def meta(env) -> PolicyMetadata:
    from realgap.envs.export_metadata import policy_metadata

    return policy_metadata(env, TASK, ["policy"], {"git": {"commit": "test"}}, raw_action_clip=4.0)


def test_metadata_describes_the_live_env(env, meta):
    from realgap.envs.assets import description_hash

    robot = env.scene["robot"]
    assert meta.joint_names == tuple(robot.joint_names) == G1.joint_names
    np.testing.assert_allclose(meta.default_joint_pos, G1.default_pose(), atol=1e-6)
    # balance task: per-joint scale = 25 % of peak torque / kp (knee 0.25·139/300 rad), raw actions clipped to ±4
    assert meta.actions.joint_names == meta.joint_names
    knee = meta.joint_names.index("left_knee_joint")
    assert meta.actions.scale[knee] == pytest.approx(0.25 * 139.0 / 300.0)
    assert meta.actions.raw_clip == 4.0
    assert set(meta.actions.clip_min) == {float("-inf")} and set(meta.actions.clip_max) == {float("inf")}
    np.testing.assert_allclose(meta.actions.offset, meta.default_joint_pos)
    assert meta.rates == RateSpec(200, 200, 50, "hold")
    assert meta.robot.name == "g1" and meta.robot.description_sha256 == description_hash(G1)
    assert meta.robot.init_root_pos == pytest.approx((0.0, 0.0, 0.767))  # stance 0.757 m + 1 cm spawn margin
    # layout: ang vel 3 | gravity 3 | joint pos 29 | joint vel 29 | last action 29 = 93
    assert [(t.name, t.start, t.stop) for t in meta.observations] == [
        ("base_ang_vel", 0, 3), ("projected_gravity", 3, 6), ("joint_pos", 6, 35), ("joint_vel", 35, 64),
        ("actions", 64, 93),
    ]  # fmt: skip
    assert meta.obs_dim == 93 and all(t.noise is None for t in meta.observations)  # Play variant: no corruption
    (group,) = meta.actuator_groups
    row = {r["name"]: r for r in meta.joint_table()}["left_knee_joint"]
    assert (row["kp"], row["kd"], row["effort_limit"]) == (300.0, 5.0, 139.0)
    assert row["armature"] == pytest.approx(float(robot.data.joint_armature.torch[0, 3]), rel=1e-6)
    assert group.delay_steps(meta.rates.sim_dt) == (0, 2)
    assert PolicyMetadata.from_dict(meta.to_dict()) == meta


def test_runtime_observations_and_targets_equal_isaac_labs(env, meta):
    builder = ObservationBuilder(meta)
    term = env.action_manager.get_term(meta.actions.term)
    robot = env.scene["robot"]
    gen = torch.Generator().manual_seed(0)
    env.reset()
    worst_obs = worst_target = 0.0
    for _ in range(6):
        actions = (torch.rand(env.num_envs, 29, generator=gen) - 0.5) * 1.0
        obs, _, terminated, truncated, _ = env.step(actions.to(env.device))
        assert not (terminated | truncated).any()  # a reset would change the last action
        d = robot.data
        for i in range(env.num_envs):
            readings = Readings(
                JointState(d.joint_pos.torch[i].cpu().numpy(), d.joint_vel.torch[i].cpu().numpy()),
                ImuState(d.root_ang_vel_b.torch[i].cpu().numpy(), d.projected_gravity_b.torch[i].cpu().numpy()),
                actions[i].numpy(),
            )
            ours = builder.build(readings)
            worst_obs = max(worst_obs, float(np.abs(ours - obs["policy"][i].cpu().numpy()).max()))
            target = meta.actions.targets(actions[i].numpy())
            worst_target = max(worst_target, float(np.abs(target - term.processed_actions[i].cpu().numpy()).max()))
    assert worst_obs < 1e-5
    assert worst_target < 1e-6
