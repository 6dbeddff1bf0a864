"""Sim tier: randomized bodies reach the dynamics, with the fast and with the exact solver sync (issue #20).

Isaac Lab's own CoM randomization on Newton stayed disabled for months because runtime inertial writes did not fully
propagate; realgap's fast sync (:func:`realgap.envs.dr.events.solver_update`, ``fast=True``) skips MuJoCo-Warp's
``set_const_0`` on purpose. Here the grasp task's Panda gets randomized bodies at run time -- a payload box on the hand
(mass, CoM and inertia of the composite), log-Cholesky perturbations with CoM shifts of link7 and link4 -- in three of
four envs (env 0 keeps the nominal bodies: a partial, per-world write), once with each sync, and the simulation is
checked against pinocchio's model of the *same* bodies (example-robot-data's URDF with those links replaced):

1. the datasheet PD's static holding torque at a settled pose equals g(q) within 1 %;
2. the joint acceleration of a torque pulse from rest (one physics step, q̈ = Δq̇/h) equals
   (M(q) + diag(N²·I_m))⁻¹ (τ − g(q)) within 2 %: the simulator adds the rotor inertia on M's diagonal, so pinocchio
   gets it too;
3. fast and exact sync give the same contact-free trajectory: to float32 round-off without constraint rows on the
   arm; with the task's joint friction loss within 1 % of what the friction itself changes, and that gap is exactly
   the one constant the fast sync leaves at the nominal bodies (``dof_invweight0``, the softness of friction-loss
   rows): copied from the exact run, the fast run equals it to round-off.

Frames: the randomized quantities are written in the simulator's body frame and given to pinocchio in the URDF link
frame; the two frames coincide (``envs/robots/panda.py``), checked here by the links' world poses (0.1 mm, 1e-4 rad).
The arm is turned away from the table (joint1 = 2.6 rad) and no contact touches a robot geom. In 1.-2. the solver's
friction loss is off (at rest it may carry part of the load) and every command delay is zero (the pulse acts in the
step it is commanded).
"""

from __future__ import annotations

import importlib.metadata
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import torch

pytestmark = pytest.mark.sim

TASK = "Realgap-Grasp-Franka-v0"  # joint position targets through the datasheet PD (bandwidth gains, no g(q))
NUM_ENVS = 4
RANDOMIZED_ENVS = (1, 2, 3)  # env 0 keeps the nominal bodies
BODIES = ("hand", "link7", "link4")
# Behind the base, clear of the table (x from 0.3 to 0.8 m) and the object, bent so that joints 2, 4 and 6 carry load;
# inside every joint range (joint 1: +-2.8973 rad).
Q_HOLD = {
    "joint1": 2.6,
    "joint2": 0.6,
    "joint3": -0.2,
    "joint4": -1.2,
    "joint5": 0.4,
    "joint6": 1.8,
    "joint7": 0.785,
    "finger_joint1": 0.02,
    "finger_joint2": 0.02,
}
SETTLE_STEPS = 200  # 1 s at 200 Hz: the PD's slow pole (10 Hz, ζ = 2) is 16.8 rad/s, e^-16.8 of the initial sag left
PULSE_NM = (5.0, 5.0, 5.0, 5.0, 1.0, 1.0, 1.0)  # joints 1-7, far inside the 87 / 12 N·m envelope
TRAJECTORY_STEPS = 50  # 0.25 s
SWING_RAD = (-0.3, 0.3, 0.3, 0.3, -0.3, 0.3, 0.3)  # PD target step of the trajectory, away from every joint limit
LOADED_NM = 0.5  # joints under this gravity torque are held to 1 % of the largest torque instead of their own


def _randomizations():
    from realgap.envs.dr.inertia_sampling import InertiaRandomization

    # wider than any DR profile: each must move the dynamics far beyond the tolerances checked
    return {
        # a 0.8-1.5 kg tool or camera box off the hand axis, any orientation
        "hand": InertiaRandomization(
            payload_mass_kg=(0.8, 1.5),
            payload_offset_m=((-0.06, 0.06), (-0.06, 0.06), (0.02, 0.1)),
            payload_size_m=((0.03, 0.06), (0.05, 0.1), (0.02, 0.04)),
            payload_random_rotation=True,
        ),
        # identification errors, exaggerated: mass x0.7-1.5, radii of gyration +-20 %, axes tilted, CoM +-2 cm
        "link7": InertiaRandomization(
            mass_scale=(0.7, 1.3), stretch=(0.8, 1.2), shear=(-0.1, 0.1), com_shift_m=((-0.02, 0.02),) * 3
        ),
        "link4": InertiaRandomization(
            mass_scale=(1.2, 1.5), stretch=(0.8, 1.2), shear=(-0.1, 0.1), com_shift_m=((-0.02, 0.02),) * 3
        ),
    }


# -- pinocchio: the URDF with the randomized links replaced --------------------------------------------------------


def _urdf_inertia(link: str):
    """The ``<inertial>`` of URDF link ``link`` as a pinocchio Inertia in the link frame."""
    import pinocchio as pin

    from realgap.envs.sim2sim.dynamics import URDF_PATHS

    urdf = importlib.metadata.distribution("example-robot-data").locate_file(URDF_PATHS["panda"])
    node = ET.parse(str(urdf)).getroot().find(f"link[@name='{link}']/inertial")
    origin = node.find("origin")
    xyz = np.array([float(v) for v in origin.get("xyz", "0 0 0").split()])
    rot = pin.rpy.rpyToMatrix(*[float(v) for v in origin.get("rpy", "0 0 0").split()])
    i = {k: float(v) for k, v in node.find("inertia").attrib.items()}
    inertia = np.array([[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]], [i["ixz"], i["iyz"], i["izz"]]])
    return pin.Inertia(float(node.find("mass").get("value")), xyz, rot @ inertia @ rot.T)


def _dynamics(bodies: dict, joint_names):
    """pinocchio's Panda with each link of ``bodies`` (sim name → (mass kg, CoM m, inertia about the CoM kg·m²), link
    frame) in place of the URDF's.

    pinocchio merges fixed links into their joint's body (``panda_hand`` into joint 7's, 0.107 m along z and turned
    -45° about it): the joint's inertia loses the URDF link and gains the new one, both moved into the joint frame by
    the link frame's placement (spatial inertias add, linearly in the dynamic parameters).
    """
    import pinocchio as pin

    from realgap.envs.sim2sim.dynamics import RobotDynamics

    dyn = RobotDynamics("panda", joint_names)
    model = dyn.model
    for name, (mass, com_b, inertia_c) in bodies.items():
        frame = model.frames[model.getFrameId(f"panda_{name}")]
        old = frame.placement.act(_urdf_inertia(f"panda_{name}")).toDynamicParameters()
        new = frame.placement.act(pin.Inertia(float(mass), com_b, inertia_c)).toDynamicParameters()
        params = model.inertias[frame.parentJoint].toDynamicParameters() - old + new
        model.inertias[frame.parentJoint] = pin.Inertia.FromDynamicParameters(params)
    dyn.data = model.createData()
    return dyn


# -- the simulator -------------------------------------------------------------------------------------------------


def _solver():
    from isaaclab_newton.physics import NewtonManager

    return NewtonManager._solver


def _step(env, position: torch.Tensor, effort: torch.Tensor | None = None) -> None:
    """One physics step: targets into realgap's chain, its torque into the solver, integrate, read back."""
    robot = env.scene["robot"]
    robot.actuators.target_command.set_position_index(value=position)
    robot.actuators.target_command.set_effort_index(value=torch.zeros_like(position) if effort is None else effort)
    env.scene.write_data_to_sim()
    env.sim.step(render=False)
    env.scene.update(env.physics_dt)


def _write_bodies(env, body, env_ids: torch.Tensor, body_ids: torch.Tensor, fast: bool) -> None:
    """The DR write path: mass, CoM and inertia of ``body_ids`` in one batched call each, synced ``fast`` or exact."""
    from newton import ModelFlags

    from realgap.envs.dr.events import solver_update
    from realgap.envs.dr.sampling import body_to_flat

    robot = env.scene["robot"]
    mass, com_b, inertia = body_to_flat(body)
    with solver_update(env, ModelFlags.BODY_INERTIAL_PROPERTIES, fast, env_ids):
        robot.set_masses_index(masses=mass, body_ids=body_ids, env_ids=env_ids)
        robot.set_coms_index(coms=com_b, body_ids=body_ids, env_ids=env_ids)
        robot.set_inertias_index(inertias=inertia, body_ids=body_ids, env_ids=env_ids)
    pending = ModelFlags.BODY_INERTIAL_PROPERTIES in env.sim.physics_manager._model_changes
    assert pending != fast  # the fast path really ran (no fallback), the exact one waits for the next step


def _set_joint_friction(env, coulomb: torch.Tensor, viscous: torch.Tensor) -> None:
    from newton import ModelFlags

    from realgap.envs.dr.events import solver_update

    with solver_update(env, ModelFlags.JOINT_DOF_PROPERTIES, fast=True):  # exact for friction (dr_events docstring)
        env.scene["robot"].write_joint_friction_coefficient_to_sim_index(
            joint_friction_coeff=coulomb, joint_viscous_friction_coeff=viscous
        )


def _robot_contacts() -> int:
    """Active contacts touching a robot geom (MuJoCo bodies named after the robot prim), all worlds."""
    import mujoco

    solver = _solver()
    model = solver.mj_model
    robot_body = np.array(
        ["_Robot_" in (mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, i) or "") for i in range(model.nbody)]
    )
    geoms = solver.mjw_data.contact.geom.numpy()[: int(solver.mjw_data.nacon.numpy()[0])]
    return int(robot_body[model.geom_bodyid[geoms]].any(axis=1).sum())


def _rest_at(env, q: torch.Tensor) -> None:
    env.scene["robot"].write_joint_state_to_sim_index(position=q.clone(), velocity=torch.zeros_like(q))


def _hold_and_pulse(env, q_target: torch.Tensor) -> dict[str, torch.Tensor]:
    """Settle under the PD, read the holding torque, then one step of a torque pulse from rest at the settled pose."""
    robot = env.scene["robot"]
    act = robot.actuators["panda"]
    _rest_at(env, q_target)
    contacts = 0
    for _ in range(SETTLE_STEPS):
        _step(env, q_target)
        contacts += _robot_contacts()
    out = {
        "q_hold": robot.data.joint_pos.torch.clone(),
        "qd_hold": robot.data.joint_vel.torch.clone(),
        "tau_hold": act.applied_effort.clone(),
        "contacts_hold": torch.tensor(contacts),
    }
    # from rest at the settled pose the PD still supplies the holding torque; the pulse rides on it (feed-forward)
    _rest_at(env, out["q_hold"])
    pulse = torch.zeros_like(q_target)
    pulse[:, :7] = torch.tensor(PULSE_NM)
    _step(env, q_target, pulse)
    out["tau_pulse"] = act.applied_effort.clone()
    out["qdd_pulse"] = robot.data.joint_vel.torch / env.physics_dt  # semi-implicit Euler from rest: q̇₁ = h·q̈
    return out


def _trajectory(env, q_target: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """From rest at ``q_target`` the PD follows a step to ``q_target + SWING_RAD``: (q, q̇) per step, shape
    ``(T, E, 18)``, and the robot contacts seen."""
    robot = env.scene["robot"]
    _rest_at(env, q_target)
    swing = q_target.clone()
    swing[:, :7] += torch.tensor(SWING_RAD)
    traj, contacts = [], 0
    for _ in range(TRAJECTORY_STEPS):
        _step(env, swing)
        traj.append(torch.cat([robot.data.joint_pos.torch, robot.data.joint_vel.torch], dim=-1))
        contacts += _robot_contacts()
    return torch.stack(traj), torch.tensor(contacts)


@pytest.fixture(scope="module")
def measured():
    import warp as wp
    from conftest import build_env

    from realgap.envs.dr.inertia import BodyInertia
    from realgap.envs.dr.inertia_sampling import cast_consistent
    from realgap.envs.dr.sampling import body_from_flat, make_generator, sample_body_columns

    with build_env(TASK, num_envs=NUM_ENVS, seed=0, events__reset_arm=None) as env:
        env.reset()
        robot, data = env.scene["robot"], env.scene["robot"].data
        q_target = torch.tensor([[Q_HOLD[n] for n in robot.joint_names]] * NUM_ENVS)
        for act in robot.actuators.values():
            act.chain.delay.set_delay_steps(torch.zeros(NUM_ENVS, dtype=torch.long))
        friction = (data.joint_friction_coeff.torch.clone(), data.joint_viscous_friction_coeff.torch.clone())
        no_friction = (torch.zeros_like(friction[0]), torch.zeros_like(friction[1]))
        cols = [robot.body_names.index(n) for n in BODIES]
        body_ids = torch.tensor(cols, dtype=torch.int32)
        nominal = body_from_flat(data.body_mass.torch, data.body_com_pos_b.torch, data.body_inertia.torch)
        nominal_cols = BodyInertia(nominal.mass[:, cols], nominal.com_b[:, cols], nominal.inertia_c[:, cols])
        envs = torch.tensor(RANDOMIZED_ENVS)
        body = BodyInertia(nominal.mass[envs], nominal.com_b[envs], nominal.inertia_c[envs])
        generator = make_generator(20, "cpu")
        for col, rnd in zip(cols, _randomizations().values(), strict=True):
            body = sample_body_columns(body, [col], rnd, generator)
        written = cast_consistent(BodyInertia(body.mass[:, cols], body.com_b[:, cols], body.inertia_c[:, cols]))
        mjw = _solver().mjw_model
        results = {}
        for run in ("exact", "fast", "fast_exact_weights"):
            # from the nominal bodies with every solver constant recomputed (an exact write, consumed by one step)
            _set_joint_friction(env, *no_friction)
            _write_bodies(env, nominal_cols, torch.arange(NUM_ENVS), body_ids, fast=False)
            _step(env, q_target)
            _write_bodies(env, written, envs, body_ids, fast=run != "exact")
            if run == "fast_exact_weights":  # the fast sync plus the one constant it leaves at the nominal bodies
                wp.to_torch(mjw.dof_invweight0)[:] = results["exact"]["dof_invweight0"]
                out = {}
            else:
                out = _hold_and_pulse(env, q_target)
                out["trajectory"], out["contacts_trajectory"] = _trajectory(env, q_target)
            _set_joint_friction(env, *friction)  # the task's solver friction loss, as trained
            out["trajectory_friction"], out["contacts_friction"] = _trajectory(env, q_target)
            out["dof_invweight0"] = wp.to_torch(mjw.dof_invweight0).clone()
            results[run] = out
        sim = body_from_flat(data.body_mass.torch, data.body_com_pos_b.torch, data.body_inertia.torch)
        measured = {
            "results": {run: {k: v.double().numpy() for k, v in out.items()} for run, out in results.items()},
            "bodies": [
                {
                    n: (float(sim.mass[e, c]), sim.com_b[e, c].numpy(), sim.inertia_c[e, c].numpy())
                    for n, c in zip(BODIES, cols, strict=True)
                }
                for e in range(NUM_ENVS)
            ],
            "pose_w": data.body_link_pose_w.torch[:, cols].double().numpy(),  # (x, y, z, qx, qy, qz, qw)
            "root_w": data.root_pose_w.torch.double().numpy(),
            "q": data.joint_pos.torch.double().numpy(),  # read with the poses
            "armature": data.joint_armature.torch[0].double().numpy(),
            "joint_names": list(robot.joint_names),
        }
    yield measured


def _rot_xyzw(quat: np.ndarray) -> np.ndarray:
    x, y, z, w = quat
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def test_sim_body_frames_are_the_urdf_link_frames(measured):
    """Same frames, so a CoM and an inertia tensor mean the same numbers on both sides (every env's pose)."""
    import pinocchio as pin

    m = measured
    dyn = _dynamics({}, m["joint_names"])
    for e in range(NUM_ENVS):
        pin.framesForwardKinematics(dyn.model, dyn.data, dyn._full_q(m["q"][e]))
        root_rot = _rot_xyzw(m["root_w"][e, 3:])
        for k, name in enumerate(BODIES):
            pose_w = m["pose_w"][e, k]
            pos_b = root_rot.T @ (pose_w[:3] - m["root_w"][e, :3])
            rot_b = root_rot.T @ _rot_xyzw(pose_w[3:])
            urdf = dyn.data.oMf[dyn.model.getFrameId(f"panda_{name}")]
            assert np.abs(pos_b - urdf.translation).max() < 1e-4, name  # m
            assert np.abs(pin.log3(rot_b.T @ urdf.rotation)).max() < 1e-4, name  # rad


@pytest.mark.parametrize("sync", ["fast", "exact"])
def test_holding_torque_equals_gravity_torque_of_the_randomized_model(measured, sync):
    m, r = measured, measured["results"][sync]
    assert r["contacts_hold"] == 0
    assert np.abs(r["qd_hold"]).max() < 1e-3  # rad/s: settled, no inertial torque left
    nominal = _dynamics({}, m["joint_names"])
    for e in range(NUM_ENVS):
        q, tau = r["q_hold"][e], r["tau_hold"][e, :7]
        g = _dynamics(m["bodies"][e], m["joint_names"]).gravity(q)[:7]  # at the simulated (sagged) pose
        loaded = np.abs(g) > LOADED_NM  # joints 2, 4, 5, 6 here
        assert loaded.sum() >= 3
        rel = np.abs(tau - g) / np.abs(g)
        assert rel[loaded].max() < 0.01, (sync, e, rel[loaded].round(5))
        assert np.abs(tau - g).max() < 0.01 * np.abs(g).max(), (sync, e, (tau - g).round(4))
        if e in RANDOMIZED_ENVS:  # not vacuous: the nominal model misses the held torque by 23-128 % (measured)
            g_nominal = nominal.gravity(q)[:7]
            assert (np.abs(tau - g_nominal) / np.abs(g_nominal))[loaded].max() > 0.1


@pytest.mark.parametrize("sync", ["fast", "exact"])
def test_torque_pulse_accelerates_the_randomized_model(measured, sync):
    from realgap.envs.robots.panda import PANDA_ACTUATORS

    m, r = measured, measured["results"][sync]
    rotor = np.diag(m["armature"])  # the simulator's armature: the datasheet's N²·I_m, 0.1 kg·m² on every Panda joint
    assert np.allclose(m["armature"], [PANDA_ACTUATORS["joint1"].reflected_inertia] * 9, rtol=1e-6)
    nominal = _dynamics({}, m["joint_names"])
    for e in range(NUM_ENVS):
        q, tau, qdd_sim = r["q_hold"][e], r["tau_pulse"][e], r["qdd_pulse"][e, :7]
        dyn = _dynamics(m["bodies"][e], m["joint_names"])
        qdd = np.linalg.solve(dyn.mass_matrix(q) + rotor, tau - dyn.gravity(q))[:7]
        err = np.linalg.norm(qdd_sim - qdd) / np.linalg.norm(qdd)
        assert err < 0.02, (sync, e, qdd_sim.round(3), qdd.round(3))
        big = np.abs(qdd) > 0.2 * np.abs(qdd).max()  # each joint that moves noticeably, on its own
        assert (np.abs(qdd_sim - qdd) / np.abs(qdd))[big].max() < 0.02, (sync, e, qdd_sim.round(3), qdd.round(3))
        if e in RANDOMIZED_ENVS:  # not vacuous: the nominal model's prediction is off by 20-60 % (measured)
            qdd_nominal = np.linalg.solve(nominal.mass_matrix(q) + rotor, tau - nominal.gravity(q))[:7]
            assert np.linalg.norm(qdd_sim - qdd_nominal) / np.linalg.norm(qdd) > 0.1


def test_fast_and_exact_sync_give_the_same_contact_free_trajectory(measured):
    res = measured["results"]
    fast, exact, patched = res["fast"], res["exact"], res["fast_exact_weights"]
    for r in (fast, exact, patched):
        assert r.get("contacts_trajectory", 0) == 0 and r["contacts_friction"] == 0
    moved = np.abs(exact["trajectory"][-1] - exact["trajectory"][0]).max(axis=0)
    assert moved[:7].min() > 0.2  # rad: every arm joint swings
    # No constraint row on the arm (friction loss off, no limit, no contact): the same rigid-body dynamics, so the
    # same trajectory up to float32 round-off. Two exact runs differ by up to 2e-6 rad/s on this CPU (the solver's
    # summation order); measured fast vs exact: up to 2e-7 rad, 4e-6 rad/s.
    gap = np.abs(fast["trajectory"] - exact["trajectory"])
    assert gap[..., :9].max() < 5e-6 and gap[..., 9:].max() < 5e-5  # rad, rad/s
    # With the task's friction loss (0.15-0.64 N·m per joint, a constraint row each) the fast sync keeps the rows'
    # softness R ∝ dof_invweight0 of the nominal bodies: the friction force is the same once a joint slides and
    # differs only while the friction holds or lets go. Measured 2e-7 rad and 2e-5 rad/s: 0.15 % of what the friction
    # changes in the trajectory (1e-2 to 1e-1 rad/s per joint); the bound below is 1 % of it.
    effect = np.abs(exact["trajectory_friction"] - exact["trajectory"]).max(axis=(0, 1))
    assert effect[9:16].min() > 1e-3  # rad/s: the friction loss matters on every arm joint
    gap = np.abs(fast["trajectory_friction"] - exact["trajectory_friction"]).max(axis=(0, 1))
    assert (gap[:7] < 0.01 * effect[:7]).all() and (gap[9:16] < 0.01 * effect[9:16]).all(), (gap, effect)
    # ... and that softness is all: with the exact run's dof_invweight0 copied in, the fast sync is the exact one
    assert not np.array_equal(fast["dof_invweight0"], exact["dof_invweight0"])
    gap = np.abs(patched["trajectory_friction"] - exact["trajectory_friction"])
    assert gap[..., :9].max() < 5e-6 and gap[..., 9:].max() < 5e-5
