"""Will the envs fit? An up-front estimate of a CPU run's memory against what the machine has available.

``--num_envs 50000000`` used to start building the env and grow to 6.6 GB over 144 s before the machine refused it,
with no message. The estimate here is a straight line per task, fixed cost plus a per-env cost, measured on this
machine kind (resident memory after the env is built, reset and stepped: docs/errors.md); it is an estimate, said
so in the message, and it refuses only a request above the memory available now (``MemAvailable``), so it never
stops a run that would have fitted by a wide margin. On CUDA the envs live in GPU memory, which this does not model:
the check is skipped there.
"""

from __future__ import annotations

from pathlib import Path

MIB = 1024 * 1024
FOOTPRINT_MIB: dict[str, tuple[float, float]] = {
    "Realgap-Balance-G1": (1180.0, 0.21),
    "Realgap-Grasp-Franka": (1200.0, 0.21),
}
"""``(fixed MiB, MiB per env)`` of one process by task id prefix: resident memory after the env is built, reset and
stepped 10 times, at 8 and 264 envs (balance 1,180 → 1,233 MiB: 0.21 MiB per env; grasp 1,197 → 1,174 MiB, its
per-env cost below the noise of the measurement, so the balance slope stands in as an upper bound). PPO's rollout
storage adds about 24 steps × (observations + actions) floats per env, ~15 KiB."""
DEFAULT_FOOTPRINT_MIB = max(FOOTPRINT_MIB.values())
"""For a task without a measurement: the largest known."""


def available_mib(meminfo: str | Path = "/proc/meminfo") -> float | None:
    """Memory available for new work (``MemAvailable``), MiB; ``None`` where the system does not say (not Linux)."""
    try:
        for line in Path(meminfo).read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def estimate_mib(task: str, num_envs: int, num_procs: int = 1) -> float:
    """Estimated resident memory of a CPU run of ``task`` with ``num_envs`` envs in all over ``num_procs`` processes,
    MiB (each process pays the fixed cost)."""
    fixed, per_env = next((v for k, v in FOOTPRINT_MIB.items() if task.startswith(k)), DEFAULT_FOOTPRINT_MIB)
    return num_procs * fixed + num_envs * per_env


def check_env_memory(task: str, num_envs: int, num_procs: int = 1, available: float | None = None) -> None:
    """Refuse a CPU run whose estimated memory (:func:`estimate_mib`) exceeds the memory available now.

    Args:
        available: MiB available (default: :func:`available_mib`; ``None`` there: nothing is checked).

    Raises:
        ValueError: Names ``--num_envs``, the estimate, what is available and the largest count that fits.
    """
    available = available_mib() if available is None else available
    if available is None:
        return
    need = estimate_mib(task, num_envs, num_procs)
    if need <= available:
        return
    fixed, per_env = next((v for k, v in FOOTPRINT_MIB.items() if task.startswith(k)), DEFAULT_FOOTPRINT_MIB)
    fits = max(0, int((available - num_procs * fixed) / per_env))
    raise ValueError(
        f"--num_envs {num_envs} needs an estimated {need / 1024:.1f} GiB of memory for {task} on the CPU "
        f"({num_procs} x {fixed / 1024:.1f} GiB fixed + {per_env * 1024:.0f} KiB per env, measured), but "
        f"{available / 1024:.1f} GiB is available: at most about {fits} envs fit"
    )
