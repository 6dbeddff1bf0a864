"""Read an exported policy's metadata from the live Isaac Lab env (Isaac Lab glue; the schema is
:class:`realgap.envs.deploy.metadata.PolicyMetadata`).

Nothing is hard-coded: joint order and default pose come from the articulation, the action map from the live action
term (its resolved scale, offset and clip tensors), the actuator specs and command delay from the live
:class:`~realgap.actuators.lab.RealgapActuator` groups, the rates from ``env.cfg.rates`` (checked against the
simulator, the decimation and every chain), the observation layout from the observation manager (term order, sizes,
serialized configs), and the robot description by matching the spawned USD to its source in the asset cache.

An env the runtime could not reproduce (several action terms, a non-joint-position action, an actuator that is not a
realgap chain, a non-concatenated observation group) is refused here, at export time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from realgap.envs.deploy.metadata import ActionMap, ActuatorGroup, ObsTerm, PolicyMetadata, RobotInfo


class ExportError(ValueError):
    """The env uses something the export format / deploy runtime cannot describe (names it)."""


def _per_joint(value: Any, n: int) -> list[float]:
    """A float or an ``(E, n)`` tensor (identical rows) as ``n`` floats (env 0)."""
    if isinstance(value, int | float):
        return [float(value)] * n
    return [float(v) for v in value[0].reshape(-1).tolist()]


def action_map(env: Any, raw_clip: float | None = None) -> tuple[ActionMap, Any]:
    """The action map of ``env``'s single joint-position action term, and the articulation it drives.

    Args:
        raw_clip: The bound rsl-rl's wrapper applies to raw actions (``clip_actions`` of the agent cfg), if any.
    """
    from isaaclab.envs.mdp.actions import JointPositionAction

    names = env.action_manager.active_terms
    if len(names) != 1:
        raise ExportError(f"the env has action terms {names}; the export supports exactly one")
    term = env.action_manager.get_term(names[0])
    if not isinstance(term, JointPositionAction):
        raise ExportError(f"action term '{names[0]}' is a {type(term).__name__}; only JointPositionAction exports")
    joints = list(term._joint_names)
    n = len(joints)
    if term.cfg.clip is not None:
        lo, hi = _per_joint(term._clip[..., 0], n), _per_joint(term._clip[..., 1], n)
    else:
        lo, hi = [-math.inf] * n, [math.inf] * n
    amap = ActionMap(term=names[0], joint_names=tuple(joints), scale=tuple(_per_joint(term._scale, n)),
                     offset=tuple(_per_joint(term._offset, n)), clip_min=tuple(lo), clip_max=tuple(hi),
                     raw_clip=None if raw_clip is None else float(raw_clip))  # fmt: skip
    return amap, env.scene[term.cfg.asset_name]


def actuator_groups(robot: Any) -> tuple[ActuatorGroup, ...]:
    """Every actuator group of ``robot`` with its per-joint datasheet specs."""
    groups = []
    for name, act in robot.actuators.items():
        if not (hasattr(act, "specs") and hasattr(act, "chain")):
            raise ExportError(f"actuator group '{name}' is a {type(act).__name__}; only realgap actuator chains "
                              "(realgap.actuators.lab.RealgapActuator) export their model")  # fmt: skip
        specs = list(act.specs)
        groups.append(ActuatorGroup(
            name=name, joint_names=tuple(act.joint_names), joint_specs=tuple(s.name for s in specs),
            specs={s.name: s.to_dict() for s in specs}, friction_in_chain=bool(act.chain.apply_friction),
        ))  # fmt: skip
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
        for name, dims in zip(om.active_terms[group], om.group_obs_term_dim[group], strict=True):
            cfg = serialized[group][name]["cfg"]
            size = math.prod(dims)
            joint_terms = cfg["func"].rpartition(":")[2].startswith("joint_")
            scale = cfg.get("scale")
            terms.append(ObsTerm(
                name=name, group=group, func=cfg["func"], start=pos, stop=pos + size,
                scale=tuple(scale) if isinstance(scale, list | tuple) else scale,
                clip=None if cfg.get("clip") is None else tuple(cfg["clip"]), noise=cfg.get("noise"),
                joint_names=_joint_names_of(cfg.get("params") or {}, env) if joint_terms else None,
                history_length=int(cfg.get("history_length") or 0),
                delay_lag=(int(cfg.get("delay_min_lag") or 0), int(cfg.get("delay_max_lag") or 0)),
                has_modifiers=bool(cfg.get("modifiers")),
            ))  # fmt: skip
            pos += size
    return tuple(terms), pos


def robot_info(robot: Any) -> RobotInfo:
    """Which realgap robot description the articulation was spawned from (matched by its asset cache folder)."""
    from realgap.envs.assets import cache_key, description_hash
    from realgap.envs.robots import ROBOTS

    usd = str(getattr(robot.cfg.spawn, "usd_path", ""))
    found = [r for r in ROBOTS.values() if cache_key(r) in usd]
    if len(found) != 1:
        raise ExportError(f"cannot tell which robot description '{usd}' was converted from (known: {sorted(ROBOTS)})")
    src = found[0]
    x, y, z, w = robot.cfg.init_state.rot  # Isaac Lab 3.0 quaternions are (x, y, z, w)
    return RobotInfo(
        name=src.name, description_sha256=description_hash(src), fixed_base=src.fixed_base,
        source={"distribution": src.distribution, "version": src.source_version(), "path": src.mjcf_relpath,
                "licence": src.licence},
        init_root_pos=tuple(float(v) for v in robot.cfg.init_state.pos),
        init_root_quat_wxyz=(float(w), float(x), float(y), float(z)),
    )  # fmt: skip


def policy_metadata(env: Any, task: str, actor_obs_groups: Sequence[str], training: Mapping[str, Any],
                    raw_action_clip: float | None = None) -> PolicyMetadata:  # fmt: skip
    """The :class:`PolicyMetadata` of a policy trained on the live ``env``.

    Args:
        env: The unwrapped ``ManagerBasedRLEnv``.
        task: Task id.
        actor_obs_groups: Observation groups the actor reads, in order (the agent cfg's ``obs_groups["actor"]``).
        training: Provenance (checkpoint, iteration, git state, ...), stored as given.
        raw_action_clip: rsl-rl's ``clip_actions`` (bound on raw actions before the action term), if any.

    Raises:
        ExportError: The env uses something the format cannot describe.
        ValueError: The env's rates disagree with its simulator, decimation or actuator chains.
    """
    from realgap.envs.factory import check_rates

    amap, robot = action_map(env, raw_action_clip)
    observations, obs_dim = observation_terms(env, actor_obs_groups)
    return PolicyMetadata(
        task=task,
        robot=robot_info(robot),
        joint_names=tuple(robot.joint_names),
        default_joint_pos=tuple(robot.data.default_joint_pos.torch[0].tolist()),
        default_joint_vel=tuple(robot.data.default_joint_vel.torch[0].tolist()),
        actions=amap,
        actuator_groups=actuator_groups(robot),
        rates=check_rates(env.cfg),
        observations=observations,
        obs_dim=obs_dim,
        training=dict(training),
    )
