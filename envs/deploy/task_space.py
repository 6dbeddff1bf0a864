"""The ``ee_pose_delta`` action term on a robot: the training's differential IK law in numpy, on the export's MJCF.

Each policy step the term sets a target pose of the controlled frame (``params.body`` ∘ ``params.body_offset``, the
tool centre point) from the frame's pose then; each control period it turns the pose error at the measured joint
positions into joint position targets by damped least squares, and adds the nominal gravity torque — the law of Isaac
Lab's ``DifferentialInverseKinematicsAction`` (``command_type="pose"``, relative mode, ``ik_method="dls"``) and of
realgap's gravity feed-forward, term for term (the export's ``equation``):

- policy step: ``d = offset + scale · a``; ``p* = p + d[0:3]``, ``R* = Exp(d[3:6]) · R``;
- control period: ``e = (p* − p, Log(R* · Rᵀ))``, ``dq = Jᵀ (J Jᵀ + λ² I)⁻¹ e``, ``q_target = q + dq``,
  ``tau_ff = g(q)``.

Poses and the Jacobian are in the root body frame. On a torque robot stepping at the training physics rate the IK runs
every physics step, as in training; on a position robot it runs every control period of that robot.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from realgap.envs.deploy.kinematics import RobotKinematics, quat_conj, quat_from_rotvec, quat_mul, rotvec_from_quat

SUPPORTED_IK = {"method": "dls", "command_type": "pose", "use_relative_mode": True}
"""The IK configuration the runtime implements; any other is refused (see :func:`check_ik_params`)."""


class UnsupportedIkError(ValueError):
    """An ``ee_pose_delta`` configuration the runtime does not implement (names the field and its value)."""


def check_ik_params(name: str, params: Mapping[str, Any], feed_forward: Mapping[str, Any] | None) -> None:
    """Refuse what :class:`EePoseDeltaTerm` would not run exactly as training did.

    Raises:
        UnsupportedIkError: IK method other than ``dls``, a non-pose or absolute command, an orientation weight, a
            joint-limit avoidance gain > 0, or a feed-forward other than gravity.
    """
    ik = params.get("ik") or {}
    ctrl = ik.get("controller") or {}
    got = {
        "method": ik.get("method"),
        "command_type": ctrl.get("command_type"),
        "use_relative_mode": ctrl.get("use_relative_mode"),
    }
    bad = [f"{k}={v!r} (runs {SUPPORTED_IK[k]!r})" for k, v in got.items() if v != SUPPORTED_IK[k]]
    if ctrl.get("orientation_weight") is not None:
        bad.append(f"orientation_weight={ctrl['orientation_weight']!r} (runs none)")
    if float(ctrl.get("joint_limit_avoidance_gain") or 0.0) > 0.0:
        bad.append(f"joint_limit_avoidance_gain={ctrl['joint_limit_avoidance_gain']!r} (runs 0)")
    lam = (ik.get("params") or {}).get("lambda_val")
    if not (isinstance(lam, int | float) and lam >= 0):
        bad.append(f"ik.params.lambda_val={lam!r} (a damping >= 0)")
    if feed_forward is not None and feed_forward.get("type") != "gravity":
        bad.append(f"feed_forward type {feed_forward.get('type')!r} (runs 'gravity' or none)")
    if bad:
        raise UnsupportedIkError(f"action term '{name}' (ee_pose_delta): the runtime cannot run {'; '.join(bad)}")


class EePoseDeltaTerm:
    """One ``ee_pose_delta`` term (module docstring).

    Args:
        name: The term's name (for messages).
        params: The term's exported ``params`` (body, body_offset, scale, offset, ik).
        feed_forward: The term's exported ``feed_forward`` (``None`` or gravity).
        kinematics: The robot's kinematics in the export's joint order.
        cols: Columns of the term's joints in that order.

    Raises:
        UnsupportedIkError: From :func:`check_ik_params`.
    """

    def __init__(
        self,
        name: str,
        params: Mapping[str, Any],
        feed_forward: Mapping[str, Any] | None,
        kinematics: RobotKinematics,
        cols: np.ndarray,
    ) -> None:
        check_ik_params(name, params, feed_forward)
        self.kin, self.cols = kinematics, cols
        self.joints = tuple(kinematics.joint_names[c] for c in cols)
        self.body = str(params["body"])
        offset = params.get("body_offset") or {}
        self.offset_pos = np.asarray(offset.get("pos", (0.0, 0.0, 0.0)), dtype=np.float64)
        self.offset_quat = np.asarray(offset.get("quat_wxyz", (1.0, 0.0, 0.0, 0.0)), dtype=np.float64)
        self.scale = np.asarray(params["scale"], dtype=np.float64)
        self.offset = np.asarray(params["offset"], dtype=np.float64)
        self.lam2 = float(params["ik"]["params"]["lambda_val"]) ** 2
        self.gravity = feed_forward is not None
        self.pos_des: np.ndarray | None = None
        self.quat_des: np.ndarray | None = None

    def pose(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The controlled frame's position (m) and orientation (w, x, y, z) in the root frame at joints ``q``."""
        return self.kin.frame_pose(q, self.body, self.offset_pos, self.offset_quat)

    def set_command(self, a: np.ndarray, q: np.ndarray) -> None:
        """Policy step: the target pose from ``a`` (this term's slice of the clipped action) and the measured ``q``."""
        d = self.offset + self.scale * np.asarray(a, dtype=np.float64)
        pos, quat = self.pose(q)
        self.pos_des = pos + d[0:3]
        self.quat_des = quat_mul(quat_from_rotvec(d[3:6]), quat)

    def track(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Control period: joint position targets and feed-forward torque of the term's joints at the measured ``q``.

        Shape:
            ``q`` ``(J,)`` (every joint) → ``(n,)``, ``(n,)`` for the term's n joints.
        """
        if self.pos_des is None:
            raise RuntimeError("ee_pose_delta: track() before the first set_command()")
        pos, quat = self.pose(q)
        err = np.concatenate([self.pos_des - pos, rotvec_from_quat(quat_mul(self.quat_des, quat_conj(quat)))])
        jac = self.kin.frame_jacobian(q, self.body, self.offset_pos, self.joints)
        dq = jac.T @ np.linalg.solve(jac @ jac.T + self.lam2 * np.eye(6), err)
        tau = self.kin.gravity(q)[self.cols] if self.gravity else np.zeros(len(self.cols))
        return q[self.cols] + dq, tau
