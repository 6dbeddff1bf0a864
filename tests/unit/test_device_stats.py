"""Unit tier: episode statistics reduced on the device (realgap.envs.sim.device_stats) equal the host rule they
replace, and device values reach the host through HostMirror in order (at once on the CPU)."""

import math

import pytest
import torch

from realgap.envs.sim.device_stats import HostMirror, RunningMeans

pytestmark = pytest.mark.unit


class _HostRule:
    """The per-reset host rule the device statistics replace (float(values[mask].mean()) and Python floats)."""

    def __init__(self, window: float) -> None:
        self.window, self.mean, self.count = window, math.nan, 0

    def update(self, values: torch.Tensor) -> None:
        if (n := values.numel()) == 0:
            return
        self.count += n
        weight = min(1.0, n / min(self.count, self.window))
        old = 0.0 if math.isnan(self.mean) else self.mean
        self.mean = (1.0 - weight) * old + weight * float(values.float().mean())


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_running_means_equal_the_host_rule(kind):
    gen = torch.Generator().manual_seed(3)
    stats, ref = RunningMeans(("a", "b"), window=20, device="cpu"), [_HostRule(20), _HostRule(20)]
    for _ in range(60):  # past the window: the exponential regime too
        n = int(torch.randint(0, 9, (1,), generator=gen))
        values = torch.rand(2, n, generator=gen)
        values = values > 0.4 if kind == "bool" else values * 3.0
        mask = torch.rand(2, n, generator=gen) < torch.tensor([[0.7], [0.1]])
        stats.update(values, mask)
        for k in range(2):
            ref[k].update(values[k][mask[k]])
    for k, name in enumerate(("a", "b")):
        got = stats.value(name)
        if kind == "bool":  # 0/1 values: float32 sums are exact, so the device rule is bit-identical
            assert got == ref[k].mean
        else:  # float32 sums in another order: equal to float32 round-off
            assert got == pytest.approx(ref[k].mean, rel=1e-6)
        assert int(stats.counts[k]) == ref[k].count


def test_a_statistic_is_logged_once_a_value_was_seen():
    stats = RunningMeans(("seen", "never"), window=8, device="cpu")
    assert stats.logged() == {} and math.isnan(stats.value("seen"))
    stats.update(torch.tensor([[1.0, 0.0], [5.0, 5.0]]), torch.tensor([[True, True], [False, False]]))
    logged = stats.logged()
    assert list(logged) == ["seen"] and float(logged["seen"]) == 0.5  # on the CPU at the same call
    assert logged["seen"].dtype == torch.float64 and logged["seen"].dim() == 0  # a 0-d tensor for extras["log"]
    assert math.isnan(stats.value("never"))


def test_host_mirror_hands_back_copies_in_order_at_once_on_the_cpu():
    mirror = HostMirror()
    value = torch.tensor([3, 1])
    mirror.put(value)
    value += 10  # a copy was taken: later writes to the device tensor do not reach it
    mirror.put(torch.tensor([[2, 0]]))
    assert mirror.ready() == [[3, 1], [2, 0]] and mirror.ready() == []
    assert not hasattr(mirror, "__dict__")  # the env snapshot never walks a copy in flight
