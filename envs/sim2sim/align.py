"""Contact-free open-loop alignment of the two engines: the same torque sequence in Isaac Lab (Newton, MuJoCo-Warp)
and in plain MuJoCo C, robot root welded in the air (contact-free motion first: contacts would hide model differences
behind solver differences).

Both engines load the same robot description (the Menagerie MJCF; Isaac Lab through its cached USD conversion) with
the same datasheet armature, no joint friction or damping, no PD (the chain passes the feed-forward torque through)
and the same physics step and integrator, so any difference is the model conversion and the engines' arithmetic
(MuJoCo-Warp runs float32 on the CPU, MuJoCo C float64). Each engine also checks itself: its own energy
(MuJoCo's ``mjENBL_ENERGY``, kinetic + gravitational, armature included) must change by the work its torques did
(:mod:`realgap.envs.sim2sim.align_math`).
:func:`model_alignment` compares what each engine actually simulates — body masses,
CoMs, inertias, armature, friction, damping, gravity, step, integrator — by name.

Isaac Lab's simulation context is a process singleton: :func:`isaac_open_loop` launches and clears its own.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from realgap.actuators.spec import ActuatorSpec, PDGains, resolve_joint_specs
from realgap.envs.rates import RateSpec
from realgap.envs.robots import ROBOTS
from realgap.envs.robots.base import RobotSource
from realgap.envs.robots.g1 import G1_ACTUATORS
from realgap.envs.robots.panda import PANDA_ACTUATORS
from realgap.envs.sim.physics import newton_physics
from realgap.envs.sim2sim.align_math import torque_sequence
from realgap.envs.sim2sim.dynamics import RobotDynamics

HANG_HEIGHT_M = 2.0
"""Root height of a floating-base robot welded in the air: its feet hang ~1.2 m above any ground."""


@dataclass(frozen=True)
class Trajectory:
    """One engine's open-loop run.

    Attributes:
        q: Joint positions, rad, states 0..N. Shape ``(N + 1, J)``.
        energy: Kinetic + potential energy of each state, J. Shape ``(N + 1,)``.
        max_constraints: Largest number of active constraint rows at any step (0: no contact, limit or friction).
        model: What the engine simulates (:func:`model_alignment` input).
    """

    q: np.ndarray
    energy: np.ndarray
    max_constraints: int
    model: dict[str, Any]


def robot_specs(robot: str) -> dict[str, ActuatorSpec]:
    """The datasheet specs of ``robot`` made passive: no PD, no friction, no delay (armature and limits kept)."""

    specs = {"g1": G1_ACTUATORS, "panda": PANDA_ACTUATORS}[robot]
    return {
        k: dataclasses.replace(
            s, gains=PDGains(0.0, 0.0), coulomb_friction=0.0, viscous_friction=0.0, latency_range_s=(0.0, 0.0)
        )
        for k, s in specs.items()
    }


def root_pos(robot: RobotSource) -> tuple[float, float, float]:
    """Where the root is welded: in the air for a floating-base robot, at the origin for a fixed-base arm."""
    return (0.0, 0.0, 0.0) if robot.fixed_base else (0.0, 0.0, HANG_HEIGHT_M)


def open_loop_torques(robot: str, duration_s: float, dt: float, seed: int = 0) -> np.ndarray:
    """The torque sequence (:func:`realgap.envs.sim2sim.align_math.torque_sequence`) from pinocchio's g(q0) and M(q0).

    Shape:
        ``(round(duration_s / dt), J)`` in the robot's joint order.
    """

    source = ROBOTS[robot]
    names, q0 = list(source.joint_names), np.asarray(source.default_pose())
    specs = resolve_joint_specs(names, robot_specs(robot))
    dyn = RobotDynamics(robot, names)
    # Inertia each joint presents with every other joint free: 1 / (M⁻¹)_jj of the link inertia plus armature.
    inertia = 1.0 / np.diag(np.linalg.inv(dyn.mass_matrix(q0) + np.diag([s.reflected_inertia for s in specs])))
    peak = np.array([s.peak_torque for s in specs])
    # 0.05 rad per joint: the G1's ankle roll (±0.26 rad range) touches its limit at 0.1 rad within 0.5 s.
    steps = int(round(duration_s / dt))
    return torque_sequence(dyn.gravity(q0), inertia, peak, steps, dt, amplitude_rad=0.05, seed=seed)


def mujoco_open_loop(robot: str, tau: np.ndarray, dt: float) -> Trajectory:
    """Apply ``tau`` to the MuJoCo C robot (root welded, passive specs) from the default pose at rest."""
    import mujoco

    from realgap.envs.deploy.mujoco_robot import MujocoRobot

    source = ROBOTS[robot]
    names = list(source.joint_names)
    specs = resolve_joint_specs(names, robot_specs(robot))
    zero = dict.fromkeys(names, 0.0)
    bot = MujocoRobot(
        source.mjcf_path(),
        dt,
        joint_names=names,
        armature={n: s.reflected_inertia for n, s in zip(names, specs, strict=True)},
        frictionloss=zero,
        damping=zero,
        effort_limit={n: s.peak_torque for n, s in zip(names, specs, strict=True)},
        init_root_pos=root_pos(source),
        fixed_base=True,
        init_joint_pos=dict(zip(names, source.default_pose(), strict=True)),
    )
    m, d = bot.model, bot.data
    m.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    qs, energy, rows = [], [], 0
    for k in range(len(tau) + 1):
        mujoco.mj_forward(m, d)  # energy and constraints of state k
        qs.append(bot.read_joints().pos)
        energy.append(float(d.energy.sum()))
        rows = max(rows, int(d.nefc))
        if k < len(tau):
            bot.send_torques(tau[k])
            bot.step()
    return Trajectory(np.array(qs), np.array(energy), rows, _mujoco_model(m, names))


def _mujoco_model(m: Any, names: list[str]) -> dict[str, Any]:
    import mujoco

    bodies = [m.body(i).name for i in range(1, m.nbody)]
    inertia = []
    for i in range(1, m.nbody):
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, m.body_iquat[i])
        rot = rot.reshape(3, 3)
        inertia.append(rot @ np.diag(m.body_inertia[i]) @ rot.T)  # about the CoM, body axes
    dof = [m.jnt_dofadr[m.joint(n).id] for n in names]
    return {
        "bodies": bodies,
        "mass": m.body_mass[1:].copy(),
        "com": m.body_ipos[1:].copy(),
        "inertia": np.array(inertia),
        "armature": m.dof_armature[dof].copy(),
        "frictionloss": m.dof_frictionloss[dof].copy(),
        "damping": m.dof_damping[dof].copy(),
        "gravity": m.opt.gravity.copy(),
        "timestep": float(m.opt.timestep),
        "integrator": int(m.opt.integrator),
        "cone": int(m.opt.cone),
    }


def isaac_open_loop(robot: str, tau: np.ndarray, dt: float) -> Trajectory:
    """Apply ``tau`` in Isaac Lab (Newton, MuJoCo-Warp on the CPU; root welded, no ground, passive specs).

    Launches Isaac Lab's simulation context and clears it before returning.
    """
    import torch
    import warp as wp
    from isaaclab.app import launch_simulation
    from isaaclab.sim import SimulationCfg

    from realgap.envs.sim.actuator import realgap_actuator_cfg

    source = ROBOTS[robot]
    rates = RateSpec(1.0 / dt, 1.0 / dt, 1.0 / dt)
    sim_cfg = SimulationCfg(device="cpu", dt=dt, physics=newton_physics(), use_newton_actuators=False)
    with launch_simulation(sim_cfg, {"headless": True, "device": "cpu"}):
        from isaaclab.scene import InteractiveScene, InteractiveSceneCfg
        from isaaclab.sim import SimulationContext
        from mujoco_warp._src.types import EnableBit

        from realgap.envs.sim.scene import robot_cfg

        art = robot_cfg(source, actuators={"all": realgap_actuator_cfg(robot_specs(robot), rates)})
        art.spawn.fix_root_link = True
        art.init_state.pos = root_pos(source)
        scene_cfg = InteractiveSceneCfg(num_envs=1, env_spacing=3.0)
        scene_cfg.robot = art  # no ground: contact-free by construction
        sim = SimulationContext(sim_cfg)
        try:
            scene = InteractiveScene(scene_cfg)
            sim.reset()
            asset = scene["robot"]
            cols = [asset.joint_names.index(n) for n in source.joint_names]
            solver = sim.physics_manager._solver
            solver.mjw_model.opt.enableflags = int(solver.mjw_model.opt.enableflags) | int(EnableBit.ENERGY)
            q0 = asset.data.default_joint_pos.torch.clone()
            asset.write_joint_state_to_sim_index(position=q0, velocity=torch.zeros_like(q0))
            qs, energy, rows = [q0[0, cols].double().numpy()], [], 0
            effort = torch.zeros_like(q0)
            for k in range(len(tau) + 1):  # the extra step only reports the energy of the last state
                step_tau = tau[k] if k < len(tau) else np.zeros_like(tau[0])
                effort[0, cols] = torch.as_tensor(step_tau, dtype=effort.dtype)
                asset.actuators.target_command.set_effort_index(value=effort)
                scene.write_data_to_sim()
                sim.step(render=False)
                scene.update(dt)
                energy.append(float(wp.to_torch(solver.mjw_data.energy)[0].sum()))  # of the state before this step
                rows = max(rows, int(wp.to_torch(solver.mjw_data.nefc)[0]))
                if k < len(tau):
                    qs.append(asset.data.joint_pos.torch[0, cols].double().numpy())
            model = _isaac_model(asset, solver, cols)
        finally:
            sim.clear_instance()
    return Trajectory(np.array(qs), np.array(energy), rows, model)


def _isaac_model(asset: Any, solver: Any, cols: list[int]) -> dict[str, Any]:
    import warp as wp

    data = asset.data
    opt = solver.mjw_model.opt
    return {
        "bodies": list(asset.body_names),
        "mass": data.body_mass.torch[0].double().numpy(),
        "com": data.body_com_pos_b.torch[0].double().numpy(),
        "inertia": data.body_inertia.torch[0].double().reshape(-1, 3, 3).numpy(),
        "armature": data.joint_armature.torch[0, cols].double().numpy(),
        "frictionloss": data.joint_friction_coeff.torch[0, cols].double().numpy(),
        "damping": data.joint_viscous_friction_coeff.torch[0, cols].double().numpy(),
        "gravity": wp.to_torch(opt.gravity)[0].double().numpy(),
        "timestep": float(wp.to_torch(opt.timestep)[0]),
        "integrator": int(opt.integrator),
        "cone": int(opt.cone),
    }


def model_alignment(isaac: dict[str, Any], mujoco: dict[str, Any]) -> dict[str, Any]:
    """Largest differences between what the two engines simulate, bodies matched by name.

    Raises:
        ValueError: The engines do not hold the same bodies.
    """
    if sorted(isaac["bodies"]) != sorted(mujoco["bodies"]):
        raise ValueError(f"body sets differ: {sorted(set(isaac['bodies']) ^ set(mujoco['bodies']))}")
    idx = [isaac["bodies"].index(b) for b in mujoco["bodies"]]
    d_inertia = [
        np.linalg.norm(isaac["inertia"][i] - mujoco["inertia"][j]) / np.linalg.norm(mujoco["inertia"][j])
        for j, i in enumerate(idx)
    ]
    return {
        "max_mass_diff_kg": float(np.abs(isaac["mass"][idx] - mujoco["mass"]).max()),
        "max_com_diff_m": float(np.abs(isaac["com"][idx] - mujoco["com"]).max()),
        "max_inertia_rel_diff": float(max(d_inertia)),
        "max_armature_diff": float(np.abs(isaac["armature"] - mujoco["armature"]).max()),
        "max_frictionloss_nm": float(max(isaac["frictionloss"].max(), mujoco["frictionloss"].max())),
        "max_damping_nms": float(max(isaac["damping"].max(), mujoco["damping"].max())),
        "gravity": [isaac["gravity"].tolist(), mujoco["gravity"].tolist()],
        "timestep_s": [isaac["timestep"], mujoco["timestep"]],
        "integrator": [isaac["integrator"], mujoco["integrator"]],
        "cone": [isaac["cone"], mujoco["cone"]],
        "total_mass_kg": [float(isaac["mass"].sum()), float(mujoco["mass"].sum())],
    }
