"""Progress lines of long commands: ETA under an iteration count and a wall-clock budget, no ``nan`` shown."""

from __future__ import annotations

import io
import math

import pytest

from realgap.envs.run.progress import MISSING, Progress, expected_total, fmt_value

pytestmark = pytest.mark.unit


def test_expected_total_is_whichever_ends_first():
    # 10 iterations in 100 s (10 s each), 100 left of 1000: the count ends the job
    assert expected_total(10, 110, 100.0, None) == 110
    # a 300 s budget leaves 200 s = 20 more iterations; the run stops after the one that crosses it: 10 + 20 + 1
    assert expected_total(10, 1000, 100.0, 300.0) == 31
    assert expected_total(10, 25, 100.0, 300.0) == 25  # the count is still the smaller
    assert expected_total(10, 1000, 400.0, 300.0) == 10  # budget used up: this was the last
    assert expected_total(0, 1000, 5.0, 300.0) == 1000  # nothing measured yet


def test_missing_metrics_show_a_dash():
    assert fmt_value(math.nan) == MISSING
    assert fmt_value(None) == MISSING
    assert fmt_value(0.51234) == "0.512"
    assert fmt_value(7) == "7"


def test_plain_lines_with_eta_when_not_a_terminal():
    out = io.StringIO()  # not a tty: one line per update with interval 0
    p = Progress("[realgap] evaluate", 4, unit="points", interval_s=0.0, stream=out)
    p.update(1, success=math.nan)
    p.update(1, success=0.5)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("[realgap] evaluate 1/4 points [")
    assert "ETA" in lines[0] and "success=—" in lines[0]
    assert "2/4" in lines[1] and "success=0.500" in lines[1]
    assert "nan" not in out.getvalue()


def test_interval_limits_the_lines_but_the_last_is_printed():
    out = io.StringIO()
    p = Progress("[realgap] x", 3, interval_s=3600.0, stream=out)
    for _ in range(3):
        p.update(1)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2  # the first update, then the final one
    assert lines[-1].startswith("[realgap] x 3/3")


def test_resumed_progress_counts_from_its_start_and_refuses_empty_totals():
    out = io.StringIO()
    p = Progress("[realgap] train", 10, initial=6, interval_s=0.0, stream=out)
    p.update(1)
    assert "7/10" in out.getvalue()
    with pytest.raises(ValueError, match="total must be >= 1"):
        Progress("x", 0)


def test_progress_columns_keep_task_metrics_and_reward_terms():
    # the CSV's columns: a metric by its last name part, a reward term prefixed (which stage a run reached)
    from realgap.envs.run.run_dir import progress_column

    assert progress_column("Curriculum/metrics/success_rate") == "success_rate"
    assert progress_column("Episode_Reward/lift") == "reward_lift"
    assert progress_column("Episode_Termination/time_out") is None  # TensorBoard keeps the rest
    assert progress_column("Loss/value") is None
