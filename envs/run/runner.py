"""rsl-rl's OnPolicyRunner with what a long CPU run needs: atomic checkpoints, exact resume, a progress CSV.

Everything PPO stays in rsl-rl-lib; this subclass only changes how state reaches and leaves the disk:

- ``save`` writes to a temporary file in the same folder and renames it into place (``os.replace`` is atomic on
  POSIX; :mod:`realgap.envs.run.checkpoint`), so a run killed mid-write leaves the previous checkpoint intact and
  never a truncated one. Checkpoints also carry the RNG states (python, numpy, torch CPU and CUDA) and the run's
  seed and command line; beside the newest checkpoint, ``model_<it>.env.pt`` holds the env's whole state
  (:mod:`realgap.envs.run.snapshot`: bodies mid-episode, solver warm start, delay buffers, event timers, DR
  generators, term and logger buffers).
- ``load`` restores them and continues *after* the saved iteration (rsl-rl alone re-runs the saved iteration); with the
  env state beside the checkpoint the continuation is exact: the same losses and episode statistics as an
  uninterrupted run with the same seed (single process; a multi-process run resumes from freshly reset envs).
- every iteration appends one row to ``progress.csv`` (mean reward, episode length, task metrics, reward terms) and
  prints a one-line summary beside rsl-rl's block.
"""

from __future__ import annotations

import csv
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch
from rsl_rl.runners import OnPolicyRunner

from realgap.envs.run.checkpoint import env_state_path, write_checkpoint
from realgap.envs.run.progress import Progress, fmt_value
from realgap.envs.run.rng_state import capture_rng, restore_rng
from realgap.envs.run.run_dir import (  # noqa: F401  (CHECKPOINT_RE and latest_checkpoint re-exported)
    CHECKPOINT_RE,
    REWARD_COLUMN,
    CheckpointError,
    latest_checkpoint,
    progress_column,
    write_progress,
)
from realgap.envs.sim.physics import deterministic_requested


def action_joint_names(env: Any) -> list[str]:
    """The joint each action dimension commands, in action order, from the env's joint action terms.

    Raises ValueError for an action term that does not command joints one to one (an end-effector increment)."""
    manager = env.unwrapped.action_manager
    names: list[str] = []
    for term_name in manager.active_terms:
        term = manager.get_term(term_name)
        joint_names = getattr(term, "_joint_names", None)
        if joint_names is None or len(joint_names) != term.action_dim:
            raise ValueError(
                f"action term '{term_name}' does not command one joint per action; "
                "a per-joint exploration std needs joint actions"
            )
        names.extend(joint_names)
    return names


def per_action_std(names: list[str], base: torch.Tensor, std_by_joint: dict[str, float]) -> torch.Tensor:
    """``base`` (one std per action) with the entries of the joints that a pattern of ``std_by_joint`` (regex, full
    match; Isaac Lab's ``resolve_matching_names_values``) names set to its std. A pattern that matches no joint, a
    joint matched by two patterns and a std <= 0 are refused: each would silently train with an exploration the run
    did not ask for."""
    from isaaclab.utils.string import resolve_matching_names_values

    if len(names) != base.numel():
        raise ValueError(f"{len(names)} joint names for {base.numel()} actions")
    bad = {pattern: value for pattern, value in std_by_joint.items() if not float(value) > 0.0}
    if bad:
        raise ValueError(f"actor_init_std_by_joint values must be > 0, got {bad}")
    try:
        ids, _, values = resolve_matching_names_values(dict(std_by_joint), names)
    except ValueError as err:  # a pattern matching nothing, or a joint matched twice
        raise ValueError(f"actor_init_std_by_joint: {err}") from None
    std = base.clone()
    std[ids] = torch.tensor(values, dtype=std.dtype, device=std.device)
    return std


class _BudgetReached(Exception):
    """Raised after the iteration that used up the wall-clock budget (caught in :meth:`RealgapRunner.learn`)."""


class RealgapRunner(OnPolicyRunner):
    """OnPolicyRunner with atomic checkpoints, exact resume, a per-iteration progress CSV and a wall-clock budget."""

    max_seconds: float | None = None
    """Stop after the first iteration that ends later than this many seconds after :meth:`learn` started."""

    def __init__(self, env: Any, train_cfg: dict, log_dir: str | None = None, device: str = "cpu") -> None:
        super().__init__(env, train_cfg, log_dir=log_dir, device=device)
        self._log_dir = log_dir
        self._progress_keys: dict[str, None] = {}
        self._deadline: float | None = None
        self._progress: Progress | None = None
        self._wrap_logger()
        scale = train_cfg.get("actor_output_init_scale")
        if scale is not None:
            self._scale_actor_output(float(scale))
        std_by_joint = train_cfg.get("actor_init_std_by_joint")
        if std_by_joint:
            self._set_actor_init_std(action_joint_names(env), dict(std_by_joint))

    def _set_actor_init_std(self, names: list[str], std_by_joint: dict[str, float]) -> None:
        """Start the exploration std of the actions on the joints that ``std_by_joint``'s patterns match at their
        values (the others keep the distribution's ``init_std``): wider exploration where a strategy needs large
        motions (a hip strategy, a step), without the noise on every joint that knocks a standing robot over."""
        distribution = self.alg.actor.distribution
        param = getattr(distribution, "std_param", None)
        if param is None:
            raise ValueError("actor_init_std_by_joint needs a Gaussian distribution with std_type 'scalar'")
        std = per_action_std(names, param.detach(), std_by_joint)
        with torch.no_grad():
            param.copy_(std)

    def _scale_actor_output(self, scale: float) -> None:
        """Shrink the actor's last linear layer so the initial mean action is ~0 (the task's "hold still" action).

        A randomly initialised MLP outputs actions of order 1 for any observation; for a balance task that is a push
        of its own. Scaling the output layer by ~0.01 (and zeroing its bias) starts PPO from "never worse than the
        zero action" while leaving exploration to the distribution's std.
        """
        layers = [m for m in self.alg.actor.mlp.modules() if isinstance(m, torch.nn.Linear)]
        with torch.no_grad():
            layers[-1].weight.mul_(scale)
            layers[-1].bias.zero_()

    def learn(self, num_learning_iterations: int, init_at_random_ep_len: bool = False) -> None:
        """rsl-rl's learning loop, stopped early (with a final checkpoint) when :attr:`max_seconds` is used up."""
        self._deadline = None if self.max_seconds is None else time.monotonic() + self.max_seconds
        start = self.current_learning_iteration
        self._progress = Progress(
            "[realgap] train",
            start + num_learning_iterations,
            budget_s=self.max_seconds,
            interval_s=0.0,
            initial=start,
            bar=False,
        )
        try:
            super().learn(num_learning_iterations, init_at_random_ep_len)
        except _BudgetReached:
            if self.logger.writer is not None:
                self.save(os.path.join(self.logger.log_dir, f"model_{self.current_learning_iteration}.pt"))
                self.logger.stop_logging_writer()
            if not self.logger.disable_logs:
                print(
                    f"[realgap] wall-clock budget of {self.max_seconds / 60:.1f} min used up after iteration "
                    f"{self.current_learning_iteration}",
                    flush=True,
                )

    # -- multi-process CPU training ----------------------------------------------------------------------------
    def _configure_multi_gpu(self) -> None:
        """rsl-rl's multi-GPU setup, extended to CPU processes (gloo) so env sharding uses every core.

        Under ``torchrun`` (WORLD_SIZE > 1) on the CPU each process steps its own share of the envs (warp runs a
        CPU world on one thread), and PPO averages gradients and observation statistics across processes exactly as
        it does across GPUs. On CUDA, rsl-rl's own NCCL path is used unchanged.
        """
        world_size = int(os.getenv("WORLD_SIZE", "1"))
        if world_size <= 1 or not str(self.device).startswith("cpu"):
            super()._configure_multi_gpu()
            return
        self.gpu_world_size = world_size
        self.is_distributed = True
        self.gpu_local_rank = int(os.getenv("LOCAL_RANK", "0"))
        self.gpu_global_rank = int(os.getenv("RANK", "0"))
        self.cfg["multi_gpu"] = {
            "global_rank": self.gpu_global_rank,
            "local_rank": self.gpu_local_rank,
            "world_size": world_size,
        }
        if not torch.distributed.is_initialized():
            torch.distributed.init_process_group(backend="gloo", rank=self.gpu_global_rank, world_size=world_size)

    # -- checkpoints -------------------------------------------------------------------------------------------
    def save(self, path: str, infos: dict | None = None) -> None:
        """Write the checkpoint with the env's state (single process) as :func:`write_checkpoint` does."""
        saved = self.alg.save()
        saved["iter"] = self.current_learning_iteration
        saved["infos"] = (infos or {}) | {
            "rng": capture_rng(str(self.device)),
            "run": {"seed": self.cfg.get("seed"), "argv": sys.argv},
        }
        env_state = None
        if not self.is_distributed:
            from realgap.envs.run.snapshot import capture_env

            env_state = capture_env(self.env, self)
        write_checkpoint(saved, path, env_state)
        self.logger.save_model(path, self.current_learning_iteration)

    def load(
        self,
        path: str,
        load_cfg: dict | None = None,
        strict: bool = True,
        map_location: str | None = None,
        resume: bool = False,
    ):
        """Load a checkpoint; training continues with the iteration after the saved one.

        With ``resume`` (continuing a training run) the RNG states are restored too; evaluation and export leave them
        alone.

        Raises:
            CheckpointError: The file is not a readable rsl-rl checkpoint.
        """
        try:
            loaded = torch.load(path, weights_only=False, map_location=map_location or self.device)
        except Exception as err:  # torch raises several types for truncated or foreign files
            raise CheckpointError(f"Cannot load checkpoint '{path}': {type(err).__name__}: {err}") from err
        if not isinstance(loaded, dict) or "iter" not in loaded:
            raise CheckpointError(f"'{path}' is not an rsl-rl checkpoint (no 'iter' entry).")
        self.alg.load(loaded, load_cfg, strict)
        self.current_learning_iteration = int(loaded["iter"]) + 1
        infos = loaded.get("infos") or {}
        if resume:
            self._restore_env(Path(path))
        if resume and "rng" in infos:
            for note in restore_rng(infos["rng"], str(self.device)):
                print(f"[realgap] resume: {note} (the continuation is not exact)", flush=True)
        self._trim_progress()
        return infos

    def _restore_env(self, checkpoint: Path) -> None:
        """Put the env back in the state it had when ``checkpoint`` was written, if that state was saved."""
        from realgap.envs.run.snapshot import restore_env

        state = env_state_path(checkpoint)
        if self.is_distributed or not state.is_file():
            why = "a multi-process run" if self.is_distributed else f"no {state.name} beside it (not the newest)"
            print(
                f"[realgap] resuming from {checkpoint.name}: {why}, so the envs start from a reset (the "
                "continuation is not exact)",
                flush=True,
            )
            return
        try:
            saved = torch.load(state, weights_only=False, map_location="cpu")
        except Exception as err:  # truncated or foreign: torch raises several types
            raise CheckpointError(f"Cannot load the env state '{state}': {type(err).__name__}: {err}") from None
        count = restore_env(self.env, saved, self)

        if str(self.device) == "cpu":
            exact = "an exact continuation"
        elif deterministic_requested():
            exact = "an exact continuation on the same GPU model (--deterministic; docs/gpu.md)"
        else:
            exact = (
                "the same state, but on CUDA not a bitwise continuation (MuJoCo-Warp atomics and torch CUDA "
                "scatters are not deterministic without --deterministic; docs/gpu.md)"
            )
        if _randomizes_body_inertia(self.env):
            exact += (
                "; with body inertia randomized, to about 1e-5 relative in the mean reward (a known drift, "
                "tests/slow/test_reliability.py)"
            )
        print(f"[realgap] env state restored from {state.name} ({count} values): {exact}", flush=True)

    def _trim_progress(self) -> None:
        """Drop progress rows of iterations after the checkpoint (a killed run may have logged past its last save)."""
        if self._log_dir is None or self.logger.disable_logs:
            return
        if not (path := Path(self._log_dir) / "progress.csv").is_file():
            return
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh))
        kept = [r for r in rows if int(r["iteration"]) < self.current_learning_iteration]
        if len(kept) != len(rows):
            write_progress(path, list(rows[0]), kept)

    # -- progress ----------------------------------------------------------------------------------------------
    def _wrap_logger(self) -> None:
        original = self.logger.log
        logger = self.logger

        def log(*, it: int, collect_time: float, learn_time: float, **kwargs: Any) -> None:
            row = {"iteration": it, "collect_s": round(collect_time, 3), "learn_s": round(learn_time, 3)}
            row["mean_reward"] = statistics.mean(logger.rewbuffer) if logger.rewbuffer else math.nan
            row["mean_episode_length"] = statistics.mean(logger.lenbuffer) if logger.lenbuffer else math.nan
            keys = dict.fromkeys(k for e in logger.ep_extras for k in e if progress_column(k) is not None)
            self._progress_keys.update(dict.fromkeys(keys))  # a column, once seen, stays (CSV header is fixed)
            for key in self._progress_keys:
                values = [float(e[key]) for e in logger.ep_extras if key in e]
                values = [v for v in values if not math.isnan(v)]
                row[progress_column(key)] = statistics.mean(values) if values else math.nan
            progress = self._update_progress(row)
            # rsl-rl's block counts its ETA to total_it: give it the end the wall-clock budget predicts, if sooner
            original(
                it=it,
                collect_time=collect_time,
                learn_time=learn_time,
                **(kwargs | {"total_it": progress.expected_total()}),
            )
            self._append_progress(row)
            if not self.logger.disable_logs:
                print(progress.line(), flush=True)
            if self._deadline is not None and it + 1 < kwargs["total_it"]:
                out_of_time = time.monotonic() > self._deadline
                if self.is_distributed:  # every process must stop after the same iteration
                    flag = torch.tensor([float(out_of_time)], device=self.device)  # NCCL needs it on the GPU
                    torch.distributed.broadcast(flag, src=0)
                    out_of_time = bool(flag.item())
                if out_of_time:
                    raise _BudgetReached

        self.logger.log = log

    def _update_progress(self, row: dict[str, Any]) -> Progress:
        """Count one iteration on the progress line (made by :meth:`learn`): steps/s and the task's headline."""
        assert self._progress is not None, "learn() makes the progress line"
        # the task's headline: success for tasks with a success definition (grasp), else survival (balance)
        has_success = getattr(self.env.unwrapped.cfg, "episode_success", None) is not None
        headline = "success_rate" if has_success else "survival_rate"
        steps = self.cfg["num_steps_per_env"] * self.env.num_envs * self.gpu_world_size
        fps = steps / max(row["collect_s"] + row["learn_s"], 1e-9)
        self._progress.n += 1
        self._progress.fields = {"steps/s": f"{fps:.0f}", headline: row.get(headline)}
        return self._progress

    def _append_progress(self, row: dict[str, Any]) -> None:
        steps = self.cfg["num_steps_per_env"] * self.env.num_envs
        fps = steps / max(row["collect_s"] + row["learn_s"], 1e-9)
        # the reward terms stay out of the printed line (rsl-rl's block lists them); the CSV keeps them
        summary = "  ".join(f"{k}={fmt_value(v)}" for k, v in row.items() if not k.startswith(REWARD_COLUMN))
        fps *= self.gpu_world_size  # every process collects the same number of steps
        if self.logger.disable_logs:  # multi-process: rank 0 reports for all
            return
        print(f"[realgap] {summary}  steps/s={fps:.0f}", flush=True)
        if self._log_dir is None:
            return
        path = Path(self._log_dir) / "progress.csv"
        rows: list[dict[str, Any]] = []
        if path.is_file():
            with open(path, newline="") as fh:
                reader = csv.DictReader(fh)
                header = list(reader.fieldnames or [])
                if set(row) <= set(header):  # the usual case: append one line
                    with open(path, "a", newline="") as out:
                        csv.DictWriter(out, fieldnames=header, restval="nan").writerow(row)
                    return
                rows = list(reader)
        # first row, or a metric seen for the first time: (re)write the file with the wider header, atomically
        header = list(dict.fromkeys([*(rows[0] if rows else {}), *row]))
        write_progress(path, header, [*rows, row])


def _randomizes_body_inertia(env: Any) -> bool:
    """Whether an event term of ``env`` randomizes body inertia (a resume of such a run drifts, see the snapshot)."""
    from realgap.envs.dr.events import randomize_body_inertia

    manager = getattr(env, "unwrapped", env).event_manager
    terms = (manager.get_term_cfg(name).func for names in manager.active_terms.values() for name in names)
    return any(isinstance(func, randomize_body_inertia) for func in terms)
