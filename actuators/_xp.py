"""Array-namespace helpers: the actuator math runs unchanged on numpy arrays and on torch tensors.

The deploy runtime is numpy + onnxruntime only, so nothing here imports torch. A torch tensor is recognised by the
module of its type; torch is then already in ``sys.modules`` (whoever made the tensor imported it) and is looked up
there. numpy and torch share the element-wise functions this package uses (``minimum``, ``maximum``, ``where``,
``tanh``, ``abs``, ``sign``); the few calls that differ (allocation, integer sampling, stacking) live here.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import numpy as np

Array = Any
"""A numpy array or a torch tensor (annotation only: torch is never imported by this package)."""

EnvIds = Any
"""Environment indices: ``None`` or ``slice(None)`` for all, a sequence of ints, a numpy int array or a torch tensor."""


def is_torch(x: object) -> bool:
    """True when ``x`` is a torch tensor (checked by its type's module, without importing torch)."""
    return type(x).__module__.startswith("torch")


def clip(x: Array, lo: Array | float, hi: Array | float) -> Array:
    """``min(max(x, lo), hi)`` in one call; ``lo`` and ``hi`` both scalars or both arrays of ``x``'s backend."""
    return namespace(x).clip(x, lo, hi)


def namespace(*arrays: object) -> ModuleType:
    """The array module to compute with: torch if any argument is a torch tensor, else numpy."""
    for a in arrays:
        if is_torch(a):
            return sys.modules["torch"]
    return np


def as_like(value: object, ref: Array) -> Array:
    """``value`` (float, sequence, numpy array or tensor) as an array of ``ref``'s backend, dtype and device.

    A tensor that already matches is returned as is (no copy), so per-env parameter tensors stay shared.
    """
    if is_torch(ref):
        torch = sys.modules["torch"]
        if is_torch(value) and value.dtype == ref.dtype and value.device == ref.device:
            return value
        return torch.as_tensor(value, dtype=ref.dtype, device=ref.device)
    if is_torch(value):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=ref.dtype)


def zeros_like_shape(shape: tuple[int, ...], ref: Array, *, integer: bool = False) -> Array:
    """Zeros of ``shape`` with ``ref``'s backend and device; ``ref``'s dtype, or int64 when ``integer``."""
    if is_torch(ref):
        torch = sys.modules["torch"]
        return torch.zeros(shape, dtype=torch.int64 if integer else ref.dtype, device=ref.device)
    return np.zeros(shape, dtype=np.int64 if integer else np.asarray(ref).dtype)


def as_int_like(values: object, ref: Array) -> Array:
    """``values`` as an int64 array of ``ref``'s backend and device."""
    if is_torch(ref):
        torch = sys.modules["torch"]
        return torch.as_tensor(values, dtype=torch.int64, device=ref.device)
    if is_torch(values):
        values = values.detach().cpu().numpy()
    return np.asarray(values, dtype=np.int64)


def arange_like(n: int, ref: Array) -> Array:
    """``0 .. n-1`` as int64 with ``ref``'s backend and device."""
    if is_torch(ref):
        torch = sys.modules["torch"]
        return torch.arange(n, device=ref.device)
    return np.arange(n)


def take_rows(x: Array, rows: Array) -> Array:
    """``x[rows]`` for a 1-D int index (torch: ``index_select``, much faster than advanced indexing on the CPU)."""
    if is_torch(x):
        return x.index_select(0, rows)
    return x[rows]


def concat_cols(arrays: list[Array]) -> Array:
    """Concatenate ``(E, J_i)`` arrays along axis 1 (contiguous rows; much cheaper than stacking on a new last axis)."""
    if is_torch(arrays[0]):
        return sys.modules["torch"].cat(arrays, dim=1)
    return np.concatenate(arrays, axis=1)


def randint(low: int, high: int, n: int, generator: Any, device: Any = None) -> Array:
    """``n`` integers drawn uniformly from ``{low, ..., high}`` (both inclusive) with an explicit generator.

    Args:
        low: Smallest value.
        high: Largest value (inclusive).
        n: Number of draws.
        generator: ``numpy.random.Generator`` (returns a numpy int64 array) or ``torch.Generator`` (returns an int64
            tensor, drawn on the generator's device and moved to ``device`` when given).
        device: Target torch device; ignored for numpy.
    """
    if isinstance(generator, np.random.Generator):
        return generator.integers(low, high + 1, size=n, dtype=np.int64)
    if is_torch(generator):
        torch = sys.modules["torch"]
        out = torch.randint(low, high + 1, (n,), generator=generator, device=generator.device, dtype=torch.int64)
        return out if device is None else out.to(device)
    raise TypeError(f"generator must be a numpy.random.Generator or a torch.Generator, got {type(generator).__name__}")


def env_index(env_ids: EnvIds, num_envs: int, ref: Array) -> tuple[Array | slice, int]:
    """Normalise environment ids for indexing arrays of ``ref``'s backend.

    Returns:
        ``(index, count)``: a slice or an int64 index array on ``ref``'s device, and how many envs it selects.
    """
    if env_ids is None:
        return slice(None), num_envs
    if isinstance(env_ids, slice):
        return env_ids, len(range(num_envs)[env_ids])
    if is_torch(ref):
        torch = sys.modules["torch"]
        idx = torch.as_tensor(env_ids, dtype=torch.int64, device=ref.device).reshape(-1)
        return idx, int(idx.numel())
    if is_torch(env_ids):
        env_ids = env_ids.detach().cpu().numpy()
    idx = np.asarray(env_ids, dtype=np.int64).reshape(-1)
    return idx, int(idx.size)
