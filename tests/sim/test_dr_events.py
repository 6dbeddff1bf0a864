"""Sim tier: the "nominal" DR profile (plus an initial pose) applied to the balance env with 8 envs.

What each term writes is read back per env -- from Isaac Lab's buffers, the actuator chains and MuJoCo-Warp's per-world
model -- differs across envs, stays physically consistent, never compounds over resets, and the env then steps 1 s
without NaN. A profile naming a missing body fails in the config stage, before any env is built.
"""

import math

import pytest
import torch

pytestmark = pytest.mark.sim

TASK = "Realgap-Balance-G1-v0"
NUM_ENVS = 8
POSE = {"asset": "robot", "position_m": {"x": [-0.1, 0.1], "y": [-0.1, 0.1]}, "yaw_rad": [-0.5, 0.5]}


def _profile(**changes):
    from realgap.envs.dr.profile import load_dr_profile, parse_dr_profile

    data = load_dr_profile("nominal").to_dict() | changes
    return parse_dr_profile(data, "test")


@pytest.fixture(scope="module")
def env():
    from realgap.envs.run.factory import load_cfgs, make_env, simulation

    env_cfg, _ = load_cfgs(TASK, "cpu", NUM_ENVS, 5, dr_profile=_profile(initial_pose=[POSE]))
    with simulation(env_cfg):
        e = make_env(TASK, env_cfg)
        e.reset()
        e.step(torch.zeros(NUM_ENVS, 29))  # consume the exact model updates of the build
        e._reset_idx(torch.arange(NUM_ENVS))  # from here on every write takes the fast solver path
        try:
            yield e
        finally:
            e.close()


def _term(env, name):
    return env.event_manager.get_term_cfg(name).func


def _solver():
    from isaaclab_newton.physics import NewtonManager

    return NewtonManager._solver


def test_unknown_body_fails_before_build():
    from realgap.envs.run.factory import load_cfgs

    payload = [{"asset": "robot", "bodies": "torso_lnk", "payload_mass_kg": [0.0, 1.0]}]
    with pytest.raises(
        ValueError, match=r"nominal: payload\[0\]: body pattern 'torso_lnk' matches no body.*torso_link"
    ):
        load_cfgs(TASK, "cpu", NUM_ENVS, 0, dr_profile=_profile(payload=payload))


def test_terms_in_priority_order_replacing_task_terms(env):
    names = env.event_manager.active_terms["reset"]
    assert names == [
        "reset_joints",
        "dr_payload",
        "dr_link_inertia",
        "dr_joint_friction",
        "dr_actuator",
        "dr_command_delay",
        "dr_contact_friction",
        "dr_contact_geometry",
        "dr_initial_pose",
    ]
    push = env.event_manager.get_term_cfg("push")  # the task's push term, with the profile's params
    assert push.params["magnitude_mps"] == (0.0, 0.5) and tuple(push.interval_range_s) == (3.0, 5.0)


def test_body_inertia_read_back_per_env_and_consistent(env):
    from newton import ModelFlags

    from realgap.envs.dr.inertia import check_consistency, default_rtol
    from realgap.envs.dr.sampling import body_from_flat

    term = _term(env, "dr_link_inertia")
    robot = env.scene["robot"]
    ids, cols, written = term.last_env_ids, term.written_ids, term.last_written
    data = robot.data
    assert torch.equal(data.body_mass.torch[ids][:, cols], written.mass.float())
    assert torch.equal(data.body_com_pos_b.torch[ids][:, cols], written.com_b.float())
    assert torch.equal(data.body_inertia.torch[ids][:, cols], written.inertia_c.float().reshape(len(ids), -1, 9))
    torso = robot.body_names.index("torso_link")
    assert data.body_mass.torch[:, torso].unique().numel() == NUM_ENVS  # one draw per env
    body = body_from_flat(data.body_mass.torch, data.body_com_pos_b.torch, data.body_inertia.torch)
    check_consistency(body, default_rtol(torch.float32), robot.body_names, "randomized G1 link")
    # MuJoCo-Warp got the same bodies without waiting for the next step (fast sync): masses per world, and the
    # principal moments of each inertia (MuJoCo stores the diagonalised tensor).
    assert ModelFlags.BODY_INERTIAL_PROPERTIES not in env.sim.physics_manager._model_changes
    mjw = _solver().mjw_model
    mj_mass = torch.from_numpy(mjw.body_mass.numpy())[:, 1:]  # body 0 is MuJoCo's world body
    assert torch.equal(mj_mass.sort(dim=1).values, data.body_mass.torch.sort(dim=1).values)
    moments = torch.linalg.eigvalsh(body.inertia_c).float().reshape(NUM_ENVS, -1).sort(dim=1).values
    mj_moments = torch.from_numpy(mjw.body_inertia.numpy())[:, 1:].reshape(NUM_ENVS, -1).sort(dim=1).values
    assert torch.allclose(mj_moments, moments, rtol=1e-4, atol=1e-8)


def test_resampling_does_not_compound(env):
    term = _term(env, "dr_link_inertia")
    robot = env.scene["robot"]
    torso = robot.body_names.index("torso_link")
    nominal = term.nominal.mass[0].float()
    for _ in range(4):
        env._reset_idx(torch.arange(NUM_ENVS))
    ratio = robot.data.body_mass.torch / nominal
    others = [i for i in range(robot.num_bodies) if i != torso]
    assert ratio[:, others].min() >= 0.92 - 1e-6 and ratio[:, others].max() <= 1.08 + 1e-6  # link scale only
    # torso: link scale 0.92-1.08 plus a 0-1.5 kg payload
    assert (robot.data.body_mass.torch[:, torso] <= 1.08 * nominal[torso] + 1.5 + 1e-4).all()
    # a partial reset updates MuJoCo-Warp for the reset worlds only, and every world stays in sync
    before = robot.data.body_mass.torch.clone()
    env._reset_idx(torch.tensor([1, 5]))
    after = robot.data.body_mass.torch
    assert (after != before).any(dim=1).tolist() == [i in (1, 5) for i in range(NUM_ENVS)]
    mj_mass = torch.from_numpy(_solver().mjw_model.body_mass.numpy())[:, 1:]
    assert torch.equal(mj_mass.sort(dim=1).values, after.sort(dim=1).values)


def test_actuator_rows_scaled_per_env_and_only_for_reset_envs(env):
    term = _term(env, "dr_actuator")
    act, cols, _, nominal = term.plans[0]
    params = act.chain.params
    for attr, (lo, hi) in (("kp", (0.9, 1.1)), ("kd", (0.8, 1.2)), ("peak_torque", (0.85, 1.0))):
        scale = getattr(params, attr)[:, cols] / nominal[attr]
        assert scale.min() >= lo - 1e-6 and scale.max() <= hi + 1e-6, attr
        assert scale[:, 0].unique().numel() == NUM_ENVS, attr
    before = params.kp.clone()
    env._reset_idx(torch.tensor([3]))
    changed = (params.kp != before).any(dim=1)
    assert changed.tolist() == [i == 3 for i in range(NUM_ENVS)]


def test_command_delay_drawn_per_env_in_range(env):
    term = _term(env, "dr_command_delay")
    assert term.steps == (0, 3)  # 0-15 ms at 5 ms physics steps
    seen = set()
    for _ in range(3):
        env._reset_idx(torch.arange(NUM_ENVS))
        for act in term.actuators:
            delay = act.chain.delay.delay_steps
            assert act.chain.delay.max_steps == 3 and 0 <= int(delay.min()) and int(delay.max()) <= 3
            seen.update(delay.tolist())
    assert len(seen) >= 3  # 24 draws from {0, 1, 2, 3}


def test_joint_friction_in_the_solver_per_env(env):
    term = _term(env, "dr_joint_friction")
    robot = env.scene["robot"]
    ids, coulomb, viscous = term.last
    cols = term.joint_ids.long()
    assert torch.equal(robot.data.joint_friction_coeff.torch[ids][:, cols], coulomb)
    assert torch.equal(robot.data.joint_viscous_friction_coeff.torch[ids][:, cols], viscous)
    assert coulomb[:, 0].unique().numel() == NUM_ENVS
    mjw = _solver().mjw_model
    frictionloss = torch.from_numpy(mjw.dof_frictionloss.numpy())[:, 6:]  # after the 6 free-joint dofs
    assert torch.equal(frictionloss.sort(dim=1).values, robot.data.joint_friction_coeff.torch.sort(dim=1).values)


def test_foot_friction_and_size_per_world(env):
    mjw = _solver().mjw_model
    feet = torch.from_numpy(mjw.geom_priority.numpy()) == 1  # the 8 foot spheres (priority 1 in the Menagerie G1)
    assert int(feet.sum()) == 8
    ids, mu = _term(env, "dr_contact_friction").last  # one μ per foot body
    geom_mu = torch.from_numpy(mjw.geom_friction.numpy())[:, feet, 0]
    assert torch.allclose(geom_mu[ids].sort(dim=1).values[:, ::4], mu.sort(dim=1).values)
    ids, scale = _term(env, "dr_contact_geometry").last
    radius = torch.from_numpy(mjw.geom_size.numpy())[:, feet, 0]  # nominal 5 mm spheres
    assert torch.allclose((radius[ids] / 0.005).sort(dim=1).values[:, ::4], scale.sort(dim=1).values, rtol=1e-5)
    assert torch.equal(torch.from_numpy(mjw.geom_rbound.numpy())[:, feet], radius)  # broad phase follows
    assert scale[:, 0].unique().numel() == NUM_ENVS


def test_initial_pose_offsets_and_one_second_without_nan(env):
    robot = env.scene["robot"]
    env._reset_idx(torch.arange(NUM_ENVS))
    offset = robot.data.root_pos_w.torch[:, :2] - env.scene.env_origins[:, :2]
    assert offset.abs().max() <= 0.1 + 1e-5 and offset.std() > 0.0
    x, y, z, w = robot.data.root_quat_w.torch.unbind(-1)
    yaw = torch.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    assert yaw.abs().max() <= 0.5 + 1e-4
    for _ in range(50):  # 1 s at 50 Hz
        obs, reward, _, _, _ = env.step(torch.zeros(NUM_ENVS, 29))
        assert torch.isfinite(obs["policy"]).all() and torch.isfinite(reward).all()
    assert math.isfinite(float(robot.data.root_pos_w.torch.sum()))
