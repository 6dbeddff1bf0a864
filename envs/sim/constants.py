"""Per-step constants cached on their device: a term builds its constant tensor once, not every step.

Rule: a constant a per-step term needs (an axis, sole points, a TCP offset) comes from :func:`device_constant`, which
returns the same tensor for the same values, dtype and device. Why: ``torch.tensor(values, device="cuda")`` inside a
step copies host memory to the GPU every call, a host sync on the per-step path (and an allocation).
"""

from __future__ import annotations

from functools import lru_cache

import torch

Nested = float | tuple["Nested", ...]


def _frozen(values: object) -> Nested:
    if isinstance(values, (list, tuple)):
        return tuple(_frozen(v) for v in values)
    return float(values)  # type: ignore[arg-type]


@lru_cache(maxsize=256)
def _cached(values: Nested, dtype: torch.dtype, device: str) -> torch.Tensor:
    return torch.tensor(values, dtype=dtype, device=device)


def device_constant(
    values: object, dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu"
) -> torch.Tensor:
    """``torch.tensor(values, dtype, device)``, built on the first call and shared afterwards (read-only by contract).

    Args:
        values: Numbers, or nested lists/tuples of numbers (e.g. ``(S, 3)`` points, m).
        dtype: The tensor's dtype.
        device: Where it lives.
    """
    return _cached(_frozen(values), dtype, str(torch.device(device)))
