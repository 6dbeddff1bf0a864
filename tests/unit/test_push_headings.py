"""The push log's binning (envs/eval/push_headings.py) on hand-made pushes: directions in the robot's frame,
magnitude bins with the last one closed, fall rates with their Wilson interval, and bad bin edges refused."""

import math

import pytest

from realgap.envs.eval.push_headings import PushRecord, direction, heading_table, summary

pytestmark = pytest.mark.unit


def test_directions_are_quadrants_centred_on_the_robot_axes():
    degrees = {0: "forward", 44: "forward", 46: "left", 134: "left", 136: "backward", 180: "backward",
               -179: "backward", -134: "right", -46: "right", -44: "forward", 360 + 90: "left"}  # fmt: skip
    assert {d: direction(math.radians(d)) for d in degrees} == degrees


def test_table_counts_falls_per_direction_and_bin():
    back, left = math.pi, math.pi / 2
    records = [PushRecord(0.25, back, False), PushRecord(0.38, back, True), PushRecord(0.40, back, True),
               PushRecord(0.36, back, False), PushRecord(0.31, left, False)]  # fmt: skip
    rows = heading_table(records, [0.2, 0.3, 0.35, 0.4])
    got = {(r["direction"], tuple(r["push_mps"])): (r["falls"], r["pushes"]) for r in rows}
    # 0.40 falls in the last, closed bin; bins without a push are left out
    assert got == {("left", (0.3, 0.35)): (0, 1), ("backward", (0.2, 0.3)): (0, 1),
                   ("backward", (0.35, 0.4)): (2, 3)}  # fmt: skip
    row = next(r for r in rows if r["pushes"] == 3)
    assert row["fall_rate"] == pytest.approx(2 / 3) and row["ci95"][0] < 2 / 3 < row["ci95"][1]
    totals = summary(records)
    assert (totals["pushes"], totals["falls"], totals["sagittal_share_of_falls"]) == (5, 2, 1.0)
    assert totals["largest_push_held_mps"] == pytest.approx(0.36)


@pytest.mark.parametrize("edges", [[0.3], [0.2, 0.2], [0.4, 0.3]])
def test_bad_bin_edges_are_refused(edges):
    with pytest.raises(ValueError, match="magnitude bin edges must be at least two increasing values"):
        heading_table([], edges)
