"""Single rigid body dynamics (envs/srbd): the G1's single body against pinocchio's centroidal composite inertia and
MuJoCo's subtree quantities, the parallel-axis lumping by hand, and the Newton–Euler integrator on closed forms."""

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from realgap.envs.robots.g1 import G1, G1_CROUCH_JOINT_POS, G1_CROUCH_ROOT_HEIGHT, G1_DEFAULT_JOINT_POS, G1_ROOT_HEIGHT
from realgap.envs.srbd.dynamics import BodyState, angular_velocity, energy, so3_exp, step
from realgap.envs.srbd.inertia import composite

pytestmark = pytest.mark.unit
POSES = {"stance": (G1_DEFAULT_JOINT_POS, G1_ROOT_HEIGHT), "crouch": (G1_CROUCH_JOINT_POS, G1_CROUCH_ROOT_HEIGHT)}


def test_two_point_masses_by_hand():
    # 1 kg at x=0 and 3 kg at x=1: CoM at 0.75; about it, Iyy = Izz = 1·0.75² + 3·0.25² = 0.75, Ixx = 0
    body = composite(np.array([1.0, 3.0]), np.array([[0.0, 0, 0], [1.0, 0, 0]]), np.zeros((2, 3, 3)))
    assert body.mass == 4.0
    np.testing.assert_allclose(body.com_w, [0.75, 0, 0])
    np.testing.assert_allclose(body.inertia_w, np.diag([0.0, 0.75, 0.75]), atol=1e-15)


def test_bad_bodies_are_refused():
    with pytest.raises(ValueError, match="shapes"):
        composite(np.ones(2), np.zeros((3, 3)), np.zeros((2, 3, 3)))
    with pytest.raises(ValueError, match="positive total"):
        composite(np.array([1.0, -1.0]), np.zeros((2, 3)), np.zeros((2, 3, 3)))


@pytest.fixture(scope="module")
def g1():
    from realgap.envs.srbd.model import g1_model

    return g1_model()


@pytest.mark.parametrize("pose", list(POSES))
def test_single_body_matches_pinocchio_ccrba_and_mujoco_subtree(g1, pose):
    import pinocchio as pin

    from realgap.envs.srbd.model import _value, posed_body

    model, data = g1
    table, height = POSES[pose]
    posed = posed_body(model, data, table, (0.1, -0.2, height))
    # MuJoCo's own subtree quantities of the root
    root = model.body("pelvis").id
    assert posed.body.mass == pytest.approx(model.body_subtreemass[root], rel=1e-12)
    np.testing.assert_allclose(posed.body.com_w, data.subtree_com[root], atol=1e-12)
    # pinocchio's centroidal composite rigid-body inertia of the same MJCF
    pm = pin.buildModelFromMJCF(str(G1.mjcf_path()))
    pd = pm.createData()
    q = pin.neutral(pm)
    q[:3] = (0.1, -0.2, height)
    for j in range(2, pm.njoints):
        q[pm.joints[j].idx_q] = _value(table, pm.names[j])
    pin.ccrba(pm, pd, q, np.zeros(pm.nv))
    assert posed.body.mass == pytest.approx(pd.Ig.mass, rel=1e-12)
    np.testing.assert_allclose(posed.body.com_w, pd.com[0], atol=1e-10)
    np.testing.assert_allclose(posed.body.inertia_w, pd.Ig.inertia, atol=1e-9)
    # the model is physical: a symmetric positive definite inertia obeying the triangle inequality
    eig = np.linalg.eigvalsh(posed.body.inertia_w)
    assert eig.min() > 0 and eig[0] + eig[1] >= eig[2]


def test_crouch_is_more_compact_than_the_stance(g1):
    from realgap.envs.srbd.model import posed_body

    model, data = g1
    stance = posed_body(model, data, *POSES["stance"][:1], (0, 0, G1_ROOT_HEIGHT))
    crouch = posed_body(model, data, *POSES["crouch"][:1], (0, 0, G1_CROUCH_ROOT_HEIGHT))
    # folding the legs brings mass towards the CoM: less pitch inertia, and the CoM 0.532 m up (robot facts)
    assert crouch.body.inertia_w[1, 1] < stance.body.inertia_w[1, 1]
    assert crouch.body.com_w[2] == pytest.approx(0.532, abs=0.005)
    assert crouch.sole_points_w[:, 2].max() < 0.01  # soles on the ground


def test_randomized_bodies_give_their_own_single_body(g1):
    from realgap.envs.srbd.model import bodies_w, set_pose

    model, data = g1
    set_pose(model, data, G1_DEFAULT_JOINT_POS, (0, 0, G1_ROOT_HEIGHT))
    m, c, inertia = bodies_w(model, data)
    base = composite(m, c, inertia)
    torso = model.body("torso_link").id - 1
    m2 = m.copy()
    m2[torso] += 5.0  # a 5 kg payload at the torso's CoM
    heavier = composite(m2, c, inertia)
    assert heavier.mass == pytest.approx(base.mass + 5.0)
    np.testing.assert_allclose(heavier.com_w, (base.mass * base.com_w + 5.0 * c[torso]) / heavier.mass)


# --- the integrator --------------------------------------------------------------------------------------------


def _rest(inertia=np.diag([1.0, 2.0, 3.0])):
    return BodyState(np.zeros(3), np.zeros(3), np.eye(3), np.zeros(3)), inertia


def test_so3_exp_is_rodrigues():
    for w in ([0.3, -0.2, 0.5], [1e-10, 0, 0], [0, 0, math.pi]):
        np.testing.assert_allclose(so3_exp(np.array(w)), Rotation.from_rotvec(w).as_matrix(), atol=1e-12)


def test_constant_force_gives_the_parabola_at_first_order():
    # a net upward force of 2 Mg through the CoM: p(t) = ½ g t² upwards, no rotation
    mass, t_end = 10.0, 1.0
    errors = []
    for dt in (0.01, 0.005):
        state, inertia = _rest()
        f = np.array([[0.0, 0.0, 2 * mass * 9.81]])
        for _ in range(round(t_end / dt)):
            state = step(state, mass, inertia, f, state.p[None, :], dt)
        errors.append(abs(state.p[2] - 0.5 * 9.81 * t_end**2))
        np.testing.assert_allclose(state.L, 0.0, atol=1e-12)
        np.testing.assert_allclose(state.v[2], 9.81 * t_end, rtol=1e-9)  # velocity is exact under constant force
    assert errors[0] / errors[1] == pytest.approx(2.0, rel=0.01)  # first order: halving dt halves the error


def test_torque_free_rotation_conserves_momentum_and_energy():
    inertia = np.diag([0.8, 1.5, 2.1])
    state = BodyState(np.zeros(3), np.zeros(3), np.eye(3), inertia @ np.array([0.1, 2.0, 0.3]))  # near the middle axis
    e0, drift = energy(state, 1.0, inertia), []
    for dt in (0.002, 0.001):
        s = state
        for _ in range(round(2.0 / dt)):
            s = step(s, 1.0, inertia, np.zeros((0, 3)), np.zeros((0, 3)), dt, gravity_w=np.zeros(3))
        np.testing.assert_allclose(s.L, state.L, atol=1e-12)  # no torque: L is exactly conserved
        np.testing.assert_allclose(s.R @ s.R.T, np.eye(3), atol=1e-12)  # R stays a rotation
        drift.append(abs(energy(s, 1.0, inertia) - e0) / e0)
    assert drift[1] < 0.05 and drift[1] < drift[0]  # energy error shrinks with dt


def test_an_off_centre_force_spins_the_body_as_r_cross_f():
    state, inertia = _rest()
    f = np.array([[0.0, 0.0, 10.0]])
    r = np.array([[0.2, 0.0, 0.0]])  # 0.2 m ahead of the CoM, pushing up: torque (0, -2, 0) N·m
    s = step(state, 5.0, inertia, f, r, 0.01)
    np.testing.assert_allclose(s.L, [0.0, -0.02, 0.0], atol=1e-15)
    np.testing.assert_allclose(angular_velocity(s, inertia), [0.0, -0.01, 0.0], atol=1e-6)
    with pytest.raises(ValueError, match="dt and mass"):
        step(state, 5.0, inertia, f, r, 0.0)


@pytest.mark.parametrize(
    "flag", [["--push_limit", "-1"], ["--evaluate", "-2"], ["--duration_s", "2.0"], ["--isaac", "-1"]]
)
def test_srbd_script_refuses_bad_counts(tmp_path, flag):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "srbd.py"
    spec = importlib.util.spec_from_file_location("srbd_cli", path)
    cli = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cli)
    with pytest.raises(ValueError, match="--isaac >= 0"):
        cli.main(["--out", str(tmp_path / "out"), *flag])
    assert not (tmp_path / "out").exists()  # refused before anything is written


def test_rotation_angle_is_exact_at_small_and_large_angles():
    # the validation's rotation error: the angle of so3_exp(w) is |w| (1e-7 rad where arccos of the trace loses it
    # to round-off, and 3.0 rad near pi); composing a turn with its inverse gives 0
    from realgap.envs.srbd.validate import rotation_angle

    for w in ([0.0, 0.0, 1e-7], [0.3, -0.4, 0.0], [0.0, 3.0, 0.0]):
        assert rotation_angle(so3_exp(np.array(w))) == pytest.approx(np.linalg.norm(w), rel=1e-9)
    r = so3_exp(np.array([0.2, 0.1, -0.3]))
    assert rotation_angle(r.T @ r) == pytest.approx(0.0, abs=1e-15)
