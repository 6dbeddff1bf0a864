"""The exported policy format ``realgap.policy/2``: its id, its JSON Schema, and the fixed texts it carries.

Every exported ``policy.json`` (and the copy embedded in ``policy.onnx``) is checked against
``configs/schema/policy.schema.json`` (JSON Schema 2020-12) by the exporter before it writes and by the deploy
runtime before it reads, so a robot never runs a half-understood file: a violation names the field
(``$.actions.terms[0].params.scale``). What JSON Schema cannot say (per-joint arrays as long as their joint lists,
slices that tile the vectors) is checked by :class:`~realgap.envs.format.metadata.PolicyMetadata`.

The strings below are written into every file, so the file states its own control law: the equations are the ones
the actuator chain (:mod:`realgap.actuators.chain`) and the action terms compute, with the same symbols as the field
names. The human-readable description of every field is ``docs/policy_format.md``.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

FORMAT = "realgap.policy/2"
"""Format id this runtime reads and the exporter writes."""
FORMAT_V1 = "realgap.policy/1"
ONNX_METADATA_KEY = "realgap_metadata"
"""Key of the full metadata JSON in the ONNX ``metadata_props`` (and, with ``.json``, the TorchScript extra file)."""
SCHEMA_PATH = Path(__file__).resolve().parent.parent.parent / "configs" / "schema" / "policy.schema.json"
"""The JSON Schema (``configs/schema/`` in the repository, ``realgap/configs/schema/`` in an installed wheel)."""
UPGRADE_HINT = (
    "upgrade it in a training install (pip install -e '.[train]') with: python scripts/export.py --upgrade <folder> "
    "(rewrites policy.json and the metadata in policy.onnx, leaves the network unchanged)"
)


class MetadataError(ValueError):
    """Metadata that is malformed or disagrees with itself (the message names the offending field)."""


CONVENTIONS: dict[str, str] = {
    "units": "SI at the joint side: revolute joints rad, rad/s, N·m; prismatic joints m, m/s, N (joints.types); "
    "time s, rates Hz, inertia kg·m², gains N·m/rad and N·m·s/rad (N/m, N·s/m)",
    "world_frame": "z up, gravity along -z, the ground plane (when simulator.ground is not null) at z = 0",
    "quaternions": "(w, x, y, z), unit norm, unless the field says otherwise",
    "joint_arrays": "a per-joint array follows the joint_names of the object that holds it (joints.names at the top)",
    "null": "no bound, or not applicable",
    "joint_zero": "joint positions are MuJoCo qpos of the named MJCF joint: its zero and its axis",
}

ACTUATOR_LAW: dict[str, str] = {
    "pipeline": "every physics step (1 / rates.physics_hz): the latest policy step's targets -> hold or linear "
    "interpolation (rates.target_mode) -> command delay of the group -> [command low-pass] -> PD at the servo rate -> "
    "torque-speed envelope -> [speed cut-off] -> [current loop, then the envelope again] -> [compliant transmission "
    "with backlash] -> + friction when friction.applied_by is 'actuator_chain' -> joint torque; a bracketed stage runs "
    "only where the group's stages turn it on (no stages: none runs)",
    "pd": "tau_cmd = kp * (q_target - q) + kd * (qd_target - qd) + tau_ff",
    "pd_rate": "tau_cmd is recomputed at the servo rate (rates.control_hz, every rates.servo_period_steps physics "
    "steps) from the q, qd measured then, and held until the next servo update",
    "envelope": "tau_hi = peak_torque * clip(1 - qd / no_load_speed, 0, 1); "
    "tau_lo = peak_torque * clip(-1 - qd / no_load_speed, -1, 0); tau_motor = clip(tau_cmd, tau_lo, tau_hi)",
    "envelope_rate": "every physics step with that step's qd; no_load_speed null: tau_motor = clip(tau_cmd, "
    "-peak_torque, peak_torque). Motoring torque falls along the stall line, braking up to peak_torque is allowed",
    "continuous_torque": "the datasheet's thermal (RMS) rating, for the robot's own protection: not enforced in "
    "training; only peak_torque (through the envelope) bounds the torque",
    "velocity_limit": "the datasheet's joint speed, not enforced in training by the solver; the chain enforces it (as "
    "a torque cut-off) only where stages.velocity_cutoff is true, elsewhere the torque-speed envelope limits the speed",
    "armature": "reflected rotor and gear inertia N²·I_m at the joint, kg·m², given to the simulator as joint armature "
    "(less stages.motor_inertia where the transmission is compliant: the chain integrates that part)",
}

FRICTION_EQUATIONS: dict[str, str] = {
    "simulator": "the training simulator applied it, as MuJoCo joint frictionloss = coulomb (dry friction solved as a "
    "constraint: opposes the motion, holds the joint at rest up to coulomb) and joint damping = viscous "
    "(tau = -viscous * qd, integrated implicitly); velocity_scale is null (unused). A robot applies nothing: its "
    "transmission has friction of its own. A simulator standing in for the robot sets the same joint frictionloss "
    "and damping",
    "actuator_chain": "tau_f = -(coulomb * tanh(qd / velocity_scale) + viscous * qd), added to tau_motor after the "
    "envelope every physics step; a simulator without joint friction applies it (the deploy runtime does so for "
    "simulated robots); a robot applies nothing: its transmission has friction of its own",
}

DELAY_SCOPE = (
    "one delay per actuator group (one command bus) and episode: k physics steps, k drawn uniformly from the integers "
    "range_physics_steps[0]..range_physics_steps[1] at every reset and held for the whole episode; the group's command "
    "stream (q_target, qd_target, tau_ff, after target interpolation) reaches the PD k physics steps late (right "
    "after a reset only as late as the steps since the reset). range_physics_steps = floor(range_s / rates.sim_dt + "
    "0.5). It models the command bus of the real robot: a robot adds no delay (robot_value_s = 0); a simulator "
    "without latency draws it as training did"
)

TARGET_MODES: dict[str, str] = {
    "hold": "the targets of a policy step are held unchanged for its rates.decimation physics steps",
    "interpolate": "during a policy step the targets move linearly from the previous policy step's to the new ones: "
    "x_p = x_prev + (p + 1) / decimation * (x_new - x_prev) at physics step p = 0..decimation-1 (x_prev = x_new "
    "after a reset)",
}

NOISE_NOTE = (
    "training only: the simulator added this noise to the term (before clip and scale); a robot adds nothing, its "
    "sensors bring their own"
)

RAW_CLIP_EQUATION = (
    "a = clip(policy output, -raw_clip, raw_clip) (raw_clip null: a = policy output); every action term reads a, and "
    "the last_action observation is a"
)

CONTROL_LOOP: tuple[str, ...] = (
    "1. every policy period (1 / rates.policy_hz s): read joint positions and velocities (joints.names order) and the "
    "IMU of observations.imu_body",
    "2. observation: for each observations.terms entry compute its quantity, clip it (clip), scale it (scale) and "
    "write it to obs[start:stop] as float32; add no noise",
    "3. run policy.onnx: input policy.input.name, shape [1, observations.dim] -> output [1, actions.dim] (the "
    "observation normalizer is inside the graph)",
    "4. a = clip(output, -actions.raw_clip, actions.raw_clip); keep a for the last_action observation",
    "5. each actions.terms entry maps a[start:stop] to the targets of its joints by its equation; joints of no term "
    "keep q_target = joints.default_pos, qd_target = 0, tau_ff = 0",
    "6. until the next policy step: run actuators.law per group (actuators.law.pipeline): a torque-controlled robot "
    "sends the joint torque every physics step (rates.physics_hz); a robot with its own joint PD receives q_target, "
    "qd_target, kp and kd at the servo rate (rates.control_hz) and its drive limits the torque as the envelope does",
    "7. add no command delay and no friction (actuators.groups[].command_delay, friction): both are the robot's own",
    "8. of the groups' stages (actuators.groups[].stages), apply the command low-pass (position_filter_hz) on every "
    "robot; the speed cut-off, current loop and transmission are the robot's own (a simulator standing in adds them)",
)


def plain(value: Any) -> Any:
    """``value`` as JSON data (tuples become lists), so a metadata object equals its own JSON round trip."""
    return json.loads(json.dumps(value, allow_nan=False))


def floats(values: Sequence[Any], n: int, what: str, *, nullable: bool = False) -> tuple[Any, ...]:
    """``values`` as a tuple of ``n`` floats (``None`` kept when ``nullable``); ``what`` names the field in errors."""
    out = tuple(None if (v is None and nullable) else float(v) for v in values)
    if len(out) != n:
        raise MetadataError(f"{what}: {len(out)} values for {n} joints")
    return out


def bound(value: float | None, default: float) -> float:
    """A JSON bound (``None``: none) as a float (``default``, e.g. ``±inf``)."""
    return default if value is None else float(value)


def json_bound(value: float) -> float | None:
    """A float bound as JSON: ``None`` when infinite."""
    return float(value) if math.isfinite(value) else None


@functools.cache
def schema() -> dict[str, Any]:
    """The JSON Schema of :data:`FORMAT` (read once)."""
    if not SCHEMA_PATH.is_file():
        raise FileNotFoundError(f"the policy schema is missing at {SCHEMA_PATH} (an incomplete install of realgap?)")
    return json.loads(SCHEMA_PATH.read_text())


def check_format(data: Mapping[str, Any], source: str = "metadata") -> None:
    """Refuse anything but :data:`FORMAT`; a ``realgap.policy/1`` file gets the upgrade command.

    Raises:
        MetadataError: Another format id (or none).
    """
    found = data.get("format") if isinstance(data, Mapping) else None
    if found == FORMAT:
        return
    if found == FORMAT_V1:
        raise MetadataError(f"{source} is in the old format {FORMAT_V1}; this runtime reads {FORMAT}: {UPGRADE_HINT}")
    raise MetadataError(f"{source}: field 'format' is {found!r}; this runtime reads {FORMAT!r}")


def validate(data: Mapping[str, Any], source: str = "metadata") -> None:
    """Check ``data`` against the schema (after :func:`check_format`).

    Raises:
        MetadataError: Naming the field (JSON path) of each violation found (at most 5), e.g.
            ``$.actions.terms[0].params.scale: 'x' is not of type 'array'``.
    """
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match, relevance

    check_format(data, source)
    errors = sorted(Draft202012Validator(schema()).iter_errors(data), key=relevance)
    if not errors:
        return
    first = best_match(errors)
    lines = [f"{first.json_path}: {first.message}"]
    lines += [f"{e.json_path}: {e.message}" for e in errors if e is not first][:4]
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    raise MetadataError(f"{source} does not follow {FORMAT}{more}:\n  - " + "\n  - ".join(lines))
