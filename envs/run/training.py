"""The training entry point behind ``scripts/train.py``: validate, build, record, learn.

Order matters for "bad input loses nothing": every input is checked (task id, device, rates, DR profile, resume
folder) and the env is built before a run folder is created; a resumed run reuses its recorded task, rates and DR
profile. With ``num_procs > 1`` the script re-launches itself under torchrun and each process steps
``num_envs / num_procs`` envs: on the CPU each on its own core (gloo, see
:meth:`realgap.envs.run.runner.RealgapRunner._configure_multi_gpu`), on CUDA each on its own GPU ``cuda:LOCAL_RANK``
(rsl-rl's NCCL path).

The parts, in the order a run meets them: :func:`start` (the flags checked, a resumed run's restored, the torchrun
re-launch), :func:`resolve_run` (the configs resolved and checked), :func:`train` (the env built, a new run recorded by
:func:`record_new_run`, a resumed one continued by :func:`continue_from`, the iterations left learned).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from realgap.envs.rates import RateSpec, load_rate_profile
from realgap.envs.run.cli import given_flags, warn_num_procs
from realgap.envs.run.contacts import contact_record, write_contacts
from realgap.envs.run.factory import check_rates, load_cfgs, make_env, set_seed, simulation
from realgap.envs.run.memory import check_env_memory
from realgap.envs.run.overrides import apply_overrides, parse_override
from realgap.envs.run.paths import check_name, check_writable
from realgap.envs.run.resume import Resume, prepare_resume
from realgap.envs.run.run_dir import new_run_dir, record_resume, write_params
from realgap.envs.run.run_record import recorded_rates
from realgap.envs.run.validate import check_training_cfg
from realgap.envs.sim.physics import deterministic_requested, rank_device, resolve_device
from realgap.tasks import DEFAULT_TASK, check_task


@dataclass(frozen=True)
class TrainRequest:
    """A training run as scripts/train.py's flags give it (see its ``--help`` for each)."""

    task: str | None = DEFAULT_TASK
    num_envs: int | None = None
    device: str | None = None
    seed: int | None = None
    deterministic: bool = False
    max_iterations: int | None = None
    max_minutes: float | None = None
    resume: str | None = None
    dr_profile: str | None = None
    rates: str | RateSpec | None = None
    save_interval: int | None = None
    run_name: str = ""
    log_root: str = "runs"
    num_procs: int | None = None
    torch_threads: int | None = None
    overrides: list[str] = field(default_factory=list)
    run_dir: str | None = None


@dataclass(frozen=True)
class ResolvedRun:
    """A run's configuration, resolved and checked before the env is built or a file written."""

    env_cfg: Any
    agent_cfg: Any
    dr_profile: Any
    overrides: list[str]
    seed: int | None
    """The run's seed (``--seed``, else the task's): recorded, restored by ``--resume``; rank ``r`` draws from
    :func:`rank_seed` of it."""


def rank() -> int:
    """This process's rank under torchrun (0 when not distributed)."""
    return int(os.environ.get("RANK", "0"))


def world_size() -> int:
    """Processes in the run under torchrun (1 when not distributed)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def local_rank() -> int:
    """This process's rank on this machine under torchrun (0 when not distributed): its GPU index on CUDA."""
    return int(os.environ.get("LOCAL_RANK", "0"))


def process_device(requested: str | None, num_procs: int | None = None) -> str:
    """The device this process trains on: ``--device`` resolved, then on CUDA one GPU per process (``cuda:LOCAL_RANK``).

    Args:
        requested: The ``--device`` flag (``None``: CUDA when torch sees one, else the CPU).
        num_procs: Processes on this machine (default: torchrun's ``LOCAL_WORLD_SIZE``, else ``WORLD_SIZE``).

    Raises:
        DeviceUnavailableError: CUDA requested without CUDA.
        ValueError: On CUDA, more processes than visible GPUs (:func:`realgap.envs.sim.physics.rank_device`).
    """
    import torch

    device = resolve_device(requested)
    procs = num_procs if num_procs is not None else int(os.environ.get("LOCAL_WORLD_SIZE", world_size()))
    gpus = torch.cuda.device_count() if device.startswith("cuda") else 0
    return rank_device(device, local_rank(), procs, gpus)


def envs_per_process(num_envs: int, num_procs: int) -> int:
    """The envs each of ``num_procs`` processes steps, for ``num_envs`` in all.

    Raises:
        ValueError: ``num_envs`` does not split evenly; the message names the nearest counts that do.
    """
    if num_envs < num_procs:
        raise ValueError(f"--num_envs {num_envs} is fewer than the {num_procs} processes (--num_procs)")
    if num_envs % num_procs:
        below = num_envs - num_envs % num_procs
        raise ValueError(
            f"--num_envs {num_envs} does not split evenly over {num_procs} processes; "
            f"nearest valid counts: {below} or {below + num_procs}"
        )
    return num_envs // num_procs


def preflight(req: TrainRequest) -> None:
    """Checks of train.py's flags that read no file: ``--run_name`` is one plain folder name (a ``/`` or ``..``
    would put the run outside ``--log_root``), and on the CPU the envs' estimated memory fits the machine
    (:func:`realgap.envs.run.memory.check_env_memory`; ``req.task`` resolved). More processes than CPU cores is
    allowed, with a warning on stderr.

    Raises:
        ValueError: Names the flag and what is expected.
    """
    if not req.resume:
        check_writable(req.log_root, "--log_root")
    if (warning := warn_num_procs(req.num_procs or 1)) is not None:
        print(f"[realgap] warning: {warning}", file=sys.stderr)

    if req.run_name:
        check_name(req.run_name, "--run_name")
    if req.num_envs is not None and not str(req.device or "").startswith("cuda"):
        check_env_memory(req.task, req.num_envs, req.num_procs or 1)


def check_budget(max_minutes: float | None) -> None:
    """``--max_minutes`` must be a positive number of minutes (or absent)."""
    if max_minutes is not None and not max_minutes > 0:
        raise ValueError(f"--max_minutes must be > 0 (a wall-clock budget in minutes), got {max_minutes}")


def rank_seed(run_seed: int, process_rank: int) -> int:
    """The seed of process ``process_rank`` of a run seeded ``run_seed``: every process its own random streams.

    Rank 0 keeps the run's seed (a one-process run is seeded exactly as asked). With one seed for all, every process
    would draw the same resets, pushes and exploration noise from the same weights and, the CPU physics being
    deterministic, collect the same rollouts: N processes would learn from one process's samples N times over.
    """
    return run_seed + process_rank


def resumed_seed(requested: int | None, record: dict[str, Any]) -> int | None:
    """The seed a resumed run continues with: the one it recorded (``params/run.json``), which ``--seed`` may repeat.

    Raises:
        ValueError: ``--seed`` differs from the run's recorded seed.
    """
    recorded = record.get("seed")
    if recorded is None:  # a run recorded before seeds were: --seed as given (None: the task's)
        return requested
    if requested is not None and requested != recorded:
        raise ValueError(f"--seed {requested} cannot change a resumed run; it keeps its recorded seed {recorded}")
    return recorded


def split_default_envs(env_cfg: Any) -> None:
    """Share the task's default env count over the processes (rounded down, and said so)."""
    default = env_cfg.scene.num_envs
    env_cfg.scene.num_envs = max(1, default // world_size())
    if env_cfg.scene.num_envs * world_size() != default and rank() == 0:
        print(
            f"[realgap] the task's {default} envs do not split evenly over {world_size()} processes: training "
            f"{env_cfg.scene.num_envs * world_size()} ({env_cfg.scene.num_envs} per process)",
            flush=True,
        )


def start(req: TrainRequest, argv: list[str], script: str) -> Path | None:
    """What ``scripts/train.py`` runs: check the request, restore a resumed run's flags, then train here or, with
    ``num_procs > 1``, re-launch ``script`` with ``argv`` under torchrun; returns the run folder (None when
    re-launched).

    Raises:
        ValueError: A malformed ``--set``, a flag that would change a resumed run, or a check of :func:`preflight`.
        CheckpointError: The resumed run's folder, checkpoint or record is missing or unreadable.
    """
    for item in req.overrides:
        parse_override(item)  # malformed keys fail here; missing fields once the configs are built
    req, resume = restore_resumed(req, task_given="--task" in given_flags(argv))
    req = dataclasses.replace(req, task=req.task or DEFAULT_TASK, num_procs=req.num_procs or 1)  # nothing recorded
    preflight(req)  # --run_name a plain name; the envs' estimated memory fits; more processes than cores: said
    if req.num_procs > 1 and world_size() == 1:
        check_task(req.task)  # cheap checks before starting the processes
        if resume is not None:
            resumed_seed(req.seed, resume.record)
        if req.num_envs is not None:
            envs_per_process(req.num_envs, req.num_procs)
        relaunch_with_torchrun(script, argv, req.num_procs)
        return None
    return train(req, resume)


def restore_resumed(req: TrainRequest, task_given: bool) -> tuple[TrainRequest, Resume | None]:
    """``req`` with a resumed run's recorded flags restored (:func:`~realgap.envs.run.resume.prepare_resume`; a
    ``--task`` not given is the run's), and the run to continue; ``req`` unchanged and None without ``--resume``."""
    if not req.resume:
        return req, None
    # every recorded flag restored, a changed one refused; a --task not given is the run's
    req, resume = prepare_resume(req if task_given else dataclasses.replace(req, task=None))
    for note in resume.notes if rank() == 0 else ():
        print(f"[realgap] resume: {note}")
    return req, resume


def train(req: TrainRequest, resume: Resume | None = None) -> Path:
    """Train as ``req`` says, continuing ``resume`` (:func:`restore_resumed`, whose request carries the run's recorded
    flags) if given; returns the run folder.

    Raises:
        ValueError: A setting out of range (:func:`realgap.envs.run.validate.check_training_cfg`), before any file is
            written.
        CheckpointError: A checkpoint could not be written; names the last good one and the resume command.
    """
    from realgap.envs.run.runner import RealgapRunner  # rsl-rl: not on the path of a refused input

    run = resolve_run(req, resume)
    with simulation(run.env_cfg):
        from isaaclab.utils import to_dict
        from isaaclab_rl.rsl_rl import check_rsl_rl_version, handle_deprecated_rsl_rl_cfg

        from realgap.envs.sim.nan_guard import FiniteVecEnv

        agent_cfg = handle_deprecated_rsl_rl_cfg(run.agent_cfg, check_rsl_rl_version())
        env = FiniteVecEnv(make_env(req.task, run.env_cfg), clip_actions=agent_cfg.clip_actions)
        if resume is not None:
            run_dir = resume.run_dir
        elif rank() == 0:
            run_dir = record_new_run(req, run, agent_cfg, env)
        else:
            run_dir = Path(req.run_dir or "")
        announce(req.task, env.num_envs, run.env_cfg.sim.device, run.seed, run_dir)
        log_dir = str(run_dir) if rank() == 0 else None
        runner = RealgapRunner(env, to_dict(agent_cfg), log_dir=log_dir, device=agent_cfg.device)
        if req.max_minutes is not None:
            runner.max_seconds = 60.0 * req.max_minutes
        if resume is not None:
            continue_from(runner, resume.checkpoint, run_dir)
        remaining = agent_cfg.max_iterations - runner.current_learning_iteration
        if remaining > 0:
            runner.learn(num_learning_iterations=remaining, init_at_random_ep_len=resume is None)
        env.close()
    return run_dir


def resolve_run(req: TrainRequest, resume: Resume | None) -> ResolvedRun:
    """The run's configs: ``req``'s task, profiles, seed, overrides and counts applied (a resumed run's recorded ones),
    this process's device and torch threads set, every number checked; nothing built, no file written.

    Raises:
        ValueError: A bad budget, env count, seed, override or setting (names it).
    """
    record = resume.record if resume is not None else {}
    dr_profile, rates = resolve_profiles(req, resume)
    check_budget(req.max_minutes)
    num_envs = req.num_envs
    if num_envs is not None and world_size() > 1:
        num_envs = envs_per_process(num_envs, world_size())
    seed = resumed_seed(req.seed, record) if resume is not None else req.seed
    device = process_device(req.device)  # cuda:LOCAL_RANK per process on CUDA, as rsl-rl's NCCL path requires
    env_cfg, agent_cfg = load_cfgs(req.task, device, num_envs, seed, dr_profile=dr_profile, rates=rates)
    run_seed = agent_cfg.seed  # --seed, else the task's: the run's seed, recorded and restored by --resume
    set_seed(env_cfg, agent_cfg, rank_seed(run_seed, rank()))
    overrides = list(req.overrides or [])
    if resume is not None:
        recorded = record.get("overrides", [])
        if overrides and overrides != recorded:
            raise ValueError(f"--set cannot change a resumed run; it keeps its recorded overrides {recorded}")
        overrides = recorded
    apply_overrides(env_cfg, agent_cfg, overrides)
    if req.num_envs is None and world_size() > 1:
        split_default_envs(env_cfg)
    set_torch_device(device, env_cfg.sim.device, req.torch_threads)
    if req.max_iterations is not None:
        agent_cfg.max_iterations = req.max_iterations
    if req.save_interval is not None:
        agent_cfg.save_interval = req.save_interval
    check_training_cfg(env_cfg, agent_cfg)  # every number in range before the env is built or a file written
    check_rates(env_cfg)  # --set cannot move the physics step, decimation or a chain away from env.rates
    return ResolvedRun(env_cfg, agent_cfg, dr_profile, overrides, run_seed)


def resolve_profiles(req: TrainRequest, resume: Resume | None) -> tuple[Any, RateSpec | None]:
    """The DR profile and rate spec to train with: ``req``'s, or a resumed run's recorded ones (its rates in
    ``params/run.json``, its resolved profile in ``params/dr_profile.yaml``); both loaded and validated before the
    (slow) env config import."""
    from realgap.envs.dr.profile import load_dr_profile

    rates: Any = req.rates
    dr_name = req.dr_profile or "none"
    if resume is not None:
        rates = recorded_rates(resume.run_dir, resume.record) or rates
        saved_profile = resume.run_dir / "params" / "dr_profile.yaml"
        dr_name = str(saved_profile) if saved_profile.is_file() else dr_name
    dr_profile = load_dr_profile(dr_name)
    if isinstance(rates, str):
        rates = load_rate_profile(rates)
    return dr_profile, rates


def set_torch_device(device: str, sim_device: str, torch_threads: int | None) -> None:
    """Point torch at this process's device and set its CPU threads (on the CPU 1 unless ``torch_threads``)."""
    import torch

    if device.startswith("cuda"):  # a bare "cuda" (torch's, Isaac Lab's) must mean this process's GPU, not cuda:0
        torch.cuda.set_device(device)
    if sim_device == "cpu" or torch_threads:
        torch.set_num_threads(torch_threads or 1)


def record_new_run(req: TrainRequest, run: ResolvedRun, agent_cfg: Any, env: Any) -> Path:
    """Create a new run's folder and write what it starts with: resolved configs, ``params/run.json`` (the record a
    resume restores), the resolved DR profile and the contact parameters; returns the folder. Rank 0 only."""
    contacts = contact_record(env.unwrapped)  # checked before the run folder is made
    run_dir = new_run_dir(req.log_root, agent_cfg.experiment_name, req.run_name)
    extra = {
        "task": req.task,
        "device": run.env_cfg.sim.device,
        "num_procs": world_size(),
        "num_envs_total": env.num_envs * world_size(),
        "rates": run.env_cfg.rates,
        "dr_profile": run.dr_profile.name,
        "actuator_model": run.dr_profile.actuator_model,
        "overrides": run.overrides,
        "seed": run.seed,
        "max_iterations": agent_cfg.max_iterations,
        "save_interval": agent_cfg.save_interval,
        "deterministic": deterministic_requested(),
    }
    write_params(run_dir, run.env_cfg, agent_cfg, extra)
    (run_dir / "params" / "dr_profile.yaml").write_text(yaml.safe_dump(run.dr_profile.to_dict(), sort_keys=False))
    write_contacts(run_dir, contacts)  # once: a resumed run keeps the parameters it started with
    return run_dir


def announce(task: str | None, num_envs: int, device: str, run_seed: int | None, run_dir: Path) -> None:
    """Say (rank 0) what trains where: task, envs in all, device, processes, each process's seed, run folder."""
    if rank() == 0:
        seeds = ", ".join(str(rank_seed(run_seed, r)) for r in range(world_size()))
        print(
            f"[realgap] task {task} | {num_envs * world_size()} envs on {device}"
            f" in {world_size()} process(es) | seed {seeds} | run folder {run_dir}"
        )


def continue_from(runner: Any, checkpoint: Path, run_dir: Path) -> None:
    """Load ``checkpoint`` into ``runner`` (weights, optimizer, iteration) and record the continuation (rank 0)."""
    runner.load(str(checkpoint), resume=True)
    if rank() == 0:
        record_resume(run_dir, runner.current_learning_iteration)
        print(f"[realgap] resumed from {checkpoint} at iteration {runner.current_learning_iteration}")


def relaunch_with_torchrun(script: str, argv: list[str], num_procs: int) -> int:
    """Run ``script`` in ``num_procs`` processes under torchrun (standalone rendezvous on this machine).

    On CUDA (the ``--device`` in ``argv``, or the default device) every process needs a GPU of its own: checked here,
    before any process starts.

    Raises:
        DeviceUnavailableError: CUDA requested without CUDA.
        ValueError: On CUDA, ``num_procs`` exceeds the visible GPUs.
    """
    from torch.distributed.run import main as torchrun

    flags = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    flags.add_argument("--device", default=None)
    process_device(flags.parse_known_args(argv)[0].device, num_procs)

    torchrun(["--standalone", f"--nproc_per_node={num_procs}", "--tee=3", script, *argv])
    return 0
