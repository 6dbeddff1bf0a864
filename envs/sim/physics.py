"""Physics backend settings chosen per device, in one place, so one task config serves CPU and GPU.

The embedded default is kitless Isaac Lab with Newton's MuJoCo-Warp solver: warp compiles the same kernels for the CPU
(this machine, CI, a laptop) or for CUDA. Only two knobs differ by device: CUDA graphs (required off on the CPU,
wanted on for CUDA speed) and the device string itself.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from realgap.envs.sim.device import UnusableGpuError, allow_cpu_from_env, choose_device, probe

if TYPE_CHECKING:
    from isaaclab_newton.physics import NewtonCfg


class DeviceUnavailableError(RuntimeError):
    """A CUDA device was requested (or a present GPU implied) that torch cannot use."""


def default_device() -> str:
    """``"cuda:0"`` when torch sees a CUDA device, else ``"cpu"``: the config default, cheap at import time.

    Every run resolves its real device through :func:`resolve_device`, which refuses an unusable GPU."""
    import torch

    return "cuda:0" if torch.cuda.is_available() else "cpu"


def resolve_device(requested: str | None) -> str:
    """Validate a ``--device`` value; ``None`` picks ``cuda:0`` when torch can use a GPU, else the CPU.

    A GPU that the driver sees but torch cannot use is an error naming the cause and the fix
    (:func:`realgap.envs.sim.device.choose_device`), never a silent CPU run.

    Raises:
        DeviceUnavailableError: CUDA requested or implied but unusable, or an index beyond the visible devices.
        ValueError: Neither ``cpu`` nor ``cuda[:N]``.
    """

    if requested == "cpu":
        return "cpu"
    try:
        return choose_device(probe(), requested, allow_cpu=allow_cpu_from_env())
    except UnusableGpuError as err:
        raise DeviceUnavailableError(str(err)) from err


def rank_device(device: str, local_rank: int, num_procs: int, gpu_count: int) -> str:
    """The device of one of ``num_procs`` processes (torchrun): one GPU per process on CUDA.

    On the CPU every process steps its share of the envs on its own core and the device stays ``"cpu"``. On CUDA
    process ``LOCAL_RANK`` = r drives ``cuda:r`` (rsl-rl's NCCL path requires exactly that device per local rank);
    a ``--device cuda:N`` index is then ignored: choose the GPUs with ``CUDA_VISIBLE_DEVICES``. A single process keeps
    the device it was given.

    Args:
        device: The resolved ``--device`` (:func:`resolve_device`): ``"cpu"`` or ``"cuda:N"``.
        local_rank: This process's ``LOCAL_RANK`` (0 .. num_procs - 1).
        num_procs: Processes on this machine (``--num_procs``, torchrun's ``nproc_per_node``).
        gpu_count: CUDA devices torch sees (``torch.cuda.device_count()``).

    Raises:
        ValueError: On CUDA, more processes than visible GPUs (the message names both), or a local rank outside
            ``[0, num_procs)``.
    """
    if not device.startswith("cuda"):
        return device
    check_procs_fit_gpus(num_procs, gpu_count)
    if num_procs == 1:
        return device
    if not 0 <= local_rank < num_procs:
        raise ValueError(f"LOCAL_RANK {local_rank} is outside [0, {num_procs}) for {num_procs} processes")
    return f"cuda:{local_rank}"


def check_procs_fit_gpus(num_procs: int, gpu_count: int) -> None:
    """On CUDA each process needs a GPU of its own (NCCL cannot share one device between ranks).

    Raises:
        ValueError: ``num_procs`` exceeds ``gpu_count``; the message names the visible GPU count.
    """
    if num_procs > gpu_count:
        raise ValueError(
            f"--num_procs {num_procs} on CUDA needs one GPU per process, but torch sees {gpu_count} CUDA device(s) "
            f"(CUDA_VISIBLE_DEVICES selects them); use --num_procs {max(gpu_count, 1)} or fewer, or --device cpu"
        )


def newton_physics(njmax: int = 100, nconmax: int = 40, **solver_kwargs: Any) -> NewtonCfg:
    """Newton + MuJoCo-Warp physics settings shared by all tasks (CUDA graphs are set by :func:`apply_device`), with
    box–box contacts by MuJoCo's exact routine (:mod:`realgap.envs.sim.mjwarp`).

    Args:
        njmax: Constraint rows per world (contacts, limits, friction). G1 on flat ground needs < 100.
        nconmax: Contacts per world. The Panda + cube scene overflowed at 40 and needs 50 (measured).
        solver_kwargs: Extra ``MJWarpSolverCfg`` fields.
    """
    from isaaclab_newton.physics import NewtonCfg

    from realgap.envs.sim.mjwarp import ExactBoxBoxSolverCfg

    # box–box contacts by MuJoCo's exact routine: native CCD rocks a resting box (realgap.envs.sim.mjwarp)
    solver = ExactBoxBoxSolverCfg(
        njmax=njmax,
        nconmax=nconmax,
        cone="pyramidal",
        # implicitfast integrates joint damping implicitly; explicit PD torques from realgap's actuators are explicit.
        integrator="implicitfast",
        impratio=1.0,
        use_mujoco_contacts=True,
        **solver_kwargs,
    )
    return NewtonCfg(solver_cfg=solver, use_cuda_graph=False)


def apply_device(env_cfg: Any, device: str) -> None:
    """Point an env config (``env_cfg.sim``) at ``device``; CUDA graphs on for CUDA, off for the CPU; deterministic
    mode where ``--deterministic`` asked for it (:func:`apply_deterministic`).

    This is the one place where the device changes a physics setting.
    """
    env_cfg.sim.device = device
    physics = getattr(env_cfg.sim, "physics", None)
    if physics is not None and hasattr(physics, "use_cuda_graph"):
        physics.use_cuda_graph = device.startswith("cuda")
    mode = ""
    if deterministic_requested():
        apply_deterministic(env_cfg, device)
        mode = ", deterministic run_to_run"
    graphs = "on" if device.startswith("cuda") else "off"
    print(f"[realgap] device: {device} (CUDA graphs {graphs}{mode})", flush=True)  # every run states where it runs


DETERMINISTIC_ENV = "REALGAP_DETERMINISTIC"
"""Set to ``1`` by ``--deterministic`` (:mod:`realgap.envs.run.cli`); read wherever an env config is resolved, in this
process and in every process it starts (torchrun ranks, the benchmark's training runs)."""


def deterministic_requested() -> bool:
    """``--deterministic`` was given (or ``REALGAP_DETERMINISTIC=1`` is set)."""
    return os.environ.get(DETERMINISTIC_ENV, "") not in ("", "0")


def apply_deterministic(env_cfg: Any, device: str) -> None:
    """Bit-exact CUDA runs on one GPU model: Newton's ``deterministic_mode="run_to_run"`` (contacts sorted, atomics
    ordered) with what it requires (``MJWarpSolverCfg.disable_sensors``: MuJoCo-Warp's own sensors are not used by
    realgap), and torch's deterministic algorithms (``CUBLAS_WORKSPACE_CONFIG`` set unless already set; an op without a
    deterministic CUDA kernel then raises, naming itself). It costs speed (``scripts/gpu_check.py`` measures how much).

    Raises:
        ValueError: ``device`` is the CPU, where every run is already exact (warp runs each kernel serially), or the
            physics is not Newton (no ``deterministic_mode``).
    """
    if not device.startswith("cuda"):
        raise ValueError(
            "--deterministic applies to CUDA runs: on the CPU every run is already exact (warp runs each "
            "kernel serially); drop the flag, or run with --device cuda"
        )
    physics = getattr(env_cfg.sim, "physics", None)
    if physics is None or not hasattr(physics, "deterministic_mode"):
        raise ValueError(
            f"--deterministic needs Newton physics (NewtonCfg.deterministic_mode); this task's physics is "
            f"{type(physics).__name__}"
        )
    physics.deterministic_mode = "run_to_run"
    physics.solver_cfg.disable_sensors = True  # Newton refuses the mode while MuJoCo-Warp's sensor stage runs
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # cuBLAS reductions in a fixed order
    import torch

    torch.use_deterministic_algorithms(True)
