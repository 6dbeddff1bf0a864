"""What a checkpoint needs from its run record to be loaded as it was trained: the rates, the ``--set`` overrides that
define the policy's inputs and outputs, the actuator model it trained with, and the contact parameters it started
with (``params/run.json``, written by
:func:`realgap.envs.run.run_dir.write_params`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realgap.envs.rates import RateSpec
from realgap.envs.run.overrides import apply_overrides
from realgap.envs.run.run_dir import CheckpointError, read_run_json

POLICY_OVERRIDE_ROOTS: tuple[str, ...] = ("env.observations.", "env.actions.", "agent.")
"""``--set`` overrides that define what a checkpoint *is* — its inputs, its outputs, its network — and so must be
applied again wherever it is loaded. Overrides of events, rewards, terminations and the scene change the training
distribution only; evaluation stays on the task as defined, so they are not re-applied."""


@dataclass(frozen=True)
class PolicySettings:
    """What a run's checkpoints need from the run to be loaded again: the rates it trained at (``None``: the task's),
    its interface overrides (:data:`POLICY_OVERRIDE_ROOTS`) and the actuator model of its DR profile
    (:data:`~realgap.envs.dr.profile.ACTUATOR_MODELS`: the model is the robot it learned on, not a randomization,
    so Play and the export run it too)."""

    rates: Any
    overrides: tuple[str, ...]
    actuator_model: str = "chain"

    def apply(self, env_cfg: Any, agent_cfg: Any) -> None:
        """Set the run's rates, actuator model and interface overrides on freshly loaded configs (before the env is
        built)."""
        from realgap.envs.dr.targets import use_actuator_model
        from realgap.envs.run.factory import apply_rates, check_rates

        if self.rates is not None:
            apply_rates(env_cfg, self.rates)  # the chain is rebuilt at these rates: before the model is swapped
        use_actuator_model(env_cfg, self.actuator_model)
        apply_overrides(env_cfg, agent_cfg, list(self.overrides))
        check_rates(env_cfg)  # an interface override cannot move the physics step or the decimation either


def recorded_rates(run_dir: str | Path, record: dict[str, Any]) -> Any:
    """The :class:`~realgap.envs.rates.RateSpec` a run recorded (``record``: its ``params/run.json``), or ``None`` if
    it recorded none; built by ``RateSpec.from_dict`` (its own checks) and checked against the physics step and the
    decimation the run's resolved env config holds (``params/env.yaml``), where that file records them.

    Every load of a run's rates goes through here (resume, play, evaluate, export), so a hand-edited record cannot
    make a checkpoint run at other rates than it trained at.

    Raises:
        CheckpointError: Invalid recorded rates, or ``sim.dt`` / ``decimation`` in ``params/env.yaml`` that disagree
            with them (names the file and both values).
    """

    params = Path(run_dir) / "params"
    rates = record.get("rates")
    if not rates:
        return None
    try:
        spec = RateSpec.from_dict(rates)
    except (TypeError, ValueError, AttributeError) as err:
        raise CheckpointError(f"'{params / 'run.json'}': its recorded rates are invalid: {err}") from None
    env_yaml = params / "env.yaml"
    text = env_yaml.read_text() if env_yaml.is_file() else ""
    # the resolved config is dumped with Python tags (not safe_load-able): read the two top-level settings
    dt = re.search(r"^sim:\n(?:[ ].*\n)*?  dt: *([-+.0-9eE]+) *$", text, re.M)
    decimation = re.search(r"^decimation: *(\d+) *$", text, re.M)
    recorded = {
        "sim.dt": (float(dt.group(1)) if dt else None, spec.sim_dt),
        "decimation": (int(decimation.group(1)) if decimation else None, spec.decimation),
    }
    for key, (got, want) in recorded.items():
        if got is not None and abs(got - want) > 1e-9 * max(abs(want), 1.0):
            raise CheckpointError(
                f"'{env_yaml}': {key} = {got} disagrees with the run's recorded rates "
                f"{spec.to_dict()}, which give {want}: the record is inconsistent"
            )
    return spec


def policy_settings(checkpoint: str | Path) -> PolicySettings:
    """The :class:`PolicySettings` of the run a ``model_<it>.pt`` belongs to (``params/run.json``); a checkpoint
    without its run record loads as the task's defaults.

    Raises:
        CheckpointError: Unreadable record, inconsistent recorded rates (:func:`recorded_rates`) or recorded contact
            parameters the engine refuses (:func:`recorded_contacts`).
    """
    run_json = Path(checkpoint).parent / "params" / "run.json"
    record = read_run_json(run_json) if run_json.is_file() else {}
    spec = recorded_rates(run_json.parent.parent, record)
    recorded_contacts(run_json.parent.parent, spec)
    kept = tuple(o for o in record.get("overrides") or () if o.startswith(POLICY_OVERRIDE_ROOTS))
    from realgap.envs.dr.profile_schema import ACTUATOR_MODELS  # torch (its samplers): not on the study's path

    model = record.get("actuator_model", "chain")  # a run recorded before the field trained on the chain
    if model not in ACTUATOR_MODELS:
        raise CheckpointError(f"'{run_json}': unknown actuator_model {model!r}; known: {list(ACTUATOR_MODELS)}")
    return PolicySettings(spec, kept, model)


def recorded_contacts(run_dir: str | Path, rates: Any = None) -> dict[str, Any] | None:
    """The run's recorded contact parameters (``params/contacts.json``, written at the start of training by
    :func:`realgap.envs.run.contacts.write_contacts`), checked by
    :func:`realgap.envs.format.contacts.recorded_contact_problems` against the physics step: the run's recorded
    ``rates`` (a :class:`~realgap.envs.rates.RateSpec`) where given, else the step the file records.

    A run folder without the file (recorded before contacts were) loads with no error and returns ``None``.

    Raises:
        CheckpointError: The file is unreadable, records another physics step than the run's rates, or a geom group
            breaks a rule (names the file, the group and the rule).
    """
    from realgap.envs.format.contacts import recorded_contact_problems, solver_step

    path = Path(run_dir) / "params" / "contacts.json"
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CheckpointError(f"'{path}' is unreadable or not JSON ({type(err).__name__}: {err})") from None
    if not isinstance(record, dict) or "geoms" not in record:
        raise CheckpointError(f"'{path}' is not a contact record (an object with 'physics_dt' and 'geoms')")
    dt = record.get("physics_dt")
    if not (isinstance(dt, int | float) and dt > 0):
        raise CheckpointError(f"'{path}': physics_dt must be a step > 0 s, got {dt!r}")
    if rates is not None and abs(dt - rates.sim_dt) > 1e-9 * max(rates.sim_dt, 1.0):
        raise CheckpointError(
            f"'{path}': physics_dt = {dt} s disagrees with the run's recorded rates "
            f"(sim_dt {rates.sim_dt} s): the record is inconsistent"
        )
    step = solver_step({"solver": {"num_substeps": record.get("num_substeps")}}, dt)
    problems = recorded_contact_problems(record["geoms"], step, "geoms")
    if problems:
        raise CheckpointError(
            f"'{path}': recorded contact parameters the engine would not simulate as written:\n  - "
            + "\n  - ".join(problems)
        )
    return record
