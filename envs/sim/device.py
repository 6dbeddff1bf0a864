"""Device truth: which device a run uses, and a loud error when a GPU is present that torch cannot use.

Rule: a GPU that ``nvidia-smi`` (the driver) or warp sees while ``torch.cuda.is_available()`` is False is an error,
never a silent CPU run. The usual cause is a torch wheel built for a newer CUDA than the driver supports (a ``+cu130``
wheel needs driver R580 or newer); the message names the driver's CUDA, the wheel's CUDA and the fix. The decision is
a pure function of :class:`GpuFacts` so it is unit-tested with injected facts on a machine without a GPU.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass

ALLOW_CPU_ENV = "REALGAP_ALLOW_CPU"
"""Set to ``1`` to accept the CPU on purpose when a GPU is present but unusable (same as ``--device cpu``)."""

DRIVER_FOR_CUDA = {(13, 0): 580, (12, 8): 570, (12, 6): 560, (12, 4): 550, (12, 1): 530}
"""Minimum NVIDIA driver branch per CUDA runtime major.minor (NVIDIA's CUDA toolkit release notes, Linux)."""


class UnusableGpuError(RuntimeError):
    """A GPU is visible to the driver but torch cannot use it."""


@dataclass(frozen=True)
class GpuFacts:
    """What the machine reports about its GPUs, gathered by :func:`probe` (or injected in tests).

    Attributes:
        smi_gpus: GPU names ``nvidia-smi -L`` lists (empty without a driver or without nvidia-smi).
        driver_version: The driver version ``nvidia-smi`` reports, e.g. ``"570.133.20"``; None when unknown.
        driver_cuda: The highest CUDA version the driver supports, e.g. ``"12.8"``; None when unknown.
        torch_version: ``torch.__version__``.
        torch_cuda: The CUDA the torch wheel was built for (``torch.version.cuda``); None for a CPU-only wheel.
        torch_cuda_available: ``torch.cuda.is_available()``.
        torch_device_count: ``torch.cuda.device_count()`` (0 when unavailable).
        warp_cuda_count: CUDA devices warp sees; None when warp was not asked.
    """

    smi_gpus: tuple[str, ...]
    driver_version: str | None
    driver_cuda: str | None
    torch_version: str
    torch_cuda: str | None
    torch_cuda_available: bool
    torch_device_count: int
    warp_cuda_count: int | None = None

    @property
    def gpu_present(self) -> bool:
        """The driver or warp sees at least one GPU."""
        return bool(self.smi_gpus) or bool(self.warp_cuda_count)


def _version_tuple(text: str | None) -> tuple[int, ...] | None:
    try:
        return tuple(int(p) for p in text.split(".")[:2]) if text else None
    except ValueError:
        return None


def unusable_gpu_reason(facts: GpuFacts) -> str | None:
    """Why a present GPU is unusable by torch, with the fix; None when torch can use it or no GPU is present."""
    if facts.torch_cuda_available or not facts.gpu_present:
        return None
    seen = ", ".join(facts.smi_gpus) or f"{facts.warp_cuda_count} device(s) seen by warp"
    head = (
        f"A GPU is present ({seen}) but torch {facts.torch_version} cannot use it (torch.cuda.is_available() is False)"
    )
    if facts.torch_cuda is None:
        return (
            f"{head}: this torch wheel is CPU-only. Fix: install a CUDA build of torch matching the driver "
            "(pip install torch --index-url https://download.pytorch.org/whl/cu128 for driver >= 570; see "
            "docs/gpu.md)."
        )
    wheel, driver = _version_tuple(facts.torch_cuda), _version_tuple(facts.driver_cuda)
    if wheel is not None and driver is not None and wheel > driver:
        need = DRIVER_FOR_CUDA.get(wheel[:2])
        need_txt = f"R{need} or newer" if need else f"one that supports CUDA {facts.torch_cuda}"
        return (
            f"{head}: the wheel is built for CUDA {facts.torch_cuda} but the driver {facts.driver_version} "
            f"supports CUDA {facts.driver_cuda} at most. Fix: upgrade the driver to {need_txt}, or install a torch "
            f"wheel for CUDA <= {facts.driver_cuda} (e.g. --index-url https://download.pytorch.org/whl/cu"
            f"{facts.driver_cuda.replace('.', '')}); see docs/gpu.md."
        )
    return (
        f"{head}: the wheel's CUDA ({facts.torch_cuda}) fits the driver's ({facts.driver_cuda or 'unknown'}), so "
        "the driver or the device is at fault (CUDA_VISIBLE_DEVICES empty, a driver/library version mismatch after "
        "an upgrade, or the device in an error state). Fix: run nvidia-smi and python -c 'import torch; "
        "torch.cuda.init()' to read the driver's error; reboot after a driver upgrade."
    )


def choose_device(facts: GpuFacts, requested: str | None, allow_cpu: bool = False) -> str:
    """The device a run uses: ``requested`` when given (validated), else ``cuda:0`` when torch can use a GPU, else CPU.

    An omitted ``--device`` on a machine whose GPU torch cannot use raises (unless ``allow_cpu``): a run that was meant
    for the GPU must not quietly take hours on the CPU. An explicit ``--device cpu`` is always honoured.

    Raises:
        UnusableGpuError: A GPU is present that torch cannot use and CUDA was requested or implied; CUDA requested
            without a GPU; an index beyond the visible devices.
        ValueError: ``requested`` is neither ``cpu`` nor ``cuda[:N]``.
    """
    if requested == "cpu":
        return "cpu"
    if requested is not None and not (requested == "cuda" or requested.startswith("cuda:")):
        raise ValueError(f"--device must be 'cpu', 'cuda' or 'cuda:N', got {requested!r}")
    reason = unusable_gpu_reason(facts)
    if reason is not None and (requested is not None or not allow_cpu):
        raise UnusableGpuError(reason + f" To run on the CPU on purpose, pass --device cpu or set {ALLOW_CPU_ENV}=1.")
    if requested is None:
        return "cuda:0" if facts.torch_cuda_available else "cpu"
    if not facts.torch_cuda_available:
        raise UnusableGpuError(
            f"--device {requested} was requested but this machine has no GPU that torch sees "
            f"(torch {facts.torch_version}, CUDA {facts.torch_cuda}); use --device cpu"
        )
    index = int(requested.split(":")[1]) if ":" in requested else 0
    if index >= facts.torch_device_count:
        raise UnusableGpuError(f"--device {requested}: only {facts.torch_device_count} CUDA device(s) visible")
    return f"cuda:{index}"


def _nvidia_smi() -> tuple[tuple[str, ...], str | None, str | None]:
    """GPU names, driver version and driver CUDA version from ``nvidia-smi``; empty/None when it is absent or fails."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return (), None, None
    try:
        listing = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=20)
        header = subprocess.run([exe], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return (), None, None
    gpus = tuple(line.split(" (UUID")[0] for line in listing.stdout.splitlines() if line.startswith("GPU "))
    driver = header.split("Driver Version:")[1].split()[0] if "Driver Version:" in header else None
    cuda = header.split("CUDA Version:")[1].split()[0] if "CUDA Version:" in header else None
    return gpus, driver, cuda


def probe(ask_warp: bool = False) -> GpuFacts:
    """The facts of this machine: ``nvidia-smi``, torch, and optionally warp (which initialises CUDA, ~1 s)."""
    import torch

    gpus, driver, driver_cuda = _nvidia_smi()
    warp_count = None
    if ask_warp:
        import warp as wp

        wp.init()
        warp_count = wp.get_cuda_device_count()
    available = torch.cuda.is_available()
    return GpuFacts(
        gpus,
        driver,
        driver_cuda,
        torch.__version__,
        torch.version.cuda,
        available,
        torch.cuda.device_count() if available else 0,
        warp_count,
    )


def allow_cpu_from_env() -> bool:
    """``REALGAP_ALLOW_CPU=1`` in the environment."""
    return os.environ.get(ALLOW_CPU_ENV, "") not in ("", "0")
