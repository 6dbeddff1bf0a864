"""Rate adaptation between the policy, the servo (control) loop and the physics step.

Two stateful wrappers, each called exactly once per physics step and reset per env:

- :class:`TargetInterpolator`: the policy sets a target once per policy period of ``D`` physics steps (the
  decimation); between policy steps the target is held (zero-order) or linearly interpolated.
- :class:`ZeroOrderHold`: a value (the servo torque) is recomputed only every ``P`` physics steps and held in between.

Both count physics steps since reset per env; :meth:`reset` restarts the count of the given envs only. While every
env shares one phase (always true in Isaac Lab, where resets happen between policy steps) the count is one Python
int and a step costs a few array operations; a reset in mid-period switches that wrapper to per-env counters.
Outputs may share memory with the wrapper's state: treat them as read-only.
"""

from __future__ import annotations

from typing import Literal

from realgap.actuators._xp import Array, EnvIds, as_like, env_index, namespace, zeros_like_shape

TargetMode = Literal["hold", "interpolate"]


def _expand(mask: Array, like: Array) -> Array:
    """``(E,)`` -> ``(E, 1, ..., 1)`` to broadcast against ``like`` ``(E, *F)``."""
    return mask.reshape((-1,) + (1,) * (like.ndim - 1))


class TargetInterpolator:
    """Hold or linearly interpolate the policy target across the policy period.

    The caller passes the latest policy target on every physics step (Isaac Lab's action term does; so should a
    MuJoCo or deploy loop).

    - ``"hold"``: zero-order hold, the output is the input (nothing to store).
    - ``"interpolate"``: the input is latched at the first physics step of each policy period (phase ``p = 0``;
      changes during the period are ignored). At phase ``p ∈ {0, ..., D−1}`` the output is
      ``x_p = (1 − α)·x_prev + α·x_new`` with ``α = (p + 1)/D``: it moves ``1/D`` of the way on the first physics
      step and equals ``x_new`` exactly on the last one. ``x_prev`` is the previous policy target; for the first
      period after a reset it is ``x_new`` (no ramp from stale data).

    Args:
        num_envs: ``E``.
        decimation: ``D``, physics steps per policy step, >= 1.
        mode: ``"hold"`` or ``"interpolate"``.

    Shape:
        Targets ``(E, *F)``.
    """

    def __init__(self, num_envs: int, decimation: int, mode: TargetMode = "hold") -> None:
        if decimation < 1:
            raise ValueError(f"decimation must be >= 1 physics step, got {decimation}")
        if mode not in ("hold", "interpolate"):
            raise ValueError(f"target mode must be 'hold' or 'interpolate', got {mode!r}")
        self.num_envs = num_envs
        self.decimation = int(decimation)
        self.mode: TargetMode = mode
        self._n = 0  # physics steps taken; while _count is None every env's phase is _n % D
        self._count: Array | None = None  # (E,) per-env steps since reset, once envs fall out of phase
        self._fresh: Array | None = None  # (E,) bool: no previous target at this env's next period start
        self._prev: Array | None = None
        self._new: Array | None = None

    @property
    def active(self) -> bool:
        """False when :meth:`step` is the identity (hold, or one physics step per policy step)."""
        return self.mode == "interpolate" and self.decimation > 1

    def reset(self, env_ids: EnvIds = None) -> None:
        """Start a fresh policy period (and forget the previous target) for ``env_ids`` on their next step."""
        if self._new is None:
            return
        idx, _ = env_index(env_ids, self.num_envs, self._fresh)
        self._fresh[idx] = True
        if self._count is None and self._n % self.decimation != 0:
            self._count = zeros_like_shape((self.num_envs,), self._fresh, integer=True) + self._n
        if self._count is not None:
            self._count[idx] = 0

    def step(self, target: Array) -> Array:
        """This physics step's target.

        Shape:
            ``target`` ``(E, *F)``; output ``(E, *F)``.
        """
        if not self.active:
            return target
        xp = namespace(target)
        if self._new is None or tuple(self._new.shape) != tuple(target.shape):
            self._n, self._count = 0, None
            self._prev, self._new = target * 1, target * 1
            self._fresh = zeros_like_shape((self.num_envs,), target, integer=True) == 0
        if self._count is None:  # all envs in phase: one Python phase, latch once per period
            phase = self._n % self.decimation
            if phase == 0:
                self._prev = xp.where(_expand(self._fresh, target), target, self._new)
                self._new = target * 1
                self._fresh[:] = False
            alpha: Array | float = (phase + 1) / self.decimation
        else:
            phase = self._count % self.decimation
            start = phase == 0
            latch = _expand(start, target)
            self._prev = xp.where(latch, xp.where(_expand(self._fresh, target), target, self._new), self._prev)
            self._new = xp.where(latch, target, self._new)
            self._fresh = self._fresh & ~start
            self._count += 1
            alpha = _expand((as_like(phase, target) + 1.0) / self.decimation, target)
        self._n += 1
        return (1.0 - alpha) * self._prev + alpha * self._new


class ZeroOrderHold:
    """Recompute a value every ``period_steps`` physics steps and hold it in between (per env).

    On physics step ``n`` since reset the output is the input of step ``P·floor(n/P)``; the first step after a
    reset always takes the new input.

    Envs may get periods of their own (:meth:`set_periods`): a drive behind a bridge that computes the PD torque once
    per command and holds it is an env whose period is the policy period.

    Args:
        num_envs: ``E``.
        period_steps: ``P``, physics steps per update (servo period), >= 1; 1 passes the input through.

    Shape:
        Values ``(E, *F)``.
    """

    def __init__(self, num_envs: int, period_steps: int) -> None:
        if period_steps < 1:
            raise ValueError(f"period_steps must be >= 1 physics step, got {period_steps}")
        self.num_envs = num_envs
        self.period_steps = int(period_steps)
        self._n = 0  # physics steps taken; while _count is None every env's phase is _n % P
        self._count: Array | None = None  # (E,) per-env steps since reset, once envs fall out of phase
        self._held: Array | None = None
        self.periods: Array | None = None
        """``(E,)`` per-env periods once :meth:`set_periods` was called (else every env has ``period_steps``)."""

    def set_periods(self, periods: Array, env_ids: EnvIds = None) -> None:
        """Give ``env_ids`` (all when ``None``) their own periods, physics steps >= 1 (the caller draws them from
        checked values: a check here would sync a GPU every reset). Best called at a reset of those envs, so their
        next step is an update."""
        if self.periods is None:
            self.periods = zeros_like_shape((self.num_envs,), periods, integer=True) + self.period_steps
        idx, _ = env_index(env_ids, self.num_envs, self.periods)
        self.periods[idx] = as_like(periods, self.periods)

    def reset(self, env_ids: EnvIds = None) -> None:
        """Make the next step of ``env_ids`` an update step."""
        if self._held is None:
            return
        if self._count is None:
            if self.periods is None and self._n % self.period_steps == 0:
                return  # the next step updates every env anyway
            self._count = zeros_like_shape((self.num_envs,), self._held, integer=True) + self._n
        idx, _ = env_index(env_ids, self.num_envs, self._count)
        self._count[idx] = 0

    def step(self, value: Array) -> Array:
        """The held value for this physics step (the input itself when ``period_steps == 1``).

        Shape:
            ``value`` ``(E, *F)``; output ``(E, *F)``.
        """
        if self.period_steps == 1 and self.periods is None:
            return value
        if self._held is None or tuple(self._held.shape) != tuple(value.shape):
            self._n, self._count, self._held = 0, None, value * 1
        if self._count is None and self.periods is not None:  # periods of their own: per-env phases from now on
            self._count = zeros_like_shape((self.num_envs,), self._held, integer=True) + self._n
        if self._count is None:
            if self._n % self.period_steps == 0:
                self._held = value * 1
        else:
            period = self.period_steps if self.periods is None else self.periods
            update = _expand(self._count % period == 0, value)
            self._held = namespace(value).where(update, value, self._held)
            self._count += 1
        self._n += 1
        return self._held
