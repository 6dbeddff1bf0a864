"""rsl-rl's OnPolicyRunner with what a long CPU run needs: atomic checkpoints, exact resume, a progress CSV.

Everything PPO stays in rsl-rl-lib; this subclass only changes how state reaches and leaves the disk:

- ``save`` writes to a temporary file in the same folder and renames it into place (``os.replace`` is atomic on
  POSIX), so a run killed mid-write leaves the previous checkpoint intact and never a truncated one. Checkpoints also
  carry the RNG states (python, numpy, torch) and the env-side curriculum state.
- ``load`` restores them and continues *after* the saved iteration (rsl-rl alone re-runs the saved iteration).
- every iteration appends one row to ``progress.csv`` (mean reward, episode length, task metrics) and prints a
  one-line summary beside rsl-rl's block.
"""

from __future__ import annotations

import csv
import math
import os
import random
import re
import statistics
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
from rsl_rl.runners import OnPolicyRunner

CHECKPOINT_RE = re.compile(r"model_(\d+)\.pt$")
PROGRESS_KEYS = (
    "Curriculum/metrics/survival_rate",
    "Curriculum/metrics/time_to_fall_s",
    "Curriculum/metrics/push_survived_mps",
    "Curriculum/push_level",
)


class CheckpointError(RuntimeError):
    """A run folder or checkpoint that cannot be resumed (missing, empty or unreadable)."""


def latest_checkpoint(run_dir: str | Path) -> Path:
    """The highest-iteration ``model_<it>.pt`` in ``run_dir``.

    Raises:
        CheckpointError: The folder does not exist or holds no checkpoint.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise CheckpointError(f"Cannot resume: run folder '{run_dir}' does not exist.")
    found = [(int(m.group(1)), p) for p in run_dir.iterdir() if (m := CHECKPOINT_RE.search(p.name))]
    if not found:
        raise CheckpointError(f"Cannot resume: '{run_dir}' holds no checkpoint (model_<iteration>.pt).")
    return max(found)[1]


def _rng_state() -> dict[str, Any]:
    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def _set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])


class RealgapRunner(OnPolicyRunner):
    """OnPolicyRunner with atomic checkpoints, exact resume and a per-iteration progress CSV."""

    def __init__(self, env: Any, train_cfg: dict, log_dir: str | None = None, device: str = "cpu") -> None:
        super().__init__(env, train_cfg, log_dir=log_dir, device=device)
        self._log_dir = log_dir
        self._wrap_logger()

    # -- checkpoints -------------------------------------------------------------------------------------------
    def save(self, path: str, infos: dict | None = None) -> None:
        """Write the checkpoint atomically: temporary file in the same folder, then ``os.replace``."""
        saved = self.alg.save()
        saved["iter"] = self.current_learning_iteration
        saved["infos"] = (infos or {}) | {"rng": _rng_state(), "env_state": self._env_state()}
        folder = os.path.dirname(path) or "."
        fd, tmp = tempfile.mkstemp(prefix=".tmp_", suffix=".pt", dir=folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                torch.save(saved, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        self.logger.save_model(path, self.current_learning_iteration)

    def load(self, path: str, load_cfg: dict | None = None, strict: bool = True, map_location: str | None = None):
        """Load a checkpoint; training continues with the iteration after the saved one.

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
        if "rng" in infos:
            _set_rng_state(infos["rng"])
        if "env_state" in infos:
            self._set_env_state(infos["env_state"])
        return infos

    def _env_state(self) -> dict[str, Any]:
        """Curriculum state that lives in the env (the push scale), so a resumed run pushes as hard as before."""
        env = getattr(self.env, "unwrapped", self.env)
        events = getattr(env, "event_manager", None)
        if events is None or "push" not in sum(events.active_terms.values(), []):
            return {}
        return {"push_scale": float(events.get_term_cfg("push").func.scale)}

    def _set_env_state(self, state: dict[str, Any]) -> None:
        env = getattr(self.env, "unwrapped", self.env)
        if "push_scale" in state and hasattr(env, "event_manager"):
            env.event_manager.get_term_cfg("push").func.scale = state["push_scale"]

    # -- progress ----------------------------------------------------------------------------------------------
    def _wrap_logger(self) -> None:
        original = self.logger.log
        logger = self.logger

        def log(*, it: int, collect_time: float, learn_time: float, **kwargs: Any) -> None:
            row = {"iteration": it, "collect_s": round(collect_time, 3), "learn_s": round(learn_time, 3)}
            row["mean_reward"] = statistics.mean(logger.rewbuffer) if logger.rewbuffer else math.nan
            row["mean_episode_length"] = statistics.mean(logger.lenbuffer) if logger.lenbuffer else math.nan
            for key in PROGRESS_KEYS:
                values = [float(e[key]) for e in logger.ep_extras if key in e]
                values = [v for v in values if not math.isnan(v)]
                row[key.rsplit("/", 1)[-1]] = statistics.mean(values) if values else math.nan
            original(it=it, collect_time=collect_time, learn_time=learn_time, **kwargs)
            self._append_progress(row)

        self.logger.log = log

    def _append_progress(self, row: dict[str, Any]) -> None:
        steps = self.cfg["num_steps_per_env"] * self.env.num_envs
        fps = steps / max(row["collect_s"] + row["learn_s"], 1e-9)
        summary = "  ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items())
        print(f"[realgap] {summary}  steps/s={fps:.0f}", flush=True)
        if self._log_dir is None:
            return
        path = Path(self._log_dir) / "progress.csv"
        new = not path.exists()
        with open(path, "a", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(row))
            if new:
                writer.writeheader()
            writer.writerow(row)
