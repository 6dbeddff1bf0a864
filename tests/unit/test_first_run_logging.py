"""The first grasp run's log: Isaac Lab's expected warning for a fixed-base articulation is dropped, others kept."""

import logging

import pytest

pytestmark = pytest.mark.unit


def test_fixed_base_root_velocity_warning_is_dropped_and_others_kept():

    from realgap.envs.run.factory import _ExpectedForFixedBase

    f = _ExpectedForFixedBase()

    def record(msg: str) -> logging.LogRecord:
        return logging.LogRecord("isaaclab_newton", logging.WARNING, __file__, 1, msg, None, None)

    assert not f.filter(record("Failed to get root com velocity. If the articulation is fixed, this is expected. "))
    assert f.filter(record("Failed to get link velocities."))
