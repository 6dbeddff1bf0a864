"""First-order low-pass filters per env and joint: the drive's current loop (torque) and command smoothing (position).

A first-order lag ``τ_c·ẏ = x − y`` with corner frequency ``f_c = 1/(2π·τ_c)``, discretized exactly for an input held
over each physics step ``dt`` (zero-order hold):

    y[k] = y[k−1] + α·(x[k] − y[k−1]),      α = 1 − exp(−2π·f_c·dt),

written here as ``y[k] = x[k] + β·(y[k−1] − x[k])`` with ``β = 1 − α = exp(−2π·f_c·dt)``, so that ``f_c = inf``
gives ``β = 0`` and the output *is* the input, bit for bit (a joint with no filter inside a filtered chain).
The step response is ``1 − β^k``: 63.2 % (``1 − e⁻¹``) after ``t = k·dt = 1/(2π·f_c)``.

A discrete filter cannot represent a corner at or above the Nyquist rate ``1/(2·dt)``: such a cutoff is refused
(:func:`check_cutoff`) rather than silently acting as "no filter".
"""

from __future__ import annotations

import math

import numpy as np

from realgap.actuators._xp import Array, EnvIds, as_like, env_index, namespace, zeros_like_shape

_HOST = np.zeros((), dtype=np.float64)  # checks run on the host, in float64


def lowpass_decay(cutoff_hz: Array | float, dt: float) -> Array | float:
    """Per-step decay ``β = exp(−2π·f_c·dt)`` of a first-order low-pass (``f_c = inf``: 0, the identity).

    Args:
        cutoff_hz: Corner frequency ``f_c`` > 0, Hz (``inf``: no filter).
        dt: Step the filter runs at, s.

    Shape:
        Broadcasts; a float for a float input.
    """
    if isinstance(cutoff_hz, int | float):
        return math.exp(-2.0 * math.pi * cutoff_hz * dt)
    return namespace(cutoff_hz).exp(-2.0 * math.pi * dt * cutoff_hz)


def check_cutoff(cutoff_hz: Array | float, dt: float, owner: str, field: str) -> None:
    """Refuse a corner frequency that is not a positive number below the Nyquist rate ``1/(2·dt)``.

    ``inf`` is allowed (it means "no filter"). Raises ``ValueError`` naming ``owner``, ``field``, the worst value and
    the limit.

    Args:
        cutoff_hz: ``f_c``, Hz, scalar or array.
        dt: Step the filter runs at, s.
        owner: Who owns the value (for the message), e.g. ``"ActuatorSpec 'knee'"``.
        field: Field name (for the message), e.g. ``"torque_filter_hz"``.
    """
    nyquist = 1.0 / (2.0 * dt)
    for v in as_like(cutoff_hz, _HOST).reshape(-1).tolist():
        if math.isnan(v) or v <= 0:
            raise ValueError(f"{owner}: {field} [Hz] must be > 0 (inf: no filter), got {v!r}")
        if math.isfinite(v) and v >= nyquist:
            raise ValueError(
                f"{owner}: {field} [Hz] must be below the Nyquist rate 1/(2·dt) = {nyquist:.6g} Hz of the "
                f"dt = {dt} s step, got {v!r}"
            )


class LowPass:
    """Stateful first-order low-pass ``y[k] = x[k] + β·(y[k−1] − x[k])``, one state per env and channel.

    After construction or :meth:`reset` an env has no past: its first output is its input (no ramp up from zero or
    from the previous episode), like :class:`~realgap.actuators.hold.TargetInterpolator`. Call :meth:`step` exactly
    once per physics step. The output is the new state: treat it as read-only.

    Args:
        num_envs: ``E``.

    Shape:
        Inputs ``(E, J)``; ``decay`` ``()``, ``(J,)`` or ``(E, J)``.
    """

    def __init__(self, num_envs: int) -> None:
        if num_envs <= 0:
            raise ValueError(f"num_envs must be > 0, got {num_envs}")
        self.num_envs = num_envs
        self._y: Array | None = None
        self._fresh: Array | None = None  # (E,) bool: the next output of this env is its input
        self._any_fresh = False

    @property
    def state(self) -> Array | None:
        """Last output ``y[k−1]`` (``None`` before the first step), ``(E, J)``."""
        return self._y

    def reset(self, env_ids: EnvIds = None) -> None:
        """Forget the past of ``env_ids``: their next output is their next input."""
        if self._y is None:
            return
        idx, _ = env_index(env_ids, self.num_envs, self._fresh)
        self._fresh[idx] = True
        self._any_fresh = True

    def step(self, x: Array, decay: Array | float) -> Array:
        """Filter one physics step.

        Args:
            x: Input ``x[k]``.
            decay: ``β = exp(−2π·f_c·dt)`` in ``[0, 1)`` (see :func:`lowpass_decay`).

        Shape:
            ``x`` ``(E, J)``; output ``(E, J)``.
        """
        if self._y is None or tuple(self._y.shape) != tuple(x.shape):
            self._y = x * 1
            self._fresh = zeros_like_shape((self.num_envs,), x, integer=True) != 0
            self._any_fresh = False
            return self._y
        y = x + as_like(decay, x) * (self._y - x)
        if self._any_fresh:
            y = namespace(x).where(self._fresh.reshape(-1, 1), x, y)
            self._fresh[:] = False
            self._any_fresh = False
        self._y = y
        return y
