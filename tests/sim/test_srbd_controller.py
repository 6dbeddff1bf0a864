"""The SRBD balance controller (envs/srbd/controller.py) on the MuJoCo G1 through the export's actuator chain (MuJoCo
C and pinocchio; seconds): its contact-force QP by hand, and the robot kept up through a push."""

import numpy as np
import pytest

from realgap.envs.format.protocol import BALANCE_PROTOCOL

pytestmark = pytest.mark.sim


@pytest.fixture(scope="module")
def controller():
    from realgap.envs.deploy import DeployRuntime
    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.format import load_policy
    from realgap.envs.srbd.controller import SRBDController

    meta, _ = load_policy("configs/policies/balance_g1")
    robot = MujocoRobot.for_policy(meta)
    return SRBDController(DeployRuntime(meta, robot, None, seed=0), robot), robot


def test_qp_shares_the_weight_and_keeps_every_force_in_its_pyramid(controller):
    ctl, _ = controller
    r = np.array([[0.1, 0.1, -0.6], [0.1, -0.1, -0.6], [-0.1, 0.1, -0.6], [-0.1, -0.1, -0.6]])
    f = ctl.law.distribute(r, np.array([0.0, 0.0, 327.0, 0.0, 0.0, 0.0]))
    np.testing.assert_allclose(f[:, 2], 327.0 / 4, rtol=1e-3)  # symmetric points: equal shares
    # a sideways demand beyond friction (mu 0.6): every force stays in its pyramid, the rest is left unmet
    f = ctl.law.distribute(r, np.array([300.0, 0.0, 327.0, 0.0, 0.0, 0.0]))
    assert (f[:, 2] >= -1e-9).all()
    assert (np.abs(f[:, :2]) <= ctl.law.mu * f[:, 2:3] + 1e-6).all()
    assert f[:, 0].sum() < 300.0


def test_controller_holds_the_crouch_and_survives_a_push(controller):
    from realgap.envs.deploy.episode import Push, run_episode

    ctl, robot = controller
    calm = run_episode(ctl, robot, [], BALANCE_PROTOCOL.with_changes(episode_s=4.0))
    assert not calm.fell and robot.root_height() == pytest.approx(0.58, abs=0.03)  # in the crouch after the ramp
    pushed = run_episode(ctl, robot, [Push(2.0, (0.0, 0.3))], BALANCE_PROTOCOL.with_changes(episode_s=5.0))
    assert not pushed.fell and pushed.pushes == 1


def test_single_push_sweep_counts_and_limit():
    from realgap.envs.eval.srbd.balance import single_push

    # no push is held on every heading; 2 m/s (five times the policy's MuJoCo limit) floors it on every heading
    out = single_push("configs/policies/balance_g1", (0.0, 2.0), episodes=2, push_at_s=1.0, duration_s=3.0)
    assert [(r["push_mps"], r["survived"]) for r in out["rows"]] == [(0.0, 2), (2.0, 0)]
    assert out["limit_mps"] == 0.0 and out["rows"][1]["ci95"][1] < 1.0
