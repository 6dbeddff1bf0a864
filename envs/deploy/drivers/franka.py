"""A Franka (Panda / FR3) over libfranka through franky-control: the deploy runtime's :class:`Robot` for the arm.

Command path: franky's client-side joint impedance controller (``JointImpedanceTrackingMotion``, libfranka's torque
interface at 1 kHz) tracks the runtime's joint targets with the export's own gains, ``tau = kp·(q* − q) + kd·(0 − q̇)``
plus the robot's internal gravity compensation (and Coriolis) — the training law ``tau = kp·(q* − q) − kd·q̇ + g(q)``;
the runtime sends a new reference every control period (the export's policy period). The fingers are the Franka Hand
through franky's ``Gripper`` as its own controller takes it (:class:`~realgap.envs.robots.panda.FrankaHand`): a
closing target grasps with ``gripper_force_n`` N at the trained finger speed towards width 0 (training's fingers
target 0 and stall on the object; a grasp stops at its target width, so a target at the object's size would not
squeeze a smaller one), an opening one moves to the open width. Every step records whether the hand holds an
object by libfranka's grasp rule on the measured width once the grasp has finished, with the window of the export's
object sizes (:func:`grasp_window`): closed on nothing, it does not. Frames: joint positions are the libfranka joint
angles (the MJCF's ``joint1..7`` zero and axes).

Safety (as the G1 driver):

- connect: no robot at ``hostname`` within ``connect_timeout_s`` → :class:`TimeoutError` naming it;
- joint limits: arm targets clipped to the intersection of the export's and the FR3's limits (:data:`FR3_LIMITS`);
- a non-finite target or gain, the robot leaving control (a reflex, a libfranka error), or the robot's clock
  standing still for ``watchdog_s`` → the motion is stopped (the robot holds where it is) and :class:`SafetyStop`
  is raised; faults are latched, so no later target is sent;
- the runtime's non-finite action and Ctrl-C end in :meth:`FrankaRobot.stop` (``run_franka``).

The control loop is paced by the robot's clock (``RobotState.time``): real time on a robot, the simulator's time on
franky-sim (which runs slower than real time on a loaded machine).
"""

from __future__ import annotations

import time

import numpy as np

from realgap.envs.deploy.robot import ImuState, JointState, Robot
from realgap.envs.format.metadata import PolicyMetadata
from realgap.envs.robots.panda import FRANKA_HAND

ARM_JOINTS = tuple(f"joint{i}" for i in range(1, 8))
FINGER_JOINTS = ("finger_joint1", "finger_joint2")
FR3_LIMITS = (
    (-2.7437, -1.7837, -2.9007, -3.0421, -2.8065, 0.5445, -3.0159),
    (2.7437, 1.7837, 2.9007, -0.1518, 2.8065, 4.5169, 3.0159),
)
"""FR3 joint position limits, rad (Franka's FR3 datasheet; the ``fr3.xml`` franky-sim ships has the same ranges). The
Panda's differ (joint 1: ±2.8973; joint 6: −0.0175..3.7525): the driver clips to the intersection."""
HAND_MAX_WIDTH_M = FRANKA_HAND.max_width_m


def grasp_window(meta: PolicyMetadata) -> tuple[float, float, float]:
    """The grasp detection's target width and (ε_inner, ε_outer), m: the window of the export's object widths across
    the fingers (its x and y edge ranges: the object's yaw is drawn, so either edge may face the pads); an export
    without scene facts counts any width from 0 to fully open."""
    if meta.scene is None:
        return 0.0, HAND_MAX_WIDTH_M, HAND_MAX_WIDTH_M
    (x_lo, x_hi), (y_lo, y_hi) = meta.scene.object_size_range_m[:2]
    return FRANKA_HAND.grasp_window(min(x_lo, y_lo), max(x_hi, y_hi))


class SafetyStop(RuntimeError):
    """The driver stopped the arm (the message says why)."""


class FrankaRobot(Robot):
    """The arm and hand of a Franka over franky (module docstring).

    Args:
        meta: The export (joint order ``joint1..7, finger_joint1, finger_joint2``; the Panda's limits).
        hostname: The robot's (or franky-sim's) FCI address.
        connect_timeout_s: Give up connecting after this long, s.
        watchdog_s: Stop when the robot's clock has not advanced for this long (wall clock), s.
        gripper_force_n: Grasp force of a closing command, N.
        gripper_speed_mps: Finger speed of gripper moves, m/s per finger (franky's and libfranka's ``speed``);
            ``None``: the speed the export's gripper term trained with (its ``speed``), else the hand's 0.05.

    Raises:
        TimeoutError: No robot at ``hostname`` within the timeout.
        ValueError: The export's joints are not the Franka's.
    """

    command_mode = "position"
    simulated = False
    gravity_compensated = True  # libfranka's torque interface adds g(q) inside the robot

    def __init__(
        self,
        meta: PolicyMetadata,
        hostname: str,
        connect_timeout_s: float = 3.0,
        watchdog_s: float = 0.5,
        gripper_force_n: float = 20.0,
        gripper_speed_mps: float | None = None,
    ) -> None:
        import franky

        if gripper_speed_mps is None:  # the hand as the policy trained with it (tasks/grasp/hand.py)
            trained = [t.params["speed"] for t in meta.actions.terms if "speed" in t.params]
            gripper_speed_mps = float(trained[0][0]) if trained else FRANKA_HAND.finger_speed_mps

        if tuple(meta.joint_names) != ARM_JOINTS + FINGER_JOINTS:
            raise ValueError(f"--robot franka drives {ARM_JOINTS + FINGER_JOINTS}; the export has {meta.joint_names}")
        hand = FRANKA_HAND
        if not (0 < gripper_force_n <= hand.peak_force_n and 0 < gripper_speed_mps <= hand.max_command_speed_mps):
            raise ValueError(
                f"gripper force must be in (0, {hand.peak_force_n:g}] N and speed in "
                f"(0, {hand.max_command_speed_mps:g}] m/s, got {gripper_force_n} N, {gripper_speed_mps} m/s"
            )
        self.grasp_window_m = grasp_window(meta)
        self._franky, self.meta, self.hostname = franky, meta, hostname
        self.watchdog_s, self.force_n, self.speed_mps = watchdog_s, gripper_force_n, gripper_speed_mps
        self.robot, self.gripper = self._connect(hostname, connect_timeout_s)
        lo = np.array([v if v is not None else -np.inf for v in meta.joint_pos_lower[:7]])
        hi = np.array([v if v is not None else np.inf for v in meta.joint_pos_upper[:7]])
        self.lower, self.upper = np.maximum(lo, FR3_LIMITS[0]), np.minimum(hi, FR3_LIMITS[1])
        self._motion = None
        self._grip_closed: bool | None = None  # the last hand command sent (None: none yet)
        self._grip_want: bool | None = None
        self._grip_future = None
        self.fault: str | None = None
        self.step_times: list[float] = []  # wall clock of every step, s
        self.robot_times: list[float] = []  # robot clock of every step, s
        self.tracking: list[np.ndarray] = []  # |q(k+1) − q*(k)| per arm joint, rad: what is left one period later
        self.commanded: list[np.ndarray] = []  # |q*(k) − q(k)| per arm joint, rad: the step each target asks for
        self._last_target: np.ndarray | None = None
        self.widths: list[float] = []
        self.grasped: list[bool] = []  # closed on an object of the export's sizes, per step (libfranka's rule)
        self._t = self.robot_time()

    def _connect(self, hostname: str, timeout_s: float) -> tuple:
        franky, deadline, last = self._franky, time.monotonic() + timeout_s, None
        while True:
            try:
                robot = franky.Robot(hostname, realtime_config=franky.RealtimeConfig.Ignore)
                return robot, franky.Gripper(hostname)
            except Exception as err:  # libfranka raises NetworkException / its own types while nobody answers
                last = err
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"no Franka at '{hostname}' within {timeout_s:g} s (libfranka: {last}); check the "
                    "FCI address, the network, and that FCI is activated in Desk"
                ) from last
            time.sleep(0.2)

    # -- Robot interface ---------------------------------------------------------------------------------------------
    @property
    def joint_names(self) -> tuple[str, ...]:
        return ARM_JOINTS + FINGER_JOINTS

    @property
    def control_dt(self) -> float:
        return self.meta.rates.policy_dt

    def read_joints(self) -> JointState:
        state = self.robot.current_joint_state
        half = self.gripper.width / 2
        return JointState(np.concatenate([state.position, [half, half]]), np.concatenate([state.velocity, [0.0, 0.0]]))

    def read_imu(self) -> ImuState:
        return ImuState(np.zeros(3), np.array([0.0, 0.0, -1.0]))  # fixed base, level

    def send_joint_targets(self, q_target: np.ndarray, qd_target: np.ndarray, kp: np.ndarray, kd: np.ndarray) -> None:
        if self.fault is not None:
            return
        if not (np.isfinite(q_target).all() and np.isfinite(kp).all() and np.isfinite(kd).all()):
            self.stop("non-finite target or gain")
            return
        franky = self._franky
        arm = np.clip(q_target[:7], self.lower, self.upper)
        if self._motion is None:  # one impedance controller for the whole episode, the export's arm gains
            self._motion = franky.JointImpedanceTrackingMotion(stiffness=kp[:7], damping=kd[:7])
            self._motion.set_reference(franky.JointReference(q=arm))
            self.robot.move(self._motion, asynchronous=True)
        else:
            self._motion.set_reference(franky.JointReference(q=arm))
        self._last_target = arm
        self.commanded.append(np.abs(arm - self.robot.current_joint_positions))
        self._grip_want = bool(np.mean(q_target[7:]) < HAND_MAX_WIDTH_M / 4)  # binary: close (0) vs open (0.04 m)
        self._command_gripper()

    def _command_gripper(self) -> None:
        """Send the wanted hand command once the previous one has finished (the hand runs one command at a time; a
        franky future must be kept until done, or dropping it waits for it)."""
        if self._grip_want == self._grip_closed or (self._grip_future is not None and not self._grip_future.wait(0)):
            return
        if self._grip_want:  # close towards 0 until the fingers stall on the object, then hold force_n
            self._grip_future = self.gripper.grasp_async(
                0.0, self.speed_mps, self.force_n, HAND_MAX_WIDTH_M, HAND_MAX_WIDTH_M
            )
        else:
            self._grip_future = self.gripper.move_async(HAND_MAX_WIDTH_M, self.speed_mps)
        self._grip_closed = self._grip_want

    def step(self) -> None:
        """Wait until the robot's clock has advanced one control period; raise :class:`SafetyStop` on a fault."""
        target, deadline = self._t + self.control_dt, time.monotonic() + self.watchdog_s
        last = self.robot_time()
        while True:
            if self.fault is not None:
                raise SafetyStop(self.fault)
            if self._motion is not None and not self.robot.is_in_control:
                self.stop(f"the robot left control ({self._errors()})")
                continue
            now = self.robot_time()
            if now >= target - 1e-4:
                break
            if now > last:
                last, deadline = now, time.monotonic() + self.watchdog_s
            elif time.monotonic() > deadline:
                self.stop(f"watchdog: the robot's clock stood still for {self.watchdog_s:g} s")
                continue
            time.sleep(0.0005)
        self._t = target
        self._command_gripper()
        self.step_times.append(time.monotonic())
        self.robot_times.append(now)
        width = float(self.gripper.width)
        self.widths.append(width)
        settled = self._grip_future is not None and self._grip_future.wait(0)  # libfranka judges a finished grasp
        self.grasped.append(bool(self._grip_closed and settled) and FRANKA_HAND.grasped(width, *self.grasp_window_m))
        if self._last_target is not None:
            self.tracking.append(np.abs(self.robot.current_joint_positions - self._last_target))

    # -- driver helpers ------------------------------------------------------------------------------------------------
    def robot_time(self) -> float:
        """The robot's clock, s."""
        return float(self.robot.state.time.to_sec())

    def _errors(self) -> str:
        try:
            return str(self.robot.state.last_motion_errors)
        except Exception as err:  # the state may be unreadable after a fault
            return f"state unreadable: {err}"

    def move_to_start(self, relative_dynamics: float = 0.3) -> None:
        """Open the hand and move the arm to the export's start pose (``joints.default_pos``) with franky's own
        motion generator, before the policy runs."""
        self.gripper.move(HAND_MAX_WIDTH_M, self.speed_mps)
        start = np.clip(np.asarray(self.meta.default_joint_pos[:7]), self.lower, self.upper)
        self.robot.relative_dynamics_factor = relative_dynamics
        self.robot.move(self._franky.JointMotion(start))
        self._grip_closed = False
        self._t = self.robot_time()

    def stop(self, reason: str) -> None:
        """Stop the arm's motion (the robot holds its pose) and latch ``reason`` as the fault."""
        self.fault = self.fault or reason
        try:
            self.robot.stop()
            self.robot.join_motion(timeout=1.0)
        except Exception:  # stopping must not raise: the robot may already have stopped on its own
            pass

    def close(self) -> None:
        """End of the run: stop the arm motion (no fault), let the hand's last command finish, and release franky's
        objects in order (motion, hand future, hand, robot: tearing them down at interpreter exit crashes)."""
        try:
            self.robot.stop()
            self.robot.join_motion(timeout=1.0)
            if self._grip_future is not None:
                self._grip_future.wait(5.0)
        except Exception:  # already stopped
            pass
        self._motion = self._grip_future = None
        self.gripper = self.robot = None
