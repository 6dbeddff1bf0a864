"""The SRBD balance law (:mod:`realgap.envs.srbd.law`) on the MuJoCo G1, run through the deploy runtime's actuator
chain like a policy.

Every control period (5 ms) the law gets the simulator's state (a perfect state estimate, which a robot does not
have: stated wherever its figures are) and its PD targets ``q* = q_nom + τ_j / kp`` go into the runtime's targets,
so the export's own PD (its gains, delay, torque–speed envelope) produces ``kp (q_nom − q) − kd q̇ + τ_j``. This
module only reads MuJoCo's state (quaternion (w, x, y, z), realgap's order too; angular velocity in the body frame) into
the law's convention.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from realgap.envs.srbd.law import BalanceLaw


class SRBDController:
    """Drives a :class:`~realgap.envs.deploy.runtime.DeployRuntime` built with ``policy=None`` on a MuJoCo G1; has the
    runtime's ``meta``, ``reset()`` and ``step()`` so balance episodes (:mod:`realgap.envs.deploy.episode`) run it
    like a policy.

    Args:
        runtime: The runtime (its chain, gains and rates are the export's).
        robot: The MuJoCo robot the runtime drives (the base state is read from its simulator).
        gains: Overrides of the law's task-space gains (:data:`realgap.envs.srbd.law.DEFAULT_GAINS`).
        mu: Friction coefficient of the QP's pyramid.
        ramp_s: Time to move the nominal pose and CoM height from the start pose to the crouch, s.
    """

    def __init__(
        self,
        runtime: Any,
        robot: Any,
        *,
        gains: Mapping[str, float] | None = None,
        mu: float = 0.6,
        ramp_s: float = 1.0,
    ) -> None:
        self.runtime, self.robot, self.meta = runtime, robot, runtime.meta
        names = self.meta.joint_names
        self.law = BalanceLaw(robot.mjcf_path, names, gains=gains, mu=mu, ramp_s=ramp_s)
        self.data = self.law.new_data()
        self.kp = np.asarray(runtime.kp, dtype=float)
        self.peak = self.meta.joint_array("peak_torque", names)
        self.reset()

    def reset(self) -> None:
        """Back to the start: the runtime's chains, the law's clock, its reference from the robot's current pose."""
        self.runtime.reset()
        self.t = 0.0
        self.ref = self.law.reference(self.data, self.state()[0])
        self.last_forces = np.zeros((0, 3))

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        """The law's ``q``, ``v`` (:meth:`~realgap.envs.srbd.law.BalanceLaw.pin_state`) of MuJoCo's state: the free
        joint's quaternion is (w, x, y, z) like the law's, its linear velocity in the world, its angular velocity in the
        body frame."""
        d = self.robot.data
        rot = d.xmat[1].reshape(3, 3)
        joints = self.robot.read_joints()
        return self.law.pin_state(d.qpos[:3], d.qpos[3:7], d.qvel[:3], rot @ d.qvel[3:6], joints.pos, joints.vel)

    def joint_torques(self) -> np.ndarray:
        """The law's joint torques ``(J,)`` at the current state, the export's joint order, N·m."""
        q, v = self.state()
        tau, self.last_forces = self.law.torques(self.data, q, v, self.t, self.ref)
        return tau

    def step(self) -> None:
        """One policy period of the runtime: each control period, new torques become the PD targets."""
        for _ in range(self.runtime.steps_per_policy):
            self.runtime.q_target[:] = self.law.targets(self.joint_torques(), self.t, self.ref, self.kp, self.peak)
            self.runtime.control()
            self.t += float(self.robot.control_dt)
