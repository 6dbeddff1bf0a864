"""The actuator chain in the simulator against the equations (issue: actuation chain).

1. A known torque on a joint with reflected inertia: q̈ = τ / (I_link + N²·I_m) within 2 %, with I_link = M_kk(q) from
   pinocchio (the other joints frozen by a huge armature, gravity off, root welded, friction off).
2. Holding a static pose: the steady PD torque equals the gravity torque g(q) from pinocchio within 1 %.
"""

from __future__ import annotations

import contextlib
import dataclasses

import numpy as np
import pytest
import torch

pytestmark = pytest.mark.sim


@contextlib.contextmanager
def robot_scene(robot, specs, gravity=(0.0, 0.0, -9.81), fix_root=False, num_envs=2):
    """A bare scene: one articulation driven by realgap's actuator chain (no env, no ground)."""
    from isaaclab.app import launch_simulation
    from isaaclab.scene import InteractiveScene, InteractiveSceneCfg
    from isaaclab.sim import SimulationCfg, SimulationContext

    from realgap.envs.rates import load_rate_profile
    from realgap.envs.sim.actuator import realgap_actuator_cfg
    from realgap.envs.sim.physics import newton_physics
    from realgap.envs.sim.scene import robot_cfg

    rates = load_rate_profile("default")
    sim_cfg = SimulationCfg(
        device="cpu", dt=rates.sim_dt, gravity=gravity, physics=newton_physics(), use_newton_actuators=False
    )
    art = robot_cfg(robot, actuators={"all": realgap_actuator_cfg(specs, rates)})
    art.spawn.fix_root_link = fix_root
    scene_cfg = InteractiveSceneCfg(num_envs=num_envs, env_spacing=3.0)
    scene_cfg.robot = art
    with launch_simulation(sim_cfg, {"headless": True, "device": "cpu"}):
        sim = SimulationContext(sim_cfg)
        scene = InteractiveScene(scene_cfg)
        sim.reset()
        asset = scene["robot"]
        asset.write_joint_state_to_sim_index(
            position=asset.data.default_joint_pos.torch.clone(),
            velocity=torch.zeros_like(asset.data.default_joint_vel.torch),
        )
        try:
            yield sim, scene, asset
        finally:
            sim.clear_instance()


def _step(sim, scene, asset, *, position=None, effort=None):
    if position is not None:
        asset.actuators.target_command.set_position_index(value=position)
    if effort is not None:
        asset.actuators.target_command.set_effort_index(value=effort)
    scene.write_data_to_sim()
    sim.step(render=False)
    scene.update(sim.get_physics_dt())


def test_torque_on_knee_accelerates_link_plus_reflected_inertia():
    from realgap.actuators.spec import PDGains
    from realgap.envs.robots import G1
    from realgap.envs.robots.g1 import G1_ACTUATORS
    from realgap.envs.sim2sim.dynamics import RobotDynamics

    # pure torque drives, no friction; every joint but the left knee frozen by a 1000 kg·m² armature
    free = dict(G1_ACTUATORS)
    specs = {
        k: dataclasses.replace(
            s,
            gains=PDGains(0.0, 0.0),
            coulomb_friction=0.0,
            latency_range_s=(0.0, 0.0),
            gearbox=None,
            armature=1000.0,
            joint_names_expr=s.joint_names_expr,
        )
        for k, s in free.items()
    }
    knee_spec = dataclasses.replace(
        free["hip_roll_knee"],
        gains=PDGains(0.0, 0.0),
        coulomb_friction=0.0,
        latency_range_s=(0.0, 0.0),
        joint_names_expr=("left_knee_joint",),
    )
    hip_roll = specs["hip_roll_knee"]
    specs["hip_roll_knee"] = dataclasses.replace(hip_roll, joint_names_expr=(".*_hip_roll_joint", "right_knee_joint"))
    specs["left_knee"] = knee_spec
    reflected = knee_spec.reflected_inertia  # 7520-22: 0.025101925 kg·m² (N²·I_m summed over the two stages)
    tau = 10.0  # N·m, far inside the 139 N·m envelope at rest
    steps = 4
    with robot_scene(G1, specs, gravity=(0.0, 0.0, 0.0), fix_root=True) as (sim, scene, asset):
        k = asset.joint_names.index("left_knee_joint")
        q0 = asset.data.joint_pos.torch[0].cpu().numpy().astype(np.float64)
        effort = torch.zeros(asset.num_instances, asset.num_joints)
        effort[:, k] = tau
        for _ in range(steps):
            _step(sim, scene, asset, effort=effort)
        qd = asset.data.joint_vel.torch[:, k].cpu().numpy()
        qdd_measured = qd / (steps * sim.get_physics_dt())  # from rest: mean acceleration over the steps
        applied = float(asset.actuators["all"].applied_effort[0, k])
    link = RobotDynamics("g1", asset.joint_names).mass_matrix(q0)[k, k]  # shank + foot about the knee axis
    expected = tau / (link + reflected)
    assert applied == pytest.approx(tau, rel=1e-6)
    assert qdd_measured == pytest.approx(np.full_like(qdd_measured, expected), rel=0.02)
    # the rotor inertia matters: link 0.111 + rotor 0.025 kg·m²; without the rotor the knee would accelerate 22 %
    # faster, far outside the 2 % tolerance above
    assert tau / link > 1.15 * expected


def test_static_hold_torque_equals_gravity_torque():
    from realgap.envs.robots import PANDA
    from realgap.envs.robots.panda import PANDA_ACTUATORS
    from realgap.envs.sim2sim.dynamics import RobotDynamics

    # friction off: the solver's Coulomb friction can hold part of the load at rest, which is not gravity's business
    specs = {k: dataclasses.replace(s, coulomb_friction=0.0) for k, s in PANDA_ACTUATORS.items()}
    q_hold = {
        "joint1": 0.3,
        "joint2": 0.6,
        "joint3": -0.2,
        "joint4": -1.2,
        "joint5": 0.4,
        "joint6": 1.8,
        "joint7": 0.785,
        "finger_joint1": 0.02,
        "finger_joint2": 0.02,
    }
    with robot_scene(PANDA, specs, num_envs=2) as (sim, scene, asset):
        target = torch.tensor([[q_hold[n] for n in asset.joint_names]] * asset.num_instances)
        asset.write_joint_state_to_sim_index(position=target.clone(), velocity=torch.zeros_like(target))
        for _ in range(400):  # 2 s to settle
            _step(sim, scene, asset, position=target)
        q_sim = asset.data.joint_pos.torch[0].cpu().numpy().astype(np.float64)
        qd_sim = asset.data.joint_vel.torch[0].cpu().numpy()
        tau = asset.actuators["all"].applied_effort[0].cpu().numpy()
    g = RobotDynamics("panda", asset.joint_names).gravity(q_sim)  # evaluated at the simulated (sagged) pose
    assert np.abs(qd_sim).max() < 1e-3  # settled
    loaded = np.abs(g) > 0.5  # N·m: joints that carry a load (joints 2, 4, 6 ... at this pose)
    assert loaded.sum() >= 3
    rel = np.abs(tau[loaded] - g[loaded]) / np.abs(g[loaded])
    assert rel.max() < 0.01, dict(zip(np.array(asset.joint_names)[loaded], rel.round(4), strict=True))


def test_compliant_joint_armature_leaves_out_the_motor_inertia_of_the_chain():
    # No scene: the cfg the solver is built from. A compliant knee (k = 2000 N·m/rad) with J_m = 0.02 of its
    # 0.025101925 kg·m² reflected inertia: the chain integrates J_m behind the spring, so the solver's armature is
    # 0.025101925 − 0.02 = 0.005101925 kg·m² (the whole reflected inertia would count J_m twice); a rigid hip keeps
    # N²·I_m, and Isaac Lab's implicit baseline (no chain, rigid) keeps the whole reflected inertia on both.
    from realgap.envs.rates import load_rate_profile
    from realgap.envs.robots.g1 import G1_ACTUATORS
    from realgap.envs.sim.actuator import implicit_actuator_cfg, realgap_actuator_cfg

    knee, hip = G1_ACTUATORS["hip_roll_knee"], G1_ACTUATORS["hip_pitch_yaw_waist_yaw"]
    compliant = dataclasses.replace(
        knee,
        joint_names_expr=("left_knee_joint",),
        transmission_stiffness=2000.0,
        motor_inertia=0.02,
        link_inertia=max(knee.link_inertia, 0.1),
    )
    specs = {"knee": compliant, "hip": hip}
    armature = realgap_actuator_cfg(specs, load_rate_profile("default")).armature
    assert armature["left_knee_joint"] == pytest.approx(knee.reflected_inertia - 0.02, rel=1e-12)
    assert knee.reflected_inertia == pytest.approx(0.025101925)
    assert all(armature[e] == hip.reflected_inertia for e in hip.joint_names_expr)
    implicit = implicit_actuator_cfg(specs).armature
    assert implicit["left_knee_joint"] == knee.reflected_inertia
