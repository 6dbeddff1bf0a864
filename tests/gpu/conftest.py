"""GPU tier guard: a GPU that nvidia-smi or warp sees but torch cannot use fails every gpu test (never skips it).

Without any GPU the tests skip with the reason, as before; with a usable one they run.
"""

from functools import cache

import pytest


@cache
def _unusable_reason() -> str | None:
    from realgap.envs.sim.device import probe, unusable_gpu_reason

    return unusable_gpu_reason(probe())


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # tryfirst: before the skipif marks, so "torch sees no CUDA" cannot turn an unusable GPU into a green skip
    if item.get_closest_marker("gpu") is not None:
        reason = _unusable_reason()
        if reason is not None:
            pytest.fail(reason, pytrace=False)
