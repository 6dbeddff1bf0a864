"""Progress of long commands: count, elapsed time, ETA and a few fields, formatted by tqdm.

On a terminal a tqdm bar redraws in place; anywhere else (CI logs, a file, a pipe) one plain line is printed per
``interval_s`` and at the end, so a log stays readable. A wall-clock budget (``train.py --max_minutes``) shortens the
expected total: the ETA is that of whichever ends first, the iteration count or the budget.

No simulator import; scripts and the training runner share it.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any, TextIO

from tqdm import tqdm

MISSING = "—"
"""Shown for a metric that has no value yet (no episode has ended), instead of ``nan``."""

LINE_FORMAT = "{desc} {n_fmt}/{total_fmt} {unit} [{elapsed} elapsed, ETA {remaining}, {rate_fmt}]{postfix}"
BAR_FORMAT = "{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed} elapsed, ETA {remaining}]{postfix}"


def fmt_value(value: Any, digits: int = 3) -> str:
    """A metric for a user-facing line: ``—`` for None or NaN, floats with ``digits`` decimals."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def expected_total(n: int, total: int, elapsed_s: float, budget_s: float | None) -> int:
    """How many steps the job will have done when it ends: ``total``, or fewer when the wall-clock budget ends it.

    A budgeted job stops after the step that crosses the budget, so at the mean step time so far it does
    ``floor(left / per_step) + 1`` more (at least none past ``total``).
    """
    if budget_s is None or n <= 0:
        return total
    per_step = elapsed_s / n
    left = budget_s - elapsed_s
    if left <= 0:
        return n
    return min(total, n + int(left // per_step) + 1) if per_step > 0 else total


class Progress:
    """Progress of ``total`` steps of ``unit``.

    Args:
        desc: Label at the start of the line (e.g. ``[realgap] train``).
        total: Steps the job will do at most.
        unit: What a step is (``it``, ``points``, ``runs``).
        budget_s: Wall-clock budget, s, that may end the job before ``total`` (None: none).
        interval_s: Seconds between plain lines when the output is not a terminal (0: every update).
        stream: Where to write (default: stdout).
        initial: Steps already done (a resumed run).
        bar: Draw a tqdm bar on a terminal; False keeps plain lines (for output that prints blocks of its own).
    """

    def __init__(
        self,
        desc: str,
        total: int,
        unit: str = "it",
        budget_s: float | None = None,
        interval_s: float = 30.0,
        stream: TextIO | None = None,
        initial: int = 0,
        bar: bool = True,
    ) -> None:
        if total < 1:
            raise ValueError(f"progress total must be >= 1, got {total}")
        self.desc, self.unit, self.total, self.budget_s = desc, unit, total, budget_s
        self.interval_s = interval_s
        self.stream = stream or sys.stdout
        self.n = initial
        self.initial = initial
        self.fields: dict[str, Any] = {}
        self.start = time.monotonic()
        self._last_line = -math.inf
        tty = bar and bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar = (
            tqdm(total=total, initial=initial, desc=desc, unit=unit, file=self.stream, bar_format=BAR_FORMAT)
            if tty
            else None
        )

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def expected_total(self) -> int:
        return expected_total(self.n - self.initial, self.total - self.initial, self.elapsed(), self.budget_s) + (
            self.initial
        )

    def _postfix(self) -> str:
        return ", ".join(f"{k}={fmt_value(v)}" for k, v in self.fields.items())

    def line(self) -> str:
        """The plain progress line (always contains ``ETA``)."""
        elapsed = self.elapsed()
        done = self.n - self.initial
        return tqdm.format_meter(
            self.n,
            self.expected_total(),
            elapsed,
            prefix=self.desc,
            unit=self.unit,
            bar_format=LINE_FORMAT,
            rate=done / elapsed if done and elapsed > 0 else None,
            postfix=self._postfix() or None,
        )

    def update(self, n: int = 1, **fields: Any) -> None:
        """``n`` more steps done; ``fields`` (name=value) are shown after the counts."""
        self.n += n
        self.fields.update(fields)
        if self._bar is not None:
            self._bar.total = self.expected_total()
            self._bar.set_postfix_str(self._postfix(), refresh=False)
            self._bar.update(n)
            return
        now = time.monotonic()
        if now - self._last_line >= self.interval_s or self.n >= self.expected_total():
            self._last_line = now
            print(self.line(), file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
