"""Sim tier (MuJoCo C, no Isaac Lab): the six answers of docs/policy_format.md ("The grasp scene: what the fields do
not say"), each checked against the scene the runtime builds, :class:`MujocoGraspRobot` from the shipped export.

Training's side of the same answers: tests/sim/test_grasp_training_scene.py (the Isaac Lab env). Where the two
differ (when the friction is drawn: per env for a training run, per episode here) these tests pin the runtime's
behaviour as the page states it, so a change to either side is a change to the page.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

pytestmark = pytest.mark.sim
EXPORT = Path(__file__).resolve().parents[2] / "configs/policies/grasp_franka"


@pytest.fixture(scope="module")
def meta():
    from realgap.envs.deploy import load_policy

    return load_policy(EXPORT)[0]


@pytest.fixture
def robot(meta):
    from realgap.envs.deploy.grasp_scene import MujocoGraspRobot

    return MujocoGraspRobot(meta, seed=5)


def _joint(m: mujoco.MjModel, jid: int) -> str:
    return m.joint(jid).name


def box_inertia(mass: float, size: np.ndarray) -> np.ndarray:
    """Inertia of a solid box of ``mass`` (kg) and edges ``size`` (m) about its centre, box axes, kg·m²."""
    x, y, z = np.asarray(size, dtype=float) ** 2
    return mass / 12 * np.diag([y + z, x + z, x + y])


def test_the_finger_equality_is_kept(robot):
    """1. The MJCF's <equality joint1="finger_joint1" joint2="finger_joint2"> stays, with its own solref / solimp."""
    m = robot.model
    assert m.neq == 1 and m.eq_type[0] == mujoco.mjtEq.mjEQ_JOINT and m.eq_active0[0]
    assert (_joint(m, m.eq_obj1id[0]), _joint(m, m.eq_obj2id[0])) == ("finger_joint1", "finger_joint2")
    np.testing.assert_array_equal(m.eq_data[0, :5], [0, 1, 0, 0, 0])  # q1 = 0 + 1·q2: the fingers move as one
    np.testing.assert_allclose(m.eq_solref[0], [0.005, 1.0])
    np.testing.assert_allclose(m.eq_solimp[0], [0.95, 0.99, 0.001, 0.5, 2.0])
    # and it acts: a force on one finger alone moves both
    robot.data.qfrc_applied[robot.dof_adr[7]] = -5.0  # N, closing finger 1 only
    for _ in range(40):
        robot.send_torques(robot.data.qfrc_bias[robot.dof_adr])  # the arm held by g(q), no finger torque
        robot.step()
    q = robot.read_joints().pos
    assert q[7] < 0.035 and abs(q[7] - q[8]) < 2e-4, q[7:]


def test_pad_friction_goes_to_every_finger_geom_sliding_only_one_draw_each(robot, meta):
    """2. + 5. All 12 colliding finger geoms (hull + 5 pads per finger), sliding coefficient only, one uniform draw
    per geom per episode (as training's 12 per env); the object one draw per episode; every other geom keeps the MJCF's
    friction."""
    m, s = robot.model, meta.scene
    finger_bodies = ("left_finger", "right_finger")
    colliding = [g for g in range(m.ngeom) if m.geom_contype[g] or m.geom_conaffinity[g]]
    fingers = {g for g in colliding if m.body(m.geom_bodyid[g]).name in finger_bodies}
    assert set(robot._pads) == fingers and len(fingers) == 12
    boxes = [g for g in fingers if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX]
    assert len(boxes) == 10  # the pads; the other two are the finger hulls (meshes)
    others = [g for g in range(m.ngeom) if g not in fingers and g != robot._obj_geom]
    draws = []
    for _ in range(8):
        robot.reset()
        pads = m.geom_friction[robot._pads]
        assert len(set(pads[:, 0])) == 12  # one value per geom
        np.testing.assert_array_equal(pads[:, 1:], [[0.005, 0.0001]] * 12)  # torsional, rolling: the MJCF's
        assert (m.geom_condim[robot._pads] == 3).all()  # condim 3: torsional and rolling take no part anyway
        np.testing.assert_array_equal(m.geom_friction[others, 0], 1.0)  # the table, the arm: untouched
        draws.append((pads[0, 0], m.geom_friction[robot._obj_geom, 0]))
    pad, obj = np.array(draws).T
    assert (s.pad_friction[0] <= pad).all() and (pad <= s.pad_friction[1]).all()
    assert (s.object_friction[0] <= obj).all() and (obj <= s.object_friction[1]).all()
    assert len(set(pad)) == 8 and len(set(obj)) == 8  # redrawn at every reset (episode), not once


def test_the_com_shift_is_the_offset_and_the_inertia_is_trainings(robot, meta):
    """3. body_ipos is the drawn offset c (uniform per object axis, in the box frame); the inertia about it is
    training's (envs/dr/inertia_sampling.shift_com): I_C = I_box(m) + m(1 − f)/f·(|c|²·1 − c·cᵀ), f =
    com_moved_fraction, and a physical body (triangle inequality of the principal moments)."""
    m, s = robot.model, meta.scene
    f = s.object_com_moved_fraction
    ratios = []
    for _ in range(6):
        robot.reset()
        b, size = robot._obj_body, robot.size_m
        mass, c = float(m.body_mass[b]), m.body_ipos[b].copy()
        assert all(lo <= v <= hi for v, (lo, hi) in zip(c, s.object_com_shift_m, strict=True))
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, m.body_iquat[b])
        rot = rot.reshape(3, 3)
        full = rot @ np.diag(m.body_inertia[b]) @ rot.T  # the inertia about the CoM, box axes

        shift = mass * (1 - f) / f * (c @ c * np.eye(3) - np.outer(c, c))
        np.testing.assert_allclose(full, box_inertia(mass, size) + shift, rtol=1e-9, atol=1e-12)
        i1, i2, i3 = sorted(m.body_inertia[b])
        assert i1 + i2 >= i3 > 0
        # the shift acts in the dynamics: the CoM MuJoCo computes sits at c from the body origin (a compiled body
        # whose inertial frame was marked as its own frame would ignore body_ipos)
        xmat = robot.data.xmat[b].reshape(3, 3)
        np.testing.assert_allclose(robot.data.xipos[b] - robot.data.xpos[b], xmat @ c, atol=1e-12)
        ratios.append(float(np.abs(shift).max()))
    assert max(ratios) > 0  # the CoM shifts did move the inertia (the check is not of centred boxes only)


def test_success_drop_and_reflex_are_judged_once_per_policy_step(robot, meta):
    """4. The runtime judges an episode after each policy step's physics steps (the reflex on the peak arm speed of
    those physics steps: the next test)."""
    from realgap.envs.deploy import ZeroPolicy
    from realgap.envs.deploy.grasp_scene import run_grasp_episode
    from realgap.envs.deploy.runtime import DeployRuntime

    runtime = DeployRuntime(meta, robot, ZeroPolicy(meta.action_dim), seed=0)
    calls = {"physics": 0, "lift": 0, "reflex": 0}
    step, lift, reflex = robot.step, robot.object_lift_m, robot.arm_speed_exceeded

    def counted(name, fn):
        def wrapper():
            calls[name] += 1
            return fn()

        return wrapper

    robot.step, robot.object_lift_m = counted("physics", step), counted("lift", lift)
    robot.arm_speed_exceeded = counted("reflex", reflex)
    episode = run_grasp_episode(runtime, robot)
    assert episode.ended_by == "time_out" and episode.steps == meta.scene.episode_steps == 250
    decimation = round(meta.rates.physics_hz / meta.rates.policy_hz)
    assert decimation == 4 and calls == {"physics": 4 * 250, "lift": 250, "reflex": 250}


def test_the_reflex_sees_a_speed_between_two_policy_steps(robot):
    """The runtime's reflex reads the arm's peak speed over the physics steps since it last looked (a real Franka
    checks every 1 ms), not only the speed at the policy step."""
    robot.reset()
    v = robot.dof_adr[robot._arm[0]]  # joint 1 dof
    robot.data.qvel[v] = 3.0  # past its 2.175 rad/s
    robot.step()
    robot.data.qvel[:] = 0.0  # at rest again before the policy step ends
    robot.step()
    assert abs(robot.read_joints().vel[robot._arm]).max() < 2.175  # the speed now is within the limit ...
    assert robot.arm_speed_exceeded()  # ... but a physics step in between was not
    assert not robot.arm_speed_exceeded()  # the peak is cleared by the look


def test_gap_with_margin_zero_changes_no_force(meta):
    """6. The export's table and object carry margin 0, gap 0.01 m; the runtime builds them with gap 0. MuJoCo detects
    a pair's contacts within the margin and leaves those between margin and margin − gap out of the solver: with the
    export's gaps the object rests exactly where it does without them, under the same contact force."""
    from realgap.envs.deploy.grasp_scene import MujocoGraspRobot

    rows = {r["owner"]: r for r in meta.simulator["contacts"]["geoms"]}
    exported = {k: (rows[k]["margin_m"], rows[k]["gap_m"]) for k in ("Table", "Object")}
    assert exported == {"Table": (0.0, 0.01), "Object": (0.0, 0.01)}
    runs = []
    for gap in (0.0, 0.01):
        robot = MujocoGraspRobot(meta, seed=2, start_noise=False)
        m = robot.model
        assert m.geom_margin[m.geom("table").id] == 0.0 and m.geom_gap[robot._obj_geom] == 0.0  # as built
        m.geom_gap[[m.geom("table").id, robot._obj_geom]] = gap
        robot.reset()
        pair = {m.geom("table").id, robot._obj_geom}
        first, forces = None, []
        for k in range(200):  # 1 s: the object falls its 1 mm clearance and settles; the arm is held by g(q)
            robot.send_torques(robot.data.qfrc_bias[robot.dof_adr])
            robot.step()
            con = [
                i for i in range(robot.data.ncon) if {robot.data.contact[i].geom1, robot.data.contact[i].geom2} == pair
            ]
            if con and first is None:
                first = k
            force = np.zeros(6)
            for i in con:
                mujoco.mj_contactForce(m, robot.data, i, force)
                forces.append(force[0])
        runs.append((first, float(robot.data.xpos[robot._obj_body, 2]), float(sum(forces))))
    (first0, z0, f0), (first1, z1, f1) = runs
    assert first0 is not None and first1 is not None  # the object did reach the table in both
    assert z1 == pytest.approx(z0, abs=1e-9) and f1 == pytest.approx(f0, rel=1e-6)
