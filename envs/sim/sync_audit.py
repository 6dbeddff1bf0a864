"""Host syncs of realgap's own code while an env steps, found on the CPU and on CUDA.

Rule: realgap code that runs inside a step (MDP terms, action terms, actuators, event terms, the rsl-rl wrapper's own
lines) never reads a device value on the host. Why: on CUDA each such read (``float(x)``, ``x.item()``, ``bool(mask)``,
a boolean-mask index, ``torch.tensor(..., device=...)``) stalls the CPU until the GPU has caught up, every step.

Isaac Lab and rsl-rl sync on their own (``reset_buf.nonzero()`` in every ``step``, the logger's episode buffers); those
are not realgap's to remove, so a sync is attributed by the call stack (:func:`owner`): it is realgap's when a realgap
frame sits deeper than the outermost library frame (realgap code called by Isaac Lab: a term, an actuator), or when no
library frame is on the stack at all (the wrapper's own code). Two recorders use that rule:

- :class:`HostReadAudit`, a ``TorchFunctionMode`` that records every call of a tensor operation that reads device
  values on the host. It runs on any device, so the CPU sim tier checks the per-step path without a GPU (on the CPU the
  calls are cheap, but each would be a sync on CUDA).
- :func:`cuda_sync_warnings`: torch's own check (``torch.cuda.set_sync_debug_mode("warn")``) with each warning's stack
  recorded; the gpu tier's ground truth.
"""

from __future__ import annotations

import contextlib
import inspect
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

HOST_READS = frozenset(
    {
        "item",
        "tolist",
        "__bool__",
        "__float__",
        "__int__",
        "__index__",
        "__complex__",
        "__format__",
        "__repr__",
        "nonzero",
        "argwhere",
        "numpy",
        "cpu",
        "unique",
        "unique_consecutive",
        "masked_select",
        "equal",
        "allclose",
        "is_nonzero",
        "bincount",
    }
)
"""Tensor operations that read device values on the host (or size their output by them): a sync on CUDA."""
LIBRARIES = ("isaaclab", "rsl_rl", "newton", "warp", "mujoco_warp", "tensordict", "gymnasium")
"""Top-level packages whose frames are a library's (their syncs are theirs); ``isaaclab_*`` packages included."""
RESET_VALIDATION = frozenset(
    {
        "consistency_verdict",
        "box_inertia_c",
        "_require_positive",
        "perturb_log_cholesky",
        "attach_payload",
        "combine_bodies",
        "cast_consistent",
        "log_cholesky_from_body",
        "set_body",
    }
)
"""Functions of :mod:`realgap.envs.dr` that check every body drawn at a reset (physically consistent, positive) and
raise a clear error before an impossible body reaches the solver: one host read per check, at resets only. They are
the reads the per-step audit still reports; :func:`HostRead.validation` tells them apart."""
_HOST_SIDE: set[tuple[str, str]] = set()


def host_side(fn: Callable) -> Callable:
    """Mark ``fn`` as reading only tensors already on the host (e.g. :class:`realgap.envs.sim.device_stats.HostMirror`
    hands back completed copies): its reads are not syncs, on the CPU where the audit cannot tell them apart."""
    _HOST_SIDE.add((fn.__module__, fn.__code__.co_name))
    return fn


def frame_kind(module: str) -> str:
    """``"realgap"``, ``"library"`` (:data:`LIBRARIES`) or ``"other"`` (torch, the standard library, a test or a
    script), from the module name of a frame."""
    top = module.split(".")[0]
    if top == "realgap" and module != __name__:
        return "realgap"
    return "library" if top.split("_")[0] in LIBRARIES or top in LIBRARIES else "other"


def owner(kinds: list[str]) -> str:
    """Whose sync it is, from the frame kinds of the stack, outermost first: ``"realgap"`` when the innermost realgap
    frame is deeper than the outermost library frame (or there is no library frame), else ``"library"``; ``"other"``
    without any realgap frame below a library (a test or script's own read)."""
    realgap = [i for i, k in enumerate(kinds) if k == "realgap"]
    library = [i for i, k in enumerate(kinds) if k == "library"]
    if realgap and (not library or realgap[-1] > library[0]):
        return "realgap"
    return "library" if library else "other"


@dataclass(frozen=True)
class HostRead:
    """One recorded host read: the operation, whose it is, and the innermost realgap frame (``file:line func``)."""

    op: str
    owner: str
    where: str

    @property
    def validation(self) -> bool:
        """A read of :data:`RESET_VALIDATION` (the body checks at resets)."""
        return self.where.rsplit(" ", 1)[-1] in RESET_VALIDATION


def _classify(op: str, frame: FrameType | None) -> HostRead:
    """The read ``op`` made with ``frame`` innermost, attributed by :func:`owner`."""
    stack = []
    while frame is not None:
        stack.append(
            (frame.f_globals.get("__name__", ""), frame.f_code.co_name, frame.f_code.co_filename, frame.f_lineno)
        )
        frame = frame.f_back
    stack.reverse()  # outermost first
    kinds = [frame_kind(module) for module, *_ in stack]
    if any((module, name) in _HOST_SIDE for module, name, *_ in stack):
        kinds = ["other"] * len(kinds)  # a read of a host copy (host_side): not a sync
    mine = [f for f, k in zip(stack, kinds, strict=True) if k == "realgap"]
    _, name, filename, line = mine[-1] if mine else stack[-1]
    return HostRead(op, owner(kinds), f"{filename}:{line} {name}")


def _caller() -> FrameType | None:
    """The frame that called the function calling this one."""
    frame = inspect.currentframe()
    return frame.f_back.f_back if frame is not None and frame.f_back is not None else None


def _bool_index(index: Any) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in items)


class HostReadAudit(TorchFunctionMode):
    """Records the host reads (:data:`HOST_READS`, boolean-mask indexing, ``torch.tensor``/``as_tensor`` with a
    ``device``) made while it is active; :attr:`reads` keeps every one with its owner (:func:`owner`).

    Use ``with HostReadAudit() as audit: env.step(...)``, then ``audit.mine()``: realgap's reads.
    """

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[HostRead] = []

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        hit = name in HOST_READS
        if name in ("__getitem__", "__setitem__") and len(args) > 1:
            hit = _bool_index(args[1])
            name = f"{name}[bool mask]"
        elif (
            name in ("tensor", "as_tensor")
            and "device" in kwargs
            and not isinstance(args[0] if args else None, torch.Tensor)
        ):
            hit = True
        elif name == "where" and len(args) == 1 and not kwargs:
            hit = True
        if hit:
            self.reads.append(_classify(name, _caller()))
        return func(*args, **kwargs)

    def mine(self) -> list[HostRead]:
        """The reads realgap's own code made."""
        return [r for r in self.reads if r.owner == "realgap"]


@contextlib.contextmanager
def cuda_sync_warnings() -> Iterator[list[HostRead]]:
    """Record every CUDA host sync torch reports (``set_sync_debug_mode("warn")``) in the block, with its owner.

    Yields the list the reads are appended to; the debug mode is back to ``"default"`` on exit.
    """
    reads: list[HostRead] = []
    original = warnings.showwarning

    def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        if "synchroniz" in str(message):
            reads.append(_classify("cuda sync", _caller()))
        else:
            original(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        torch.cuda.set_sync_debug_mode("warn")
        try:
            yield reads
        finally:
            torch.cuda.set_sync_debug_mode("default")
