"""The training entry point behind ``scripts/train.py``: validate, build, record, learn.

Order matters for "bad input loses nothing": every input is checked (task id, device, rates, DR profile, resume
folder) and the env is built before a run folder is created; a resumed run reuses its recorded task, rates and DR
profile. With ``num_procs > 1`` the script re-launches itself under torchrun and each process steps
``num_envs / num_procs`` envs: on the CPU each on its own core (gloo, see
:meth:`realgap.envs.run.runner.RealgapRunner._configure_multi_gpu`), on CUDA each on its own GPU ``cuda:LOCAL_RANK``
(rsl-rl's NCCL path).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from realgap.envs.run.resume import Resume


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

    from realgap.envs.sim.physics import rank_device, resolve_device

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
        raise ValueError(f"--num_envs {num_envs} does not split evenly over {num_procs} processes; "
                         f"nearest valid counts: {below} or {below + num_procs}")  # fmt: skip
    return num_envs // num_procs


def preflight(args: argparse.Namespace) -> None:
    """Checks of train.py's flags that read no file: ``--run_name`` is one plain folder name (a ``/`` or ``..``
    would put the run outside ``--log_root``), and on the CPU the envs' estimated memory fits the machine
    (:func:`realgap.envs.run.memory.check_env_memory`; ``args.task`` resolved). More processes than CPU cores is
    allowed, with a warning on stderr.

    Raises:
        ValueError: Names the flag and what is expected.
    """
    import sys

    from realgap.envs.run.cli import warn_num_procs
    from realgap.envs.run.paths import check_name, check_writable

    if not args.resume:
        check_writable(args.log_root, "--log_root")
    if (warning := warn_num_procs(args.num_procs or 1)) is not None:
        print(f"[realgap] warning: {warning}", file=sys.stderr)

    if args.run_name:
        check_name(args.run_name, "--run_name")
    if args.num_envs is not None and not str(args.device or "").startswith("cuda"):
        from realgap.envs.run.memory import check_env_memory

        check_env_memory(args.task, args.num_envs, args.num_procs or 1)


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


def train(args: argparse.Namespace, resume: Resume | None = None) -> Path:
    """Train as ``args`` (scripts/train.py's flags) say, continuing ``resume`` (:func:`prepare_resume`, which has
    restored the run's recorded flags on ``args``) if given; returns the run folder.

    Raises:
        ValueError: A setting out of range (:func:`realgap.envs.run.validate.check_training_cfg`), before any file is
            written.
        CheckpointWriteError: A checkpoint could not be written; names the last good one and the resume command.
    """
    import yaml

    from realgap.envs.dr.profile import load_dr_profile
    from realgap.envs.rates import load_rate_profile
    from realgap.envs.run.contacts import contact_record, write_contacts
    from realgap.envs.run.factory import check_rates, load_cfgs, make_env, set_seed, simulation
    from realgap.envs.run.overrides import apply_overrides
    from realgap.envs.run.run_dir import new_run_dir, record_resume, write_params
    from realgap.envs.run.run_record import recorded_rates
    from realgap.envs.run.runner import RealgapRunner
    from realgap.envs.run.validate import check_training_cfg

    resume_from, record = (resume.checkpoint, resume.record) if resume is not None else (None, {})
    rates: Any = args.rates
    dr_name = args.dr_profile or "none"
    if resume is not None:
        rates = recorded_rates(resume.run_dir, record) or rates
        saved_profile = resume.run_dir / "params" / "dr_profile.yaml"
        dr_name = str(saved_profile) if saved_profile.is_file() else dr_name
    dr_profile = load_dr_profile(dr_name)
    if isinstance(rates, str):  # validated before the (slow) env config import
        rates = load_rate_profile(rates)
    check_budget(args.max_minutes)
    num_envs = args.num_envs
    if num_envs is not None and world_size() > 1:
        num_envs = envs_per_process(num_envs, world_size())
    if resume is not None:
        args.seed = resumed_seed(args.seed, record)
    device = process_device(args.device)  # cuda:LOCAL_RANK per process on CUDA, as rsl-rl's NCCL path requires
    env_cfg, agent_cfg = load_cfgs(args.task, device, num_envs, args.seed, dr_profile=dr_profile, rates=rates)
    run_seed = agent_cfg.seed  # --seed, else the task's: the run's seed, recorded and restored by --resume
    set_seed(env_cfg, agent_cfg, rank_seed(run_seed, rank()))
    overrides = list(getattr(args, "overrides", None) or [])
    if resume is not None:
        recorded = record.get("overrides", [])
        if overrides and overrides != recorded:
            raise ValueError(f"--set cannot change a resumed run; it keeps its recorded overrides {recorded}")
        overrides = recorded
    apply_overrides(env_cfg, agent_cfg, overrides)
    if args.num_envs is None and world_size() > 1:
        split_default_envs(env_cfg)
    import torch

    if device.startswith("cuda"):  # a bare "cuda" (torch's, Isaac Lab's) must mean this process's GPU, not cuda:0
        torch.cuda.set_device(device)
    if env_cfg.sim.device == "cpu" or args.torch_threads:
        torch.set_num_threads(args.torch_threads or 1)
    if args.max_iterations is not None:
        agent_cfg.max_iterations = args.max_iterations
    if args.save_interval is not None:
        agent_cfg.save_interval = args.save_interval
    check_training_cfg(env_cfg, agent_cfg)  # every number in range before the env is built or a file written
    check_rates(env_cfg)  # --set cannot move the physics step, decimation or a chain away from env.rates

    with simulation(env_cfg):
        from isaaclab.utils import to_dict
        from isaaclab_rl.rsl_rl import check_rsl_rl_version, handle_deprecated_rsl_rl_cfg

        from realgap.envs.sim.nan_guard import FiniteVecEnv
        from realgap.envs.sim.physics import deterministic_requested

        agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, check_rsl_rl_version())
        env = FiniteVecEnv(make_env(args.task, env_cfg), clip_actions=agent_cfg.clip_actions)
        run_dir = resume.run_dir if resume is not None else Path(args.run_dir or "")
        if resume_from is None and rank() == 0:
            contacts = contact_record(env.unwrapped)  # checked before the run folder is made
            run_dir = new_run_dir(args.log_root, agent_cfg.experiment_name, args.run_name)
            extra = {"task": args.task, "device": env_cfg.sim.device, "num_procs": world_size(),
                     "num_envs_total": env.num_envs * world_size(), "rates": env_cfg.rates,
                     "dr_profile": dr_profile.name, "overrides": overrides, "seed": run_seed,
                     "max_iterations": agent_cfg.max_iterations, "save_interval": agent_cfg.save_interval,
                     "deterministic": deterministic_requested()}  # fmt: skip
            write_params(run_dir, env_cfg, agent_cfg, extra)
            (run_dir / "params" / "dr_profile.yaml").write_text(yaml.safe_dump(dr_profile.to_dict(), sort_keys=False))
            write_contacts(run_dir, contacts)  # once: a resumed run keeps the parameters it started with
        log_dir = str(run_dir) if rank() == 0 else None
        if rank() == 0:
            seeds = ", ".join(str(rank_seed(run_seed, r)) for r in range(world_size()))
            print(f"[realgap] task {args.task} | {env.num_envs * world_size()} envs on {env_cfg.sim.device}"
                  f" in {world_size()} process(es) | seed {seeds} | run folder {run_dir}")  # fmt: skip
        runner = RealgapRunner(env, to_dict(agent_cfg), log_dir=log_dir, device=agent_cfg.device)
        if args.max_minutes is not None:
            runner.max_seconds = 60.0 * args.max_minutes
        if resume_from is not None:
            runner.load(str(resume_from), resume=True)
            if rank() == 0:
                record_resume(run_dir, runner.current_learning_iteration)
                print(f"[realgap] resumed from {resume_from} at iteration {runner.current_learning_iteration}")
        remaining = agent_cfg.max_iterations - runner.current_learning_iteration
        if remaining > 0:
            runner.learn(num_learning_iterations=remaining, init_at_random_ep_len=resume_from is None)
        env.close()
    return run_dir


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
