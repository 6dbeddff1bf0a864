"""The G1 LowState stream judged as it arrives: which clock paces the driver, which states are fresh, which are bad.

A real G1 stamps every LowState with ``tick`` (one per state, 500 Hz) and a CRC; Unitree's own MuJoCo bridge
(``unitree_mujoco``'s ``simulate_python``) leaves both 0. So the driver asks the stream, not a flag:

- **clock**: *tick* when ``tick`` advanced while connecting — freshness is a tick that advanced, pacing counts ticks;
  otherwise *arrival* — freshness is a message that arrived, pacing is the host's monotonic clock. A tick stream's
  period is measured on the host clock at connect and must match the expected one within
  :data:`TICK_PERIOD_TOLERANCE`, or the connection is refused (a wrong period would run the loop at the wrong rate).
- **bad states**, each a latched fault naming its cause: ``max_bad_crc`` invalid CRCs in a row (each one dropped,
  never read); a quaternion whose norm is off 1 by more than :data:`QUAT_NORM_TOLERANCE` (zero included); the AB
  ankle mode; a non-finite joint reading; on the tick clock, a tick that goes backwards or jumps by more than
  ``max_tick_jump``.

numpy only: the DDS reader thread calls :meth:`StateStream.accept` with plain numbers (tested without DDS).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# The real G1's LowState period: 2 ms (500 Hz). Source: Unitree's unitree_sdk2_python,
# example/g1/low_level/g1_low_level_example.py: its control_dt_ is 0.002 s and it prints the IMU once per 500
# LowStates ("counter_ % 500"), once a second at the robot's rate.
G1_TICK_PERIOD_S = 0.002
# measured/expected tick period outside [1/1.9, 1.9] is refused: 2 ms vs 5 ms (g1_dds_sim --hidden_seed) or vs 1 ms
# is a factor >= 2 and caught; a simulator at 53 % of real time (a loaded host: 2.6 ms measured) still passes
TICK_PERIOD_TOLERANCE = 1.9
# |‖q‖ − 1| beyond this is not an attitude: the IMU sends float32 unit quaternions (error ~1e-7)
QUAT_NORM_TOLERANCE = 0.05
# invalid state CRCs in a row before damping: one corrupt packet is dropped, three in a row is a broken link
MAX_BAD_CRC = 3
# the driver's damping after no fresh state, s: 0.1 s tripped on this project's loaded 2-core CI host (a process
# stalled > 0.1 s); 0.25 s is 50 control periods at 200 Hz and still inside the ~0.5 s a standing G1 takes to fall
G1_WATCHDOG_S = 0.25
TICK_MODULUS = 2**32


@dataclass(frozen=True)
class ClockChoice:
    """What the connect window showed: the clock the driver paces on and the measured periods.

    Attributes:
        clock: ``"tick"`` (the tick advanced) or ``"arrival"`` (it stood still: message arrival + host clock).
        message_period_s: Median host-clock time between states, s.
        tick_period_s: Host-clock time per tick, s (``None`` on the arrival clock).
        states: States seen in the window.
    """

    clock: str
    message_period_s: float
    tick_period_s: float | None
    states: int


def choose_clock(samples: list[tuple[int, float]], expected_tick_s: float, control_dt: float) -> ClockChoice:
    """The clock from the connect window's ``(tick, host time s)`` pairs, checked against the expectations.

    Raises:
        ValueError: Fewer than 3 states; a tick period off ``expected_tick_s`` by more than
            :data:`TICK_PERIOD_TOLERANCE`; on the arrival clock, states rarer than one per two control periods.
    """
    if len(samples) < 3:
        raise ValueError(f"only {len(samples)} LowStates in the connect window: the stream is too slow to control")
    ticks = np.array([s[0] for s in samples], dtype=np.int64)
    t = np.array([s[1] for s in samples], dtype=float)
    message_s = float(np.median(np.diff(t)))
    advanced = int((ticks[-1] - ticks[0]) % TICK_MODULUS)
    if advanced == 0:
        if message_s > 2 * control_dt:
            raise ValueError(
                f"LowState arrives every {message_s * 1e3:.1f} ms with a tick that stands still: slower than the "
                f"control period {control_dt * 1e3:g} ms, the policy would act on stale states"
            )
        return ClockChoice("arrival", message_s, None, len(samples))
    tick_s = float((t[-1] - t[0]) / advanced)
    ratio = tick_s / expected_tick_s
    if not 1 / TICK_PERIOD_TOLERANCE <= ratio <= TICK_PERIOD_TOLERANCE:
        raise ValueError(
            f"LowState tick measured {tick_s * 1e3:.2f} ms per tick on the host clock, expected "
            f"{expected_tick_s * 1e3:g} ms (--tick_period_s; a real G1: {G1_TICK_PERIOD_S * 1e3:g} ms): refused, a "
            "wrong period runs the control loop at the wrong rate"
        )
    return ClockChoice("tick", message_s, tick_s, len(samples))


class StateStream:
    """Judges each LowState (called from the DDS reader thread; the driver holds its lock).

    Args:
        check_crc: Verify the state CRC (``False`` only for a stream that carries none: Unitree's simulator).
        max_bad_crc: Invalid CRCs in a row that make a fault.
        max_tick_jump: On the tick clock, a tick advancing by more than this is a fault (states were lost).
    """

    def __init__(self, check_crc: bool = True, max_bad_crc: int = MAX_BAD_CRC, max_tick_jump: int = 1000) -> None:
        self.check_crc, self.max_bad_crc, self.max_tick_jump = check_crc, max_bad_crc, max_tick_jump
        self.clock = "arrival"  # set by the driver after the connect window (choose_clock)
        self.bad_crc_run = self.bad_crc_total = self.accepted = 0
        self.last_tick: int | None = None
        self.fresh_time = -math.inf  # host time of the last fresh state, s (tick advanced / message arrived)
        self.fault: str | None = None

    def accept(
        self, tick: int, crc_ok: bool, quat: np.ndarray, joints_finite: bool, now: float, mode_pr: int = 0
    ) -> bool:
        """Judge one state arriving at host time ``now``; ``True`` if the driver may read it (a fault latches in
        :attr:`fault` and the state is not taken). ``mode_pr`` 1 (AB: the ankles' parallel motors) is a fault: the
        driver reads and commands pitch/roll joints."""
        if self.check_crc and not crc_ok:
            self.bad_crc_run += 1
            self.bad_crc_total += 1
            if self.bad_crc_run >= self.max_bad_crc and self.fault is None:
                self.fault = f"state CRC: {self.bad_crc_run} invalid LowState CRCs in a row"
            return False
        self.bad_crc_run = 0
        norm = float(np.linalg.norm(quat))
        if not abs(norm - 1.0) <= QUAT_NORM_TOLERANCE:  # also NaN
            self.fault = self.fault or f"bad IMU quaternion {np.round(quat, 4).tolist()} (norm {norm:.4f}, not 1)"
            return False
        if mode_pr != 0:
            self.fault = self.fault or f"LowState in AB ankle mode (mode_pr {mode_pr}): the driver reads PR joints"
            return False
        if not joints_finite:
            self.fault = self.fault or "non-finite joint position or velocity in LowState"
            return False
        if self.clock == "tick" and self.last_tick is not None:
            step = (tick - self.last_tick) % TICK_MODULUS
            if step >= TICK_MODULUS // 2:
                self.fault = self.fault or f"LowState tick went backwards: {self.last_tick} -> {tick}"
                return False
            if step > self.max_tick_jump:
                self.fault = self.fault or (
                    f"LowState tick jumped by {step} (> {self.max_tick_jump}): {self.last_tick} -> {tick}"
                )
                return False
            if step > 0:
                self.fresh_time = now
        else:
            self.fresh_time = now
        self.last_tick = tick
        self.accepted += 1
        return True
