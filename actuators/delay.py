"""Per-env command delay in physics steps (ring buffer), drawn from a latency range with an explicit generator.

Isaac Lab 3.0's Newton-native ``DelayedPD`` gives every env ``max_delay``; here each env has its own integer delay,
resampled on reset for the reset envs only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from realgap.actuators._xp import (
    Array,
    EnvIds,
    arange_like,
    as_int_like,
    env_index,
    namespace,
    randint,
    take_rows,
    zeros_like_shape,
)


def latency_to_steps(latency_s: float, physics_dt: float) -> int:
    """Latency in seconds to a whole number of physics steps, rounded to the nearest step (ties up).

    ``k = floor(latency_s / physics_dt + 1/2)`` (a 1e-9 step tolerance absorbs float error, so 7.5 ms at 5 ms is
    2 steps, 15 ms is 3 steps, 2 ms is 0 steps).

    Raises:
        ValueError: Negative latency or non-positive step.
    """
    if not physics_dt > 0:
        raise ValueError(f"physics_dt must be > 0 s, got {physics_dt!r}")
    if not latency_s >= 0:
        raise ValueError(f"latency_s must be >= 0 s, got {latency_s!r}")
    return int(math.floor(latency_s / physics_dt + 0.5 + 1e-9))


def latency_to_steps_batch(latency_s: Any, physics_dt: float) -> Any:
    """:func:`latency_to_steps` for a whole torch batch on its device (NaN → 0 steps), in float64 as the scalar rule.

    Shape: ``(N,)`` seconds → ``(N,)`` long. Why: a Python loop over a CUDA tensor syncs with the host per element.
    """
    return (latency_s.double().nan_to_num(0.0) / physics_dt + 0.5 + 1e-9).floor().long()


def latency_range_to_steps(latency_range_s: tuple[float, float], physics_dt: float) -> tuple[int, int]:
    """``(min, max)`` latency in seconds to ``(min, max)`` delay in physics steps (see :func:`latency_to_steps`)."""
    lo, hi = latency_range_s
    if lo > hi:
        raise ValueError(f"latency range min {lo} s > max {hi} s")
    return latency_to_steps(lo, physics_dt), latency_to_steps(hi, physics_dt)


class CommandDelay:
    """Delays an ``(E, ...)`` command stream by ``k_e`` physics steps, ``k_e`` per env.

    Call :meth:`step` exactly once per physics step: a command pushed at step ``t`` is returned at step ``t + k_e``.
    After construction or :meth:`reset` an env has no history yet: until ``k_e`` steps have passed its output is the
    first command pushed since (the lag is ``min(k_e, steps since reset)``), never stale data from before the reset.

    Delays are drawn uniformly from the integers ``{min_steps, ..., max_steps}`` (each equally likely) with
    ``generator`` at construction and again, for the reset envs only, on every :meth:`reset`.

    Args:
        num_envs: ``E``.
        min_steps: Smallest delay, physics steps, >= 0.
        max_steps: Largest delay, physics steps, >= ``min_steps``.
        generator: ``numpy.random.Generator`` (numpy backend) or ``torch.Generator`` (torch). May be ``None`` only
            when ``min_steps == max_steps``.
        device: Torch device to draw onto (defaults to the generator's); the delays follow the commands' device.

    Shape:
        Commands ``(E, *F)`` (e.g. ``(E, J)``); :attr:`delay_steps` ``(E,)`` int64.
    """

    def __init__(
        self, num_envs: int, min_steps: int, max_steps: int, generator: Any = None, device: Any = None
    ) -> None:
        if num_envs <= 0:
            raise ValueError(f"num_envs must be > 0, got {num_envs}")
        if not (0 <= min_steps <= max_steps):
            raise ValueError(f"need 0 <= min_steps <= max_steps, got min_steps={min_steps}, max_steps={max_steps}")
        if generator is None and min_steps != max_steps:
            raise ValueError(f"a generator is required to draw delays in [{min_steps}, {max_steps}] steps")
        self.num_envs = num_envs
        self.min_steps = int(min_steps)
        self.max_steps = int(max_steps)
        self.generator = generator
        self._device = device
        self._history = self.max_steps + 1
        self._buffer: Array | None = None  # (H·E, prod(F)) ring buffer, row = slot·E + env; made on the first step
        self._shape: tuple[int, ...] | None = None  # (E, *F) of the commands
        self._count: Array | None = None  # (E,) commands pushed since reset (lag = min(delay, count))
        self._envs: Array | None = None  # (E,) arange for the per-env gather
        self._t = 0  # write pointer, shared by all envs
        self._since_reset = 0  # steps since the last reset of any env; >= max_steps: every lag is the full delay
        self.delay_steps: Array = self._draw(num_envs)
        """Current delay of each env, physics steps, ``(E,)`` int64."""

    def _draw(self, n: int) -> Array:
        if self.generator is None:  # min == max: nothing random
            return np.full(n, self.min_steps, dtype=np.int64)
        return randint(self.min_steps, self.max_steps, n, self.generator, self._device)

    def set_delay_steps(self, delay_steps: Array, env_ids: EnvIds = None) -> None:
        """Overwrite the delays of ``env_ids`` (e.g. from a randomization term), each in ``[0, max_steps]``."""
        idx, _ = env_index(env_ids, self.num_envs, self.delay_steps)
        values = as_int_like(delay_steps, self.delay_steps)
        lo, hi = int(values.min()), int(values.max())
        if lo < 0 or hi > self.max_steps:
            raise ValueError(f"delay_steps must lie in [0, {self.max_steps}] (the buffer size), got [{lo}, {hi}]")
        self.delay_steps[idx] = values

    def reset(self, env_ids: EnvIds = None) -> None:
        """Draw new delays for ``env_ids`` only and forget their history (other envs are untouched)."""
        idx, n = env_index(env_ids, self.num_envs, self.delay_steps)
        self.delay_steps[idx] = as_int_like(self._draw(n), self.delay_steps)
        if self._count is not None:
            self._count[idx] = 0
        self._since_reset = 0

    def step(self, command: Array) -> Array:
        """Push this physics step's command; return, per env, the one pushed ``delay_steps`` steps ago.

        Shape:
            ``command`` ``(E, *F)``; output ``(E, *F)`` (a new array, not a view of the buffer).
        """
        if command.shape[0] != self.num_envs:
            raise ValueError(f"command has {command.shape[0]} envs, expected {self.num_envs}")
        if self._buffer is None or tuple(command.shape) != self._shape:
            self._shape = tuple(command.shape)
            self._buffer = zeros_like_shape((self._history * self.num_envs, *command.shape[1:]), command)
            self._buffer = self._buffer.reshape(self._history * self.num_envs, -1)
            self._count = zeros_like_shape((self.num_envs,), command, integer=True)
            self._since_reset = 0
            self._envs = arange_like(self.num_envs, command)
            self.delay_steps = as_int_like(self.delay_steps, command)
        xp = namespace(command)
        e = self.num_envs
        slot = self._t % self._history
        self._buffer[slot * e : (slot + 1) * e] = command.reshape(e, -1)
        if self._since_reset >= self.max_steps:  # every env has a full history: skip the per-env clamp
            lag = self.delay_steps
        else:
            lag = xp.minimum(self.delay_steps, self._count)
            self._count += 1
            self._since_reset += 1
        read = (self._t - lag) % self._history
        self._t += 1
        return take_rows(self._buffer, read * e + self._envs).reshape(self._shape)
