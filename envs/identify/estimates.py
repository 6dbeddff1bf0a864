"""What identification reports per parameter and per joint (:class:`Estimate`, :class:`JointFit`).

Their own module, below both :mod:`realgap.envs.identify.fit` (the linear fits) and
:mod:`realgap.envs.identify.replay` (the replay fit), so neither imports the other to share them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Estimate:
    """One identified parameter: ``value ± std`` in ``unit``, or not identifiable with ``reason``."""

    value: float | None
    std: float | None
    unit: str
    method: str = ""
    reason: str = ""

    @property
    def identifiable(self) -> bool:
        return self.value is not None

    @classmethod
    def missing(cls, unit: str, reason: str) -> Estimate:
        return cls(None, None, unit, reason=reason)


@dataclass
class JointFit:
    """Everything identified for one joint, plus the arrays the plot shows."""

    joint: str
    index: int
    samples: np.ndarray  # indices into the log
    estimates: dict[str, Estimate] = field(default_factory=dict)
    tau_predicted: np.ndarray | None = None
    q_replayed: np.ndarray | None = None
