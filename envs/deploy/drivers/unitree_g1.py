"""A :class:`~realgap.envs.deploy.robot.Robot` over unitree_sdk2: the G1 driven through ``rt/lowcmd`` / ``rt/lowstate``.

Position mode: the runtime's targets and the export's kp/kd go to the motor drives (``MotorCmd_`` mode 1), joints
mapped to motor slots by name (:func:`~realgap.envs.deploy.drivers.g1_dds.motor_indices`), ``mode_machine`` copied
from the latest LowState, a CRC on every command. Safety, all latched (once damping, always damping until restart):

- **connect**: no LowState within ``connect_timeout_s`` → :class:`RobotUnreachable` naming domain and interface.
- **soft start**: :meth:`soft_start` moves from the measured pose to the start pose with the export's gains.
- **watchdog**: LowState ``tick`` unchanged for ``watchdog_s`` → damping (kp = 0, kd = ``damping_kd``); the loop is
  paced by ``tick`` (the robot's clock), so a stalled robot or link is noticed within ``watchdog_s``.
- **clamps**: targets clipped to the joint limits, and to ``q ± peak_torque / kp`` so the drive's PD torque stays in
  the envelope.
- **non-finite** target or gain → damping; **fall** (tilt > ``fall_tilt``) → damping; :meth:`damp` on Ctrl-C.

Readings (:meth:`read_joints`, :meth:`read_imu`, :meth:`read_torque`) are the LowState held at the end of the last
:meth:`step` (at connection: the first one), so one control period reads one state whenever a newer one arrives — as
the in-process robots do. Every command carries a sequence number in ``LowCmd_.reserve[0]`` (a field the SDK leaves
free; covered by the CRC); with ``record_timing`` the driver keeps each command's send time and each new tick's
receive time on ``CLOCK_MONOTONIC`` (:data:`command_log`, :data:`state_log`), which a simulator on the same machine
shares, so command-to-state latency is measured without a mock (:mod:`realgap.envs.deploy.drivers.latency`).

A fault raises :class:`SafetyStop` from :meth:`step` after the damping command is sent, so no stale high-gain target
is ever held. Why damping and not zero torque: kd > 0 lets a falling robot fold slowly instead of collapsing.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from realgap.envs.deploy.drivers.g1_dds import (
    LOWCMD_TOPIC,
    LOWSTATE_TOPIC,
    MOTOR_ENABLE,
    motor_indices,
    quat_to_gravity_b,
    tilt_of,
)
from realgap.envs.deploy.robot import ImuState, JointState, Robot


class RobotUnreachable(TimeoutError):
    """No LowState arrived: robot off, another DDS domain or interface."""


class SafetyStop(RuntimeError):
    """The driver switched to damping (the reason is the message)."""


class UnitreeG1Robot(Robot):
    """The G1 over DDS (see the module docstring for the safety rules).

    Args:
        meta: Exported metadata (joint order, gains, limits, start pose, rates).
        domain: DDS domain id (a real G1: 0).
        interface: Network interface the robot is on (``lo`` for a simulator on this machine).
        connect_timeout_s: Wait this long for the first LowState, s.
        watchdog_s: Damping when the LowState tick has not changed for this long, s.
        fall_tilt: Damping beyond this root tilt, rad.
        damping_kd: Joint damping in damping mode, N·m·s/rad.
        tick_period_s: Time one LowState ``tick`` stands for, s (g1_dds_sim: one physics step, 2 ms; 5 ms with
            ``--hidden_seed``).
        record_timing: Keep the send time of every command and the receive time of every new tick.
    """

    command_mode = "position"
    simulated = False
    imu_body = "pelvis"

    def __init__(self, meta, domain: int = 0, interface: str = "lo", *, connect_timeout_s: float = 3.0,
                 watchdog_s: float = 0.1, fall_tilt: float = 1.0, damping_kd: float = 2.0,
                 tick_period_s: float = 0.002, record_timing: bool = False) -> None:  # fmt: skip
        from unitree_sdk2py.core.channel import ChannelFactoryInitialize, ChannelPublisher, ChannelSubscriber
        from unitree_sdk2py.idl.default import unitree_hg_msg_dds__LowCmd_
        from unitree_sdk2py.idl.unitree_hg.msg.dds_ import LowCmd_, LowState_
        from unitree_sdk2py.utils.crc import CRC

        self._names = tuple(meta.joint_names)
        self._slots = motor_indices(self._names)
        self._dt = 1.0 / float(meta.rates.control_hz)
        self._ticks_per_step = self._dt / tick_period_s  # may be fractional (200 Hz on a 500 Hz tick: 2.5)
        self._lower = np.array([-np.inf if v is None else v for v in meta.joint_pos_lower])
        self._upper = np.array([np.inf if v is None else v for v in meta.joint_pos_upper])
        index = {n: i for i, n in enumerate(self._names)}
        self._peak = np.full(len(self._names), np.inf)
        for g in meta.actuator_groups:
            for j, n in enumerate(g.joint_names):
                self._peak[index[n]] = g.peak_torque[j]
        self._start = np.asarray(meta.default_joint_pos, dtype=float)
        self.watchdog_s, self.fall_tilt, self.damping_kd = watchdog_s, fall_tilt, damping_kd
        self._crc, self._cmd = CRC(), unitree_hg_msg_dds__LowCmd_()
        self._lock = threading.Lock()
        self._state = self._snap = None
        self.record_timing = record_timing
        self.command_log: list[tuple[int, float]] = []  # (sequence number, send time on CLOCK_MONOTONIC s)
        self.state_log: list[tuple[int, float]] = []  # (tick, first receive time on CLOCK_MONOTONIC s)
        self.record_targets = False
        self.sent_targets: list[np.ndarray] = []  # with record_targets: each command's q as sent (float32 on the wire)
        self._last_tick, self._tick_time = None, 0.0
        self.fault: str | None = None
        self.commands_sent = 0
        ChannelFactoryInitialize(domain, interface)
        self._pub = ChannelPublisher(LOWCMD_TOPIC, LowCmd_)
        self._pub.Init()
        self._sub = ChannelSubscriber(LOWSTATE_TOPIC, LowState_)
        self._sub.Init(self._on_state, 10)
        t0 = time.monotonic()
        while self._state is None:
            if time.monotonic() - t0 > connect_timeout_s:
                raise RobotUnreachable(
                    f"no {LOWSTATE_TOPIC} on DDS domain {domain}, interface '{interface}' within {connect_timeout_s:g} "
                    "s: is the robot (or g1_dds_sim) running, on the same domain and interface?"
                )
            time.sleep(0.005)
        self._snap = self._state
        self._step_tick, self._steps = self._last_tick, 0
        self.step_times: list[float] = []  # wall clock at the end of each step, s (loop timing)

    def _on_state(self, msg) -> None:
        with self._lock:
            if msg.tick != self._last_tick:
                self._last_tick, self._tick_time = msg.tick, time.monotonic()
                if self.record_timing:
                    self.state_log.append((int(msg.tick), self._tick_time))
            self._state = msg

    # -- Robot interface ---------------------------------------------------------------------------------------------
    @property
    def joint_names(self) -> tuple[str, ...]:
        return self._names

    @property
    def control_dt(self) -> float:
        return self._dt

    def read_joints(self) -> JointState:
        ms = self._snap.motor_state
        return JointState(np.array([ms[s].q for s in self._slots]), np.array([ms[s].dq for s in self._slots]))

    def read_imu(self) -> ImuState:
        imu = self._snap.imu_state
        return ImuState(np.array(imu.gyroscope, dtype=float), quat_to_gravity_b(np.array(imu.quaternion)))

    def read_torque(self) -> np.ndarray:
        """The drives' ``tau_est`` (their own torque estimate), N·m."""
        return np.array([self._snap.motor_state[s].tau_est for s in self._slots])

    def send_joint_targets(self, q_target: np.ndarray, qd_target: np.ndarray, kp: np.ndarray, kd: np.ndarray) -> None:
        """Send clamped targets, or damping when a safety rule trips (latched)."""
        if self.fault is None:
            self.fault = self._check(q_target, qd_target, kp, kd)
        if self.fault is not None:
            self.damp()
            return
        q = self.read_joints().pos
        span = np.asarray(self._peak) / np.maximum(kp, 1e-9)
        q_cmd = np.clip(np.clip(q_target, q - span, q + span), self._lower, self._upper)
        self._write(q_cmd, qd_target, kp, kd)

    def _check(self, q_target, qd_target, kp, kd) -> str | None:
        if not all(np.isfinite(a).all() for a in (q_target, qd_target, kp, kd)):
            return "non-finite target or gain"
        if time.monotonic() - self._tick_time > self.watchdog_s:
            return f"watchdog: no fresh LowState tick for {self.watchdog_s * 1e3:g} ms"
        tilt = tilt_of(np.array(self._state.imu_state.quaternion))
        if tilt > self.fall_tilt:
            return f"fall: tilt {tilt:.2f} rad > {self.fall_tilt:g} rad"
        return None

    def damp(self, reason: str | None = None) -> None:
        """Damping on every motor: kp = 0, kd = ``damping_kd``, zero velocity target (latched)."""
        if reason is not None and self.fault is None:
            self.fault = reason
        n = len(self._slots)
        self._write(self.read_joints().pos, np.zeros(n), np.zeros(n), np.full(n, self.damping_kd))

    def _write(self, q: np.ndarray, dq: np.ndarray, kp: np.ndarray, kd: np.ndarray) -> None:
        cmd = self._cmd
        cmd.mode_pr, cmd.mode_machine = 0, self._state.mode_machine
        for i, s in enumerate(self._slots):
            m = cmd.motor_cmd[s]
            m.mode, m.q, m.dq, m.tau = MOTOR_ENABLE, float(q[i]), float(dq[i]), 0.0
            m.kp, m.kd = float(kp[i]), float(kd[i])
        self.commands_sent += 1
        cmd.reserve[0] = self.commands_sent & 0xFFFFFFFF  # sequence number, 1, 2, ...
        cmd.crc = self._crc.Crc(cmd)
        if self.record_timing:
            self.command_log.append((self.commands_sent, time.monotonic()))
        if self.record_targets:
            self.sent_targets.append(np.array([cmd.motor_cmd[s].q for s in self._slots], dtype=np.float32))
        self._pub.Write(cmd)

    def step(self) -> None:
        """Wait for the next control period, paced by the robot's clock: until LowState ``tick`` has advanced by
        ``control_dt / tick_period_s`` per step, counted from the connection (why: a simulator slower than real
        time, or the robot's own clock, sets the pace; a wall-clock sleep drifts against it). A wait longer than
        ``watchdog_s`` trips the watchdog. Raises :class:`SafetyStop` on a fault (damping already sent)."""
        if self.fault is None:
            start = time.monotonic()
            self._steps += 1
            due = round(self._steps * self._ticks_per_step)  # cumulative: the mean period is exact
            while True:
                with self._lock:  # the tick and the state it came with, read together (the reader thread writes both)
                    advanced, state = (self._last_tick - self._step_tick) % 2**32 >= due, self._state
                if advanced:
                    break
                if time.monotonic() - start > self.watchdog_s:
                    self.damp(f"watchdog: LowState tick did not advance for {self.watchdog_s * 1e3:g} ms")
                    break
                time.sleep(0.0002)
            self.step_times.append(time.monotonic())
            self._snap = state
        if self.fault is not None:
            raise SafetyStop(self.fault)

    # -- driver helpers ------------------------------------------------------------------------------------------
    def soft_start(self, kp: np.ndarray, kd: np.ndarray, duration_s: float = 1.0) -> None:
        """Move from the measured pose to the export's start pose over ``duration_s`` with the export's gains."""
        with self._lock:  # pace from here, not from the connection (no burst of catch-up commands first)
            self._step_tick, self._steps = self._last_tick, 0
        q0 = self.read_joints().pos
        steps = max(1, int(round(duration_s / self._dt)))
        for k in range(1, steps + 1):
            a = 0.5 - 0.5 * np.cos(np.pi * k / steps)  # smooth: zero velocity at both ends
            self.send_joint_targets(q0 + a * (self._start - q0), np.zeros(len(q0)), kp, kd)
            self.step()

    def hold_damping(self, seconds: float = 0.5) -> None:
        """Send damping for ``seconds`` (before exit: the drives keep the last command they got)."""
        for _ in range(max(1, int(seconds / self._dt))):
            self.damp()
            time.sleep(self._dt)

    def close(self) -> None:
        """Stop receiving (joins the SDK's reader thread, so no callback runs while the interpreter exits)."""
        self._sub.Close()
        self._pub.Close()

    # balance-episode helpers (sim2sim.run_episode); the simulator pushes on its own schedule
    def reset(self) -> None:
        """Nothing to reset on a robot (the soft start brings it to the start pose)."""

    def root_height(self) -> float:
        """Not measured over DDS: ``inf`` (falls are judged by tilt)."""
        return float("inf")

    def tilt(self) -> float:
        return tilt_of(np.array(self._state.imu_state.quaternion))

    def push(self, dv_xy) -> None:
        """Pushes come from the simulator's own schedule (a robot cannot be pushed by its driver)."""
