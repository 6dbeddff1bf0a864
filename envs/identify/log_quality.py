"""Does a robot log show what it claims? Timing checks on the samples themselves, before a fit is made from them.

A log's ``t`` is ``k · control_dt`` by construction: it says nothing about whether each sample really is the robot one
control period after the previous one. A loaded machine breaks that silently: the driver reads a state that has not
been refreshed (a *repeated*, stale sample), or a period covers two robot ticks (a *gap*: a skipped or late sample),
and the identification then fits a drive to a motion that did not happen (a DDS log on a busy machine gave a knee kp
of 160-200 against the true 228). The samples carry their own evidence: the excited joint's position step over a
period must agree with its measured velocity, ``Δq ≈ control_dt · q̇``, whichever sample's velocity the robot reports
(the one after, as a semi-implicit integrator or an encoder difference gives it, or the mean of both ends). A stale
sample has ``Δq = 0`` while ``q̇`` says it moves; a gap has ``Δq ≈ 2 · control_dt · q̇``.

Bounds (:class:`LogBounds`), measured on in-process excitation logs of the hidden G1 (seed 3, knee and wrist, 1,920
samples): clean logs have no repeated sample and 0-0.55 % of moving samples off by more than half a period's motion
(none with noise-free sensors, 0.55 % with the ``typical`` sensor noise); dropping one sample in 25 puts 3.8-4.3 %
there and repeating one in 25 gives 54-59 repeated samples. The bounds sit between: a log past them is refused by
:func:`check_log_quality`, or, where the caller accepts it, its problems are recorded with the fit.

A noisy encoder breaks the half-motion rule without any timing fault (the held-out suite's worn G1, 1 mrad on q:
29 % of a clean log's moving samples), so a sample is judged only where its motion exceeds
:attr:`LogBounds.noise_sigmas` times the log's own noise, measured robustly from the samples; a log with too few such
samples is reported as too noisy or too slow to check, not as late.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from realgap.envs.deploy.log import RobotLog


@dataclass(frozen=True)
class LogBounds:
    """What a log must meet before a fit is made from it."""

    max_repeated: int = 0
    """Stale samples allowed: the excited joint's ``q`` unchanged bit for bit while its ``q̇`` moves it by more than
    :attr:`min_step_rad` over the period. None: a real encoder that moves changes its reading."""
    max_inconsistent_fraction: float = 0.01
    """Fraction of moving samples whose position step disagrees with the velocity by more than half a period's
    motion under both velocity conventions (gaps, late samples)."""
    min_step_rad: float = 5e-4
    """A sample counts as moving when ``control_dt · |q̇|`` exceeds this, rad (above encoder and sensor noise)."""
    noise_sigmas: float = 8.0
    """A moving sample is judged only where its motion over the period exceeds this many times the log's own noise on
    ``Δq − control_dt·q̇`` (robust: 1.4826 · median absolute deviation), so the half-motion test below fails by
    noise at more than 4 σ: a noisy encoder is not taken for a timing fault, a gap (twice the motion) still is."""
    min_judged: int = 50
    """Fewest judged samples a timing verdict needs; fewer (a log too noisy or too slow) is a problem of its own."""
    rate_rel_tol: float = 1e-6
    """``control_dt`` must equal the export's control period within this relative tolerance."""


DEFAULT_BOUNDS = LogBounds()


@dataclass(frozen=True)
class LogQuality:
    """What :func:`log_quality` measured, and the problems against the bounds (empty: the log meets them)."""

    moving: int
    """Moving samples judged: moving more than the bounds' step and noise floor (the share's denominator)."""
    repeated: int
    inconsistent: int
    rate_hz: float
    expected_hz: float | None
    problems: tuple[str, ...]
    noise_rad: float = 0.0
    """The log's robust noise on ``Δq − control_dt·q̇`` per period, rad."""

    def line(self) -> str:
        """One line for the command's output."""
        share = self.inconsistent / max(self.moving, 1)
        return (
            f"log timing: {self.rate_hz:g} Hz (export: {self.expected_hz or 'n/a'} Hz), {self.moving} moving "
            f"samples judged (noise {self.noise_rad * 1e3:.2g} mrad per period), {self.repeated} repeated, "
            f"{self.inconsistent} ({share:.2%}) with a position step that disagrees with the velocity"
        )


def log_quality(log: RobotLog, bounds: LogBounds = DEFAULT_BOUNDS) -> LogQuality:
    """Measure the timing evidence of ``log`` (see the module docstring) on each excited joint's segments."""
    k = np.arange(log.num_samples - 1)
    seg = np.asarray(log.segment)
    k = k[(seg[k] >= 0) & (seg[k] == seg[k + 1])]
    if not k.size:  # a policy log: judge every joint that moves
        k = np.repeat(np.arange(log.num_samples - 1), len(log.joint_names))
        j = np.tile(np.arange(len(log.joint_names)), log.num_samples - 1)
    else:
        j = seg[k]
    dt = log.control_dt
    dq = log.q[k + 1, j] - log.q[k, j]
    after, mean = dt * log.qd[k + 1, j], dt * 0.5 * (log.qd[k, j] + log.qd[k + 1, j])
    moving = np.abs(after) > bounds.min_step_rad
    repeated = int(np.sum(moving & (dq == 0.0)))
    residual = (dq - after)[moving]
    sigma = 1.4826 * float(np.median(np.abs(residual - np.median(residual)))) if residual.size else 0.0
    judged = moving & (np.abs(after) > bounds.noise_sigmas * sigma)
    with np.errstate(divide="ignore", invalid="ignore"):
        off = np.minimum(np.abs(dq / after - 1.0), np.abs(dq / mean - 1.0))
    inconsistent = int(np.sum(judged & ~(off <= 0.5)))  # NaN (a zero mean velocity) counts as off
    expected = _expected_hz(log)
    problems = []
    if expected is not None and abs(1.0 / dt - expected) > bounds.rate_rel_tol * expected:
        problems.append(f"sampled at {1.0 / dt:g} Hz (control_dt {dt:g} s), but the export commands {expected:g} Hz")
    if repeated > bounds.max_repeated:
        problems.append(
            f"{repeated} repeated samples (the joint's position unchanged while its velocity moves "
            f"it; at most {bounds.max_repeated}): stale states, read before the robot sent new ones"
        )
    n = int(judged.sum())
    if moving.any() and n < bounds.min_judged:
        problems.append(
            f"only {n} of {int(moving.sum())} moving samples move more than {bounds.noise_sigmas:g}× the log's noise "
            f"({sigma * 1e3:.2g} mrad per period; at least {bounds.min_judged}): too noisy or too slow to check its "
            "timing — excite faster"
        )
    if n and inconsistent > bounds.max_inconsistent_fraction * n:
        problems.append(
            f"{inconsistent} of {n} judged moving samples ({inconsistent / n:.1%}; at most "
            f"{bounds.max_inconsistent_fraction:.1%}) move by another distance than their velocity says: "
            "skipped or late samples"
        )
    return LogQuality(n, repeated, inconsistent, 1.0 / dt, expected, tuple(problems), sigma)


def _expected_hz(log: RobotLog) -> float | None:
    try:
        return float(log.metadata().rates.control_hz)
    except Exception:  # a log whose metadata does not parse is refused by load_log; nothing to compare here
        return None


class LogQualityError(ValueError):
    """A log that does not meet the timing bounds; the message names each problem and the bound."""


def check_log_quality(log: RobotLog, source: str, bounds: LogBounds = DEFAULT_BOUNDS) -> LogQuality:
    """:func:`log_quality`, refusing a log past the bounds.

    Raises:
        LogQualityError: Names the log, each problem and how to accept it anyway.
    """
    quality = log_quality(log, bounds)
    if quality.problems:
        raise LogQualityError(
            f"{source}: the log's timing cannot be trusted for a fit:\n  - "
            + "\n  - ".join(quality.problems)
            + "\n(record it again on a quieter machine, or pass --accept_log_problems to fit it "
            "anyway with the problems recorded in the spec)"
        )
    return quality
