"""Run folders: where a training run writes its checkpoints, logs and the record of how it was made.

Layout: ``<log_root>/<experiment>/<YYYY-mm-dd_HH-MM-SS>[_<run_name>]/`` holding ``model_<it>.pt``, ``progress.csv``,
TensorBoard event files and ``params/`` (resolved env and agent configs, rates, git state, command line).

A run folder is created only after every input has been validated and the env has been built, so bad input never
leaves a half-written run behind.
"""

from __future__ import annotations

import csv
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from realgap.envs.run.paths import check_inside, check_name

REPO_ROOT = Path(__file__).resolve().parents[2]
CHECKPOINT_RE = re.compile(r"model_(\d+)\.pt$")
REWARD_COLUMN = "reward_"
"""progress.csv's prefix for a reward term's column (``reward_lift``)."""
PROGRESS_PREFIXES = {"Curriculum/": "", "Episode_Reward/": REWARD_COLUMN}
"""extras["log"] keys written to progress.csv, as column prefix + last name part: the task metrics and curriculum
levels (``success_rate``), and each reward term as Isaac Lab logs it: the episode's sum over the maximum episode length
in seconds (``reward_lift``: which stage a run has reached). rsl-rl logs the same keys to TensorBoard as tags."""


def progress_column(key: str) -> str | None:
    """The progress.csv column of an extras["log"] key (or TensorBoard tag), or ``None`` for keys the CSV leaves to
    TensorBoard."""
    for prefix, column in PROGRESS_PREFIXES.items():
        if key.startswith(prefix):
            return column + key.rsplit("/", 1)[-1]
    return None


class CheckpointError(RuntimeError):
    """A run folder or checkpoint that cannot be resumed (missing, empty or unreadable)."""


class CheckpointWriteError(CheckpointError):
    """A checkpoint that could not be written (disk full, no permission); the message names the last good checkpoint
    and the command that resumes from it."""


def write_failure(path: str | Path, err: OSError) -> CheckpointWriteError:
    """The error for a failed write of checkpoint ``path``: what failed, the newest checkpoint still on disk (intact:
    every write is atomic) and the resume command."""
    run_dir = Path(path).parent
    try:
        last = f"the last good checkpoint is '{latest_checkpoint(run_dir)}'"
    except CheckpointError:
        last = "no checkpoint was written before it"
    return CheckpointWriteError(
        f"Cannot write checkpoint '{path}': {err.strerror or err}. Training stopped; {last}. Free space or fix the "
        f"permissions of '{run_dir}', then continue with: python scripts/train.py --resume {run_dir}"
    )


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


def read_run_json(path: str | Path) -> dict[str, Any]:
    """A run's record (``params/run.json``), read and checked to be a JSON object.

    Raises:
        CheckpointError: The file is missing, unreadable, not JSON or not an object (names the file).
    """
    path = Path(path)
    try:
        record = json.loads(path.read_text())
    except FileNotFoundError:
        raise CheckpointError(f"'{path}' is missing: the run's record (task, rates, seed, flags) is needed") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CheckpointError(f"'{path}' is unreadable or not JSON ({type(err).__name__}: {err})") from None
    if not isinstance(record, dict):
        raise CheckpointError(f"'{path}' holds a JSON {type(record).__name__}, not the run's record (an object)")
    return record


ISAACLAB_RUN_RECORD = "run.json"
"""Isaac Lab 3.0's own record of a run, beside its checkpoints: ``isaaclab train`` writes the library and the task."""


def run_task(checkpoint: str | Path) -> str:
    """The task id the run of ``checkpoint`` (a ``model_<it>.pt``) trained: from realgap's record
    (``params/run.json``, written by ``realgap train``), else from Isaac Lab's (``run.json`` beside the checkpoints,
    written by ``isaaclab train``). Never a default: a run that names no task is refused.

    Raises:
        CheckpointError: Neither record names a task (the message names both files and ``--task``); Isaac Lab's
            record names another RL library than rsl_rl (realgap loads rsl-rl checkpoints only).
    """
    run_dir = Path(checkpoint).parent
    ours, isaaclab = run_dir / "params" / "run.json", run_dir / ISAACLAB_RUN_RECORD
    if ours.is_file() and isinstance(task := read_run_json(ours).get("task"), str):
        return task
    if isaaclab.is_file():
        record = read_run_json(isaaclab)
        if record.get("library", "rsl_rl") != "rsl_rl":
            raise CheckpointError(
                f"'{isaaclab}': the run was trained with {record['library']!r}; realgap loads rsl_rl checkpoints "
                "(isaaclab train --rl_library rsl_rl, the tasks' default)"
            )
        if isinstance(task := record.get("task"), str):
            return task
    raise CheckpointError(
        f"the run of '{checkpoint}' names no task: neither realgap's record '{ours}' nor Isaac "
        f"Lab's '{isaaclab}' gives one; pass --task ID"
    )


def new_run_dir(log_root: str | Path, experiment: str, run_name: str = "") -> Path:
    """Create and return a fresh, empty run folder ``<log_root>/<experiment>/<stamp>[_<run_name>]``.

    Raises:
        PathRefused: ``run_name`` or ``experiment`` is not a plain name, or the folder would resolve outside
            ``log_root`` (a symbolic link inside it pointing elsewhere); nothing is created.
    """

    stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    name = f"{stamp}_{check_name(run_name, '--run_name')}" if run_name else stamp
    path = Path(log_root) / check_name(experiment, "agent.experiment_name") / name
    check_inside(path, log_root, "--run_name")
    path.mkdir(parents=True, exist_ok=False)
    return path


def git_state(repo: Path = REPO_ROOT) -> dict[str, Any]:
    """Commit, branch and whether the working tree has uncommitted changes (empty if not a git checkout)."""

    def git(*args: str) -> str:
        out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() if out.returncode == 0 else ""

    commit = git("rev-parse", "HEAD")
    if not commit:
        return {}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {
        "commit": commit,
        "branch": git("rev-parse", "--abbrev-ref", "HEAD"),
        "dirty": bool(status),
        "changed_files": status.splitlines(),
    }


def write_params(run_dir: Path, env_cfg: Any, agent_cfg: Any, extra: dict[str, Any] | None = None) -> None:
    """Write the resolved configs, git state and command line into ``run_dir/params``."""
    from isaaclab.utils.io import dump_yaml

    params = run_dir / "params"
    params.mkdir(exist_ok=True)
    dump_yaml(str(params / "env.yaml"), env_cfg)
    dump_yaml(str(params / "agent.yaml"), agent_cfg)
    _write_json(params / "run.json", _command() | (extra or {}))


def _command() -> dict[str, Any]:
    """This process's command line and the git state of the code it runs."""
    return {"argv": sys.argv, "git": git_state()}


def _write_json(path: Path, record: dict[str, Any]) -> None:
    """Write ``record`` to ``path`` atomically (a staging file renamed into place)."""
    staging = path.with_suffix(".json.tmp")
    staging.write_text(json.dumps(record, indent=2, default=str))
    staging.replace(path)


def record_resume(run_dir: str | Path, from_iteration: int) -> dict[str, Any]:
    """Append this process's command line and git state to ``run_dir/params/run.json`` under ``resumes``.

    A resumed run may continue at another commit or with another budget; its record keeps every continuation next
    to the first command, so an export of a late checkpoint names all the code that trained it. Written atomically.
    """
    path = Path(run_dir) / "params" / "run.json"
    record = json.loads(path.read_text()) if path.is_file() else {}
    entry = _command() | {
        "from_iteration": from_iteration,
        "at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    record.setdefault("resumes", []).append(entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_json(path, record)
    return entry


def env_steps_per_iteration(run_dir: str | Path) -> int:
    """Env steps one PPO iteration of the run collected over all its processes: rsl-rl ``num_steps_per_env`` (from
    ``params/agent.yaml``) × ``num_envs_total`` (from ``params/run.json``); 0 when the run did not record them."""
    params = Path(run_dir) / "params"
    agent = params / "agent.yaml"
    found = re.search(r"^num_steps_per_env:\s*(\d+)", agent.read_text(), re.M) if agent.is_file() else None
    record = json.loads((params / "run.json").read_text()) if (params / "run.json").is_file() else {}
    return int(found.group(1)) * int(record.get("num_envs_total", 0)) if found else 0


def training_seconds(run_dir: str | Path) -> dict[int, float]:
    """Cumulative collect + learn seconds at the end of each logged iteration (``progress.csv``): the run's training
    time, without its start-up and checkpoint writes."""
    out, total = {}, 0.0
    path = Path(run_dir) / "progress.csv"
    if path.is_file():
        with open(path, newline="") as fh:
            for row in csv.DictReader(fh):
                total += float(row["collect_s"]) + float(row["learn_s"])
                out[int(row["iteration"])] = total
    return out


def fill_reward_terms(run_dir: str | Path, progress: str | Path | None = None) -> list[str]:
    """Add ``reward_<term>`` columns to a ``progress.csv`` written before the runner recorded reward terms, from the
    run's own TensorBoard log (``Episode_Reward/<term>`` at step = iteration: the same per-iteration mean of the
    episodes' extras). A record that has them, or a run without a log, is left as it is.

    Returns:
        The columns added (empty: nothing changed).
    """
    path = Path(progress) if progress is not None else Path(run_dir) / "progress.csv"
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        header, rows = list(reader.fieldnames or []), list(reader)
    if any(name.startswith(REWARD_COLUMN) for name in header):
        return []
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # only for older records

    terms: dict[str, dict[int, float]] = {}
    for log in sorted(Path(run_dir).glob("events.out.tfevents.*")):  # a resumed run's later file wins a step
        events = EventAccumulator(str(log), size_guidance={"scalars": 0})
        events.Reload()
        for tag in events.Tags()["scalars"]:
            column = progress_column(tag)  # the runner's own mapping: its columns, byte for byte
            if column is not None and column.startswith(REWARD_COLUMN):
                terms.setdefault(column, {}).update({e.step: e.value for e in events.Scalars(tag)})
    if not terms:
        return []
    for row in rows:
        for column, values in terms.items():
            row[column] = values.get(int(row["iteration"]), "nan")
    at = header.index("mean_episode_length") + 1 if "mean_episode_length" in header else len(header)
    header[at:at] = list(terms)  # where the runner puts them: after the episode length
    write_progress(path, header, rows)
    return list(terms)


def file_mode() -> int:
    """The mode of a file a run writes: ``0o666`` less the process umask, as ``open()`` gives every other file of the
    run (configs, logs, TensorBoard events; 0644 under the usual umask 022). ``tempfile.mkstemp`` creates its files
    0600 whatever the umask, so a checkpoint or progress.csv renamed into place from one is set to this first: one
    rule for every file of a run folder, which the umask (not the writer) decides."""
    try:  # Linux states it; setting and restoring it would leave a window where another thread creates 0666 files
        status = Path("/proc/self/status").read_text()
        umask = int(re.search(r"^Umask:\s*([0-7]+)", status, re.M).group(1), 8)  # type: ignore[union-attr]
    except (OSError, AttributeError):
        umask = os.umask(0)
        os.umask(umask)
    return 0o666 & ~umask


def write_progress(path: str | Path, header: list[str], rows: list[dict[str, Any]]) -> None:
    """Write a progress.csv whole, atomically (a temporary file in the same folder renamed into place); a cell a row
    lacks is ``nan``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=".tmp_", suffix=".csv", dir=path.parent)
    os.chmod(tmp, file_mode())
    with os.fdopen(fd, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=header, restval="nan")
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)


def check_checkpoint(path: str | Path) -> int:
    """Read a checkpoint once and return its iteration, before anything is built on it.

    Raises:
        CheckpointError: The file is truncated, not a torch file, or not an rsl-rl checkpoint (names the file).
    """
    import torch

    try:
        loaded = torch.load(path, weights_only=False, map_location="cpu")
    except Exception as err:  # torch raises several types for truncated or foreign files
        raise CheckpointError(f"Cannot load checkpoint '{path}': {type(err).__name__}: {err}") from err
    if not isinstance(loaded, dict) or "iter" not in loaded or "actor_state_dict" not in loaded:
        raise CheckpointError(f"'{path}' is not an rsl-rl checkpoint (no 'iter' / 'actor_state_dict' entry).")
    return int(loaded["iter"])
