"""RNG states in a checkpoint: python, numpy, torch CPU, and the generator of the run's own CUDA device only.

Rule: save the current device's CUDA generator (never every visible GPU's), record the device, and restore a CUDA state
only into the same kind of device; anything else is reported as not exact instead of crashing. Why: a checkpoint
written on ``cuda:3`` of an 8-GPU machine must resume on a 1-GPU machine or on the CPU, and a CPU generator state is a
different size from a CUDA one (``RNG state is wrong size``).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import torch


def capture_rng(device: str) -> dict[str, Any]:
    """The RNG states a resume needs, with ``device`` recorded; ``"cuda"`` only when ``device`` is a CUDA device."""
    state: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
        "device": str(device),
    }
    if str(device).startswith("cuda"):
        state["cuda"] = torch.cuda.get_rng_state(torch.device(device))
    return state


def restore_rng(state: dict[str, Any], device: str) -> list[str]:
    """Restore ``state`` (from :func:`capture_rng`, or an older checkpoint's) for a run on ``device``.

    The host generators always come back. The CUDA generator comes back into ``device`` when the checkpoint was on
    CUDA too (any index: a run moved from ``cuda:3`` to ``cuda:0`` draws the same numbers); an older checkpoint's list
    of every GPU's state gives the entry of its recorded index, or of 0. Nothing is written into a generator of a
    different kind.

    Returns:
        Notes on what could not be restored (empty when everything was): the caller prints them as "not exact".
    """
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    saved_on = str(state.get("device", "cuda:0" if "cuda" in state else "cpu"))
    notes: list[str] = []
    if saved_on.split(":")[0] != str(device).split(":")[0]:
        notes.append(
            f"the checkpoint was written on {saved_on} and this run is on {device}: the {device} generator "
            "starts from the run's seed, not from the checkpoint"
        )
        return notes
    cuda = state.get("cuda")
    if cuda is None or not str(device).startswith("cuda"):
        return notes
    if isinstance(cuda, (list, tuple)):  # older checkpoints saved every visible GPU's state
        index = int(saved_on.split(":")[1]) if ":" in saved_on else 0
        if index >= len(cuda):
            notes.append(f"the checkpoint holds {len(cuda)} CUDA generator state(s), none for {saved_on}")
            return notes
        cuda = cuda[index]
    torch.cuda.set_rng_state(cuda, torch.device(device))
    return notes
