"""The SRBD balance law, engine-free: the robot's state in, joint torques and PD targets out.

Every call, at the state ``(q, v)`` (pinocchio's free-flyer convention, :func:`pin_state`):

1. **Wrench on the single body** (PD in task space): ``F = M (Kp_c (c* − c) − Kd_c ċ) − M g`` and
   ``τ = I_c (Kp_R log(R* Rᵀ) − Kd_R ω)`` with ``c*`` over the centre of the soles (as they stood at the reset) at a
   height ramped from the reset's CoM height to the crouch's, and ``R*`` the pelvis upright at its reset yaw.
2. **Contact forces** (a QP, daqp through qpsolvers): the sole points below :data:`CONTACT_HEIGHT_M` share ``f_i``
   minimizing ``‖A f − [F; τ]‖²_W + ε ‖f‖²``, ``A = [𝟙 …; [r_i − c]× …]``, each ``f_i`` in the friction pyramid
   (``|f_x|, |f_y| ≤ μ f_z``, ``f_z ≥ 0``): point forces at the sole's corner spheres keep the CoP inside the soles.
3. **Joint torques** (pinocchio on the robot's MJCF): ``τ_j = [h(q, q̇) − J_cᵀ f]_joints``, the floating-base equation
   with ``q̈ = 0`` (gravity, Coriolis, and the chosen contact forces mapped through the contact Jacobians).
4. **PD targets** (:meth:`BalanceLaw.targets`): ``q* = q_nom + clip(τ_j, ±τ_peak) / kp``, so a joint PD servo with
   gain ``kp`` produces ``kp (q_nom − q) − kd q̇ + τ_j``; ``q_nom`` moves from the reset pose to the crouch over
   ``ramp_s``. The engine's own actuator chain (gains, delay, torque–speed envelope) turns the targets into torques.

The engines (MuJoCo: :mod:`realgap.envs.srbd.controller`; Isaac Lab: :mod:`realgap.envs.eval.srbd.lab`) only read
their state into :func:`pin_state` and write :meth:`BalanceLaw.targets` into their own action path. The state is the
simulator's: a perfect state estimate, which a robot does not have. Quaternions are realgap's (w, x, y, z)
(:mod:`realgap.envs.format`); pinocchio's (x, y, z, w) lives only inside its configuration ``q`` (:func:`pin_rotation`,
:meth:`BalanceLaw.pin_state`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from realgap.envs.robots.g1 import G1_CROUCH_JOINT_POS, G1_CROUCH_ROOT_HEIGHT, G1_FOOT_BODIES, G1_SOLE_POINTS_B
from realgap.envs.srbd.dynamics import GRAVITY_W, quat_to_matrix, skew, so3_exp, wxyz_from_xyzw, xyzw_from_wxyz

CONTACT_HEIGHT_M = 0.012
"""A sole sphere whose centre is below this height counts as touching the ground, m (sphere radius 5 mm)."""
DEFAULT_GAINS: dict[str, float] = {"kp_com": 40.0, "kd_com": 12.0, "kp_rot": 60.0, "kd_rot": 2.0}
"""Task-space gains: ``kp_com`` 1/s², ``kd_com`` 1/s, ``kp_rot`` 1/s², ``kd_rot`` 1/s (chosen on MuJoCo pushes,
docs/srbd.md)."""


def table_value(table: Mapping[str, float], name: str) -> float:
    """The value of a ``{full-match regex: value}`` table for ``name`` (0 where no pattern matches).

    Raises:
        ValueError: ``name`` matches more than one pattern.
    """
    hits = [v for pattern, v in table.items() if re.fullmatch(pattern, name)]
    if len(hits) > 1:
        raise ValueError(f"joint '{name}' matches {len(hits)} patterns of the table")
    return float(hits[0]) if hits else 0.0


def joint_index(source: Sequence[str], target: Sequence[str]) -> np.ndarray:
    """Indices ``idx`` with ``source[idx[k]] == target[k]``: reorders ``source``-ordered arrays into ``target`` order
    (engines list the same joints in different orders; matching is by exact name).

    Raises:
        ValueError: A name of ``target`` missing from ``source``, or a repeated name.
    """
    src, tgt = list(source), list(target)
    if len(set(src)) != len(src) or len(set(tgt)) != len(tgt):
        raise ValueError("joint names must be unique in both orders")
    if missing := [n for n in tgt if n not in src]:
        raise ValueError(f"joints {missing} are not among the source's {src}")
    return np.array([src.index(n) for n in tgt], dtype=int)


def log_so3(r: np.ndarray) -> np.ndarray:
    """The rotation vector of ``r`` (inverse of :func:`~realgap.envs.srbd.dynamics.so3_exp`), rad."""
    cos = np.clip((np.trace(r) - 1.0) / 2.0, -1.0, 1.0)
    theta = float(np.arccos(cos))
    v = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
    return 0.5 * v if theta < 1e-6 else theta / (2.0 * np.sin(theta)) * v


def pin_rotation(q: np.ndarray) -> np.ndarray:
    """The base rotation (world ← body) of pinocchio's free-flyer configuration ``q``, whose ``q[3:7]`` is pinocchio's
    ``(x, y, z, w)``: the one place the law reads that order."""
    return quat_to_matrix(wxyz_from_xyzw(q[3:7]))


@dataclass(frozen=True)
class Reference:
    """What the law holds over an episode, taken from the state at its reset (:meth:`BalanceLaw.reference`).

    Attributes:
        q_nom_start: Joint positions at the reset (the ramp's start), rad, the law's joint order. Shape: ``(J,)``.
        com_start: Whole-body CoM at the reset, m (world). Shape: ``(3,)``.
        support_centre: Centre of the sole points at the reset, m (world x, y). Shape: ``(2,)``.
        yaw0: Pelvis yaw at the reset, rad.
    """

    q_nom_start: np.ndarray
    com_start: np.ndarray
    support_centre: np.ndarray
    yaw0: float


class BalanceLaw:
    """Steps 1–4 of the module docstring on a pinocchio model of the robot's MJCF.

    Args:
        mjcf_path: The robot's MJCF (the file both engines simulate).
        joint_names: The law's joint order: torques, targets and ``q_nom`` are in it (the MuJoCo controller passes
            the export's, the Isaac Lab runner the articulation's).
        gains: Overrides of :data:`DEFAULT_GAINS`.
        mu: Friction coefficient of the QP's pyramid.
        ramp_s: Time to move the nominal pose and CoM height from the reset pose to the crouch, s.
    """

    def __init__(
        self,
        mjcf_path: str | Path,
        joint_names: Sequence[str],
        *,
        gains: Mapping[str, float] | None = None,
        mu: float = 0.6,
        ramp_s: float = 1.0,
    ) -> None:
        import pinocchio as pin

        if not mu > 0 or not ramp_s >= 0:
            raise ValueError(f"mu must be > 0 and ramp_s >= 0, got mu={mu}, ramp_s={ramp_s}")
        self.pin = pin
        self.gains = DEFAULT_GAINS | dict(gains or {})
        self.mu, self.ramp_s = float(mu), float(ramp_s)
        self.joint_names = tuple(joint_names)
        self.model = pin.buildModelFromMJCF(str(mjcf_path))
        if missing := [n for n in self.joint_names if not self.model.existJointName(n)]:
            raise ValueError(f"joints {missing} are not in {mjcf_path}")
        joints = [self.model.joints[self.model.getJointId(n)] for n in self.joint_names]
        self.vidx = np.array([j.idx_v for j in joints])
        self.qidx = np.array([j.idx_q for j in joints])
        self.frames: list[int] = []
        for body in G1_FOOT_BODIES:
            parent = self.model.getFrameId(body)
            frame = self.model.frames[parent]
            for k, p in enumerate(G1_SOLE_POINTS_B):
                placement = frame.placement * pin.SE3(np.eye(3), np.asarray(p, dtype=float))
                f = pin.Frame(f"{body}_sole{k}", frame.parentJoint, parent, placement, pin.FrameType.OP_FRAME)
                self.frames.append(self.model.addFrame(f))
        self.q_nom_end = np.array([table_value(G1_CROUCH_JOINT_POS, n) for n in self.joint_names])
        data = self.new_data()
        q = self.pin.neutral(self.model)
        q[:3] = (0.0, 0.0, G1_CROUCH_ROOT_HEIGHT)
        q[self.qidx] = self.q_nom_end
        self.crouch_com_z = float(pin.centerOfMass(self.model, data, q)[2])  # the crouch's CoM, feet on the ground

    def new_data(self):  # noqa: ANN201 - pinocchio.Data
        """A pinocchio ``Data`` for this model (one per simulated robot: it holds that robot's kinematics)."""
        return self.model.createData()

    def pin_state(
        self,
        base_pos_w: np.ndarray,
        base_quat_wxyz: np.ndarray,
        base_lin_vel_w: np.ndarray,
        base_ang_vel_w: np.ndarray,
        joint_pos: np.ndarray,
        joint_vel: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """pinocchio's ``q`` (nq,) and ``v`` (nv,) of a floating-base state: base position (m) and orientation
        (realgap's ``(w, x, y, z)``) in the world, the base origin's linear (m/s) and angular (rad/s) velocity in the
        world, joint positions (rad) and velocities (rad/s) in the law's joint order. pinocchio wants both base
        velocities in the base frame and its quaternion as ``(x, y, z, w)`` (:func:`xyzw_from_wxyz`, here only)."""
        q = np.zeros(self.model.nq)
        v = np.zeros(self.model.nv)
        rot = quat_to_matrix(base_quat_wxyz)
        xyzw = xyzw_from_wxyz(base_quat_wxyz)
        q[:3], q[3:7] = base_pos_w, xyzw / np.linalg.norm(xyzw)
        v[:3], v[3:6] = rot.T @ np.asarray(base_lin_vel_w), rot.T @ np.asarray(base_ang_vel_w)
        q[self.qidx], v[self.vidx] = joint_pos, joint_vel
        return q, v

    def reference(self, data, q: np.ndarray) -> Reference:  # noqa: ANN001 - pinocchio.Data
        """The :class:`Reference` of an episode that starts at ``q``."""
        pin = self.pin
        com = pin.centerOfMass(self.model, data, q).copy()
        pin.framesForwardKinematics(self.model, data, q)
        # over the centre of both soles as they stand at reset (fixed: a target that followed the points still on the
        # ground would walk the CoM off the toes as the heels lift)
        centre = np.array([data.oMf[f].translation[:2] for f in self.frames]).mean(axis=0)
        rot = pin_rotation(q)
        return Reference(q[self.qidx].copy(), com, centre, float(np.arctan2(rot[1, 0], rot[0, 0])))

    def ramp(self, t: float) -> float:
        """Progress of the ramp into the crouch ``t`` s after the reset, in [0, 1]."""
        return min(t / self.ramp_s, 1.0) if self.ramp_s > 0 else 1.0

    def torques(self, data, q: np.ndarray, v: np.ndarray, t: float, ref: Reference) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
        """Steps 1–3 at the state ``(q, v)``, ``t`` s after the reset: joint torques ``(J,)`` (N·m, the law's joint
        order) and the contact forces ``(C, 3)`` chosen at the touching sole points (N, world)."""
        pin, m, d = self.pin, self.model, data
        pin.forwardKinematics(m, d, q, v)
        pin.updateFramePlacements(m, d)
        pin.computeJointJacobians(m, d, q)
        com = pin.centerOfMass(m, d, q, v)
        vcom = d.vcom[0]
        mass = float(d.mass[0])
        pin.ccrba(m, d, q, v)
        inertia = d.Ig.inertia
        s = self.ramp(t)
        points = np.array([d.oMf[f].translation for f in self.frames])
        touching = points[:, 2] < CONTACT_HEIGHT_M
        target = ref.com_start.copy()
        target[:2] = ref.support_centre
        target[2] = (1 - s) * ref.com_start[2] + s * self.crouch_com_z
        g = self.gains
        force = mass * (g["kp_com"] * (target - com) - g["kd_com"] * vcom) - mass * GRAVITY_W
        rot = pin_rotation(q)
        rot_des = so3_exp(np.array([0.0, 0.0, ref.yaw0]))
        omega = rot @ v[3:6]
        torque = inertia @ (g["kp_rot"] * log_so3(rot_des @ rot.T) - g["kd_rot"] * omega)
        forces = self.distribute(points[touching] - com, np.concatenate([force, torque]))
        tau = pin.nonLinearEffects(m, d, q, v).copy()
        for f_w, frame in zip(forces, np.array(self.frames)[touching], strict=True):
            jac = pin.getFrameJacobian(m, d, int(frame), pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)[:3]
            tau -= jac.T @ f_w
        return tau[self.vidx], forces

    def distribute(self, r: np.ndarray, wrench: np.ndarray) -> np.ndarray:
        """Step 2: contact forces ``(C, 3)`` at points ``r`` (m, relative to the CoM) that best give ``wrench``
        ``[F; τ]`` (N, N·m); none where no point touches."""
        from qpsolvers import solve_qp

        n = len(r)
        if n == 0:
            return np.zeros((0, 3))
        a = np.vstack([np.hstack([np.eye(3)] * n), np.hstack([skew(ri) for ri in r])])
        weights = np.diag([1.0, 1.0, 1.0, 10.0, 10.0, 10.0])
        p = a.T @ weights @ a + 1e-4 * np.eye(3 * n)
        qv = -a.T @ weights @ wrench
        block = np.array(
            [[1.0, 0.0, -self.mu], [-1.0, 0.0, -self.mu], [0.0, 1.0, -self.mu], [0.0, -1.0, -self.mu], [0.0, 0.0, -1.0]]
        )  # |f_x| <= mu f_z, |f_y| <= mu f_z, f_z >= 0
        g = np.kron(np.eye(n), block)
        f = solve_qp(p, qv, g, np.zeros(len(g)), solver="daqp")
        return np.zeros((n, 3)) if f is None else f.reshape(n, 3)

    def targets(self, tau: np.ndarray, t: float, ref: Reference, kp: np.ndarray, peak: np.ndarray) -> np.ndarray:
        """Step 4: PD targets ``q* = q_nom(t) + clip(τ, ±peak) / kp`` (rad; ``kp`` N·m/rad and ``peak`` N·m per
        joint, the law's joint order)."""
        s = self.ramp(t)
        q_nom = (1 - s) * ref.q_nom_start + s * self.q_nom_end
        return q_nom + np.clip(tau, -peak, peak) / kp
