"""Sim tier (MuJoCo C): the peak finger and arm speeds of a grasp export in the runtime's scene
(:mod:`realgap.envs.eval.grasp.speeds`). The shipped grasp closes its fingers many times faster than the Franka Hand's
0.05 m/s (issue #62: 0.79 m/s); the zero action leaves the hand open and the arm still."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.sim
EXPORT = Path(__file__).resolve().parents[2] / "configs/policies/grasp_franka"


@pytest.fixture(scope="module")
def loaded():
    from realgap.envs.deploy import load_policy

    return load_policy(EXPORT)


def test_the_shipped_grasp_closes_far_faster_than_the_hand(loaded):
    from realgap.envs.eval.grasp.speeds import grasp_speed_report

    meta, policy = loaded
    rep = grasp_speed_report(meta, policy, episodes=2, seed=0)
    assert rep["finger_velocity_limit_mps"] == 0.05 and rep["successes"] == 2, rep
    assert rep["finger_peak_over_limit"] > 10  # measured 15.9 over 16 episodes (docs/limits.md)
    for row in rep["per_episode"]:
        # the fingers close together (the MJCF's equality): closing speed about twice one finger's
        assert 1.8 * row["finger_peak_mps"] < row["closing_peak_mps"] <= 2 * row["finger_peak_mps"] + 1e-9
        # the reflex sees a subset of the physics steps; the arm stays under its limits (no reflex ending)
        assert row["arm_checked_ratio"] <= row["arm_peak_ratio"] < 1.0
        assert row["arm_peak_joint"].startswith("joint")


def test_the_zero_action_moves_nothing_and_bad_requests_are_refused(loaded):
    from dataclasses import replace

    from realgap.envs.deploy import ZeroPolicy
    from realgap.envs.eval.grasp.speeds import grasp_speed_report

    meta, _ = loaded
    rep = grasp_speed_report(meta, ZeroPolicy(meta.action_dim), episodes=1, seed=0, start_noise=False)
    assert rep["finger_peak_mps"]["max"] < 1e-3 and rep["closing_peak_mps"]["max"] < 1e-3, rep
    assert rep["arm_peak_ratio"]["max"] < 0.05 and rep["per_episode"][0]["ended_by"] == "time_out"
    with pytest.raises(ValueError, match="episodes must be >= 1, got 0"):
        grasp_speed_report(meta, ZeroPolicy(meta.action_dim), episodes=0)
    with pytest.raises(ValueError, match="has no scene facts"):
        grasp_speed_report(replace(meta, scene=None), ZeroPolicy(meta.action_dim), episodes=1)
