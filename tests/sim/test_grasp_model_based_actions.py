"""Sim tier: the two model-based grasp interfaces (computed torque, Cartesian impedance) on 4 CPU envs.

Computed torque: the torque it writes equals M(q)·(Kp·(s − q) − Kd·q̇) + g(q) + C(q, q̇)·q̇ recomputed with pinocchio
on the Panda URDF (the reference :class:`PandaGravity` loads; the simulated Menagerie model matches it to ~0.1 %, its
0.1 kg·m² armature added to M's diagonal) at states with random joint velocities; a constant target moves the arm to it.
Cartesian impedance: a constant TCP increment moves the TCP along it. Both step without NaN and export as their own
type, which the deploy runtime refuses by name.
"""

import numpy as np
import pytest
import torch

from realgap.tasks.grasp import ACTION_SPACE_IDS

pytestmark = pytest.mark.sim

ARMATURE = 0.1  # kg·m², every Panda arm joint (envs/robots/panda.py): the solver's M includes it, the URDF does not


def _pinocchio_torque(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    """τ = (M(q) + armature)·q̈ + C(q, q̇)·q̇ + g(q) of the 7 arm joints (fingers at rest), float64, N·m."""
    import pinocchio as pin

    from realgap.tasks.grasp.action_terms import PandaGravity

    ref = PandaGravity([f"joint{i}" for i in range(1, 8)] + ["finger_joint1", "finger_joint2"])
    model, data = ref.model, ref.data
    out = []
    for qi, vi, ai in zip(q, qd, qdd, strict=True):
        qp, vp, ap = pin.neutral(model), np.zeros(model.nv), np.zeros(model.nv)
        qp[:9], vp[:7], ap[:7] = qi, vi, ai
        tau = pin.rnea(model, data, qp, vp, ap)[:7] + ARMATURE * ai
        out.append(tau)
    return np.stack(out)


def test_computed_torque_equals_pinocchio_and_reaches_its_target():
    from conftest import build_env

    with build_env(ACTION_SPACE_IDS["computed_torque"], num_envs=4, seed=5, events__reset_arm=None) as env:
        env.reset()
        robot, term = env.scene["robot"], env.action_manager.get_term("arm")
        # random states: joint velocities up to 1 rad/s so C(q, q̇)·q̇ is not zero
        gen = torch.Generator().manual_seed(0)
        q = robot.data.joint_pos.torch.clone()
        q[:, :7] += 0.3 * (2 * torch.rand(4, 7, generator=gen) - 1)
        qd = torch.zeros_like(q)
        qd[:, :7] = 2 * torch.rand(4, 7, generator=gen) - 1
        robot.write_joint_state_to_sim_index(position=q, velocity=qd)
        env.sim.forward()
        target = q[:, :7] + 0.05
        tau = term.torque(target).double().numpy()
        qdd = (term.cfg.kp * (target - q[:, :7]) - term.cfg.kd * qd[:, :7]).double().numpy()
        ref = _pinocchio_torque(q.double().numpy(), qd[:, :7].double().numpy(), qdd)
        # float32 simulator vs float64 pinocchio, Menagerie vs URDF inertias: 1 % of the largest torque
        scale = float(np.abs(ref).max())
        assert scale > 20.0  # gravity and the commanded acceleration make this non-trivial
        np.testing.assert_allclose(tau, ref, atol=0.01 * scale)
        # the Coriolis term is in: dropping it (h ≈ g) leaves an error above the tolerance at these speeds
        c_only = ref - _pinocchio_torque(q.double().numpy(), np.zeros((4, 7)), qdd)
        assert float(np.abs(c_only).max()) > 0.01 * scale

        env.reset()
        q0 = robot.data.joint_pos.torch[:, :7].clone()
        act = torch.zeros(4, env.action_manager.total_action_dim)
        act[:, :7] = (q0 - robot.data.default_joint_pos.torch[:, :7]) / 0.5
        act[:, 1] += 0.2  # joint 2 target 0.1 rad forward of where it is
        act[:, -1] = 1.0
        for _ in range(50):  # 1 s
            obs, rew, terminated, _, _ = env.step(act)
            assert torch.isfinite(obs["policy"]).all() and torch.isfinite(rew).all() and not terminated.any()
        err = (robot.data.joint_pos.torch[:, :7] - (q0 + torch.tensor([0, 0.1, 0, 0, 0, 0, 0]))).abs()
        assert float(err.max()) < 0.01, f"computed torque left {err.max():.4f} rad of error after 1 s"
        _check_refused_by_name(env, "joint_computed_torque")


def test_cartesian_impedance_moves_the_tcp_along_the_command():
    from conftest import build_env

    from realgap.tasks.grasp.mdp import tcp_pos_w

    with build_env(ACTION_SPACE_IDS["cartesian_impedance"], num_envs=4, seed=5, events__reset_arm=None) as env:
        env.reset()
        robot = env.scene["robot"]
        assert env.action_manager.total_action_dim == 7  # 6-D TCP increment + gripper
        tcp0 = tcp_pos_w(env).clone()
        act = torch.zeros(4, 7)
        act[:, -1] = 1.0
        for _ in range(25):  # zero increment: the TCP stays (target re-based on the measured pose, gravity compensated)
            obs, rew, terminated, _, _ = env.step(act)
            assert torch.isfinite(obs["policy"]).all() and torch.isfinite(rew).all() and not terminated.any()
        assert float((tcp_pos_w(env) - tcp0).norm(dim=-1).max()) < 0.01
        start = tcp_pos_w(env).clone()
        act[:, 2] = 1.0  # +z (base frame = world axes here), 5 cm re-based every step: ~0.3 m/s
        for _ in range(25):  # 0.5 s
            obs, rew, terminated, _, _ = env.step(act)
            assert torch.isfinite(obs["policy"]).all() and not terminated.any()
        moved = tcp_pos_w(env) - start
        assert float(moved[:, 2].min()) > 0.05, f"TCP rose only {moved[:, 2].min():.3f} m in 0.5 s"
        assert float(moved[:, :2].norm(dim=-1).max()) < 0.5 * float(moved[:, 2].min())  # mostly along the command
        assert robot.data.joint_vel.torch[:, :7].isfinite().all()
        _check_refused_by_name(env, "ee_impedance")


def _check_refused_by_name(env, kind: str) -> None:
    """The arm term exports as ``kind`` and the deploy runtime refuses it, naming the type."""
    from realgap.envs.deploy.actions import ActionMapper, UnsupportedActionError
    from realgap.envs.export.actions import action_terms

    actions, _ = action_terms(env)
    arm = actions.terms[0]
    assert arm.type == kind and "tau" in arm.equation

    class Meta:
        joint_names = env.scene["robot"].joint_names

    Meta.actions = actions
    with pytest.raises(UnsupportedActionError, match=f"type '{kind}'"):
        ActionMapper(Meta)
