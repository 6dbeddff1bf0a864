"""The SRBD balance law as a policy of the Isaac Lab balance task (envs/eval/srbd/lab.py): kitless Isaac Lab on the CPU,
4 envs, the shipped export's action terms (crouch over a 1 s ramp), no pushes. Its first-step torques equal the
MuJoCo controller's for the same state (one law, two engines' glue), the term's targets equal the law's, and it keeps
the G1 up where the zero action does."""

import numpy as np
import pytest
import torch

pytestmark = pytest.mark.sim

TASK = "Realgap-Balance-G1-Play-v0"
POLICY = "configs/policies/balance_g1"


@pytest.fixture(scope="module")
def env():
    from conftest import build_env

    from realgap.envs.eval.policies import export_actions, read_export

    meta, _ = read_export(POLICY)

    def prepare(cfg):
        export_actions(cfg, meta)
        cfg.events.push = None  # no pushes: standing only

    with build_env(TASK, num_envs=4, seed=0, prepare=prepare) as e:
        yield e


def _mujoco_at(state: dict[str, np.ndarray]):
    """The MuJoCo SRBD controller with its robot written to an Isaac Lab env's state (one env)."""
    import mujoco

    from realgap.envs.deploy import DeployRuntime
    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.format import load_policy
    from realgap.envs.srbd.controller import SRBDController
    from realgap.envs.srbd.dynamics import quat_to_matrix, wxyz_from_xyzw

    meta, _ = load_policy(POLICY)
    robot = MujocoRobot.for_policy(meta)
    ctl = SRBDController(DeployRuntime(meta, robot, None, seed=0), robot)
    m, d = robot.model, robot.data
    quat_wxyz = wxyz_from_xyzw(state["quat_xyzw"])  # Isaac Lab's order to MuJoCo's (and realgap's)
    d.qpos[:7] = [*state["pos"], *quat_wxyz]
    d.qvel[:3] = state["lin_w"]
    d.qvel[3:6] = quat_to_matrix(quat_wxyz).T @ state["ang_w"]  # MuJoCo: body-frame angular velocity
    for name, qj, vj in zip(state["names"], state["joint_pos"], state["joint_vel"], strict=True):
        d.qpos[m.joint(name).qposadr[0]], d.qvel[m.joint(name).dofadr[0]] = qj, vj
    mujoco.mj_forward(m, d)
    ctl.reset()  # the reference of an episode starting here, as the Isaac Lab policy takes it at its first step
    return ctl


def test_first_step_torques_equal_the_mujoco_controllers_and_the_term_gets_the_targets(env):
    from realgap.envs.eval.srbd.lab import SRBDLabPolicy

    obs, _ = env.reset()
    policy = SRBDLabPolicy(env)
    robot = env.scene["robot"]
    d = robot.data
    as_np = lambda t: t.torch[0].double().cpu().numpy()  # noqa: E731
    state = {
        "pos": (d.root_link_pos_w.torch - env.scene.env_origins)[0].double().numpy(),
        "quat_xyzw": as_np(d.root_link_quat_w),
        "lin_w": as_np(d.root_link_lin_vel_w),
        "ang_w": as_np(d.root_link_ang_vel_w),
        "joint_pos": as_np(d.joint_pos),
        "joint_vel": as_np(d.joint_vel),
        "names": list(robot.joint_names),
    }
    actions = policy(obs["policy"])
    ctl = _mujoco_at(state)
    tau_mujoco = ctl.joint_torques()  # the export's joint order
    order = [list(ctl.meta.joint_names).index(n) for n in robot.joint_names]
    assert np.abs(tau_mujoco).max() > 5.0  # a real holding torque, not zeros on both sides
    np.testing.assert_allclose(policy.last_tau[0], tau_mujoco[order], atol=1e-3)
    # the term turns the raw actions back into the law's targets (its offset: the ramp's first step)
    env.step(actions)
    q_target = torch.as_tensor(policy.last_q_target[:, policy.term_index], dtype=torch.float32)
    torch.testing.assert_close(policy.term.processed_actions, q_target, atol=1e-5, rtol=0.0)


def test_controller_keeps_the_g1_up_where_the_zero_action_does(env):
    from realgap.envs.eval.policies import zero_policy
    from realgap.envs.eval.srbd.lab import SRBDLabPolicy

    robot = env.scene["robot"]
    for policy in (zero_policy(env), SRBDLabPolicy(env)):
        obs, _ = env.reset()
        for _ in range(150):  # 3 s: through the 1 s ramp into the crouch and 2 s of holding it
            obs, _, terminated, truncated, _ = env.step(policy(obs["policy"]))
            assert not bool(terminated.any()) and not bool(truncated.any())
        height = robot.data.root_link_pos_w.torch[:, 2] - env.scene.env_origins[:, 2]
        tilt = torch.acos((-robot.data.projected_gravity_b.torch[:, 2]).clamp(-1.0, 1.0))
        assert bool((tilt < 0.1).all()), tilt
    # the controller ends in the crouch (pelvis 0.583 m), not the stance (0.757 m) the zero action holds
    assert bool(((height - 0.583).abs() < 0.03).all()), height
