"""The motion generator of the position interfaces (actuators/motion.py) against its definition: bounded velocity and
acceleration, a step target reached in the time the limits allow and then held exactly, numpy and torch alike."""

import numpy as np
import pytest
import torch

from realgap.actuators.motion import check_limits, limit_rate

pytestmark = pytest.mark.unit

DT = 0.005
V_MAX = np.array([2.0, 1.0])
A_MAX = np.array([15.0, 7.5])


def _track(target, steps, xp=np):
    s = xp.zeros((1, 2)) if xp is np else torch.zeros(1, 2, dtype=torch.float64)
    v = s * 0
    out = []
    for _ in range(steps):
        s, v = limit_rate(
            s,
            v,
            target,
            V_MAX if xp is np else torch.as_tensor(V_MAX),
            A_MAX if xp is np else torch.as_tensor(A_MAX),
            DT,
        )
        out.append((s.copy() if xp is np else s.clone(), v.copy() if xp is np else v.clone()))
    return out


def test_a_step_respects_the_limits_and_arrives_in_the_time_they_allow():
    target = np.array([[1.5, -0.8]])
    traj = _track(target, 600)
    s = np.stack([p[0][0] for p in traj])
    v = np.stack([p[1][0] for p in traj])
    assert np.all(np.abs(v) <= V_MAX + 1e-12)
    acc = np.abs(np.diff(np.vstack([np.zeros((1, 2)), v]), axis=0)) / DT
    assert np.all(acc <= A_MAX + 1e-9)
    # time-optimal bound: |e|/v_max + v_max/a_max (accelerate, cruise, brake); within a few steps of it
    t_opt = np.abs(target[0]) / V_MAX + V_MAX / A_MAX
    arrive = np.array([np.argmax(np.abs(s[:, j] - target[0, j]) < 1e-3) for j in range(2)]) * DT
    assert np.all(arrive <= t_opt + 10 * DT) and np.all(arrive >= t_opt - 10 * DT), (arrive, t_opt)
    # no overshoot past the target beyond a step's worth of braking, then held exactly
    assert np.all(np.abs(s - target[0]).max(axis=0) <= np.abs(target[0]) + 1e-12)
    assert np.all(np.sign(target[0]) * (s - target[0]) <= A_MAX * DT * DT + 1e-12)
    np.testing.assert_array_equal(s[-1], target[0])
    assert np.all(v[-1] == 0)


def test_torch_and_numpy_agree():
    target = np.array([[0.3, 0.5]])
    a = _track(target, 80)
    b = _track(torch.as_tensor(target), 80, xp=torch)
    np.testing.assert_allclose(a[-1][0], b[-1][0].numpy(), rtol=0, atol=1e-12)


def test_a_target_within_reach_is_taken_without_motion_limits_biting():
    s = np.array([[0.2, 0.2]])
    out, v = limit_rate(s, np.zeros((1, 2)), s, V_MAX, A_MAX, DT)
    np.testing.assert_array_equal(out, s)
    assert np.all(v == 0)


@pytest.mark.parametrize("v_max,a_max", [(0.0, 1.0), (1.0, -2.0), (float("nan"), 1.0), (1.0, float("inf"))])
def test_bad_limits_are_refused_by_name(v_max, a_max):
    with pytest.raises(ValueError, match="max_velocity|max_acceleration"):
        check_limits(v_max, a_max, "arm")


def test_the_following_error_bound_keeps_the_setpoint_near_a_held_joint():
    """A joint held at 0 (a contact, a saturated torque): unbounded, the setpoint runs to the target; bounded, it waits
    within δ of the joint, moving no faster than v_max, and follows the joint once it is released."""
    target, delta = np.array([[1.0, -1.0]]), np.array([0.12, 0.14])
    s_free = s = np.zeros((1, 2))
    v_free = v = np.zeros((1, 2))
    q = np.zeros((1, 2))
    for _ in range(300):
        s_free, v_free = limit_rate(s_free, v_free, target, V_MAX, A_MAX, DT)
        s_prev = s
        s, v = limit_rate(s, v, target, V_MAX, A_MAX, DT, measured=q, max_error=delta)
        assert np.all(np.abs(s - q) <= delta + 1e-12)
        assert np.all(np.abs(s - s_prev) <= V_MAX * DT + 1e-12) and np.all(np.abs(v) <= V_MAX + 1e-12)
    np.testing.assert_allclose(s_free, target)  # the unbounded setpoint ran 1 rad ahead of the held joint
    np.testing.assert_allclose(np.abs(s), delta[None])
    q = np.array([[0.5, -0.5]])  # released: the joint jumped ahead, the setpoint is dragged to within δ of it
    s, v = limit_rate(s, v, target, V_MAX, A_MAX, DT, measured=q, max_error=delta)
    assert np.all(np.abs(s - q) <= delta + 1e-12)


def test_a_bound_the_lag_never_reaches_changes_nothing():
    target = np.array([[0.6, -0.4]])
    s0 = s1 = np.zeros((1, 2))
    v0 = v1 = np.zeros((1, 2))
    for _ in range(150):
        s0, v0 = limit_rate(s0, v0, target, V_MAX, A_MAX, DT)
        s1, v1 = limit_rate(s1, v1, target, V_MAX, A_MAX, DT, measured=s0, max_error=0.1)  # a joint that tracks
        np.testing.assert_array_equal(s0, s1)
        np.testing.assert_array_equal(v0, v1)


def test_a_bound_without_the_measured_position_or_a_bad_bound_is_refused():
    s = np.zeros((1, 2))
    with pytest.raises(ValueError, match="measured"):
        limit_rate(s, s, s + 1, V_MAX, A_MAX, DT, max_error=0.1)
    with pytest.raises(ValueError, match="max_following_error"):
        check_limits(V_MAX, A_MAX, "arm", max_error=np.array([0.1, 0.0]))
