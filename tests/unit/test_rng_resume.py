"""Resume across devices and GPU counts: RNG states for the run's own device only, a mismatch stated, never a crash.

The CUDA generator of a real device cannot be exercised here; a CPU-only machine checks what a CPU checkpoint holds,
that foreign CUDA states (a list of 8 GPUs' states, or one) are not written into the CPU, and that it says so.
"""

import random

import numpy as np
import pytest
import torch

from realgap.envs.run.rng_state import capture_rng, restore_rng

pytestmark = pytest.mark.unit


def _draws() -> tuple[float, float, float]:
    return random.random(), float(np.random.rand()), float(torch.rand(()))


def test_cpu_checkpoint_records_the_device_and_no_cuda_state():
    state = capture_rng("cpu")
    assert state["device"] == "cpu" and "cuda" not in state


def test_host_generators_come_back_exactly():
    state = capture_rng("cpu")
    first = _draws()
    _draws()
    assert restore_rng(state, "cpu") == []
    assert _draws() == first


def test_cuda_checkpoint_resumed_on_the_cpu_restores_host_rngs_and_says_not_exact():
    state = capture_rng("cpu")
    first = _draws()
    # an 8-GPU run's older checkpoint: every visible GPU's state; a CUDA state has a different size than the CPU's
    state |= {"device": "cuda:3", "cuda": [torch.zeros(16, dtype=torch.uint8)] * 8}
    notes = restore_rng(state, "cpu")
    assert len(notes) == 1 and "cuda:3" in notes[0] and "this run is on cpu" in notes[0]
    assert _draws() == first  # the host generators still resume exactly
    assert torch.get_rng_state().numel() != 16  # the CUDA state never went into the CPU generator


def test_old_checkpoint_without_a_device_entry_but_with_cuda_states_is_treated_as_cuda():
    state = capture_rng("cpu")
    del state["device"]
    state["cuda"] = [torch.zeros(16, dtype=torch.uint8)]
    assert "cuda:0" in restore_rng(state, "cpu")[0]


def test_cpu_checkpoint_resumed_on_cuda_says_the_cuda_generator_starts_from_the_seed():
    state = capture_rng("cpu")
    # no CUDA call is made: the kinds differ, so only the host generators are restored
    notes = restore_rng(state, "cuda:0")
    assert len(notes) == 1 and "written on cpu" in notes[0]
