"""Device truth: a GPU torch cannot use is an error naming the cause and the fix, never a silent CPU run.

The decision is a pure function of injected facts (what nvidia-smi, warp and torch report), so every case runs here
without a GPU; the last test probes this machine for real.
"""

import dataclasses

import pytest

from realgap.envs.sim.device import GpuFacts, UnusableGpuError, choose_device, probe, unusable_gpu_reason
from realgap.envs.sim.physics import DeviceUnavailableError, resolve_device

pytestmark = pytest.mark.unit

H200 = ("GPU 0: NVIDIA H200",)
NO_GPU = GpuFacts((), None, None, "2.9.0+cpu", None, False, 0)
GOOD = GpuFacts(H200, "580.65.06", "13.0", "2.9.0+cu130", "13.0", True, 1)
# a +cu130 wheel on an R570 driver (CUDA 12.8 at most): nvidia-smi sees the GPU, torch does not
OLD_DRIVER = GpuFacts(H200, "570.133.20", "12.8", "2.9.0+cu130", "13.0", False, 0)


def test_no_gpu_anywhere_picks_the_cpu():
    assert choose_device(NO_GPU, None) == "cpu" and unusable_gpu_reason(NO_GPU) is None


def test_usable_gpu_is_picked_by_default_and_by_index():
    assert choose_device(GOOD, None) == "cuda:0"
    assert choose_device(GOOD, "cuda") == "cuda:0"
    with pytest.raises(UnusableGpuError, match=r"--device cuda:1: only 1 CUDA device"):
        choose_device(GOOD, "cuda:1")


def test_driver_too_old_for_the_wheel_names_both_cudas_and_the_fix():
    with pytest.raises(UnusableGpuError) as err:
        choose_device(OLD_DRIVER, None)
    msg = str(err.value)
    # the cause (wheel CUDA 13.0 > driver CUDA 12.8) and both fixes (driver R580, or a cu128 wheel)
    assert "built for CUDA 13.0" in msg and "supports CUDA 12.8" in msg
    assert "R580 or newer" in msg and "whl/cu128" in msg and "--device cpu" in msg


def test_cpu_only_wheel_on_a_gpu_machine_says_so():
    facts = dataclasses.replace(OLD_DRIVER, torch_version="2.9.0+cpu", torch_cuda=None)
    with pytest.raises(UnusableGpuError, match="CPU-only"):
        choose_device(facts, "cuda:0")


def test_matching_cudas_blame_the_driver_or_device():
    facts = dataclasses.replace(OLD_DRIVER, driver_cuda="13.0", driver_version="580.65.06")
    assert "driver or the device is at fault" in unusable_gpu_reason(facts)


def test_warp_alone_seeing_a_gpu_counts():
    facts = dataclasses.replace(NO_GPU, warp_cuda_count=1, torch_version="2.9.0+cu130", torch_cuda="13.0")
    with pytest.raises(UnusableGpuError, match=r"1 device\(s\) seen by warp"):
        choose_device(facts, None)


def test_cpu_on_purpose_is_honoured():
    assert choose_device(OLD_DRIVER, "cpu") == "cpu"
    assert choose_device(OLD_DRIVER, None, allow_cpu=True) == "cpu"
    with pytest.raises(UnusableGpuError):  # an explicit CUDA request still fails with allow_cpu
        choose_device(OLD_DRIVER, "cuda", allow_cpu=True)


def test_cuda_requested_without_any_gpu_and_bad_values():
    with pytest.raises(UnusableGpuError, match="no GPU that torch sees"):
        choose_device(NO_GPU, "cuda:0")
    with pytest.raises(ValueError, match="--device must be"):
        choose_device(GOOD, "gpu")


def test_resolve_device_on_this_machine_is_consistent_with_its_facts():
    facts = probe()
    if unusable_gpu_reason(facts) is not None:
        with pytest.raises(DeviceUnavailableError):
            resolve_device(None)
    else:
        assert resolve_device(None) == ("cuda:0" if facts.torch_cuda_available else "cpu")
    assert resolve_device("cpu") == "cpu"
