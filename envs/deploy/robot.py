"""What the deploy runtime needs from a robot: joint encoders, an IMU on the root body, a command port, a clock.

A driver for real hardware implements :class:`Robot` over its SDK (e.g. Unitree's LowState/LowCmd); the MuJoCo
implementation in :mod:`realgap.envs.deploy.mujoco_robot` is the test robot. numpy only.

Frames and units: joint positions rad, velocities rad/s, torques N·m (m, m/s, N for prismatic joints), in
:attr:`Robot.joint_names` order, each the MJCF joint's own position (its zero, its axis). The IMU reports the angular
velocity of the body the metadata names (``observations.imu_body``, the articulation's root body: the G1's
``pelvis``) relative to the world, and the gravity direction, both in that body's frame (what Isaac Lab's
``base_ang_vel`` and ``projected_gravity`` observe); a robot whose IMU sits elsewhere must rotate its readings into
that frame. A guide to writing one: ``docs/new_robot.md``.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Literal

import numpy as np

CommandMode = Literal["torque", "position"]


@dataclass(frozen=True)
class JointState:
    """Encoder readings.

    Attributes:
        pos: Joint positions, rad.
        vel: Joint velocities, rad/s.

    Shape:
        Both ``(J,)`` in :attr:`Robot.joint_names` order.
    """

    pos: np.ndarray
    vel: np.ndarray


@dataclass(frozen=True)
class ImuState:
    """IMU readings of the policy's IMU body (``observations.imu_body``, the root body).

    Attributes:
        ang_vel_b: Angular velocity of the body relative to the world, in the body's own frame, rad/s (a gyro).
        projected_gravity_b: Unit vector along gravity in the body frame (``(0, 0, -1)`` when upright).

    Shape:
        Both ``(3,)``.
    """

    ang_vel_b: np.ndarray
    projected_gravity_b: np.ndarray


class Robot(abc.ABC):
    """A robot the deploy runtime can drive: read state, send a command, advance one control period.

    Attributes:
        command_mode: ``"torque"``: the runtime runs the training actuator chain and sends joint torques every
            control period (:meth:`send_torques`). ``"position"``: the robot runs its own joint servos; the runtime
            sends position targets with the training gains (:meth:`send_joint_targets`).
        simulated: True when the robot is a simulator with no command latency of its own: the runtime then
            reproduces the training command delay in its chain (and the chain's friction, if training modelled it
            there). A real robot's bus has its own latency, which must not be added twice.
        imu_body: The body the IMU readings refer to, when the robot knows it; the runtime refuses a policy that
            reads another body's (``None``: not checked).
        gravity_compensated: True when the robot's own joint controller adds the gravity torque g(q) (the Franka's
            does): a position robot may then run a policy whose action terms feed g(q) forward.
        hand_ramps: True when the robot's hand moves its fingers at the speed its driver passes on (a real Franka
            Hand); False when its finger servo takes each target at once, so the runtime moves the target at the
            export's finger speed itself. Default: True for a position robot, False for a torque robot (its finger
            PD is the runtime's).
    """

    command_mode: CommandMode = "torque"
    simulated: bool = False
    imu_body: str | None = None
    gravity_compensated: bool = False

    @property
    def hand_ramps(self) -> bool:
        """See the class's attributes; a subclass whose hand differs sets it as a class attribute."""
        return self.command_mode == "position"

    @property
    @abc.abstractmethod
    def joint_names(self) -> tuple[str, ...]:
        """Joint names in the order of every array the robot reads or takes."""

    @property
    @abc.abstractmethod
    def control_dt(self) -> float:
        """Period of one :meth:`step`, s (the physics step of a simulator, the command period of a real robot)."""

    @property
    def description_hash(self) -> str | None:
        """SHA-256 of the robot description the robot was built from (the rule of
        :mod:`realgap.envs.format.description`), when known (simulators); None otherwise."""
        return None

    @abc.abstractmethod
    def read_joints(self) -> JointState:
        """Latest joint encoder readings."""

    @abc.abstractmethod
    def read_imu(self) -> ImuState:
        """Latest IMU readings of the policy's IMU body (``observations.imu_body``), in that body's frame."""

    def send_torques(self, tau: np.ndarray) -> None:
        """Command joint torques, N·m, held until the next call.

        Shape:
            ``tau`` ``(J,)``.
        """
        raise NotImplementedError(f"{type(self).__name__} does not take torque commands")

    def send_joint_targets(self, q_target: np.ndarray, qd_target: np.ndarray, kp: np.ndarray, kd: np.ndarray) -> None:
        """Command joint position/velocity targets for the robot's own PD servos (rad, rad/s, N·m/rad, N·m·s/rad).

        Shape:
            Every argument ``(J,)``.
        """
        raise NotImplementedError(f"{type(self).__name__} does not take joint position targets")

    def read_torque(self) -> np.ndarray | None:
        """Joint torque the robot applied over the control period just stepped (e.g. from motor current), N·m; ``None``
        when it reports none (the default). Only position robots are asked: a torque robot's is what it was sent.

        Shape:
            ``(J,)``.
        """
        return None

    @abc.abstractmethod
    def step(self) -> None:
        """Advance one control period: integrate (simulator) or wait for the next control tick (hardware)."""
