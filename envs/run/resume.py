"""What ``--resume`` continues: the recorded run, every flag restored from ``params/run.json``.

A resumed run is the run it resumes. Every flag the run recorded (task, env count, processes, iterations, checkpoint
interval, DR profile, rates, seed, overrides) is taken from its record; a flag given again with the recorded value is
accepted, one given with another value is refused naming both, except where continuing with it is safe and is then
stated: a longer ``--max_iterations`` (more training of the same run) and another ``--save_interval`` (only how often
it is written). A missing or corrupt record is refused naming the file: a run resumed on defaults would silently be
another run.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from realgap.envs.rates import RateSpec, load_rate_profile
from realgap.envs.run.paths import check_writable
from realgap.envs.run.run_dir import CHECKPOINT_RE, CheckpointError, check_checkpoint, latest_checkpoint, read_run_json
from realgap.envs.run.run_record import recorded_contacts, recorded_rates
from realgap.envs.sim.physics import DETERMINISTIC_ENV, deterministic_requested


@dataclass(frozen=True)
class Resume:
    """A resumable run: its folder, the checkpoint it continues from and its record (``params/run.json``)."""

    run_dir: Path
    checkpoint: Path
    record: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def resume_target(path: str | Path) -> tuple[Path, Path, int]:
    """``(run folder, checkpoint, its iteration)`` for ``--resume PATH``: a run folder (its latest ``model_<it>.pt``)
    or a ``model_<it>.pt`` file in one (that checkpoint), checked to load.

    Raises:
        CheckpointError: No such folder or file, no checkpoint in the folder, or an unreadable checkpoint.
    """
    path = Path(path)
    if path.is_file():
        if not CHECKPOINT_RE.search(path.name):
            raise CheckpointError(f"Cannot resume from '{path}': give a run folder or a model_<iteration>.pt in one.")
        run_dir, checkpoint = path.parent, path
    else:
        run_dir, checkpoint = path, latest_checkpoint(path)
    iteration = check_checkpoint(checkpoint)
    check_env_state(checkpoint)
    return run_dir, checkpoint, iteration


def check_env_state(checkpoint: Path) -> None:
    """The env state saved beside ``checkpoint`` (``model_<it>.env.pt``), if there is one, must load.

    Raises:
        CheckpointError: The file is truncated or not a torch file (names it; deleting it resumes from a reset).
    """
    import torch

    state = checkpoint.with_name(checkpoint.stem + ".env.pt")
    if not state.is_file():
        return
    try:
        torch.load(state, weights_only=False, map_location="cpu")
    except Exception as err:  # torch raises several types for truncated or foreign files
        raise CheckpointError(
            f"Cannot load the env state '{state}' ({type(err).__name__}); delete it to resume from a reset instead of "
            "an exact continuation"
        ) from None


def _profile_name(given: str) -> str:
    """The name a DR or rate profile is recorded under: the file stem of a YAML path, else the name itself."""
    return Path(given).stem if given.endswith((".yaml", ".yml")) else given


def restore_flags[R](req: R, record: dict[str, Any], from_iteration: int | None = None) -> tuple[R, list[str]]:
    """``req`` (a training request, :class:`~realgap.envs.run.training.TrainRequest`: a frozen dataclass of train.py's
    flags) with every flag ``record`` holds restored, and what was applied differently.

    ``from_iteration`` is the iteration training continues with (the checkpoint's + 1): a ``--max_iterations`` that
    does not go beyond it would train nothing.

    Raises:
        ValueError: A flag given with another value than the recorded one where that would make another run (both
            values named).
    """
    notes: list[str] = []
    restored: dict[str, Any] = {}

    def refuse(flag: str, given: Any, recorded: Any) -> None:
        raise ValueError(
            f"--{flag} {given} cannot change a resumed run, which recorded --{flag} {recorded}; "
            f"drop --{flag} to continue it, or start a new run"
        )

    same = {"task": "task", "num_envs": "num_envs_total", "num_procs": "num_procs"}
    for flag, key in same.items():
        recorded, given = record.get(key), getattr(req, flag)
        if recorded is None:
            continue
        if given is not None and given != recorded:
            refuse(flag, given, recorded)
        restored[flag] = recorded
    if record.get("dr_profile") is not None:
        if req.dr_profile is not None and _profile_name(req.dr_profile) != record["dr_profile"]:
            refuse("dr_profile", req.dr_profile, record["dr_profile"])
    if record.get("rates") is not None and req.rates is not None:
        if load_rate_profile(req.rates) != RateSpec.from_dict(record["rates"]):
            refuse("rates", req.rates, record["rates"])
    if "deterministic" in record:  # runs recorded before the flag existed: nothing to restore
        given = bool(req.deterministic) or deterministic_requested()
        if given and not record["deterministic"]:
            raise ValueError(
                "--deterministic cannot change a resumed run, which was trained without it; drop "
                "--deterministic to continue it, or start a new run"
            )
        if record["deterministic"] and not given:
            os.environ[DETERMINISTIC_ENV] = "1"
            notes.append("--deterministic restored from the run's record")
        restored["deterministic"] = bool(record["deterministic"])
    recorded, given = record.get("max_iterations"), req.max_iterations
    if given is None and None not in (recorded, from_iteration) and recorded <= from_iteration:
        raise ValueError(
            f"the run is complete: its checkpoint ends iteration {from_iteration - 1} of its recorded "
            f"--max_iterations {recorded}, so resuming trains nothing; give --max_iterations N > "
            f"{from_iteration} to train it further"
        )
    if given is not None and from_iteration is not None and given <= from_iteration:
        raise ValueError(
            f"--max_iterations {given} leaves nothing to train: the checkpoint continues "
            f"at iteration {from_iteration}; give more, or drop it (the run's: {recorded})"
        )
    if recorded is not None:
        if given is not None and given != recorded:
            how = "extends" if given > recorded else "shortens"
            notes.append(f"--max_iterations {given} {how} the run's recorded {recorded}")
        restored["max_iterations"] = given or recorded
    recorded, given = record.get("save_interval"), req.save_interval
    if recorded is not None:
        if given is not None and given != recorded:
            notes.append(f"--save_interval {given} replaces the run's recorded {recorded}")
        restored["save_interval"] = given or recorded
    return dataclasses.replace(req, **restored), notes


RECORD_KEYS: dict[str, tuple[type, ...]] = {
    "argv": (list,),
    "git": (dict,),
    "task": (str,),
    "device": (str,),
    "num_procs": (int,),
    "num_envs_total": (int,),
    "rates": (dict, type(None)),
    "dr_profile": (str,),
    "actuator_model": (str,),
    "overrides": (list,),
    "seed": (int, type(None)),
    "max_iterations": (int,),
    "save_interval": (int,),
    "deterministic": (bool,),
    "resumes": (list,),
}
"""Every key ``params/run.json`` holds (:func:`realgap.envs.run.training.record_new_run` writes them) and its JSON
type."""
RECORD_MINIMUM = {"num_procs": 1, "num_envs_total": 1, "max_iterations": 1, "save_interval": 1, "seed": 0}
"""The smallest valid value of each recorded count: a record below it was edited or corrupted."""


def check_record(record: dict[str, Any], path: Path) -> None:
    """A run's record holds only known keys (:data:`RECORD_KEYS`), each of its type and in range, so a resumed run is
    never built from a value nobody gave, nor a mistyped key silently ignored.

    Raises:
        CheckpointError: An unknown key, a value of another type or out of range (names the file, key and value).
    """
    if unknown := sorted(set(record) - set(RECORD_KEYS)):
        raise CheckpointError(
            f"'{path}' holds unknown keys {unknown}: a record this code did not write (edited, or "
            f"from a newer version); known keys: {', '.join(RECORD_KEYS)}"
        )
    for key, value in record.items():
        kinds = RECORD_KEYS[key]
        wrong_kind = not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds)
        if wrong_kind or (key in RECORD_MINIMUM and value is not None and value < RECORD_MINIMUM[key]):
            want = " or ".join(k.__name__ for k in kinds) + (
                f" >= {RECORD_MINIMUM[key]}" if key in RECORD_MINIMUM else ""
            )
            raise CheckpointError(
                f"'{path}': {key} = {value!r} is not a valid record (expected {want}); the record "
                "was edited or corrupted: restore it, or start a new run"
            )


def prepare_resume[R](req: R) -> tuple[R, Resume]:
    """Find the checkpoint ``req.resume`` names and read the run's record: ``req`` with every recorded flag restored
    (:func:`restore_flags`), and the run to continue.

    Raises:
        CheckpointError: The run folder, checkpoint or ``params/run.json`` is missing or unreadable, or its recorded
            rates are invalid or disagree with ``params/env.yaml``, or its recorded contact parameters break a rule
            (:func:`~realgap.envs.run.run_record.recorded_contacts`; names the file).
        ValueError: A flag given with another value than the run recorded.
    """
    if req.run_name:
        raise ValueError("--run_name names a new run's folder; a resumed run keeps its own: drop --run_name")
    run_dir, checkpoint, iteration = resume_target(req.resume)

    check_writable(run_dir, "--resume")  # checkpoints, logs and progress go there: refused before the env is built
    record = read_run_json(run_dir / "params" / "run.json")
    check_record(record, run_dir / "params" / "run.json")
    if "max_iterations" not in record or "save_interval" not in record:  # a run recorded before these flags were
        record = _agent_yaml_settings(run_dir) | record
    spec = recorded_rates(run_dir, record)  # valid and consistent with the run's resolved config, before anything
    recorded_contacts(run_dir, spec)  # and the contact parameters it started with, as the engine would simulate them
    req, notes = restore_flags(req, record, iteration + 1)
    return req, Resume(run_dir, checkpoint, record, notes)


def _agent_yaml_settings(run_dir: Path) -> dict[str, int]:
    """``max_iterations`` and ``save_interval`` from the run's resolved agent config (``params/agent.yaml``)."""

    path = run_dir / "params" / "agent.yaml"
    text = path.read_text() if path.is_file() else ""
    found = {k: re.search(rf"^{k}:\s*(\d+)\s*$", text, re.M) for k in ("max_iterations", "save_interval")}
    return {k: int(m.group(1)) for k, m in found.items() if m}
