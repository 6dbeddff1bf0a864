"""The G1 LowState stream rules (g1_stream): which clock, which tick period is refused, which states are bad.

Plain numbers, no DDS: the two-process tests (tests/slow/test_g1_dds_bridge.py, test_g1_dds_unitree.py) run the same
rules over loopback against g1_dds_sim in both of its behaviours.
"""

from __future__ import annotations

import numpy as np
import pytest

from realgap.envs.deploy.drivers.g1_stream import (
    G1_TICK_PERIOD_S,
    MAX_BAD_CRC,
    TICK_PERIOD_TOLERANCE,
    StateStream,
    choose_clock,
)

pytestmark = pytest.mark.unit
UNIT_Q = np.array([1.0, 0.0, 0.0, 0.0])
CONTROL_DT = 0.005  # balance_g1: 200 Hz


def _stream(ticks: list[int], period_s: float) -> list[tuple[int, float]]:
    return [(k, 10.0 + i * period_s) for i, k in enumerate(ticks)]


def test_a_tick_that_advances_chooses_the_tick_clock_and_measures_its_period() -> None:
    c = choose_clock(_stream(list(range(100, 225)), 0.002), G1_TICK_PERIOD_S, CONTROL_DT)
    # 124 ticks in 124 × 2 ms: 2 ms per tick
    assert c.clock == "tick" and c.tick_period_s == pytest.approx(0.002) and c.states == 125


def test_unitrees_bridge_tick_0_chooses_the_arrival_clock() -> None:
    c = choose_clock(_stream([0] * 50, 0.005), G1_TICK_PERIOD_S, CONTROL_DT)  # unitree_mujoco: 5 ms, tick 0
    assert c.clock == "arrival" and c.tick_period_s is None and c.message_period_s == pytest.approx(0.005)


@pytest.mark.parametrize(("true_s", "said_s"), [(0.005, 0.002), (0.002, 0.005), (0.001, 0.002)])
def test_a_wrong_tick_period_is_refused_not_followed(true_s: float, said_s: float) -> None:
    with pytest.raises(ValueError, match="refused, a wrong period runs the control loop at the wrong rate"):
        choose_clock(_stream(list(range(60)), true_s), said_s, CONTROL_DT)


def test_a_simulator_somewhat_behind_real_time_still_passes() -> None:
    slow = 0.002 * (TICK_PERIOD_TOLERANCE - 0.05)  # within the tolerance: a loaded host
    assert choose_clock(_stream(list(range(60)), slow), 0.002, CONTROL_DT).clock == "tick"


def test_a_standing_tick_with_states_rarer_than_the_control_period_is_refused() -> None:
    with pytest.raises(ValueError, match="slower than the control period"):
        choose_clock(_stream([0] * 10, 0.02), G1_TICK_PERIOD_S, CONTROL_DT)  # 50 Hz states, 200 Hz control
    with pytest.raises(ValueError, match="only 2 LowStates"):
        choose_clock(_stream([0, 1], 0.002), G1_TICK_PERIOD_S, CONTROL_DT)


def test_invalid_crcs_are_dropped_and_refused_after_the_stated_number_in_a_row() -> None:
    s = StateStream(check_crc=True)
    assert not s.accept(1, False, UNIT_Q, True, 0.0)  # dropped, not yet a fault
    assert s.accept(2, True, UNIT_Q, True, 0.001) and s.bad_crc_run == 0  # a good one resets the run
    for k in range(MAX_BAD_CRC - 1):
        assert not s.accept(3 + k, False, UNIT_Q, True, 0.002) and s.fault is None
    assert not s.accept(9, False, UNIT_Q, True, 0.003)
    assert s.fault == f"state CRC: {MAX_BAD_CRC} invalid LowState CRCs in a row" and s.bad_crc_total == MAX_BAD_CRC + 1


def test_crc_off_takes_states_without_a_crc() -> None:
    s = StateStream(check_crc=False)
    assert s.accept(0, False, UNIT_Q, True, 0.0) and s.fault is None


@pytest.mark.parametrize(
    ("quat", "why"),
    [([0.0, 0.0, 0.0, 0.0], "norm 0.0000"), ([2.0, 0.0, 0.0, 0.0], "norm 2.0000"), ([np.nan, 0, 0, 1], "norm nan")],
)
def test_a_quaternion_that_is_not_a_rotation_is_a_fault(quat: list[float], why: str) -> None:
    s = StateStream()
    assert not s.accept(1, True, np.array(quat), True, 0.0)
    assert s.fault.startswith("bad IMU quaternion") and why in s.fault


def test_a_state_in_ab_ankle_mode_is_a_fault() -> None:
    s = StateStream()
    assert s.accept(1, True, UNIT_Q, True, 0.0, mode_pr=0)
    assert not s.accept(2, True, UNIT_Q, True, 0.002, mode_pr=1) and "AB ankle mode (mode_pr 1)" in s.fault


def test_non_finite_joints_are_a_fault() -> None:
    s = StateStream()
    assert not s.accept(1, True, UNIT_Q, False, 0.0) and "non-finite joint" in s.fault


def test_on_the_tick_clock_a_tick_backwards_or_a_jump_is_a_fault_and_a_repeat_is_not_fresh() -> None:
    s = StateStream(max_tick_jump=125)
    s.clock = "tick"
    assert s.accept(1000, True, UNIT_Q, True, 1.0) and s.fresh_time == 1.0
    assert s.accept(1000, True, UNIT_Q, True, 1.5) and s.fresh_time == 1.0  # the same tick: read, but not fresh
    assert s.accept(1125, True, UNIT_Q, True, 1.6) and s.fresh_time == 1.6  # a jump of exactly the limit
    assert not s.accept(1124, True, UNIT_Q, True, 1.7) and s.fault == "LowState tick went backwards: 1125 -> 1124"
    j = StateStream(max_tick_jump=125)
    j.clock = "tick"
    j.accept(2**32 - 1, True, UNIT_Q, True, 0.0)
    assert j.accept(3, True, UNIT_Q, True, 0.002)  # the uint32 wraps: 4 ticks ahead, not backwards
    assert not j.accept(200, True, UNIT_Q, True, 0.004) and j.fault == "LowState tick jumped by 197 (> 125): 3 -> 200"


def test_on_the_arrival_clock_every_message_is_fresh_and_the_tick_is_not_judged() -> None:
    s = StateStream()
    assert s.accept(0, True, UNIT_Q, True, 2.0) and s.accept(0, True, UNIT_Q, True, 2.005)
    assert s.fresh_time == 2.005 and s.fault is None
