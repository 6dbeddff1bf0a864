"""Provenance paths relative to the repository, so an export names its run the same on every machine."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

REPO = Path(__file__).resolve().parents[2]
"""The repository (or installed package) root the relative paths are taken from."""
ANCHORS = ("runs", "scripts", "configs")
"""Top-level folders a path outside the repository is cut at (a run folder of another checkout: ``runs/...``)."""


def repo_relative(path: str | Path) -> str:
    """``path`` relative to the repository; outside it, from its last ``runs``/``scripts``/``configs`` part on;
    otherwise unchanged. Relative paths are returned as they are (already relative)."""
    text = str(path)
    if not text.startswith("/"):
        return text
    try:
        return Path(text).resolve().relative_to(REPO).as_posix()
    except ValueError:
        pass
    parts = PurePosixPath(text).parts
    cuts = [i for i, p in enumerate(parts) if p in ANCHORS]
    return PurePosixPath(*parts[cuts[-1] :]).as_posix() if cuts else text


def relative_training(training: dict[str, Any]) -> dict[str, Any]:
    """``training`` with every absolute path (checkpoint, run_dir, argv entries) made :func:`repo_relative`."""

    def fix(value: Any) -> Any:
        if isinstance(value, str) and value.startswith("/"):
            return repo_relative(value)
        if isinstance(value, list):
            return [fix(v) for v in value]
        if isinstance(value, dict):
            return {k: fix(v) for k, v in value.items()}
        return value

    return {k: fix(v) for k, v in training.items()}
