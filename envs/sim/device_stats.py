"""Episode statistics kept on the env's device, and device values read on the host without waiting for the GPU.

Rule: a metric or curriculum term called at every reset reduces on the device (masked sums, no boolean-mask indexing,
no ``float(x)``) and hands Isaac Lab 0-d tensors (``extras["log"]`` accepts them; rsl-rl averages them per
iteration). What the host must know (whether a statistic has been seen yet, a curriculum's episode counts) comes
through :class:`HostMirror`: a copy started now and read once it has landed, a call or two later on CUDA and at once on
the CPU. Why: every ``float(x)`` of a CUDA tensor waits for the GPU to drain its queue, at every reset.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from realgap.envs.sim.sync_audit import host_side


class HostMirror:
    """Device tensors copied to the host asynchronously, handed back in order once their copy has completed.

    On CUDA :meth:`put` starts a non-blocking copy into pinned memory and records an event; :meth:`ready` returns the
    copies whose event has completed (``Event.query()``, which never blocks). On the CPU a copy is ready at once, so a
    caller that drains :meth:`ready` right after :meth:`put` sees the same values at the same call as a direct read.
    Holds no state worth a snapshot (``__slots__``: the env snapshot does not walk it); a copy in flight when a run is
    saved is lost, which only CUDA runs (not exact anyway) can see.
    """

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending: list[tuple[torch.Tensor, torch.cuda.Event | None]] = []

    def put(self, value: torch.Tensor) -> None:
        """Start copying ``value`` (any shape) to the host."""
        if value.device.type != "cuda":
            self._pending.append((value.detach().clone(), None))
            return
        host = torch.empty(value.shape, dtype=value.dtype, pin_memory=True)
        host.copy_(value.detach(), non_blocking=True)
        event = torch.cuda.Event()
        event.record(torch.cuda.current_stream(value.device))
        self._pending.append((host, event))

    @host_side
    def ready(self) -> list[list]:
        """The values whose copy has completed, oldest first, as Python lists (``tolist`` of a host tensor)."""
        out = []
        while self._pending and (self._pending[0][1] is None or self._pending[0][1].query()):
            out.append(self._pending.pop(0)[0].reshape(-1).tolist())
        return out


class RunningMeans:
    """Running means of named statistics over ended episodes, on the device.

    Rule, per statistic and call: the ``n`` values selected by its mask have the mean ``m`` (float32, as
    ``values[mask].float().mean()``); with ``N`` values seen so far (this call's included) the running mean moves to
    ``(1 − w)·old + w·m``, ``w = min(1, n / min(N, window))`` (float64): the plain mean until ``window`` values have
    been seen, an exponential mean over about the last ``window`` after that. ``n = 0`` changes nothing. Why: a
    statistic comparable across iterations whatever the number of resets per iteration.

    A statistic is *defined* once any value of it has been seen; :meth:`logged` gives only the defined ones (the host
    learns it through :class:`HostMirror`, so on CUDA a call or two late).
    """

    def __init__(self, names: Sequence[str], window: float, device: str | torch.device) -> None:
        self.names = tuple(names)
        self.window = float(window)
        self.means = torch.zeros(len(self.names), dtype=torch.float64, device=device)
        self.counts = torch.zeros(len(self.names), dtype=torch.int64, device=device)
        self.defined = [False] * len(self.names)
        self._reads = HostMirror()

    def update(self, values: torch.Tensor, mask: torch.Tensor) -> None:
        """Add one call's values. Shape: ``values`` ``(K, N)`` (one row per name), ``mask`` ``(K, N)`` bool."""
        n = mask.sum(dim=1)
        self.counts = self.counts + n
        seen = n > 0
        weight = (n.double() / self.counts.double().clamp(max=self.window)).clamp(max=1.0)
        total = values.float().masked_fill(~mask, 0.0).sum(dim=1)
        batch_mean = (total / n.clamp(min=1).float()).double()
        self.means = torch.where(seen, (1.0 - weight) * self.means + weight * batch_mean, self.means)
        self._reads.put(n)
        for counts in self._reads.ready():
            self.defined = [d or c > 0 for d, c in zip(self.defined, counts, strict=True)]

    def logged(self) -> dict[str, torch.Tensor]:
        """The defined statistics as 0-d device tensors, by name."""
        return {name: self.means[i] for i, name in enumerate(self.names) if self.defined[i]}

    def value(self, name: str) -> float:
        """One statistic on the host, NaN while undefined (a sync on CUDA: for evaluation and tests, not per step)."""
        i = self.names.index(name)
        return float(self.means[i]) if int(self.counts[i]) > 0 else float("nan")
