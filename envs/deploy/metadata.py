"""The exported policy's contract with a robot: everything needed to run it, as plain JSON-safe data.

One :class:`PolicyMetadata` is written beside every export (``policy.json``) and embedded in the ONNX file
(``metadata_props["realgap_metadata"]``) and the TorchScript file (extra file ``realgap_metadata.json``), so the model
never travels without the facts a user would otherwise have to reverse-engineer from the training code:

- ``joints``: joint names in the order of every per-joint array below, default pose and velocity, and a per-joint
  table of PD gains, torque limits and reflected inertia (derived from the datasheet specs, for readers);
- ``actions``: ``q_target = clip(offset + scale · a, clip_min, clip_max)`` per action joint (Isaac Lab's
  ``JointPositionAction``: the clip applies to the absolute target, after scale and offset);
- ``actuators``: the datasheet specs (``ActuatorSpec.to_dict()``) of each actuator group, the joint → spec map and
  the command delay; the deploy runtime rebuilds the training :class:`~realgap.actuators.chain.ActuatorChain` from
  them with :meth:`ActuatorChain.from_specs`, as the Isaac Lab adapter does;
- ``rates``: ``RateSpec.to_dict()`` (physics, servo and policy rates, hold or interpolation);
- ``observations``: the policy input layout, term by term, with slices, scale, clip and the training noise;
- ``robot``: the robot description's SHA-256, its source package, base type and spawn pose;
- ``policy``: ONNX input/output names and sizes (the observation normalizer is folded into the graph);
- ``task`` and ``training``: task id, checkpoint, iteration and the git state of the training run.

Pure Python + numpy (no torch, no simulator): the deploy runtime parses it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from realgap.actuators.delay import latency_range_to_steps
from realgap.actuators.spec import ActuatorSpec
from realgap.envs.rates import RateSpec

FORMAT = "realgap.policy/1"
"""Format id of the metadata; a runtime refuses any other."""
ONNX_METADATA_KEY = "realgap_metadata"
"""Key of the full metadata JSON in the ONNX ``metadata_props`` (and, with ``.json``, the TorchScript extra file)."""


class MetadataError(ValueError):
    """Metadata that is malformed or disagrees with itself (names the offending field)."""


def _plain(value: Any) -> Any:
    """``value`` as JSON data (tuples become lists), so a metadata object equals its own JSON round trip."""
    return json.loads(json.dumps(value, allow_nan=False))


def _floats(values: Sequence[float], n: int, what: str) -> tuple[float, ...]:
    out = tuple(float(v) for v in values)
    if len(out) != n:
        raise MetadataError(f"{what}: {len(out)} values for {n} joints")
    return out


@dataclass(frozen=True)
class ActionMap:
    """Joint-position action: ``q_target = clip(offset + scale · clip(a, ±raw_clip), clip_min, clip_max)`` (rad).

    Attributes:
        term: Name of the Isaac Lab action term.
        joint_names: The joint of each action entry, in action order.
        scale: rad per unit action.
        offset: rad (the default pose when the task uses ``use_default_offset``).
        clip_min: Lower bound of the *target*, rad (``-inf``: none).
        clip_max: Upper bound of the target, rad (``inf``: none).
        raw_clip: Bound on the raw policy output before scaling (rsl-rl's ``clip_actions``; ``None``: none).
    """

    term: str
    joint_names: tuple[str, ...]
    scale: tuple[float, ...]
    offset: tuple[float, ...]
    clip_min: tuple[float, ...]
    clip_max: tuple[float, ...]
    raw_clip: float | None = None
    type: str = "joint_position_offset"

    def __post_init__(self) -> None:
        n = len(self.joint_names)
        for name in ("scale", "offset", "clip_min", "clip_max"):  # floats ("inf" strings from JSON included)
            object.__setattr__(self, name, _floats(getattr(self, name), n, f"actions.{name}"))
        if self.type != "joint_position_offset":
            raise MetadataError(f"actions.type {self.type!r} is not supported (only 'joint_position_offset')")
        if any(lo > hi for lo, hi in zip(self.clip_min, self.clip_max, strict=True)):
            raise MetadataError("actions: clip_min exceeds clip_max for some joint")
        if self.raw_clip is not None and not self.raw_clip > 0:
            raise MetadataError(f"actions.raw_clip must be > 0 or null, got {self.raw_clip!r}")

    def targets(self, action: np.ndarray) -> np.ndarray:
        """Joint position targets from one raw policy action.

        Shape:
            ``action`` ``(A,)``; output ``(A,)`` float64, in :attr:`joint_names` order.
        """
        a = np.asarray(action, dtype=np.float64)
        if self.raw_clip is not None:
            a = np.clip(a, -self.raw_clip, self.raw_clip)
        q = np.asarray(self.offset) + np.asarray(self.scale) * a
        return np.clip(q, self.clip_min, self.clip_max)


@dataclass(frozen=True)
class ActuatorGroup:
    """One training actuator chain (one command bus): its joints, their datasheet specs and the command delay.

    Attributes:
        name: Isaac Lab actuator group name.
        joint_names: Joints of this chain, in chain order.
        joint_specs: Spec name of each joint (a key of :attr:`specs`).
        specs: ``ActuatorSpec.to_dict()`` by spec name.
        friction_in_chain: Whether the chain added the specs' friction explicitly (False: the simulator applied the
            spec's Coulomb/viscous friction as joint ``frictionloss``/damping, so the robot's plant supplies it).
    """

    name: str
    joint_names: tuple[str, ...]
    joint_specs: tuple[str, ...]
    specs: Mapping[str, Mapping[str, Any]]
    friction_in_chain: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "specs", _plain(self.specs))
        if len(self.joint_specs) != len(self.joint_names):
            raise MetadataError(f"actuator group '{self.name}': {len(self.joint_specs)} spec names for "
                                f"{len(self.joint_names)} joints")  # fmt: skip
        missing = sorted(set(self.joint_specs) - set(self.specs))
        if missing:
            raise MetadataError(f"actuator group '{self.name}': joints use unknown specs {missing}")

    def actuator_specs(self) -> list[ActuatorSpec]:
        """The :class:`ActuatorSpec` of each joint, in :attr:`joint_names` order."""
        parsed = {k: ActuatorSpec.from_dict(v) for k, v in self.specs.items()}
        return [parsed[k] for k in self.joint_specs]

    def delay_steps(self, physics_dt: float) -> tuple[int, int]:
        """``(min, max)`` command delay of this chain in physics steps (all its specs share one latency range)."""
        ranges = {tuple(s["latency_range_s"]) for s in self.specs.values()}
        if len(ranges) != 1:
            raise MetadataError(f"actuator group '{self.name}' mixes latency ranges {sorted(ranges)} on one bus")
        return latency_range_to_steps(next(iter(ranges)), physics_dt)


@dataclass(frozen=True)
class ObsTerm:
    """One observation term: ``obs[start:stop] = scale · clip(func(...), clip)`` (Isaac Lab's order, noise aside).

    Attributes:
        name: Term name in the task's observation group.
        group: Observation group the term belongs to.
        func: ``"module:function"`` of the Isaac Lab term.
        start: First index in the policy input.
        stop: One past the last index.
        scale: Multiplier after clipping (``None``: 1).
        clip: ``(min, max)`` before scaling (``None``: none).
        noise: The training noise config (e.g. ``uniform_noise`` with ``n_min``/``n_max``), for information.
        joint_names: Joints the term reads, in order (joint terms only).
        history_length: Stacked past samples (0: none).
        delay_lag: ``(min, max)`` observation delay, policy steps.
        has_modifiers: Whether custom modifiers post-process the term.
    """

    name: str
    group: str
    func: str
    start: int
    stop: int
    scale: float | tuple[float, ...] | None = None
    clip: tuple[float, float] | None = None
    noise: Mapping[str, Any] | None = None
    joint_names: tuple[str, ...] | None = None
    history_length: int = 0
    delay_lag: tuple[int, int] = (0, 0)
    has_modifiers: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise", _plain(self.noise))

    @property
    def dim(self) -> int:
        """Number of entries of the term."""
        return self.stop - self.start


@dataclass(frozen=True)
class RobotInfo:
    """Which robot the policy was trained on.

    Attributes:
        name: Robot name (a key of ``realgap.envs.robots.ROBOTS``).
        description_sha256: SHA-256 of the robot description file the simulator loaded.
        source: Package, version and path of that file.
        fixed_base: True for a base welded to the world.
        init_root_pos: Spawn position of the root, m, world frame.
        init_root_quat_wxyz: Spawn orientation of the root (w, x, y, z).
    """

    name: str
    description_sha256: str
    source: Mapping[str, str]
    fixed_base: bool
    init_root_pos: tuple[float, float, float]
    init_root_quat_wxyz: tuple[float, float, float, float]


@dataclass(frozen=True)
class PolicyMetadata:
    """Everything a robot needs to run an exported policy (see the module docstring for the JSON layout).

    Attributes:
        task: Task id the policy was trained on.
        robot: Robot description facts.
        joint_names: Joints in the order of :attr:`default_joint_pos` (the simulator's articulation order).
        default_joint_pos: Default pose, rad.
        default_joint_vel: Default joint velocity, rad/s (the reference of ``joint_vel_rel``).
        actions: The action map.
        actuator_groups: Training actuator chains.
        rates: Physics / servo / policy rates and target mode.
        observations: Observation terms in input order.
        obs_dim: Policy input size.
        input_name: ONNX input name.
        output_name: ONNX output name.
        training: Checkpoint, iteration, git state, export time (free-form, for provenance).
    """

    task: str
    robot: RobotInfo
    joint_names: tuple[str, ...]
    default_joint_pos: tuple[float, ...]
    default_joint_vel: tuple[float, ...]
    actions: ActionMap
    actuator_groups: tuple[ActuatorGroup, ...]
    rates: RateSpec
    observations: tuple[ObsTerm, ...]
    obs_dim: int
    input_name: str = "obs"
    output_name: str = "actions"
    training: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "training", _plain(self.training))
        n = len(self.joint_names)
        if len(set(self.joint_names)) != n:
            raise MetadataError("joints.names holds duplicates")
        _floats(self.default_joint_pos, n, "joints.default_pos")
        _floats(self.default_joint_vel, n, "joints.default_vel")
        unknown = sorted(set(self.actions.joint_names) - set(self.joint_names))
        if unknown:
            raise MetadataError(f"actions name joints that are not in joints.names: {unknown}")
        covered = [j for g in self.actuator_groups for j in g.joint_names]
        if sorted(covered) != sorted(self.joint_names):
            raise MetadataError(f"actuator groups cover {sorted(covered)}, joints are {sorted(self.joint_names)}")
        pos = 0
        for term in self.observations:
            if term.start != pos or term.stop < term.start:
                raise MetadataError(f"observation term '{term.name}' spans [{term.start}, {term.stop}) but the "
                                    f"previous term ends at {pos}")  # fmt: skip
            pos = term.stop
        if pos != self.obs_dim:
            raise MetadataError(f"observation terms cover {pos} entries, obs_dim is {self.obs_dim}")

    @property
    def action_dim(self) -> int:
        """Policy output size."""
        return len(self.actions.joint_names)

    def joint_table(self) -> list[dict[str, Any]]:
        """Per joint (in :attr:`joint_names` order): default pose, gains, limits, inertia — derived from the specs."""
        spec_of = {}
        for g in self.actuator_groups:
            for j, s in zip(g.joint_names, g.actuator_specs(), strict=True):
                spec_of[j] = (g.name, s)
        rows = []
        for j, q0 in zip(self.joint_names, self.default_joint_pos, strict=True):
            group, s = spec_of[j]
            rows.append({
                "name": j, "default_pos": q0, "actuator_group": group, "spec": s.name, "kp": s.kp, "kd": s.kd,
                "effort_limit": s.peak_torque, "continuous_torque": s.continuous_torque,
                "velocity_limit": s.velocity_limit, "no_load_speed": s.no_load_speed,
                "armature": s.reflected_inertia, "coulomb_friction": s.coulomb_friction,
                "viscous_friction": s.viscous_friction, "latency_range_s": list(s.latency_range_s),
            })  # fmt: skip
        return rows

    # -- serialization ---------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (read back by :meth:`from_dict`). Units: rad, rad/s, N·m, kg·m², s, Hz."""
        clip = {  # ±inf bounds become strings before _plain's strict JSON check
            "clip_min": [_json_float(v) for v in self.actions.clip_min],
            "clip_max": [_json_float(v) for v in self.actions.clip_max],
        }
        actions = _plain(asdict(self.actions) | clip) | {
            "equation": "q_target = clip(offset + scale * clip(action, -raw_clip, raw_clip), clip_min, clip_max)",
        }
        groups = [
            _plain(asdict(g)) | {"command_delay_s": next(iter(g.specs.values()))["latency_range_s"],
                                 "command_delay_physics_steps": list(g.delay_steps(self.rates.sim_dt))}
            for g in self.actuator_groups
        ]  # fmt: skip
        return {
            "format": FORMAT,
            "task": self.task,
            "robot": _plain(asdict(self.robot)),
            "joints": {"names": list(self.joint_names), "default_pos": list(self.default_joint_pos),
                       "default_vel": list(self.default_joint_vel), "table": self.joint_table()},
            "actions": actions,
            "actuators": {"model": "realgap.actuators.chain.ActuatorChain.from_specs", "groups": groups},
            "rates": self.rates.to_dict(),
            "observations": {"dim": self.obs_dim, "terms": [_plain(asdict(t)) for t in self.observations]},
            "policy": {"input": {"name": self.input_name, "shape": [1, self.obs_dim]},
                       "output": {"name": self.output_name, "shape": [1, self.action_dim]},
                       "obs_normalizer": "folded into the graph (feed raw observations)"},
            "training": dict(self.training),
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PolicyMetadata:
        """Parse and validate :meth:`to_dict` output (derived entries such as the joint table are not read back).

        Raises:
            MetadataError: Wrong format id, a missing field, or fields that disagree (named in the message).
        """
        if data.get("format") != FORMAT:
            raise MetadataError(f"metadata format is {data.get('format')!r}, this runtime reads {FORMAT!r}")
        try:
            joints, obs, policy = data["joints"], data["observations"], data["policy"]
            meta = cls(
                task=data["task"],
                robot=_build(RobotInfo, data["robot"]),
                joint_names=tuple(joints["names"]),
                default_joint_pos=tuple(joints["default_pos"]),
                default_joint_vel=tuple(joints["default_vel"]),
                actions=_build(ActionMap, data["actions"]),
                actuator_groups=tuple(_build(ActuatorGroup, g) for g in data["actuators"]["groups"]),
                rates=RateSpec.from_dict(data["rates"]),
                observations=tuple(_build(ObsTerm, t) for t in obs["terms"]),
                obs_dim=int(obs["dim"]),
                input_name=policy["input"]["name"],
                output_name=policy["output"]["name"],
                training=dict(data.get("training", {})),
            )
        except KeyError as err:
            raise MetadataError(f"metadata lacks the field {err}") from err
        if int(policy["output"]["shape"][-1]) != meta.action_dim:
            raise MetadataError(f"policy output has {policy['output']['shape'][-1]} entries, actions name "
                                f"{meta.action_dim} joints")  # fmt: skip
        return meta

    def to_json(self) -> str:
        """:meth:`to_dict` as indented JSON (infinite clip bounds written as the strings ``"inf"``/``"-inf"``)."""
        return json.dumps(self.to_dict(), indent=2, allow_nan=False)


def _json_float(v: float) -> float | str:
    return v if math.isfinite(v) else ("inf" if v > 0 else "-inf")


def _build(cls: type, data: Mapping[str, Any]) -> Any:
    """``cls(**data)`` for a flat metadata dataclass: JSON lists back to tuples, keys ``cls`` does not have ignored.

    Raises:
        KeyError: A required field is missing (its name).
    """
    kwargs = {}
    for f in fields(cls):
        if f.name in data:
            value = data[f.name]
            kwargs[f.name] = tuple(value) if isinstance(value, list) else value
        elif f.default is MISSING and f.default_factory is MISSING:
            raise KeyError(f"{cls.__name__}.{f.name}")
    return cls(**kwargs)


def load_metadata(path: str | Path) -> PolicyMetadata:
    """Read the metadata from ``policy.json``, from an ONNX file's ``metadata_props``, or from an export folder.

    Raises:
        FileNotFoundError: Nothing readable at ``path``.
        MetadataError: The file holds no realgap metadata, or it is invalid.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "policy.json"
    if not path.is_file():
        raise FileNotFoundError(f"no policy metadata at {path}")
    if path.suffix == ".onnx":
        import onnxruntime as ort

        props = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).get_modelmeta()
        text = props.custom_metadata_map.get(ONNX_METADATA_KEY)
        if text is None:
            raise MetadataError(f"{path} has no '{ONNX_METADATA_KEY}' metadata (not exported by realgap?)")
    else:
        text = path.read_text()
    return PolicyMetadata.from_dict(json.loads(text))
