"""Robot kinematics and gravity torque on the export's own MJCF: what the runtime's task-space terms need.

MuJoCo C computes forward kinematics, the geometric Jacobian of a point on a body and the gravity torque g(q) of the
*nominal* robot (the description the export names, no payload, no object) from joint positions alone; the robot's
state never enters a simulation here (no contacts, no integration). Frames: everything is expressed in the robot's
root body frame (``robot.root_body``), as the training's task-space terms express it; quaternions (w, x, y, z).

Why MuJoCo: it reads the export's description as it is (no second robot model to keep in step) and is in the deploy
extra; the MJCF's masses, inertias and kinematics are those of the URDF training computed g(q) from (equal within
0.02 %, docs/policy_format.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a ⊗ b`` of two (w, x, y, z) quaternions."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return np.array(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ]
    )


def quat_conj(q: np.ndarray) -> np.ndarray:
    """Inverse of a unit (w, x, y, z) quaternion."""
    return np.array([q[0], -q[1], -q[2], -q[3]])


def quat_from_rotvec(v: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """``Exp(v)``: the rotation of angle ``|v|`` rad about ``v / |v|`` as (w, x, y, z); identity below ``eps`` rad (as
    Isaac Lab's ``apply_delta_pose``)."""
    angle = float(np.linalg.norm(v))
    if angle <= eps:
        return np.array([1.0, 0.0, 0.0, 0.0])
    q = np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * np.asarray(v) / angle])
    return q / np.linalg.norm(q)


def rotvec_from_quat(q: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """``Log(q)``: axis · angle, rad, of a (w, x, y, z) quaternion, taken with w ≥ 0 (angle in [0, π]), as Isaac Lab's
    ``axis_angle_from_quat`` (its Taylor branch below ``eps`` rad)."""
    q = -q if q[0] < 0 else q
    half = np.arctan2(np.linalg.norm(q[1:]), q[0])
    angle = 2.0 * half
    k = np.sin(half) / angle if abs(angle) > eps else 0.5 - angle * angle / 48.0
    return q[1:] / k


def rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``R(q) · v`` for a unit (w, x, y, z) quaternion."""
    return quat_mul(quat_mul(q, np.concatenate([[0.0], v])), quat_conj(q))[1:]


class RobotKinematics:
    """Forward kinematics, frame Jacobians and g(q) of the robot in ``mjcf_path``, in its root body frame.

    Args:
        mjcf_path: The robot description (MJCF) the export names.
        joint_names: Joint order of every ``q`` given (the export's ``joints.names``).
        root_body: The articulation's root body (``robot.root_body``): the frame of every result.

    Raises:
        ValueError: A joint or the root body is not in the MJCF.
    """

    def __init__(self, mjcf_path: str | Path, joint_names: Sequence[str], root_body: str) -> None:
        import mujoco

        self._mj = mujoco
        spec = mujoco.MjSpec.from_file(str(mjcf_path))
        for element in [*spec.actuators, *spec.keys]:  # the MJCF's servos and their keyframes play no part here
            spec.delete(element)
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        names = {self.model.joint(j).name for j in range(self.model.njnt)}
        missing = [j for j in joint_names if j not in names]
        if missing or mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, root_body) < 0:
            raise ValueError(f"{Path(mjcf_path).name}: no joints {missing} or no root body '{root_body}'")
        self.joint_names = tuple(joint_names)
        jid = [self.model.joint(j).id for j in joint_names]
        self._qadr = np.array([self.model.jnt_qposadr[j] for j in jid])
        self._dofadr = np.array([self.model.jnt_dofadr[j] for j in jid])
        self._root = self.model.body(root_body).id
        self._q: np.ndarray | None = None
        self._jacp, self._jacr = np.zeros((3, self.model.nv)), np.zeros((3, self.model.nv))

    def _set(self, q: np.ndarray) -> None:
        """Kinematics at joint positions ``q`` (computed once per distinct ``q``)."""
        q = np.asarray(q, dtype=np.float64)
        if self._q is not None and np.array_equal(q, self._q):
            return
        self.data.qpos[self._qadr] = q
        self.data.qvel[:] = 0.0
        self._mj.mj_kinematics(self.model, self.data)
        self._mj.mj_comPos(self.model, self.data)
        self._q = q.copy()

    def _root_pose(self) -> tuple[np.ndarray, np.ndarray]:
        return self.data.xpos[self._root].copy(), self.data.xmat[self._root].reshape(3, 3).copy()

    def frame_pose(
        self, q: np.ndarray, body: str, offset_pos: Sequence[float], offset_quat_wxyz: Sequence[float] = (1, 0, 0, 0)
    ) -> tuple[np.ndarray, np.ndarray]:
        """Position (m) and orientation (w, x, y, z) of the frame ``body`` ∘ offset in the root body frame.

        Shape:
            ``q`` ``(J,)`` → ``(3,)``, ``(4,)``.
        """
        self._set(q)
        b = self.model.body(body).id
        p0, r0 = self._root_pose()
        quat_w = self.data.xquat[b].copy()
        pos_w = self.data.xpos[b] + self.data.xmat[b].reshape(3, 3) @ np.asarray(offset_pos, dtype=np.float64)
        quat_root = np.zeros(4)
        self._mj.mju_mat2Quat(quat_root, r0.reshape(-1))
        quat_b = quat_mul(quat_mul(quat_conj(quat_root), quat_w), np.asarray(offset_quat_wxyz, dtype=np.float64))
        return r0.T @ (pos_w - p0), quat_b / np.linalg.norm(quat_b)

    def frame_jacobian(
        self, q: np.ndarray, body: str, offset_pos: Sequence[float], joints: Sequence[str]
    ) -> np.ndarray:
        """Geometric Jacobian of the point ``body`` ∘ offset, rows (linear; angular) in root body axes, columns the
        ``joints``: ``[v; ω] = J · q̇``.

        Shape:
            ``q`` ``(J,)`` → ``(6, len(joints))``.
        """
        self._set(q)
        b = self.model.body(body).id
        point = self.data.xpos[b] + self.data.xmat[b].reshape(3, 3) @ np.asarray(offset_pos, dtype=np.float64)
        self._mj.mj_jac(self.model, self.data, self._jacp, self._jacr, point, b)
        _, r0 = self._root_pose()
        cols = [self.model.jnt_dofadr[self.model.joint(j).id] for j in joints]
        return np.vstack([r0.T @ self._jacp[:, cols], r0.T @ self._jacr[:, cols]])

    def gravity(self, q: np.ndarray) -> np.ndarray:
        """g(q): the joint torque (N·m; N for slide joints) that holds the nominal robot still at ``q``.

        Shape:
            ``q`` ``(J,)`` → ``(J,)`` in :attr:`joint_names` order.
        """
        self._set(q)
        self._mj.mj_comVel(self.model, self.data)  # zero velocities: the bias force is gravity alone
        out = np.zeros(self.model.nv)
        self._mj.mj_rne(self.model, self.data, 0, out)
        return out[self._dofadr]
