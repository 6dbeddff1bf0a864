"""Sim tier: Isaac Lab (Newton, MuJoCo-Warp, float32) and plain MuJoCo C (float64) agree — contact-free first.

Open loop (G1, root welded 2 m up, no ground, no friction or damping, no PD): the same torques (gravity torque of the
stance + per-joint sinusoids moving each joint ~0.1 rad) for 0.5 s at the training step (5 ms) and at 1 ms.

Tolerances, from what the integrators can and cannot do (measured on this machine in brackets):

- joint trajectories: RMS < 1e-4 rad [5.7e-7]. Both engines run the same algorithm (MuJoCo ``implicitfast``) on the
  same model, so only float32 round-off separates them; a 0.1 % inertia or armature mismatch already moves the
  joints by ~1e-4 rad over this motion, which the bound catches.
- each engine's energy balance |ΔE − Σ τᵀΔq| / Σ|τᵀΔq|: < 5 % at 5 ms [3.1 %] and < 1.5 % at 1 ms [0.64 %], and
  shrinking at least 3× from 5 ms to 1 ms [4.9×]. The residual is the semi-implicit Euler step's own energy error
  (the discrete work Σ τ_kᵀ(q_{k+1} − q_k) is exact for the held torque, see envs/sim2sim/align_math.py), which is
  first order in dt: 5× smaller steps give ~5× smaller residual. A modelling error (a missing armature in one
  engine's kinetic energy, friction left on) would not shrink with the step.
- the two engines' energy changes agree to 0.1 % [7e-5], their models (masses, CoMs, inertias, armature) to float32
  round-off, and no constraint row is ever active (no contact, no joint limit, no friction loss).

Closed loop (zero action, the same push schedule): both engines keep the G1 up without pushes and time the same fall
after a hard push to within 0.1 s [0.00-0.02 s].
"""

import numpy as np
import pytest

pytestmark = pytest.mark.sim


@pytest.fixture(scope="module")
def runs():
    from realgap.envs.sim2sim.align import isaac_open_loop, mujoco_open_loop, open_loop_torques

    out = {}
    for dt in (0.005, 0.001):
        tau = open_loop_torques("g1", 0.5, dt, seed=0)
        out[dt] = (tau, isaac_open_loop("g1", tau, dt), mujoco_open_loop("g1", tau, dt))
    return out


def test_models_are_the_same_and_contact_free(runs):
    from realgap.envs.sim2sim.align import model_alignment

    _, isaac, mujoco = runs[0.005]
    m = model_alignment(isaac.model, mujoco.model)
    assert m["max_mass_diff_kg"] < 1e-5 and m["max_com_diff_m"] < 1e-6
    assert m["max_inertia_rel_diff"] < 1e-5 and m["max_armature_diff"] < 1e-7
    assert m["max_frictionloss_nm"] == 0.0 and m["max_damping_nms"] == 0.0
    assert m["integrator"][0] == m["integrator"][1] and m["timestep_s"][0] == pytest.approx(m["timestep_s"][1])
    assert m["total_mass_kg"][1] == pytest.approx(33.34, abs=0.01)  # Menagerie G1 (sum of link masses)
    for _, isaac, mujoco in runs.values():
        assert isaac.max_constraints == 0 and mujoco.max_constraints == 0


def test_joint_trajectories_agree(runs):
    from realgap.envs.robots import G1
    from realgap.envs.sim2sim.align_math import trajectory_errors

    for _tau, isaac, mujoco in runs.values():
        err = trajectory_errors(isaac.q, mujoco.q, G1.joint_names)
        assert err["motion_rms_rad"] > 0.05  # the joints really moved
        assert err["rms_rad"] < 1e-4, err


def test_energy_change_equals_torque_work_up_to_the_integrator(runs):
    from realgap.envs.sim2sim.align_math import energy_balance

    residual = {}
    for dt, (tau, isaac, mujoco) in runs.items():
        bi, bm = energy_balance(isaac.energy, tau, isaac.q), energy_balance(mujoco.energy, tau, mujoco.q)
        assert bm.work_j > 1.0  # the torques did work (J), so the relative residual is meaningful
        assert abs(bi.delta_energy_j - bm.delta_energy_j) < 1e-3 * abs(bm.delta_energy_j)
        residual[dt] = (bi.relative_residual, bm.relative_residual)
    for engine in (0, 1):
        assert residual[0.005][engine] < 0.05 and residual[0.001][engine] < 0.015
        assert residual[0.005][engine] > 3.0 * residual[0.001][engine]  # first order in dt: the integrator's error


def test_closed_loop_zero_action_falls_alike():
    from realgap.envs.deploy import ZeroPolicy
    from realgap.envs.deploy.episode import Push
    from realgap.envs.export.metadata import policy_metadata
    from realgap.envs.run.factory import load_cfgs, make_env, simulation
    from realgap.envs.sim2sim.closed import compare, isaac_episodes, mujoco_episodes, prepare_isaac_cfg

    task = "Realgap-Balance-G1-Play-v0"
    plan = [[], [Push(0.5, (1.5, 0.0))]]  # no push; a 1.5 m/s shove at 0.5 s (50 N·s on 33 kg): no stance holds it
    env_cfg, agent_cfg = load_cfgs(task, "cpu", len(plan), 0)
    prepare_isaac_cfg(env_cfg, len(plan), 3.0)
    with simulation(env_cfg):
        env = make_env(task, env_cfg)
        meta = policy_metadata(env, task, ["policy"], {}, agent_cfg.clip_actions)
        isaac = isaac_episodes(env, meta, ZeroPolicy(meta.action_dim), plan)
        env.close()
    mujoco = mujoco_episodes(meta, ZeroPolicy(meta.action_dim), plan, meta.balance_protocol.with_changes(episode_s=3.0))
    result = compare(isaac, mujoco, plan)
    assert not isaac[0].fell and not mujoco[0].fell and isaac[0].time_up_s == pytest.approx(3.0)
    assert isaac[1].fell and mujoco[1].fell and isaac[1].pushes == mujoco[1].pushes == 1
    assert abs(isaac[1].time_up_s - mujoco[1].time_up_s) <= 0.1
    assert result["same_outcome_rate"] == 1.0
    assert np.isclose(result["isaac"]["survival_rate"], 0.5) and np.isclose(result["mujoco"]["survival_rate"], 0.5)
