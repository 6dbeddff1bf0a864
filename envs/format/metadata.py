"""The exported policy's contract with a robot (format ``realgap.policy/2``): everything needed to run it.

One :class:`PolicyMetadata` is written beside every export (``policy.json``) and embedded in the ONNX file
(``metadata_props["realgap_metadata"]``) and the TorchScript file (extra file ``realgap_metadata.json``). The JSON
layout, field by field with units and frames, is ``docs/policy_format.md``; its JSON Schema is
``configs/schema/policy.schema.json`` (checked on every read and write, :mod:`realgap.envs.format.schema`). In short:

- ``robot``: the description (import package, path, hash over the MJCF and every file it references), root body,
  a start pose with the feet on the ground and the training spawn pose;
- ``joints``: names (the order of every per-joint array), types, default pose and velocity, position limits;
- ``actions``: the raw-action clip and the action terms, each with its slice of the action vector, type, joints,
  parameters and equation;
- ``actuators``: the actuator law (equations) and, per group (one command bus), per-joint gains, torque envelope,
  friction (who applies it), command delay (and what a robot uses) and the optional drive stages (speed cut-off,
  command low-pass, current loop, compliant transmission; who applies each);
- ``rates``, ``observations`` (terms with quantity, units, frame, clip, scale, training-only noise), ``policy``
  (ONNX input/output), ``control_loop``, ``simulator`` (what training assumed about ground, contacts, solver) and
  ``training`` (provenance).

Pure Python + numpy (no torch, no simulator): the deploy runtime parses it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from realgap.envs.format.actions import ACTION_TYPES, Actions, ActionTerm
from realgap.envs.format.groups import GROUP_ARRAYS, ActuatorGroup
from realgap.envs.format.observations import ObsTerm
from realgap.envs.format.protocol import PROTOCOL_BEFORE_THE_FIELD, BalanceProtocol, ProtocolError
from realgap.envs.format.robot import RobotInfo
from realgap.envs.format.scene import SceneError, SceneFacts
from realgap.envs.format.schema import (
    ACTUATOR_LAW,
    CONTROL_LOOP,
    CONVENTIONS,
    FORMAT,
    ONNX_METADATA_KEY,
    RAW_CLIP_EQUATION,
    TARGET_MODES,
    MetadataError,
    floats,
    plain,
    validate,
)
from realgap.envs.rates import RateSpec

__all__ = [
    "ACTION_TYPES",
    "FORMAT",
    "ONNX_METADATA_KEY",
    "ActionTerm",
    "Actions",
    "ActuatorGroup",
    "MetadataError",
    "ObsTerm",
    "PolicyMetadata",
    "RobotInfo",
    "load_metadata",
]


@dataclass(frozen=True)
class PolicyMetadata:
    """Everything a robot needs to run an exported policy (see the module docstring and ``docs/policy_format.md``).

    Attributes:
        task: Task id the policy was trained on.
        robot: Robot description, root body, start and spawn poses.
        joint_names: Joints in the order of every top-level per-joint array (the simulator's articulation order).
        joint_types: ``"hinge"`` (rad) or ``"slide"`` (m) per joint.
        default_joint_pos: Default pose, rad / m. default_joint_vel: rad/s / m/s (reference of ``joint_vel_rel``).
        joint_pos_lower: Lower position limits (``None``: none). joint_pos_upper: Upper position limits.
        actions: Raw clip and action terms.
        actuator_groups: Actuator chains.
        rates: Physics / servo / policy rates and target mode.
        observations: Observation terms in input order.
        obs_dim: Policy input size.
        imu_body: Body whose angular velocity and gravity direction the ``base_*`` terms read (the root body).
        input_name: ONNX input name. output_name: ONNX output name.
        simulator: What the training simulator assumed (engine, solver, ground, contacts), JSON data.
        training: Checkpoint, iteration, git state, randomization, export time (free-form, for provenance).
        scene: Table, object, start, episode and success test of a manipulation task (``None``: no scene, e.g. the
            balance task), :class:`~realgap.envs.format.scene.SceneFacts`.
        protocol: Pushes, fall rule and episode length of a balance task as recorded at export
            (:class:`~realgap.envs.format.protocol.BalanceProtocol`; ``None``: not recorded, a manipulation task or
            an export older than the field). Read :attr:`balance_protocol`, which supplies the latter's where it is
            known.
    """

    task: str
    robot: RobotInfo
    joint_names: tuple[str, ...]
    joint_types: tuple[str, ...]
    default_joint_pos: tuple[float, ...]
    default_joint_vel: tuple[float, ...]
    joint_pos_lower: tuple[float | None, ...]
    joint_pos_upper: tuple[float | None, ...]
    actions: Actions
    actuator_groups: tuple[ActuatorGroup, ...]
    rates: RateSpec
    observations: tuple[ObsTerm, ...]
    obs_dim: int
    imu_body: str
    input_name: str = "obs"
    output_name: str = "actions"
    simulator: Mapping[str, Any] = field(default_factory=dict)
    training: Mapping[str, Any] = field(default_factory=dict)
    scene: SceneFacts | None = None
    protocol: BalanceProtocol | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "training", plain(self.training))
        object.__setattr__(self, "simulator", plain(self.simulator))
        n = len(self.joint_names)
        if len(set(self.joint_names)) != n:
            raise MetadataError("joints.names holds duplicates")
        for key, what in (("default_joint_pos", "default_pos"), ("default_joint_vel", "default_vel")):
            object.__setattr__(self, key, floats(getattr(self, key), n, f"joints.{what}"))
        for key, what in (("joint_pos_lower", "lower"), ("joint_pos_upper", "upper")):
            object.__setattr__(self, key, floats(getattr(self, key), n, f"joints.pos_limits.{what}", nullable=True))
        if len(self.joint_types) != n or set(self.joint_types) - {"hinge", "slide"}:
            raise MetadataError(f"joints.types: need 'hinge' or 'slide' for each of the {n} joints")
        unknown = sorted(set(self.actions.joint_names) - set(self.joint_names))
        if unknown:
            raise MetadataError(f"actions name joints that are not in joints.names: {unknown}")
        covered = [j for g in self.actuator_groups for j in g.joint_names]
        if sorted(covered) != sorted(self.joint_names):
            raise MetadataError(f"actuator groups cover {sorted(covered)}, joints are {sorted(self.joint_names)}")
        for group in self.actuator_groups:
            group.check_stages(self.rates.sim_dt)  # stages the training physics step cannot realize are refused
        pos = 0
        for term in self.observations:
            if term.start != pos or term.stop < term.start:
                raise MetadataError(
                    f"observation term '{term.name}' spans [{term.start}, {term.stop}) but the "
                    f"previous term ends at {pos}"
                )
            pos = term.stop
        if pos != self.obs_dim:
            raise MetadataError(f"observation terms cover {pos} entries, obs_dim is {self.obs_dim}")
        if self.protocol is not None and not self.is_balance:
            raise MetadataError("protocol: a balance protocol (pushes, falls) on a fixed-base or manipulation export")
        if self.scene is not None:
            try:
                self.scene.check_rates(self.rates.policy_hz)
            except SceneError as err:
                raise MetadataError(str(err)) from err

    @property
    def is_balance(self) -> bool:
        """True for a balance export: a floating base and no manipulation scene (the robot can be pushed and fall;
        a fixed base cannot fall, and a scene's episodes end by its own success test)."""
        return not self.robot.fixed_base and self.scene is None

    @property
    def balance_protocol(self) -> BalanceProtocol:
        """The protocol pushed episodes of this policy run under: the recorded :attr:`protocol`, or for an export
        written before the field, the one :data:`~realgap.envs.format.protocol.PROTOCOL_BEFORE_THE_FIELD` records
        for its task and robot description (the shipped G1 balance exports).

        Raises:
            MetadataError: Not a balance export (:attr:`is_balance`: no pushes, no falls), or a balance export
                without ``protocol`` that is not one of those (its numbers would be a guess).
        """
        if self.protocol is not None:
            return self.protocol
        if not self.is_balance:
            raise MetadataError(f"{self.task} is not a balance export (fixed base or scene facts): no balance protocol")
        known = PROTOCOL_BEFORE_THE_FIELD.get((self.task, self.robot.description_sha256))
        if known is None:
            raise MetadataError(
                f"{self.task} on robot '{self.robot.name}' (description sha256 {self.robot.description_sha256[:12]}...)"
                " has no 'protocol' (pushes, fall rule, episode length) and is not a shipped export written before the"
                " field: export it again with this exporter, which records it"
            )
        return known

    @property
    def action_dim(self) -> int:
        """Policy output size."""
        return self.actions.dim

    def group_of(self, joint: str) -> tuple[ActuatorGroup, int]:
        """The actuator group driving ``joint`` and the joint's index in it."""
        for g in self.actuator_groups:
            if joint in g.joint_names:
                return g, g.joint_names.index(joint)
        raise KeyError(joint)

    def joint_array(self, field: str, names: Sequence[str] | None = None) -> np.ndarray:
        """The actuator groups' per-joint ``field`` as one array, in :attr:`joint_names` order or in ``names`` order.

        Args:
            field: A per-joint array of :class:`ActuatorGroup` (:data:`~realgap.envs.format.groups.GROUP_ARRAYS`:
                ``kp``, ``peak_torque``, ``armature``, ...), in its units.
            names: Joints in the order wanted (a robot's own joint order); default :attr:`joint_names`.

        Returns:
            ``float64`` array, shape ``(len(names),)``.

        Raises:
            MetadataError: ``field`` is not a per-joint group array, or a joint of ``names`` that no actuator group
                drives (named): a robot whose joints are not the export's has no value to invent for it.
        """
        if field not in GROUP_ARRAYS:
            raise MetadataError(f"joint_array: '{field}' is not a per-joint group array; one of {list(GROUP_ARRAYS)}")
        values = {j: getattr(g, field)[i] for g in self.actuator_groups for i, j in enumerate(g.joint_names)}
        names = self.joint_names if names is None else tuple(names)
        if missing := [n for n in names if n not in values]:
            raise MetadataError(f"joint_array('{field}'): no actuator group of {self.task} drives joints {missing}")
        return np.array([values[n] for n in names], dtype=float)

    # -- serialization ---------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (read back by :meth:`from_dict`); follows ``configs/schema/policy.schema.json``."""
        r = self.rates
        return plain(
            {
                "format": FORMAT,
                "task": self.task,
                "conventions": CONVENTIONS,
                "robot": self.robot.to_dict(),
                "joints": {
                    "names": self.joint_names,
                    "types": self.joint_types,
                    "default_pos": self.default_joint_pos,
                    "default_vel": self.default_joint_vel,
                    "pos_limits": {
                        "lower": self.joint_pos_lower,
                        "upper": self.joint_pos_upper,
                        "enforced_by": "the simulator (joint limit constraints of the MJCF ranges)",
                    },
                },
                "actions": {
                    "dim": self.action_dim,
                    "raw_clip": self.actions.raw_clip,
                    "raw_clip_equation": RAW_CLIP_EQUATION,
                    "terms": [{f.name: getattr(t, f.name) for f in fields(t)} for t in self.actions.terms],
                    "unassigned_joints": "joints of no term keep q_target = joints.default_pos, qd_target = 0, "
                    "tau_ff = 0",
                },
                "actuators": {"law": ACTUATOR_LAW, "groups": [g.to_dict(r.sim_dt) for g in self.actuator_groups]},
                "rates": r.to_dict() | {"target_mode_equation": TARGET_MODES[r.target_mode]},
                "observations": {
                    "dim": self.obs_dim,
                    "imu_body": self.imu_body,
                    "terms": [t.to_dict() for t in self.observations],
                },
                "policy": {
                    "input": {"name": self.input_name, "shape": [1, self.obs_dim], "dtype": "float32"},
                    "output": {"name": self.output_name, "shape": [1, self.action_dim], "dtype": "float32"},
                    "obs_normalizer": "folded into the graph: feed the raw observation",
                    "action": "the deterministic (mean) action; no sampling",
                },
                "control_loop": CONTROL_LOOP,
                "simulator": self.simulator,
                "training": self.training,
            }
            | ({"scene": self.scene.to_dict()} if self.scene is not None else {})
            | ({"protocol": self.protocol.to_dict()} if self.protocol is not None else {})
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "metadata") -> PolicyMetadata:
        """Validate (JSON Schema, then cross-field checks) and parse :meth:`to_dict` output.

        Raises:
            MetadataError: Another format (a ``realgap.policy/1`` file gets the upgrade command), a schema
                violation (the field's JSON path named), or fields that disagree (named).
        """
        validate(data, source)
        joints, obs, acts, policy = data["joints"], data["observations"], data["actions"], data["policy"]
        try:
            scene = SceneFacts.from_dict(data["scene"]) if "scene" in data else None
            protocol = BalanceProtocol.from_dict(data["protocol"]) if "protocol" in data else None
        except (SceneError, ProtocolError) as err:
            raise MetadataError(f"{source}: {err}") from err
        rates = RateSpec.from_dict({k: v for k, v in data["rates"].items() if k != "target_mode_equation"})
        meta = cls(
            task=data["task"],
            robot=RobotInfo.from_dict(data["robot"]),
            joint_names=tuple(joints["names"]),
            joint_types=tuple(joints["types"]),
            default_joint_pos=tuple(joints["default_pos"]),
            default_joint_vel=tuple(joints["default_vel"]),
            joint_pos_lower=tuple(joints["pos_limits"]["lower"]),
            joint_pos_upper=tuple(joints["pos_limits"]["upper"]),
            actions=Actions(tuple(ActionTerm(**t) for t in acts["terms"]), acts["raw_clip"]),
            actuator_groups=tuple(ActuatorGroup.from_dict(g) for g in data["actuators"]["groups"]),
            rates=rates,
            observations=tuple(ObsTerm.from_dict(t) for t in obs["terms"]),
            obs_dim=int(obs["dim"]),
            imu_body=obs["imu_body"],
            input_name=policy["input"]["name"],
            output_name=policy["output"]["name"],
            simulator=data["simulator"],
            training=data["training"],
            scene=scene,
            protocol=protocol,
        )
        checks = [
            ("actions.dim", acts["dim"], meta.action_dim),
            ("policy.output.shape", policy["output"]["shape"][-1], meta.action_dim),
            ("policy.input.shape", policy["input"]["shape"][-1], meta.obs_dim),
        ]
        for group, raw in zip(meta.actuator_groups, data["actuators"]["groups"], strict=True):
            steps = tuple(raw["command_delay"]["range_physics_steps"])
            what = f"actuators.groups '{group.name}'.command_delay.range_physics_steps"
            checks.append((what, steps, group.delay_steps(rates.sim_dt)))
        for what, got, want in checks:
            if got != want:
                raise MetadataError(f"{source}: {what} is {got}, the rest of the file gives {want}")
        return meta

    def to_json(self) -> str:
        """:meth:`to_dict` as indented JSON (absent bounds are ``null``)."""
        return json.dumps(self.to_dict(), indent=2, allow_nan=False)


def load_metadata(path: str | Path) -> PolicyMetadata:
    """Read the metadata from ``policy.json``, from an ONNX file's ``metadata_props``, or from an export folder.

    Raises:
        FileNotFoundError: Nothing readable at ``path``.
        MetadataError: The file is not a readable ONNX model, holds no realgap metadata, an old format (with the
            upgrade command), or invalid metadata (the field named).
    """
    path = Path(path)
    if path.is_dir():
        path = path / "policy.json"
    if not path.is_file():
        raise FileNotFoundError(f"no policy metadata at {path}")
    if path.suffix == ".onnx":
        import onnxruntime as ort

        try:
            props = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).get_modelmeta()
        except Exception as err:  # onnxruntime raises its own types for a file that is not an ONNX model
            raise MetadataError(
                f"{path} is not a readable ONNX model ({type(err).__name__}: "
                f"{str(err).splitlines()[0] if str(err) else ''})"
            ) from err
        text = props.custom_metadata_map.get(ONNX_METADATA_KEY)
        if text is None:
            raise MetadataError(f"{path} has no '{ONNX_METADATA_KEY}' metadata (not exported by realgap?)")
    else:
        text = path.read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise MetadataError(f"{path} is not valid JSON ({err})") from err
    return PolicyMetadata.from_dict(data, source=str(path))
