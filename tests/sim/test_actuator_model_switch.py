"""Sim tier: a profile's ``actuator_model`` (the transfer study's arms (a) and (b)) rebuilds the robot's actuators.

``implicit_pd`` swaps every realgap chain for Isaac Lab's implicit PD with the same datasheet gains and keeps the specs
(latency zero) so the export describes the joints; ``chain_no_delay`` keeps the chain with zero latency; sections that
act on a chain the model removes are refused before the config is touched.
"""

import dataclasses

import pytest
import torch

pytestmark = pytest.mark.sim

BALANCE = "Realgap-Balance-G1-Crouch-v0"
GRASP = "Realgap-Grasp-Franka-EEPoseDelta-v0"


def _actuators(env_cfg, asset: str = "robot") -> dict:
    return dict(getattr(env_cfg.scene, asset).actuators)


@pytest.mark.parametrize("task", [BALANCE, GRASP])
def test_arms_a_and_b_rebuild_every_chain_with_the_same_datasheet_numbers(task):
    from realgap.envs.run.factory import load_cfgs
    from realgap.envs.sim.actuator import RealgapActuatorCfg, RealgapImplicitActuatorCfg

    chain = _actuators(load_cfgs(task, "cpu", 4, 0)[0])
    implicit = _actuators(load_cfgs(task, "cpu", 4, 0, dr_profile="ablation_a")[0])
    no_delay = _actuators(load_cfgs(task, "cpu", 4, 0, dr_profile="ablation_b")[0])
    assert set(chain) == set(implicit) == set(no_delay)
    for name, cfg in chain.items():
        if not isinstance(cfg, RealgapActuatorCfg):
            continue  # an actuator realgap does not model stays as the task built it
        assert type(implicit[name]) is RealgapImplicitActuatorCfg and type(no_delay[name]) is RealgapActuatorCfg
        # the solver's PD gets the chain's gains and effort limits; every spec's latency is zero in both arms
        assert implicit[name].stiffness == cfg.stiffness and implicit[name].damping == cfg.damping
        assert implicit[name].joint_effort_limit == cfg.joint_effort_limit
        assert any(tuple(s["latency_range_s"]) != (0.0, 0.0) for s in cfg.specs.values())  # the datasheet's delay
        for arm in (implicit[name], no_delay[name]):
            assert {tuple(s["latency_range_s"]) for s in arm.specs.values()} == {(0.0, 0.0)}
            assert {k: {**s, "latency_range_s": None} for k, s in arm.specs.items()} == {
                k: {**s, "latency_range_s": None} for k, s in cfg.specs.items()
            }


def test_sections_on_a_removed_chain_are_refused_and_nothing_changes():
    from realgap.envs.dr.apply import apply_dr_profile
    from realgap.envs.dr.profile import load_dr_profile
    from realgap.envs.run.factory import load_cfgs

    env_cfg, _ = load_cfgs(BALANCE, "cpu", 4, 0)
    before = {k: type(v) for k, v in _actuators(env_cfg).items()}
    nominal = load_dr_profile("nominal")  # randomizes gains and delays: both live in the chain
    with pytest.raises(ValueError, match=r"implicit_pd has no actuator chain for \['actuator', 'command_delay_s'\]"):
        apply_dr_profile(env_cfg, dataclasses.replace(nominal, actuator_model="implicit_pd"), task=BALANCE)
    with pytest.raises(ValueError, match=r"chain_no_delay runs without delay, but command_delay_s is \[0.0, 0.015\]"):
        apply_dr_profile(env_cfg, dataclasses.replace(nominal, actuator_model="chain_no_delay"), task=BALANCE)
    assert {k: type(v) for k, v in _actuators(env_cfg).items()} == before
    assert getattr(env_cfg.events, "dr_actuator", None) is None


def test_the_implicit_arm_builds_steps_and_exports_its_joints():
    from realgap.envs.export.metadata import actuator_groups
    from realgap.envs.run.factory import load_cfgs, make_env, simulation
    from realgap.envs.sim.actuator import RealgapImplicitActuator

    env_cfg, _ = load_cfgs(BALANCE, "cpu", 4, 0, dr_profile="ablation_a")
    with simulation(env_cfg):
        env = make_env(BALANCE, env_cfg)
        try:
            env.reset()
            robot = env.scene["robot"]
            assert all(isinstance(a, RealgapImplicitActuator) for a in robot.actuators.values())
            actions = torch.zeros(env.num_envs, env.action_manager.total_action_dim)
            for _ in range(25):  # 0.5 s holding the stance under the solver's PD
                env.step(actions)
            assert torch.isfinite(robot.data.joint_pos.torch).all()
            assert (robot.data.root_pos_w.torch[:, 2] > 0.45).all()  # nobody fell (the task's fall height)
            groups = actuator_groups(robot)
            assert {n for g in groups for n in g.joint_names} == set(robot.joint_names)
            assert {g.friction_applied_by for g in groups} == {"simulator"}
            assert {tuple(g.command_delay_s) for g in groups} == {(0.0, 0.0)}  # trained without delay
        finally:
            env.close()
