"""Checkpoint files of a training run: written atomically, with the env's state beside the newest one.

``os.replace`` is atomic on POSIX, so every file is written to a temporary name in the same folder and renamed into
place: a run killed mid-write leaves the previous checkpoint intact and never a truncated one. Used by
:class:`realgap.envs.run.runner.RealgapRunner` (which re-exports :func:`write_checkpoint` and :func:`env_state_path`).
"""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path
from typing import Any

import torch

from realgap.envs.run.run_dir import file_mode, write_failure


def env_state_path(checkpoint: str | Path) -> Path:
    """Where the env state saved with ``checkpoint`` lives: ``model_<it>.env.pt`` beside ``model_<it>.pt``."""
    checkpoint = Path(checkpoint)
    return checkpoint.with_name(checkpoint.stem + ".env.pt")


def _atomic_save(obj: Any, path: str | Path) -> None:
    """``torch.save`` to a temporary file in the same folder, fsync'd, then renamed into place.

    Serialized in memory first: a failed write (disk full, file size limit) then raises ``OSError`` with its errno,
    where torch's zip writer would raise a bare ``RuntimeError`` ("unexpected pos")."""
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=".tmp_", suffix=".pt", dir=folder)
    os.chmod(tmp, file_mode())  # as every other file of the run, not mkstemp's 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(buffer.getbuffer())
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def write_checkpoint(saved: dict[str, Any], path: str | Path, env_state: dict[str, Any] | None = None) -> None:
    """Write ``env_state`` (if given) beside ``path``, then the checkpoint ``saved``, each atomically, then remove
    the env state of older checkpoints.

    The order keeps one invariant at every instant, whenever the process is killed: the newest checkpoint on disk has
    its env state beside it (so ``--resume`` is exact); a kill between the steps leaves at most one extra file, which
    the next save removes. A failed write (disk full, no permission) leaves no file of
    its own behind and stops training with one message naming the last good checkpoint and the resume command.

    Raises:
        CheckpointWriteError: A write failed.
    """
    state = env_state_path(path)
    try:
        if env_state is not None:
            _atomic_save(env_state, state)
        _atomic_save(saved, path)
    except OSError as err:
        if env_state is not None and not Path(path).is_file():
            state.unlink(missing_ok=True)
        raise write_failure(path, err) from None
    if env_state is not None:
        for old in Path(path).parent.glob("model_*.env.pt"):
            if old != state:
                old.unlink(missing_ok=True)
