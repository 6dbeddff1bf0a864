"""Sim tier: a profile's holding drive puts a fraction of the robots behind a bridge that computes each command's PD
torque once and holds it for the policy period; the others keep a fresh PD every physics step."""

import dataclasses

import pytest
import torch

pytestmark = pytest.mark.sim

TASK = "Realgap-Balance-G1-Crouch-v0"


def test_held_robots_keep_one_torque_per_policy_step():
    from realgap.envs.dr.apply import apply_dr_profile
    from realgap.envs.dr.profile import load_dr_profile
    from realgap.envs.run.factory import load_cfgs, make_env, simulation

    env_cfg, _ = load_cfgs(TASK, "cpu", 16, 3)
    apply_dr_profile(env_cfg, dataclasses.replace(load_dr_profile("none"), holding_drive_fraction=0.5), task=TASK)
    with simulation(env_cfg):
        env = make_env(TASK, env_cfg)
        try:
            env.reset()
            env._reset_idx(torch.arange(16))  # as training's resets: between policy steps, so holds start with them
            acts = list(env.scene["robot"].actuators.values())
            decimation = acts[0].chain.timing.decimation
            periods = acts[0].chain.servo.periods
            assert set(periods.tolist()) == {1, decimation}  # seeded draw: both kinds among 16 robots
            assert all(torch.equal(a.chain.servo.periods, periods) for a in acts)  # one bridge per robot
            held = periods == decimation
            efforts: list[torch.Tensor] = []
            compute = acts[0].compute

            def recording(*args, **kwargs):
                out = compute(*args, **kwargs)
                efforts.append(acts[0].chain.last.tau_computed.clone())  # the servo torque, before the motor limits
                return out

            acts[0].compute = recording
            actions = 0.3 * torch.randn(
                16, env.action_manager.total_action_dim, generator=torch.Generator().manual_seed(0)
            )
            for _ in range(3):
                env.step(actions)
            steps = torch.stack(efforts)  # (3·D, E, J)
            per_policy = steps.reshape(3, decimation, *steps.shape[1:])
            spread = (per_policy - per_policy[:, :1]).abs().amax(dim=(0, 1, 3))  # (E,): change within a policy step
            assert bool((spread[held] == 0).all())  # the bridge's torque is held
            assert bool((spread[~held] > 0).all())  # a fresh PD every physics step
        finally:
            env.close()


def test_holding_drive_refused_without_a_chain():
    from realgap.envs.dr.apply import apply_dr_profile
    from realgap.envs.dr.profile import load_dr_profile
    from realgap.envs.run.factory import load_cfgs

    env_cfg, _ = load_cfgs(TASK, "cpu", 4, 0)
    implicit = dataclasses.replace(load_dr_profile("ablation_a"), holding_drive_fraction=0.25)
    with pytest.raises(ValueError, match=r"implicit_pd has no actuator chain for \['holding_drive_fraction'\]"):
        apply_dr_profile(env_cfg, implicit, task=TASK)
    assert getattr(env_cfg.events, "dr_holding_drive", None) is None
