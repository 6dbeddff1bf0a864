"""Sim tier: a robustness sweep point lands in the simulator and the actuator chains, per env, and survives resets.

Four G1 envs of the balance Play variant get four different points at once (envs 0-3); every quantity is read back
from the asset / chain / solver and compared with the value computed by hand from the nominal model.
"""

import math

import pytest
import torch

pytestmark = pytest.mark.sim
TASK = "Realgap-Balance-G1-Play-v0"


@pytest.fixture(scope="module")
def env():
    from conftest import build_env

    from realgap.envs.eval.robustness.prepare import prepare_env_cfg

    with build_env(TASK, 4, 0, prepare=lambda cfg: prepare_env_cfg(cfg, episode_s=2.0)) as env:
        yield env


def test_points_written_per_env_and_pinned_across_resets(env):
    from realgap.envs.dr.inertia import check_consistency
    from realgap.envs.dr.sampling import body_from_flat
    from realgap.envs.eval.robustness.apply import pin_term

    term = pin_term(env)
    nominal = term.nominal_values()
    # the G1's foot spheres: μ 0.6 in the Menagerie model; the datasheet bus latency 0-10 ms (mean 5 ms); the mean of
    # the Play variant's configured push range
    assert nominal["contact_friction"] == pytest.approx(0.6)
    lo, hi = env.event_manager.get_term_cfg("push").params["magnitude_mps"]
    assert nominal["command_delay_s"] == pytest.approx(0.005) and nominal["push_mps"] == pytest.approx((lo + hi) / 2)
    robot = env.scene["robot"]
    torso = robot.body_names.index("torso_link")
    mass0 = robot.data.body_mass.torch[0].clone()
    act = term.actuators[0][0]
    kp0 = act.chain.params.kp[0].clone()
    values = {
        "payload_kg": torch.tensor([0.0, 5.0, 0.0, 0.0]),
        "link_mass_scale": torch.tensor([1.0, 1.0, 1.2, 1.0]),
        "pd_gain_scale": torch.tensor([1.0, 0.5, 1.0, 1.0]),
        "torque_limit_scale": torch.tensor([1.0, 1.0, 0.25, 1.0]),
        "command_delay_s": torch.tensor([0.0, 0.005, 0.01, 0.02]),
        "joint_friction_scale": torch.tensor([1.0, 0.0, 1.0, 2.0]),
        "contact_friction": torch.tensor([0.6, 0.2, 1.0, 0.6]),
        "push_mps": torch.tensor([0.0, 0.45, 0.9, 1.35]),
        "inertia_scale": torch.tensor([1.0, 1.0, 1.0, 2.0]),
    }
    term.set_values(values)
    env.reset()  # the chains redraw their delays on reset: the pin term must win
    mass = robot.data.body_mass.torch
    assert torch.allclose(mass[0], mass0)  # env 0: nominal everywhere
    assert float(mass[1, torso]) == pytest.approx(float(mass0[torso]) + 5.0, abs=1e-4)  # + 5 kg payload on the torso
    assert float(mass[2].sum()) == pytest.approx(1.2 * float(mass0.sum()), rel=1e-5)  # density × 1.2, all links
    inertia = robot.data.body_inertia.torch.reshape(4, -1, 3, 3)
    assert torch.allclose(inertia[3], 2.0 * inertia[0], rtol=1e-4, atol=1e-9)  # I_C × 2, mass kept
    assert torch.allclose(mass[3], mass0)
    data = robot.data
    bodies = body_from_flat(data.body_mass.torch, data.body_com_pos_b.torch, data.body_inertia.torch)
    check_consistency(bodies, 1e-5, list(robot.body_names), "swept body")  # every written body is physical
    params = act.chain.params
    assert torch.allclose(params.kp[1], 0.5 * kp0) and torch.allclose(params.kp[0], kp0)
    assert float(params.peak_torque[2].max()) == pytest.approx(0.25 * 139.0)  # knee 7520-22: 139 N·m peak
    # latency → physics steps of 5 ms: 0, 1, 2, 4
    assert act.chain.delay.delay_steps.tolist() == [0, 1, 2, 4]
    friction = robot.data.joint_friction_coeff.torch
    assert float(friction[1].abs().max()) == 0.0 and float(friction[3].max()) == pytest.approx(0.6)
    mu = term.mu[:, term.contact_shapes]
    assert torch.allclose(mu[:, 0], torch.tensor([0.6, 0.2, 1.0, 0.6]))
    # a push now: each env's base velocity jumps by its own magnitude (0, 0.45, 0.9, 1.35 m/s)
    push = env.event_manager.get_term_cfg("push")
    before = robot.data.root_vel_w.torch[:, :2].clone()
    ids = torch.arange(4)
    push.func(env, ids, **push.params)
    change = (robot.data.root_vel_w.torch[:, :2] - before).norm(dim=-1)
    assert torch.allclose(change, torch.tensor([0.0, 0.45, 0.9, 1.35]), atol=1e-5)
    assert math.isclose(float(push.func.max_push[3]), 1.35, rel_tol=1e-6)

    # the reference point (NaN): the task's own push magnitude and the datasheet latency (0-2 steps), redrawn
    values = {k: v.clone() for k, v in values.items()}
    values["push_mps"][0] = values["command_delay_s"][0] = math.nan
    term.set_values(values)
    env.reset()
    before = robot.data.root_vel_w.torch[:, :2].clone()
    push.func(env, ids, **push.params)
    change = (robot.data.root_vel_w.torch[:, :2] - before).norm(dim=-1)
    assert lo - 1e-5 <= float(change[0]) <= hi + 1e-5 and float(change[3]) == pytest.approx(1.35, abs=1e-5)
    assert 0 <= int(act.chain.delay.delay_steps[0]) <= 2 and act.chain.delay.delay_steps[1:].tolist() == [1, 2, 4]


def test_unsupported_factor_is_rejected(env):
    from realgap.envs.eval.robustness.apply import pin_term

    with pytest.raises(ValueError, match="object_mass_scale"):
        pin_term(env).set_values({"object_mass_scale": torch.ones(4)})


def test_contact_solref_reaches_the_solver_per_world(env):
    """Each env's foot-ground contacts carry its own solref in MuJoCo-Warp's contact list, and a softer contact sinks
    the standing robot deeper (the soft-constraint model: steady penetration grows with the time constant)."""
    import numpy as np

    from realgap.envs.eval.robustness.apply import pin_term

    term = pin_term(env)
    nominal = term.nominal_values()
    assert (nominal["contact_timeconst_s"], nominal["contact_dampratio"]) == (pytest.approx(0.02), pytest.approx(1.0))
    ones = torch.ones(4)
    timeconst, dampratio = torch.tensor([0.02, 0.01, 0.08, 0.02]), torch.tensor([1.0, 1.0, 1.0, 0.25])
    term.set_values({"contact_timeconst_s": timeconst, "contact_dampratio": dampratio, "push_mps": 0.0 * ones})
    env.reset()
    action = torch.zeros(env.action_space.shape)
    for _ in range(25):  # 0.5 s standing: the feet settle into the ground
        env.step(action)
    data = env.sim.physics_manager._solver.mjw_data
    n = int(data.nacon.numpy()[0])
    world = data.contact.worldid.numpy()[:n]
    solref = data.contact.solref.numpy()[:n]
    depth = -data.contact.dist.numpy()[:n]
    for w in range(4):
        rows = world == w
        assert rows.sum() >= 2, f"world {w}: the feet are not on the ground"
        want = np.tile([float(timeconst[w]), float(dampratio[w])], (int(rows.sum()), 1))
        np.testing.assert_allclose(solref[rows], want, rtol=1e-6, err_msg=f"world {w}")
    deepest = [float(depth[world == w].max()) for w in range(4)]
    assert deepest[1] < deepest[0] < deepest[2], deepest  # stiff (10 ms) < nominal (20 ms) < soft (80 ms)
    with pytest.raises(ValueError, match="physics steps"):  # 5 ms < 2 steps of 5 ms: MuJoCo would clamp it
        term.set_values({"contact_timeconst_s": torch.tensor([0.005, 0.02, 0.02, 0.02])})
