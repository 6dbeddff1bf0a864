"""A :class:`~realgap.envs.deploy.robot.Robot` over unitree_sdk2: the G1 driven through ``rt/lowcmd`` / ``rt/lowstate``.

Position mode: the runtime's targets and the export's kp/kd go to the motor drives (``MotorCmd_`` mode 1, ankles in
PR mode), joints mapped to motor slots by name (:func:`~realgap.envs.deploy.drivers.g1_dds.motor_indices`),
``mode_machine`` copied from the latest LowState, a CRC on every command. Safety, all latched (once damping, always
damping until restart):

- **connect**: no LowState within ``connect_timeout_s`` → :class:`RobotUnreachable` naming domain and interface.
  Then, before any command: the motion switcher (:mod:`~realgap.envs.deploy.drivers.g1_motion_switcher`: a
  high-level service holding the robot is released or refused); a LowState in AB ankle mode is refused; the stream's
  clock is chosen and its tick period checked (:mod:`~realgap.envs.deploy.drivers.g1_stream`: a mismatch refused).
- **soft start**: :meth:`soft_start` moves from the measured pose to the start pose with the export's gains.
- **pacing and watchdog**: on the *tick* clock a step ends when ``tick`` has advanced ``control_dt /
  tick_period_s`` per step (the robot's clock sets the pace); on the *arrival* clock (a tick that stands still, as
  Unitree's simulator sends) at absolute host-clock deadlines. No fresh state (a tick that advanced / a message that
  arrived) for ``watchdog_s`` → damping.
- **bad state** (:class:`~realgap.envs.deploy.drivers.g1_stream.StateStream`): invalid CRCs in a row, a non-unit
  quaternion, non-finite joints, a tick that goes backwards or jumps → damping naming the cause; bad states are never
  read.
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
is ever held. Why damping and not zero torque: kd > 0 lets a falling robot fold slowly instead of collapsing. Times
the driver reports are *control time*: completed control periods × ``control_dt`` (the robot's clock on the tick
clock), named as such.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from realgap.envs.deploy.drivers.g1_dds import (
    LOWCMD_TOPIC,
    LOWSTATE_TOPIC,
    MOTOR_ENABLE,
    LowStateCrc,
    motor_indices,
    quat_to_gravity_b,
    tilt_of,
)
from realgap.envs.deploy.drivers.g1_motion_switcher import check_and_release
from realgap.envs.deploy.drivers.g1_stream import (
    G1_TICK_PERIOD_S,
    G1_WATCHDOG_S,
    MAX_BAD_CRC,
    ClockChoice,
    StateStream,
    choose_clock,
)
from realgap.envs.deploy.robot import ImuState, JointState, Robot
from realgap.envs.format.protocol import BALANCE_PROTOCOL

MODE_PR = 0  # LowCmd_/LowState_.mode_pr: 0 = ankle pitch/roll (series) joints, 1 = AB (the parallel motors)
CONNECT_WINDOW_S = 0.25  # the stream is watched this long at connect to choose the clock and measure its periods
CONNECT_WINDOWS = 3  # windows watched before a refusal


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
        watchdog_s: Damping when no fresh state arrived for this long, s (default: see ``G1_WATCHDOG_S``).
        fall_tilt: Damping beyond this root tilt, rad (default: the balance protocol's fall tilt).
        damping_kd: Joint damping in damping mode, N·m·s/rad.
        tick_period_s: Time one LowState ``tick`` stands for, s (a real G1 and g1_dds_sim: 2 ms; 5 ms with
            ``g1_dds_sim --hidden_seed``); checked against the stream at connect.
        clock: ``"auto"`` (tick if it advances while connecting, else arrival), ``"tick"`` (a lockstep simulator,
            whose tick stands still until the first command) or ``"arrival"``.
        state_crc: Check the LowState CRC (``False`` only for a stream without one: Unitree's simulator).
        motion_switcher: ``"check"`` (refuse if a high-level service holds the robot), ``"release"`` (release it, as
            Unitree's example does) or ``"skip"`` (a simulator that does not serve it).
        record_timing: Keep the send time of every command and the receive time of every new tick.

    Raises:
        RobotUnreachable: No LowState within ``connect_timeout_s``.
        ValueError: The stream is refused (tick period, CRC, AB mode, motion service; the message says which).
    """

    command_mode = "position"
    simulated = False
    imu_body = "pelvis"

    def __init__(
        self,
        meta,
        domain: int = 0,
        interface: str = "lo",
        *,
        connect_timeout_s: float = 3.0,
        watchdog_s: float = G1_WATCHDOG_S,
        fall_tilt: float = BALANCE_PROTOCOL.fall_tilt_rad,
        damping_kd: float = 2.0,
        tick_period_s: float = G1_TICK_PERIOD_S,
        clock: str = "auto",
        state_crc: bool = True,
        motion_switcher: str = "check",
        record_timing: bool = False,
    ) -> None:
        from unitree_sdk2py.core.channel import ChannelFactoryInitialize, ChannelPublisher, ChannelSubscriber
        from unitree_sdk2py.idl.default import unitree_hg_msg_dds__LowCmd_
        from unitree_sdk2py.idl.unitree_hg.msg.dds_ import LowCmd_, LowState_
        from unitree_sdk2py.utils.crc import CRC

        if clock not in ("auto", "tick", "arrival") or motion_switcher not in ("check", "release", "skip"):
            raise ValueError(
                f"clock must be auto/tick/arrival and motion_switcher check/release/skip, got {clock!r}, "
                f"{motion_switcher!r}"
            )
        self._names = tuple(meta.joint_names)
        self._slots = motor_indices(self._names)
        self._dt = 1.0 / float(meta.rates.control_hz)
        self.tick_period_s = tick_period_s
        self._ticks_per_step = self._dt / tick_period_s  # may be fractional (200 Hz on a 500 Hz tick: 2.5)
        self._lower = np.array([-np.inf if v is None else v for v in meta.joint_pos_lower])
        self._upper = np.array([np.inf if v is None else v for v in meta.joint_pos_upper])
        self._peak = meta.joint_array("peak_torque")  # N·m, in self._names order (the export's)
        self._start = np.asarray(meta.default_joint_pos, dtype=float)
        self.watchdog_s, self.fall_tilt, self.damping_kd = watchdog_s, fall_tilt, damping_kd
        self._crc, self._cmd, self._state_crc = CRC(), unitree_hg_msg_dds__LowCmd_(), LowStateCrc()
        self._lock = threading.Lock()
        self._state = self._snap = None
        # a tick jump longer than the watchdog means states were lost for longer than we would tolerate silence
        self.stream = StateStream(state_crc, MAX_BAD_CRC, max(10, int(np.ceil(watchdog_s / tick_period_s))))
        self.record_timing = record_timing
        self.command_log: list[tuple[int, float]] = []  # (sequence number, send time on CLOCK_MONOTONIC s)
        self.state_log: list[tuple[int, float]] = []  # (tick, first receive time on CLOCK_MONOTONIC s)
        self.record_targets = False
        self.sent_targets: list[np.ndarray] = []  # with record_targets: each command's q as sent (float32 on the wire)
        self._window: list[tuple[int, float]] | None = None  # (tick, host time) of the connect window's states
        self._crc_zero = True  # every state so far carried crc = 0 (a stream without CRCs: Unitree's simulator)
        self.fault: str | None = None
        self.commands_sent = 0
        self._steps, self._step_tick, self._deadline0 = 0, 0, 0.0
        self.step_times: list[float] = []  # host clock at the end of each step, s (loop timing)
        self.steps_done = 0
        ChannelFactoryInitialize(domain, interface)
        self._pub = ChannelPublisher(LOWCMD_TOPIC, LowCmd_)  # matched while connecting: the first command arrives
        self._pub.Init()
        self._sub = ChannelSubscriber(LOWSTATE_TOPIC, LowState_)
        self._sub.Init(self._on_state, 10)
        self._wait_first_state(domain, interface, connect_timeout_s)
        if self._state.mode_pr != MODE_PR:
            raise ValueError(
                f"LowState reports mode_pr {self._state.mode_pr} (AB: the ankles' parallel motors); the driver reads "
                "and commands the ankles in PR mode (pitch/roll joints): refused"
            )
        self.connect_notes: list[str] = []
        if motion_switcher != "skip":  # before the first low-level command, as Unitree's example does
            self.connect_notes.append(check_and_release(motion_switcher == "release"))
        self.clock_choice = self._choose_clock(clock)
        self._snap = self._state

    def _wait_first_state(self, domain: int, interface: str, timeout_s: float) -> None:
        t0 = time.monotonic()
        while self._state is None:
            if self.stream.fault is not None:
                hint = ""
                if self._crc_zero and "CRC" in self.stream.fault:
                    hint = (
                        " (every state carries crc = 0: a stream without CRCs, as Unitree's simulator sends; "
                        "rehearse on it with --state_crc off)"
                    )
                raise ValueError(f"{LOWSTATE_TOPIC} refused at connect: {self.stream.fault}{hint}")
            if time.monotonic() - t0 > timeout_s:
                raise RobotUnreachable(
                    f"no {LOWSTATE_TOPIC} on DDS domain {domain}, interface '{interface}' within {timeout_s:g} "
                    "s: is the robot (or g1_dds_sim) running, on the same domain and interface?"
                )
            time.sleep(0.005)

    def _choose_clock(self, clock: str) -> ClockChoice:
        """Watch the stream for :data:`CONNECT_WINDOW_S`; the clock (``clock`` if not auto) and its checks. A window
        that fails the checks is watched again, up to :data:`CONNECT_WINDOWS` times (a simulator on a loaded host
        stalls now and then; a wrong tick period fails every window), and refused with every measurement."""
        failures = []
        for _ in range(CONNECT_WINDOWS):
            with self._lock:
                self._window = []
            time.sleep(CONNECT_WINDOW_S)
            with self._lock:
                window, self._window = self._window, None
            if self.stream.fault is not None:
                raise ValueError(f"{LOWSTATE_TOPIC} refused at connect: {self.stream.fault}")
            try:
                choice = choose_clock(window, self.tick_period_s, self._dt)
                break
            except ValueError as err:
                failures.append(str(err))
        else:
            raise ValueError(
                f"{LOWSTATE_TOPIC} refused at connect, {CONNECT_WINDOWS} windows of "
                f"{CONNECT_WINDOW_S:g} s: " + " | ".join(failures)
            )
        if clock != "auto" and clock != choice.clock:
            choice = ClockChoice(clock, choice.message_period_s, choice.tick_period_s, choice.states)
        with self._lock:
            self.stream.clock = choice.clock
            self.stream.fresh_time = time.monotonic()  # the state just read is fresh: the watchdog starts now
        return choice

    def _on_state(self, msg) -> None:
        now = time.monotonic()
        crc_ok = (not self.stream.check_crc) or self._state_crc(msg) == msg.crc
        ms = msg.motor_state
        finite = np.isfinite([ms[s].q for s in self._slots] + [ms[s].dq for s in self._slots]).all()
        with self._lock:
            self._crc_zero = self._crc_zero and msg.crc == 0
            previous = self.stream.last_tick
            quat = np.array(msg.imu_state.quaternion)
            if not self.stream.accept(int(msg.tick), crc_ok, quat, finite, now, int(msg.mode_pr)):
                return
            if self.record_timing and msg.tick != previous:
                self.state_log.append((int(msg.tick), now))
            if self._window is not None:
                self._window.append((int(msg.tick), now))
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
        return self._state_fault() or self._fall()

    def _state_fault(self) -> str | None:
        """A bad state (latched by the stream) or the watchdog, by name."""
        if self.stream.fault is not None:
            return self.stream.fault
        if time.monotonic() - self.stream.fresh_time > self.watchdog_s:
            what = "LowState tick advanced" if self.stream.clock == "tick" else "LowState arrived"
            return f"watchdog: no {what} for {self.watchdog_s * 1e3:g} ms ({self.stream.clock} clock)"
        return None

    def _fall(self) -> str | None:
        tilt = tilt_of(np.array(self._state.imu_state.quaternion))
        return f"fall: tilt {tilt:.2f} rad > {self.fall_tilt:g} rad" if tilt > self.fall_tilt else None

    def damp(self, reason: str | None = None) -> None:
        """Damping on every motor: kp = 0, kd = ``damping_kd``, zero velocity target (latched)."""
        if reason is not None and self.fault is None:
            self.fault = reason
        n = len(self._slots)
        self._write(self.read_joints().pos, np.zeros(n), np.zeros(n), np.full(n, self.damping_kd))

    def _write(self, q: np.ndarray, dq: np.ndarray, kp: np.ndarray, kd: np.ndarray) -> None:
        cmd = self._cmd
        cmd.mode_pr, cmd.mode_machine = MODE_PR, self._state.mode_machine
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
        """Wait for the next control period; raises :class:`SafetyStop` on a fault (damping already sent).

        Tick clock: until ``tick`` has advanced by ``control_dt / tick_period_s`` per step, counted from the soft
        start (why: a simulator slower than real time, or the robot's own clock, sets the pace; a host-clock sleep
        drifts against it). Arrival clock (the tick stands still): until the next absolute host-clock deadline, a
        deadline missed by more than a period moved to now (no burst of catch-up commands). Either way, no fresh
        state for ``watchdog_s`` or a bad state trips damping while waiting.
        """
        if self.fault is None:
            self._steps += 1
            due = round(self._steps * self._ticks_per_step)  # cumulative: the mean period is exact
            deadline = self._deadline0 + self._steps * self._dt
            if time.monotonic() - deadline > self._dt:
                self._deadline0 = time.monotonic() - self._steps * self._dt
                deadline = self._deadline0 + self._steps * self._dt
            while True:
                with self._lock:  # the tick and the state it came with, read together (the reader thread writes both)
                    tick, state = self.stream.last_tick, self._state
                    fault = self._state_fault()
                if fault is not None:
                    self.damp(fault)
                    break
                if self.stream.clock == "tick":
                    if (tick - self._step_tick) % 2**32 >= due:
                        break
                elif time.monotonic() >= deadline:
                    break
                time.sleep(0.0002)
            self.step_times.append(time.monotonic())
            self.steps_done += 1
            self._snap = state
        if self.fault is not None:
            raise SafetyStop(self.fault)

    @property
    def control_time_s(self) -> float:
        """Completed control periods × ``control_dt``, s: the driver's one clock for the times it prints."""
        return self.steps_done * self._dt

    # -- driver helpers ------------------------------------------------------------------------------------------
    def soft_start(self, kp: np.ndarray, kd: np.ndarray, duration_s: float = 1.0) -> None:
        """Move from the measured pose to the export's start pose over ``duration_s`` with the export's gains."""
        with self._lock:  # pace from here, not from the connection (no burst of catch-up commands first)
            self._step_tick, self._steps, self._deadline0 = self.stream.last_tick, 0, time.monotonic()
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

    # balance-episode helpers (episode.run_episode); the simulator pushes on its own schedule
    def reset(self) -> None:
        """Nothing to reset on a robot (the soft start brings it to the start pose)."""

    def root_height(self) -> float:
        """Not measured over DDS: ``inf`` (falls are judged by tilt)."""
        return float("inf")

    def tilt(self) -> float:
        return tilt_of(np.array(self._snap.imu_state.quaternion))

    def push(self, dv_xy) -> None:
        """Pushes come from the simulator's own schedule (a robot cannot be pushed by its driver)."""
