"""Seed-level statistics of the comparison (envs/eval/seed_stats.py), against hand-computed values."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from realgap.envs.eval.seed_stats import (
    binomial_floor,
    bootstrap_interval,
    censor,
    mean_band,
    pairwise,
    summarize,
    t_interval,
    tiers,
    welch_difference,
)

pytestmark = pytest.mark.unit


def test_t_interval_two_seeds():
    # mean 0.95, s = 0.0707107, t_{1, 0.975} = 12.7062 -> half = 12.7062 * 0.0707107 / sqrt(2) = 0.63531
    mean, lo, hi = t_interval([0.9, 1.0])
    assert mean == pytest.approx(0.95)
    assert lo == pytest.approx(0.95 - 0.63531, abs=1e-4)
    assert hi == pytest.approx(0.95 + 0.63531, abs=1e-4)


def test_t_interval_degenerate_cases():
    assert math.isnan(t_interval([])[0])
    mean, lo, hi = t_interval([0.7])
    assert mean == 0.7 and math.isnan(lo) and math.isnan(hi)


def test_welch_difference_hand_computed():
    # diff -3; each side var/n = 1/3; se = 0.81650; df = (2/3)^2 / (2 * (1/3)^2 / 2) = 4; t_{4,0.975} = 2.77645
    diff, lo, hi = welch_difference([1, 2, 3], [4, 5, 6])
    assert diff == pytest.approx(-3.0)
    assert lo == pytest.approx(-3.0 - 2.77645 * 0.81650, abs=1e-4)
    assert hi == pytest.approx(-3.0 + 2.77645 * 0.81650, abs=1e-4)


def test_welch_zero_spread_is_the_point():
    assert welch_difference([0.0, 0.0, 0.0], [1.0, 1.0]) == (-1.0, -1.0, -1.0)


def test_pairwise_ranks_only_what_separates():
    groups = {"a": [0.92, 1.0, 0.97, 0.95, 0.94], "b": [0.92, 0.94, 0.84, 0.97, 0.90], "c": [0.0, 0.0, 0.0, 0.0, 0.0]}
    verdicts = {frozenset((v.better, v.worse)): v for v in pairwise(groups)}
    ab = verdicts[frozenset("ab")]
    assert ab.better == "a" and not ab.separated and ab.lo < 0 < ab.hi
    assert "tied" in ab.words()
    ac = verdicts[frozenset("ac")]
    assert ac.better == "a" and ac.separated and ac.lo > 0
    assert "ahead of" in ac.words()


def test_pairwise_lower_is_better_orients_the_difference():
    # env steps to a success level: fewer is better
    groups = {"slow": [1.0e6, 1.1e6, 1.05e6], "fast": [0.6e6, 0.65e6, 0.7e6]}
    (v,) = pairwise(groups, higher_is_better=False)
    assert v.better == "fast" and v.worse == "slow"
    assert v.diff == pytest.approx(0.4e6) and v.separated and v.lo > 0


def test_single_seed_pairs_are_never_separated():
    (v,) = pairwise({"a": [1.0], "b": [0.0, 0.1]})
    assert not v.separated and math.isnan(v.lo)
    assert "not ranked" in v.words()


def test_tiers_group_ties():
    groups = {"best": [0.95, 0.97, 0.96], "close": [0.94, 0.96, 0.97], "none": [0.0, 0.0, 0.0]}
    assert tiers(groups) == [["best", "close"], ["none"]]


def test_censor_uses_the_budget_as_bound():
    values, reached = censor([0.6e6, math.nan, 0.8e6], bound=1.2288e6)
    assert values == [0.6e6, 1.2288e6, 0.8e6] and reached == 2
    s = summarize("x", [math.nan, math.nan], bound=5.0)
    assert s.values == (5.0, 5.0) and s.reached == 0 and s.mean == 5.0


def test_mean_band_pointwise():
    mean, lo, hi = mean_band([[0.0, 1.0, 2.0], [2.0, 3.0]])
    np.testing.assert_allclose(mean, [1.0, 2.0])
    # s = sqrt(2), n = 2, t_1 = 12.7062: half = 12.7062 * sqrt(2) / sqrt(2) = 12.7062
    np.testing.assert_allclose(hi - mean, [12.7062, 12.7062], atol=1e-3)
    np.testing.assert_allclose(mean - lo, hi - mean)


@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=8))
def test_intervals_contain_the_mean(values):
    mean, lo, hi = t_interval(values)
    assert lo <= mean + 1e-12 and mean <= hi + 1e-12
    blo, bhi = bootstrap_interval(values, resamples=500)
    assert min(values) - 1e-12 <= blo <= bhi <= max(values) + 1e-12


def test_binomial_floor_keeps_agreeing_seeds_from_a_zero_width_interval():
    # two seeds at 31/32 each: sample variance 0; floor = 0.96875 * 0.03125 / 32 = 9.46e-4
    assert binomial_floor([0.96875, 0.96875], 32) == pytest.approx(0.96875 * 0.03125 / 32)
    diff, lo, hi = welch_difference([0.96875, 0.96875], [0.0, 0.0], floor_a=binomial_floor([0.96875] * 2, 32))
    # se = sqrt(9.46e-4 / 2) = 0.02175; Welch df = 1 (all variance on one side of 2 seeds); t_1 = 12.7062
    assert diff == pytest.approx(0.96875)
    assert hi - diff == pytest.approx(12.7062 * math.sqrt(0.96875 * 0.03125 / 32 / 2), rel=1e-4)
    assert lo > 0
