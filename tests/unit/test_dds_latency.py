"""Command-to-state latency arithmetic (:func:`realgap.envs.deploy.drivers.latency.latency_stats`) on hand-made
timings: no DDS, no simulator."""

from __future__ import annotations

import numpy as np
import pytest

from realgap.envs.deploy.drivers.latency import latency_stats

pytestmark = pytest.mark.unit


def test_latency_is_matched_by_sequence_number_and_tick() -> None:
    # driver: commands 1, 2, 3 sent at 0.000, 0.005, 0.006 s; command 2 is superseded by 3 before a step applies it
    sent = [(1, 0.000), (2, 0.005), (3, 0.006)]
    # simulator: 1 received 0.001, applied 0.002 in the step giving tick 11; 3 received 0.007, applied 0.008 → tick 14
    applied = {
        "seq": np.array([1, 3]),
        "received_s": np.array([0.001, 0.007]),
        "tick": np.array([11, 14]),
        "applied_s": np.array([0.002, 0.008]),
    }
    # driver: tick 11 first received at 0.004 (and again later: ignored), tick 14 at 0.0105
    states = [(10, 0.0), (11, 0.004), (11, 0.009), (14, 0.0105)]
    s = latency_stats(sent, states, applied)
    counts = ("commands_sent", "commands_applied", "superseded_before_a_step", "states_missed")
    assert tuple(s[k] for k in counts) == (3, 2, 1, 0)
    # send→received 1 ms both; send→applied 2 ms both; send→state 4 ms and 4.5 ms → p50 4.25 ms
    assert s["send_to_received"]["p50_ms"] == pytest.approx(1.0)
    assert s["send_to_applied"]["max_ms"] == pytest.approx(2.0)
    assert s["send_to_state_received"]["p50_ms"] == pytest.approx(4.25)
    assert s["send_to_state_received"]["max_ms"] == pytest.approx(4.5)
    assert s["sim_ticks_per_wall_s"] == pytest.approx(3 / 0.006)  # ticks 11 → 14 over 6 ms


def test_a_state_that_never_arrived_is_counted_not_timed() -> None:
    applied = {"seq": np.array([1]), "received_s": np.array([0.001]), "tick": np.array([5]), "applied_s": [0.002]}
    s = latency_stats([(1, 0.0)], [(4, 0.0)], applied)
    assert s["states_missed"] == 1 and s["send_to_state_received"]["p50_ms"] is None


def test_nothing_to_time_is_a_clear_error() -> None:
    applied = {"seq": np.array([7]), "received_s": np.array([0.0]), "tick": np.array([1]), "applied_s": [0.0]}
    with pytest.raises(ValueError, match="nothing to time"):
        latency_stats([(1, 0.0)], [], applied)
