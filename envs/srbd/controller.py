"""A model-based balance controller on the single rigid body, run through the same actuator chain as a policy.

Every control period (5 ms):

1. **Wrench on the single body** (PD in task space): ``F = M (Kp_c (c* − c) − Kd_c ċ) − M g`` and
   ``τ = I_c (Kp_R log(R* Rᵀ) − Kd_R ω)`` with ``c*`` over the centre of the soles at the crouch's CoM height and
   ``R*`` the pelvis upright at its start yaw.
2. **Contact forces** (a QP, daqp through qpsolvers): the sole points on the ground share ``f_i`` minimizing
   ``‖A f − [F; τ]‖² + ε ‖f‖²``, ``A = [𝟙 …; [r_i − c]× …]``, with each ``f_i`` in the friction pyramid
   (``|f_x|, |f_y| ≤ μ f_z``, ``f_z ≥ 0``): point forces at the sole's corner spheres keep the CoP inside the soles.
3. **Joint torques** (pinocchio on the same MJCF): ``τ_j = [h(q, q̇) − J_cᵀ f]_joints``, the floating-base equation
   with ``q̈ = 0`` (gravity, Coriolis, and the chosen contact forces mapped through the contact Jacobians).
4. **Through the actuator chain**: the joints' PD targets become ``q* = q_nom + τ_j / kp``, so the export's own
   PD (its gains, delay, torque–speed envelope) produces ``kp (q_nom − q) − kd q̇ + τ_j`` and the posture stays
   servoed to ``q_nom`` (the crouch, reached over a 1 s ramp from the start pose, as the shipped policy does).

The base state (pose, velocity) is read from the simulator: the controller assumes a perfect state estimate, which a
robot does not have (stated wherever its figures are).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from realgap.envs.robots.g1 import G1_CROUCH_JOINT_POS, G1_CROUCH_ROOT_HEIGHT, G1_FOOT_BODIES, G1_SOLE_POINTS_B
from realgap.envs.srbd.dynamics import GRAVITY_W, skew, so3_exp
from realgap.envs.srbd.model import _value

CONTACT_HEIGHT_M = 0.012
"""A sole sphere whose centre is below this height counts as touching the ground, m (sphere radius 5 mm)."""


def _log_so3(r: np.ndarray) -> np.ndarray:
    """The rotation vector of ``r`` (inverse of :func:`so3_exp`), rad."""
    cos = np.clip((np.trace(r) - 1.0) / 2.0, -1.0, 1.0)
    theta = float(np.arccos(cos))
    v = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
    return 0.5 * v if theta < 1e-6 else theta / (2.0 * np.sin(theta)) * v


class SRBDController:
    """Drives a :class:`~realgap.envs.deploy.runtime.DeployRuntime` built with ``policy=None`` on a MuJoCo G1; has the
    runtime's ``meta``, ``reset()`` and ``step()`` so balance episodes (:mod:`realgap.envs.deploy.sim2sim`) run it
    like a policy.

    Args:
        runtime: The runtime (its chain, gains and rates are the export's).
        robot: The MuJoCo robot the runtime drives (the base state is read from its simulator).
        gains: Task-space gains ``kp_com`` 1/s², ``kd_com`` 1/s, ``kp_rot`` 1/s², ``kd_rot`` 1/s.
        mu: Friction coefficient of the QP's pyramid.
        ramp_s: Time to move the nominal pose and CoM height from the start pose to the crouch, s.
    """

    def __init__(self, runtime, robot, *, gains: Mapping[str, float] | None = None, mu: float = 0.6,
                 ramp_s: float = 1.0) -> None:  # fmt: skip
        import pinocchio as pin

        self.runtime, self.robot, self.meta = runtime, robot, runtime.meta
        self.gains = {"kp_com": 40.0, "kd_com": 12.0, "kp_rot": 60.0, "kd_rot": 2.0} | dict(gains or {})
        self.mu, self.ramp_s = mu, ramp_s
        self.pin = pin
        self.model = pin.buildModelFromMJCF(str(robot.mjcf_path))
        self.data = self.model.createData()
        names = self.meta.joint_names
        self._vidx = np.array([self.model.joints[self.model.getJointId(n)].idx_v for n in names])
        self._qidx = np.array([self.model.joints[self.model.getJointId(n)].idx_q for n in names])
        self._frames = []
        for body in G1_FOOT_BODIES:
            parent = self.model.getFrameId(body)
            frame = self.model.frames[parent]
            for k, p in enumerate(G1_SOLE_POINTS_B):
                placement = frame.placement * pin.SE3(np.eye(3), np.asarray(p, dtype=float))
                f = pin.Frame(f"{body}_sole{k}", frame.parentJoint, parent, placement, pin.FrameType.OP_FRAME)
                self._frames.append(self.model.addFrame(f))
        self.data = self.model.createData()
        self.kp = np.asarray(runtime.kp, dtype=float)
        self.q_nom_end = np.array([_value(G1_CROUCH_JOINT_POS, n) for n in names])
        from realgap.envs.srbd.model import g1_model, posed_body

        crouch = posed_body(*g1_model(robot.mjcf_path), G1_CROUCH_JOINT_POS, (0.0, 0.0, G1_CROUCH_ROOT_HEIGHT))
        self.crouch_com_z = float(crouch.body.com_w[2])  # the CoM height of the crouch, feet on the ground
        self.peak = np.concatenate([np.asarray(g.peak_torque) for g in self.meta.actuator_groups])
        order = [j for g in self.meta.actuator_groups for j in g.joint_names]
        self.peak = self.peak[[order.index(j) for j in names]]
        self.reset()

    def reset(self) -> None:
        """Back to the start: the runtime's chains, the ramp's clock, the targets from the robot's current pose."""
        self.runtime.reset()
        self.t = 0.0
        self.q_nom_start = self.robot.read_joints().pos.copy()
        q, _ = self._state()
        self.pin.centerOfMass(self.model, self.data, q)
        self.com_start = self.data.com[0].copy()
        self.pin.framesForwardKinematics(self.model, self.data, q)
        # over the centre of both soles as they stand at reset (fixed: a target that followed the points still on the
        # ground would walk the CoM off the toes as the heels lift)
        self.support_centre = np.array([self.data.oMf[f].translation[:2] for f in self._frames]).mean(axis=0)
        self.yaw0 = float(np.arctan2(self.robot.data.xmat[1, 3], self.robot.data.xmat[1, 0]))
        self.last_forces = np.zeros((0, 3))

    def _state(self) -> tuple[np.ndarray, np.ndarray]:
        """pinocchio ``q``, ``v`` of the simulator's state (MuJoCo: quaternion wxyz, base linear velocity in the world;
        pinocchio: xyzw, both base velocities in the base frame)."""
        d = self.robot.data
        q = np.zeros(self.model.nq)
        v = np.zeros(self.model.nv)
        q[:3] = d.qpos[:3]
        w, x, y, z = d.qpos[3:7]
        q[3:7] = (x, y, z, w)
        rot = d.xmat[1].reshape(3, 3)
        v[:3] = rot.T @ d.qvel[:3]
        v[3:6] = d.qvel[3:6]
        joints = self.robot.read_joints()
        q[self._qidx], v[self._vidx] = joints.pos, joints.vel
        return q, v

    def joint_torques(self) -> np.ndarray:
        """Steps 1–3 of the module docstring at the current state: joint torques ``(J,)`` in the export's order, N·m."""
        pin, m, d = self.pin, self.model, self.data
        q, v = self._state()
        pin.forwardKinematics(m, d, q, v)
        pin.updateFramePlacements(m, d)
        pin.computeJointJacobians(m, d, q)
        com = pin.centerOfMass(m, d, q, v)
        vcom = d.vcom[0]
        mass = float(d.mass[0])
        pin.ccrba(m, d, q, v)
        inertia = d.Ig.inertia
        s = min(self.t / self.ramp_s, 1.0) if self.ramp_s > 0 else 1.0
        points = np.array([d.oMf[f].translation for f in self._frames])
        touching = points[:, 2] < CONTACT_HEIGHT_M
        target = self.com_start.copy()
        target[:2] = self.support_centre
        target[2] = (1 - s) * self.com_start[2] + s * self.crouch_com_z
        g = self.gains
        force = mass * (g["kp_com"] * (target - com) - g["kd_com"] * vcom) - mass * GRAVITY_W
        rot = self.robot.data.xmat[1].reshape(3, 3)
        rot_des = so3_exp(np.array([0.0, 0.0, self.yaw0]))
        omega = rot @ v[3:6]
        torque = inertia @ (g["kp_rot"] * _log_so3(rot_des @ rot.T) - g["kd_rot"] * omega)
        forces = self._distribute(points[touching] - com, np.concatenate([force, torque]))
        tau = pin.nonLinearEffects(m, d, q, v).copy()
        for f_w, frame in zip(forces, np.array(self._frames)[touching], strict=True):
            jac = pin.getFrameJacobian(m, d, int(frame), pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)[:3]
            tau -= jac.T @ f_w
        self.last_forces = forces
        return tau[self._vidx]

    def _distribute(self, r: np.ndarray, wrench: np.ndarray) -> np.ndarray:
        """Step 2: contact forces ``(C, 3)`` at points ``r`` (relative to the CoM) that best give ``wrench``."""
        from qpsolvers import solve_qp

        n = len(r)
        if n == 0:
            return np.zeros((0, 3))
        a = np.vstack([np.hstack([np.eye(3)] * n), np.hstack([skew(ri) for ri in r])])
        weights = np.diag([1.0, 1.0, 1.0, 10.0, 10.0, 10.0])
        p = a.T @ weights @ a + 1e-4 * np.eye(3 * n)
        qv = -a.T @ weights @ wrench
        rows = []
        for i in range(n):  # |f_x| <= mu f_z, |f_y| <= mu f_z, f_z >= 0
            for axis in (0, 1):
                for sign in (1.0, -1.0):
                    row = np.zeros(3 * n)
                    row[3 * i + axis], row[3 * i + 2] = sign, -self.mu
                    rows.append(row)
            row = np.zeros(3 * n)
            row[3 * i + 2] = -1.0
            rows.append(row)
        f = solve_qp(p, qv, np.array(rows), np.zeros(len(rows)), solver="daqp")
        return np.zeros((n, 3)) if f is None else f.reshape(n, 3)

    def step(self) -> None:
        """One policy period of the runtime: each control period, new torques become the PD targets (step 4)."""
        for _ in range(self.runtime.steps_per_policy):
            s = min(self.t / self.ramp_s, 1.0) if self.ramp_s > 0 else 1.0
            q_nom = (1 - s) * self.q_nom_start + s * self.q_nom_end
            tau = np.clip(self.joint_torques(), -self.peak, self.peak)
            self.runtime.q_target[:] = q_nom + tau / self.kp
            self.runtime.control()
            self.t += float(self.robot.control_dt)
