"""Read an exported policy's metadata (format ``realgap.policy/2``) from the live Isaac Lab env (Isaac Lab glue; the
schema is :class:`realgap.envs.format.metadata.PolicyMetadata`, the format ``docs/policy_format.md``).

Nothing is hard-coded: joint order and default pose come from the articulation, the action terms from the live
action manager (:mod:`realgap.envs.export.actions`), the actuator parameters and command delay from the live
:class:`~realgap.envs.sim.actuator.RealgapActuator` groups, the rates from ``env.cfg.rates`` (checked against the
simulator, the decimation and every chain), the observation layout from the observation manager (term order, sizes,
serialized configs), the balance protocol from the push term and the fall terminations, the robot description by
matching the spawned USD to its source in the asset cache (root body, joint types and limits and the start pose on the
ground from its MJCF), and what the simulator assumed (solver, ground, the contact parameters of every collider) from
the live solver model.

An env the runtime could not be told about (an action term class without a format type, an actuator that is not a
realgap chain, a non-concatenated observation group) is refused here, at export time.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import math
from collections.abc import Mapping, Sequence
from typing import Any

from realgap.envs.export.actions import ExportError, action_terms, f32
from realgap.envs.export.scene import balance_protocol, scene_facts
from realgap.envs.format.description import HASH_RULE, description_files
from realgap.envs.format.metadata import ActuatorGroup, ObsTerm, PolicyMetadata, RobotInfo
from realgap.envs.format.observations import ISAACLAB_OBS_MODULE, TERM_INFO
from realgap.envs.robots import ROBOTS
from realgap.envs.run.contacts import contact_geoms
from realgap.envs.sim.assets import cache_key, description_hash

__all__ = ["ExportError", "action_terms", "actuator_groups", "check_gains", "observation_terms", "policy_metadata"]


def actuator_groups(robot: Any) -> tuple[ActuatorGroup, ...]:
    """Every actuator group of ``robot`` with its per-joint parameters and datasheet specs."""
    groups = []
    for name, act in robot.actuators.items():
        if not hasattr(act, "specs"):
            raise ExportError(
                f"actuator group '{name}' is a {type(act).__name__}; only realgap actuators (the chain "
                "RealgapActuator, or RealgapImplicitActuator) export their model"
            )
        chain = getattr(act, "chain", None)  # an implicit PD has none: the solver applies the friction
        friction = bool(chain.apply_friction) if chain is not None else False
        groups.append(ActuatorGroup.from_specs(name, act.joint_names, list(act.specs), friction))
    return tuple(groups)


def _joint_names_of(params: Mapping[str, Any], env: Any) -> tuple[str, ...] | None:
    """Joint names a term reads, from its serialized ``asset_cfg`` (resolved ``joint_ids``: a slice or ids)."""
    cfg = params.get("asset_cfg")
    if not isinstance(cfg, Mapping):
        return None
    names = env.scene[cfg["name"]].joint_names
    ids = cfg.get("joint_ids")
    if isinstance(ids, slice):
        return tuple(names[ids])
    if isinstance(ids, str) and ids.replace(" ", "") == "slice(None,None,None)":
        return tuple(names)
    if isinstance(ids, Sequence) and not isinstance(ids, str):
        return tuple(names[int(i)] for i in ids)
    raise ExportError(f"cannot resolve the joints of an observation term from joint_ids={ids!r}")


def describe_observation(func: str) -> tuple[str, str, str | None]:
    """``(quantity, units, frame)`` of an observation function ``"module:name"``: realgap's table for Isaac Lab's
    functions, else the first paragraph of the function's docstring (which states its units and frame)."""
    module, _, name = func.partition(":")
    if module == ISAACLAB_OBS_MODULE and name in TERM_INFO:
        return TERM_INFO[name]
    try:
        doc = inspect.getdoc(getattr(importlib.import_module(module), name)) or ""
    except (ImportError, AttributeError):
        doc = ""
    first = " ".join(doc.split("\n\n")[0].split("Shape:")[0].split()) or f"the value of {func}"
    return first, "as stated in quantity", None


def observation_terms(env: Any, groups: Sequence[str]) -> tuple[tuple[ObsTerm, ...], int]:
    """The policy input layout: the terms of ``groups`` (concatenated in this order, as rsl-rl does) and its size."""
    om = env.observation_manager
    serialized = om.serialize()
    terms, pos = [], 0
    for group in groups:
        if group not in om.active_terms:
            raise ExportError(f"observation group '{group}' is not in the env (groups: {list(om.active_terms)})")
        if not om.group_obs_concatenate[group]:
            raise ExportError(f"observation group '{group}' is not concatenated; the policy input must be a vector")
        if getattr(om, "_group_obs_time_major", {}).get(group, False):
            raise ExportError(
                f"observation group '{group}' orders its history by time (history_order='time'); the "
                "format lays each term's history out together (history_order='term')"
            )
        for name, dims in zip(om.active_terms[group], om.group_obs_term_dim[group], strict=True):
            cfg = serialized[group][name]["cfg"]
            size = math.prod(dims)
            joint_terms = cfg["func"].rpartition(":")[2].startswith("joint_")
            scale = cfg.get("scale")
            quantity, units, frame = describe_observation(cfg["func"])
            terms.append(
                ObsTerm(
                    name=name,
                    group=group,
                    func=cfg["func"],
                    start=pos,
                    stop=pos + size,
                    quantity=quantity,
                    units=units,
                    frame=frame,
                    scale=tuple(scale) if isinstance(scale, list | tuple) else scale,
                    clip=None if cfg.get("clip") is None else tuple(cfg["clip"]),
                    noise=cfg.get("noise"),
                    joint_names=_joint_names_of(cfg.get("params") or {}, env) if joint_terms else None,
                    history_length=int(cfg.get("history_length") or 0),
                    delay_lag=(int(cfg.get("delay_min_lag") or 0), int(cfg.get("delay_max_lag") or 0)),
                    has_modifiers=bool(cfg.get("modifiers")),
                )
            )
            pos += size
    return tuple(terms), pos


def robot_info(robot: Any) -> tuple[RobotInfo, Any, Any]:
    """Which realgap robot description the articulation was spawned from (matched by its asset cache folder), the
    :class:`~realgap.envs.deploy.mujoco_robot.MjcfFacts` of its MJCF, and its :class:`RobotSource`."""
    from realgap.envs.deploy.mujoco_robot import mjcf_facts

    usd = str(getattr(robot.cfg.spawn, "usd_path", ""))
    found = [r for r in ROBOTS.values() if cache_key(r) in usd]
    if len(found) != 1:
        raise ExportError(f"cannot tell which robot description '{usd}' was converted from (known: {sorted(ROBOTS)})")
    src = found[0]
    x, y, z, w = (float(v) for v in robot.cfg.init_state.rot)  # Isaac Lab 3.0 quaternions are (x, y, z, w)
    spawn, quat = tuple(float(v) for v in robot.cfg.init_state.pos), (w, x, y, z)
    pose = [f32(v) for v in robot.data.default_joint_pos.torch[0].tolist()]
    facts = mjcf_facts(src.mjcf_path(), robot.joint_names, pose, spawn, quat, src.fixed_base)
    description = {
        "format": "mjcf",
        "distribution": src.distribution,
        "version": src.source_version(),
        "import_package": src.package,
        "locate": "importlib.import_module(import_package).asset_path() / path",
        "path": src.mjcf_relpath,
        "licence": src.licence,
        "sha256": description_hash(src),
        "hash_rule": HASH_RULE,
        "files": [{"path": f.path, "sha256": f.sha256} for f in description_files(src.mjcf_path())],
    }
    info = RobotInfo(
        src.name,
        description,
        src.fixed_base,
        facts.root_body,
        facts.start_root_pos,
        quat,
        spawn,
        quat,
        facts.start_clearance_m,
    )
    return info, facts, src


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def simulator_settings(env: Any) -> dict[str, Any]:
    """What the training simulator assumed: engine and versions, step, gravity, solver, ground, contacts, and the
    edits realgap made to the robot model."""
    from isaaclab.utils import to_dict

    sim = env.cfg.sim
    solver = to_dict(sim.physics.solver_cfg)
    keys = (
        "solver_type",
        "solver",
        "integrator",
        "cone",
        "impratio",
        "iterations",
        "ls_iterations",
        "tolerance",
        "njmax",
        "nconmax",
        "use_mujoco_contacts",
        "ccd_iterations",
        "enable_multiccd",
    )
    ground_cfg = getattr(env.cfg.scene, "ground", None)
    ground = None
    if ground_cfg is not None:
        mat = ground_cfg.spawn.physics_material
        ground = {
            "type": "plane",
            "height_m": 0.0,
            "static_friction": float(mat.static_friction),
            "dynamic_friction": float(mat.dynamic_friction),
            "restitution": float(mat.restitution),
        }
    robot_cfg = env.scene["robot"].cfg
    self_collision = bool(getattr(robot_cfg.spawn.articulation_props, "self_collision_enabled", False))
    return {
        "engine": "Isaac Lab 3.0 (kitless), Newton physics, MuJoCo-Warp solver",
        "versions": {
            d: _version(d) for d in ("isaaclab", "newton", "mujoco-warp", "warp-lang", "mujoco-usd-converter")
        },
        "physics_dt": float(sim.dt),
        "gravity_w": [float(v) for v in sim.gravity],
        "solver": {k: solver.get(k) for k in keys} | {"num_substeps": int(sim.physics.num_substeps)},
        "ground": ground,
        "contacts": {
            "pair_rule": "MuJoCo's: the geom of higher priority gives the pair's friction and condim; at equal "
            "priority the larger friction (per component) and condim; margins and gaps add",
            "friction": "[sliding, torsional, rolling] coefficients",
            "robot_self_collisions": self_collision,
            "geoms": contact_geoms(env),
        },
        "robot_model": [
            "the MJCF converted to USD by mujoco-usd-converter; its <position> actuators and tendons deactivated: all "
            "joint torque comes from the actuator chain (actuators)",
            "the articulation root's MJCF offset zeroed: the root is placed by robot.training_spawn",
            "joint armature = actuators.groups[].armature; joint frictionloss / damping = friction.coulomb / viscous "
            "when friction.applied_by is 'simulator'; joint effort limit = peak_torque (a backstop)",
            f"self-collisions {'on' if self_collision else 'off'}",
        ],
    }


def randomization(env: Any) -> dict[str, Any]:
    """Training-only randomization: the event terms by mode (resets, intervals such as pushes, startup DR)."""
    em = env.event_manager
    return {
        "events": {mode: list(names) for mode, names in em.active_terms.items()},
        "note": "training only: a robot reproduces none of these",
    }


def policy_metadata(
    env: Any,
    task: str,
    actor_obs_groups: Sequence[str],
    training: Mapping[str, Any],
    raw_action_clip: float | None = None,
) -> PolicyMetadata:
    """The :class:`PolicyMetadata` of a policy trained on the live ``env``.

    Args:
        env: The unwrapped ``ManagerBasedRLEnv``.
        task: Task id.
        actor_obs_groups: Observation groups the actor reads, in order (the agent cfg's ``obs_groups["actor"]``).
        training: Provenance (checkpoint, iteration, git state, ...), stored as given plus ``randomization``.
        raw_action_clip: rsl-rl's ``clip_actions`` (bound on raw actions before the action terms), if any.

    Raises:
        ExportError: The env uses something the format cannot describe.
        ValueError: The env's rates disagree with its simulator, decimation or actuator chains.
    """
    from realgap.envs.run.factory import check_rates

    actions, robot = action_terms(env, raw_action_clip)
    observations, obs_dim = observation_terms(env, actor_obs_groups)
    info, facts, _ = robot_info(robot)
    return PolicyMetadata(
        task=task,
        robot=info,
        joint_names=tuple(robot.joint_names),
        joint_types=facts.joint_types,
        default_joint_pos=tuple(f32(v) for v in robot.data.default_joint_pos.torch[0].tolist()),
        default_joint_vel=tuple(f32(v) for v in robot.data.default_joint_vel.torch[0].tolist()),
        joint_pos_lower=facts.pos_lower,
        joint_pos_upper=facts.pos_upper,
        actions=actions,
        actuator_groups=actuator_groups(robot),
        rates=check_rates(env.cfg),
        observations=observations,
        obs_dim=obs_dim,
        imu_body=facts.root_body,
        simulator=simulator_settings(env),
        training={**training, "randomization": randomization(env)},
        scene=scene_facts(env.cfg),
        protocol=None if info.fixed_base else balance_protocol(env.cfg),
    )


def check_gains(meta: Any, env: Any) -> None:
    """Refuse an env whose actuators are not the export's: per joint kp, kd and peak torque (float32 precision).

    A policy's targets mean the torques of the gains it was trained with; evaluating it under other gains measures
    another controller, so ``play --policy`` runs the export's own gains or nothing.

    Raises:
        ExportError: Naming each joint and quantity that differs, with both values.
    """
    live = {j: g for g in actuator_groups(env.scene["robot"]) for j in g.joint_names}
    lines = []
    for group in meta.actuator_groups:
        for i, joint in enumerate(group.joint_names):
            other = live.get(joint)
            if other is None:
                lines.append(f"{joint}: in the export's group '{group.name}', driven by no actuator of the env")
                continue
            k = other.joint_names.index(joint)
            for what in ("kp", "kd", "peak_torque"):
                a, b = getattr(group, what)[i], getattr(other, what)[k]
                if abs(a - b) > 1e-6 * max(1.0, abs(a)):
                    lines.append(f"{what} of {joint}: the export has {a:g}, the env {b:g}")
    if lines:
        raise ExportError(
            "the env's actuators are not the export's:\n  - "
            + "\n  - ".join(lines[:8])
            + (f"\n  (and {len(lines) - 8} more)" if len(lines) > 8 else "")
        )
