"""Turn a :class:`~realgap.envs.dr.profile.DRProfile` into named event terms of a task's env config.

:func:`apply_dr_profile` validates the whole profile against the task *before* anything is built -- every asset,
body and joint selector is resolved against the names in the assets' USD files (or the rigid object's prim name),
and every requested change must be one the task can make -- then appends one event term per error source, in the
profile's priority order (largest expected sim-to-real error first): ``dr_payload``, ``dr_link_inertia``,
``dr_joint_friction``, ``dr_actuator``, ``dr_actuator_stages``, ``dr_command_delay``, ``dr_contact_friction``,
``dr_contact_geometry``, ``dr_initial_pose`` (suffixed ``_<asset>`` when a section spans several assets). Sections a
task already covers are *replaced*, not added twice: the profile's pushes set the params of the task's own push
term, and an ``initial_pose`` takes the place of the task's root reset of that asset (which is set to ``None``).
``push: null`` leaves the task's own pushes as the task defines them.

A task event term that draws an asset's whole body itself at every reset (it says so with a class attribute
``owns_body = True``; the grasp task's ``reset_object``, which sizes the object and derives its inertia from that size)
is that body's single owner: the profile's ``payload``, ``contact_geometry`` and ``initial_pose`` groups of that
asset become the owner's params (``inertia``, ``size_scale_range``, ``position_range_m`` / ``yaw_range_rad``)
instead of terms of their own, so no later term redraws the body from the spawned shape.

``actuator_stages`` groups are checked against the task's physics step and the specs of the joints they select, as
the chain checks its own specs (:func:`realgap.envs.dr.stages.check_stage_ranges`). A group that randomizes backlash
or transmission stiffness needs joints built compliant: where the specs are rigid and the robot module has a
compliant stand-in for their spec group (:data:`realgap.envs.robots.COMPLIANT_TRANSMISSION`), the profile's
actuator config is rebuilt with it (the solver's armature then leaves out the motor inertia the chain integrates);
otherwise the profile is refused.
"""

from __future__ import annotations

import dataclasses
import os
import re
from functools import cache
from pathlib import Path
from typing import Any

from isaaclab.assets import ArticulationCfg, RigidObjectCfg
from isaaclab.managers import EventTermCfg, SceneEntityCfg

from realgap.actuators.spec import ActuatorSpec, resolve_joint_specs
from realgap.envs.dr.actuation import randomize_actuator_gains, randomize_actuator_stages, randomize_command_delay
from realgap.envs.dr.contact import randomize_contact_friction, randomize_contact_geometry, reset_root_pose_uniform
from realgap.envs.dr.events import randomize_body_inertia
from realgap.envs.dr.friction import randomize_joint_friction
from realgap.envs.dr.profile import DRProfile, load_dr_profile
from realgap.envs.dr.sampling import check_disjoint, push_magnitude, randomization_to_params, resolve_names
from realgap.envs.dr.stages import NEEDS_COMPLIANT, check_stage_ranges, with_transmission
from realgap.envs.rates import RateSpec
from realgap.envs.robots import COMPLIANT_TRANSMISSION, robot_name

SECTIONS = (
    "payload",
    "link_inertia",
    "joint_friction",
    "actuator",
    "actuator_stages",
    "command_delay",
    "contact_friction",
    "contact_geometry",
    "initial_pose",
)
"""Error sources in the profile's priority order (pushes modify the task's own term)."""
ROOT_RESETS = ("reset_root_state_uniform", "reset_root_state_with_random_orientation", "reset_root_pose_uniform")
"""Names of root-reset event functions an ``initial_pose`` section replaces."""


@cache
def _usd_names(usd_path: str) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, tuple[str, ...]]]:
    """Rigid bodies, movable joints and, per body, its collider prim types, from a USD file (no simulator)."""
    from pxr import Usd, UsdPhysics

    stage = Usd.Stage.Open(usd_path)
    prims = list(Usd.PrimRange(stage.GetPseudoRoot(), Usd.TraverseInstanceProxies()))
    bodies = [p for p in prims if p.HasAPI(UsdPhysics.RigidBodyAPI)]
    joints = [p.GetName() for p in prims if p.IsA(UsdPhysics.Joint) and not p.IsA(UsdPhysics.FixedJoint)]
    colliders: dict[str, list[str]] = {b.GetName(): [] for b in bodies}
    for prim in prims:
        if prim.HasAPI(UsdPhysics.CollisionAPI):
            owner = prim
            while owner.IsValid() and not owner.HasAPI(UsdPhysics.RigidBodyAPI):
                owner = owner.GetParent()
            if owner.IsValid():
                colliders[owner.GetName()].append(prim.GetTypeName())
    return tuple(b.GetName() for b in bodies), tuple(joints), {k: tuple(v) for k, v in colliders.items()}


def asset_names(env_cfg: Any, asset: str, where: str) -> tuple[list[str], list[str], dict[str, tuple[str, ...]]]:
    """Body names, joint names and collider types per body of scene entity ``asset``, known before the build.

    Raises:
        ValueError: no such entity in the scene, or not an articulation / rigid object.
    """
    cfg = getattr(env_cfg.scene, asset, None)
    if not isinstance(cfg, ArticulationCfg | RigidObjectCfg):
        entities = [k for k, v in vars(env_cfg.scene).items() if isinstance(v, ArticulationCfg | RigidObjectCfg)]
        raise ValueError(
            f"{where}: asset {asset!r} is not an articulation or rigid object of this task; available: {entities}"
        )
    usd_path = getattr(cfg.spawn, "usd_path", None)
    if usd_path is not None:
        bodies, joints, colliders = _usd_names(str(Path(usd_path).resolve()))
        return list(bodies), list(joints), dict(colliders)
    name = cfg.prim_path.rstrip("/").split("/")[-1]  # a shape spawned at the prim path: one body, one primitive
    return [name], [], {name: (type(cfg.spawn).__name__,)}


def _term(func: Any, mode: str, asset: str, **params: Any) -> EventTermCfg:
    return EventTermCfg(func=func, mode=mode, params={"asset_cfg": SceneEntityCfg(asset), **params})


def _by_asset(groups: tuple, section: str) -> dict[str, list]:
    out: dict[str, list] = {}
    for i, group in enumerate(groups):
        out.setdefault(group.asset, []).append((f"{section}[{i}]", group))
    return out


def _name(section: str, asset: str, assets: dict) -> str:
    return f"dr_{section}" if len(assets) == 1 else f"dr_{section}_{asset}"


def build_dr_terms(env_cfg: Any, profile: DRProfile, mode: str = "reset", sync: str = "fast") -> dict[str, Any]:
    """The event terms of ``profile`` for ``env_cfg``, by name in priority order (validated, nothing written).

    Returns:
        Term name → :class:`EventTermCfg`; a push section yields ``{"push": params}`` for the task's push term, and
        joints to build compliant ``{"compliant": {asset: {spec group: (stiffness, damping)}}}``.
    """
    if mode not in ("reset", "startup"):
        raise ValueError(f"mode must be 'reset' or 'startup', got {mode!r}")
    if sync not in ("fast", "exact"):
        raise ValueError(f"sync must be 'fast' or 'exact', got {sync!r}")
    src = profile.name
    terms = _inertia_terms(env_cfg, profile, mode, sync)
    for section, func, selector, keys in (
        ("joint_friction", randomize_joint_friction, "joints", ("coulomb_nm", "viscous_nms_per_rad")),
        ("actuator", randomize_actuator_gains, "joints", ("kp_scale", "kd_scale", "torque_limit_scale")),
    ):
        by_asset = _by_asset(getattr(profile, section), section)
        for asset, groups in by_asset.items():
            name = _name(section, asset, by_asset)
            extra = {"sync": sync} if section == "joint_friction" else {}
            entries = _entries(env_cfg, src, groups, selector, keys)
            terms[name] = _term(func, mode, asset, groups=entries, seed_key=name, **extra)
    terms |= _stage_terms(env_cfg, profile, mode)
    terms |= _command_delay_terms(env_cfg, profile)
    for section, func, key in (
        ("contact_friction", randomize_contact_friction, "friction"),
        ("contact_geometry", randomize_contact_geometry, "size_scale"),
    ):
        by_asset = _by_asset(getattr(profile, section), section)
        for asset, groups in by_asset.items():
            name = _name(section, asset, by_asset)
            entries = _entries(env_cfg, src, groups, "bodies", (key,))
            terms[name] = _term(func, mode, asset, groups=entries, seed_key=name)
    terms |= _initial_pose_terms(env_cfg, profile)
    if profile.push is not None:
        terms["push"] = {
            "interval_range_s": tuple(profile.push.interval_s),
            "magnitude_mps": push_magnitude(profile.push.velocity_mps, f"{src}: push.velocity_mps"),
        }
    return terms


def _entries(env_cfg: Any, src: str, groups: list, selector: str, keys: tuple[str, ...]) -> list[dict]:
    """Plain params of one section's groups of one asset, after checking their selectors against its names."""
    out, selections = [], []
    for where, g in groups:
        patterns = getattr(g, selector)
        bodies, joints, _ = asset_names(env_cfg, g.asset, f"{src}: {where}")
        names = bodies if selector == "bodies" else joints
        ids = resolve_names(patterns, names, f"{src}: {where}", "body" if selector == "bodies" else "joint")
        if "size_scale" in keys:
            _check_scalable(env_cfg, g.asset, ids, f"{src}: {where}")
        if "kp_scale" in keys:
            _check_actuated(env_cfg, g.asset, [names[i] for i in ids], f"{src}: {where}")
        selections.append(ids)
        out.append({selector: list(patterns)} | {k: _plain(getattr(g, k)) for k in keys})
    check_disjoint(selections, names, f"{src}: {groups[0][0].split('[')[0]} ({groups[0][1].asset})")
    return out


def _inertia_terms(env_cfg: Any, profile: DRProfile, mode: str, sync: str) -> dict[str, Any]:
    """Payload and link-inertia terms; per asset the last one in the table commits both stages in one write."""
    terms: dict[str, Any] = {}
    inertia = {s: _by_asset(getattr(profile, s), s) for s in ("payload", "link_inertia")}
    for section in ("payload", "link_inertia"):
        for asset, groups in inertia[section].items():
            params = [
                {"bodies": e["bodies"], "randomization": randomization_to_params(g.randomization())}
                for e, (_, g) in zip(_entries(env_cfg, profile.name, groups, "bodies", ()), groups, strict=True)
            ]
            name = _name(section, asset, inertia[section])
            terms[name] = _term(
                randomize_body_inertia, mode, asset, groups=params, seed_key=name, sync=sync, deferred=True, stages=None
            )
    for asset in {a for s in inertia.values() for a in s}:
        # Physical order: the link's own error first, then what is attached to it; the last term in the table commits.
        stages = [_name(s, asset, inertia[s]) for s in ("link_inertia", "payload") if asset in inertia[s]]
        committer = [n for n in terms if n in stages][-1]
        terms[committer].params.update(deferred=False, stages=stages)
    return terms


def realgap_actuator_cfgs(env_cfg: Any, asset: str) -> dict[str, Any]:
    """The asset's realgap actuator configs by name (they carry ``specs`` and ``rates``)."""
    cfg = getattr(env_cfg.scene, asset, None)
    return {k: c for k, c in (getattr(cfg, "actuators", None) or {}).items() if hasattr(c, "rates")}


def build_compliant(env_cfg: Any, asset: str, transmission: dict[str, tuple[float, float]]) -> list[str]:
    """Rebuild the asset's realgap actuator configs with the spec groups in ``transmission`` compliant
    (stiffness N·m/rad, damping N·m·s/rad): the chain integrates their motor inertia, the solver's armature leaves it
    out (:attr:`~realgap.actuators.spec.ActuatorSpec.solver_armature`). Edits ``env_cfg`` before the env is built.

    Returns:
        The spec groups made compliant.

    Raises:
        ValueError: A group none of the asset's realgap actuators has, or a stiffness unstable at the physics step.
    """
    from realgap.envs.sim.actuator import realgap_actuator_cfg

    done: list[str] = []
    actuators = realgap_actuator_cfgs(env_cfg, asset)
    for name, cfg in actuators.items():
        specs = {k: ActuatorSpec.from_dict(v) for k, v in cfg.specs.items()}
        mine = {k: v for k, v in transmission.items() if k in specs}
        if not mine:
            continue
        rates = RateSpec.from_dict(cfg.rates)
        new = realgap_actuator_cfg(with_transmission(specs, mine, rates.sim_dt), rates, cfg.seed)
        getattr(env_cfg.scene, asset).actuators[name] = new
        done += sorted(mine)
    missing = sorted(set(transmission) - set(done))
    if missing:
        raise ValueError(f"{asset}: no realgap actuator has the spec groups {missing} to build compliant")
    return done


def _joint_specs(env_cfg: Any, asset: str, joints: list[str]) -> tuple[dict[str, str], dict[str, ActuatorSpec]]:
    """Spec group and spec of each joint (realgap actuators of ``asset``)."""
    group_of, spec_of = {}, {}
    for cfg in realgap_actuator_cfgs(env_cfg, asset).values():
        specs = {k: ActuatorSpec.from_dict(v) for k, v in cfg.specs.items()}
        for j in joints:
            hits = [k for k, s in specs.items() if any(re.fullmatch(e, j) for e in s.joint_names_expr)]
            if hits:
                group_of[j] = hits[0]
                spec_of[j] = resolve_joint_specs([j], specs)[0]
    return group_of, spec_of


def _stage_terms(env_cfg: Any, profile: DRProfile, mode: str) -> dict[str, Any]:
    """``actuator_stages`` terms, checked against the physics step; joints that must be built compliant first."""
    terms: dict[str, Any] = {}
    compliant: dict[str, dict[str, tuple[float, float]]] = {}
    by_asset = _by_asset(profile.actuator_stages, "actuator_stages")
    for asset, groups in by_asset.items():
        entries, selections = [], []
        for where, g in groups:
            w = f"{profile.name}: {where}"
            _, joints, _ = asset_names(env_cfg, asset, w)
            ids = resolve_names(g.joints, joints, w, "joint")
            names = [joints[i] for i in ids]
            _check_actuated(env_cfg, asset, names, w)
            group_of, spec_of = _joint_specs(env_cfg, asset, names)
            ranges = g.ranges()
            if any(k in ranges for k in NEEDS_COMPLIANT):
                rigid = sorted({group_of[j] for j in names if spec_of[j].transmission_stiffness is None})
                standin = COMPLIANT_TRANSMISSION.get(robot_name(joints), {})
                lacking = [grp for grp in rigid if grp not in standin]
                if lacking:
                    fields = [k for k in NEEDS_COMPLIANT if k in ranges]
                    raise ValueError(f"{w}: {fields} need joints built with a compliant transmission; spec groups "
                                     f"{lacking} are rigid and the robot has no compliant stand-in for them "
                                     f"(available: {sorted(standin)}); select other joints")  # fmt: skip
                for grp in rigid:
                    compliant.setdefault(asset, {})[grp] = standin[grp]
                    spec_of |= {j: with_transmission({grp: s}, {grp: standin[grp]}, env_cfg.sim.dt)[grp]
                                for j, s in spec_of.items() if group_of[j] == grp}  # fmt: skip
            check_stage_ranges(ranges, [spec_of[j] for j in names], env_cfg.sim.dt, w)
            selections.append(ids)
            entries.append({"joints": list(g.joints)} | {k: list(v) for k, v in ranges.items()})
        check_disjoint(selections, joints, f"{profile.name}: actuator_stages ({asset})")
        name = _name("actuator_stages", asset, by_asset)
        terms[name] = _term(randomize_actuator_stages, mode, asset, groups=entries, seed_key=name)
    if compliant:
        terms["compliant"] = compliant
    return terms


def _command_delay_terms(env_cfg: Any, profile: DRProfile) -> dict[str, Any]:
    """One command-delay term per robot driven by realgap actuators (none when the profile's delay is 0)."""
    if profile.command_delay_s == (0.0, 0.0):
        return {}
    robots = [
        a
        for a, cfg in vars(env_cfg.scene).items()
        if isinstance(cfg, ArticulationCfg) and any(hasattr(c, "rates") for c in cfg.actuators.values())
    ]
    if not robots:
        raise ValueError(
            f"{profile.name}: command_delay_s {list(profile.command_delay_s)} needs a robot driven by realgap "
            "actuators (RealgapActuatorCfg); this task has none"
        )
    terms = {}
    for asset in robots:
        name = _name("command_delay", asset, dict.fromkeys(robots))
        terms[name] = _term(
            randomize_command_delay, "reset", asset, latency_range_s=list(profile.command_delay_s), seed_key=name
        )
    return terms


def _initial_pose_terms(env_cfg: Any, profile: DRProfile) -> dict[str, Any]:
    """One initial-pose term per asset (one profile entry each)."""
    terms = {}
    by_asset = _by_asset(profile.initial_pose, "initial_pose")
    for asset, groups in by_asset.items():
        if len(groups) > 1:
            raise ValueError(
                f"{profile.name}: initial_pose has {len(groups)} entries for asset {asset!r}; one per asset"
            )
        where, g = groups[0]
        asset_names(env_cfg, asset, f"{profile.name}: {where}")
        name = _name("initial_pose", asset, by_asset)
        terms[name] = _term(
            reset_root_pose_uniform,
            "reset",
            asset,
            position_m=_plain(g.position_m),
            yaw_rad=_plain(g.yaw_rad),
            seed_key=name,
        )
    return terms


def _plain(value: Any) -> Any:
    """Tuples (ranges, per-axis ranges) as lists, for YAML-safe term params."""
    return [_plain(v) for v in value] if isinstance(value, tuple | list) else value


def _check_actuated(env_cfg: Any, asset: str, joints: list[str], where: str) -> None:
    """Every joint must be driven by a realgap actuator (its gains live in the actuator chain)."""
    exprs = [
        e for c in getattr(env_cfg.scene, asset).actuators.values() if hasattr(c, "rates") for e in c.joint_names_expr
    ]
    missing = [j for j in joints if not any(re.fullmatch(e, j) for e in exprs)]
    if missing:
        raise ValueError(f"{where}: joints {missing} are not driven by a realgap actuator (RealgapActuatorCfg)")


def _check_scalable(env_cfg: Any, asset: str, body_ids: list[int], where: str) -> None:
    bodies, _, colliders = asset_names(env_cfg, asset, where)
    for i in body_ids:
        kinds = colliders.get(bodies[i], ())
        bad = [k for k in kinds if k.startswith("Mesh")]
        if bad or not kinds:
            raise ValueError(
                f"{where}: contact geometry of body {bodies[i]!r} cannot be randomized: "
                + (
                    f"its colliders include {bad} (mesh colliders share their vertices across worlds in MuJoCo-Warp)"
                    if bad
                    else "it has no collider"
                )
                + "; drop this group from the profile for this task"
            )


def _root_reset_of(env_cfg: Any, asset: str) -> str | None:
    for name, term in vars(env_cfg.events).items():
        if isinstance(term, EventTermCfg) and getattr(term.func, "__name__", "") in ROOT_RESETS:
            target = term.params.get("asset_cfg", SceneEntityCfg("robot")).name
            if target == asset:
                return name
    return None


def _body_owners(env_cfg: Any) -> dict[str, EventTermCfg]:
    """Asset name -> the task's event term that owns that asset's body (``owns_body = True`` on its class)."""
    owners = {}
    for term in vars(env_cfg.events).values():
        if isinstance(term, EventTermCfg) and getattr(term.func, "owns_body", False):
            owners[term.params.get("object_cfg", SceneEntityCfg("object")).name] = term
    return owners


def _route_owned(env_cfg: Any, profile: DRProfile) -> tuple[DRProfile, list[tuple[EventTermCfg, dict[str, Any]]]]:
    """Split the groups of body-owned assets off ``profile``: the profile without them, and the params each owner
    takes instead (nothing is written here).

    Raises:
        ValueError: A group the owner cannot take (link inertia of an owned body, or several groups of one section).
    """
    owners = _body_owners(env_cfg)
    updates = []
    for asset, term in owners.items():
        params: dict[str, Any] = {}
        for section in ("payload", "link_inertia", "contact_geometry", "initial_pose"):
            groups = [g for g in getattr(profile, section) if g.asset == asset]
            if not groups:
                continue
            if section == "link_inertia" or len(groups) > 1:
                raise ValueError(f"{profile.name}: {section} of '{asset}': its body is drawn by the task's own "
                                 f"reset term, which takes one payload, contact_geometry and initial_pose group "
                                 f"(found {len(groups)} {section} group(s))")  # fmt: skip
            g = groups[0]
            if section == "payload":
                params["inertia"] = dataclasses.asdict(g.randomization())
            elif section == "contact_geometry":
                params["size_scale_range"] = tuple(g.size_scale)
            else:
                params["position_range_m"] = tuple(tuple(r) for r in g.position_m)
                params["yaw_range_rad"] = tuple(g.yaw_rad)
        if params:
            updates.append((term, params))
    kept = {
        section: tuple(g for g in getattr(profile, section) if g.asset not in owners)
        for section in ("payload", "contact_geometry", "initial_pose")
    }
    return dataclasses.replace(profile, **kept), updates


def apply_dr_profile(
    env_cfg: Any,
    profile: DRProfile | str | os.PathLike[str],
    task: str | None = None,
    mode: str = "reset",
    sync: str = "fast",
) -> DRProfile:
    """Add ``profile``'s randomization to ``env_cfg.events`` (validated first; on error nothing is changed).

    Args:
        env_cfg: A realgap task's env config.
        profile: A :class:`DRProfile`, a shipped profile name or a YAML path.
        task: The task id, to check the profile's ``task`` field against (``None``: not checked).
        mode: ``"reset"`` (resample every episode) or ``"startup"`` (once per env); delays and the initial pose are
            always drawn at reset.
        sync: ``"fast"`` or ``"exact"`` solver update after body-inertia and joint writes (see
            :mod:`realgap.envs.dr.events`).

    Returns:
        The profile applied.

    Raises:
        ValueError: unknown asset, body or joint; a change the task cannot make; the profile is for another task;
            pushes requested from a task without a push term.
    """
    if not isinstance(profile, DRProfile):
        profile = load_dr_profile(profile)
    if task is not None and profile.task is not None and profile.task not in task.lower():
        raise ValueError(f"DR profile {profile.name!r} is for the {profile.task} task, not {task}")
    applied = profile
    profile, owned = _route_owned(env_cfg, profile)
    terms = build_dr_terms(env_cfg, profile, mode, sync)
    push = terms.pop("push", None)
    compliant = terms.pop("compliant", {})
    push_term = next(
        (
            t
            for t in vars(env_cfg.events).values()
            if isinstance(t, EventTermCfg) and t.mode == "interval" and "magnitude_mps" in t.params
        ),
        None,
    )
    if push is not None and push_term is None:
        raise ValueError(
            f"{profile.name}: the profile sets pushes but this task has no push term (an interval event "
            "with a 'magnitude_mps' param, e.g. envs/dr/push.py push_robot)"
        )
    replaced = [
        _root_reset_of(env_cfg, t.params["asset_cfg"].name) for t in terms.values() if t.func is reset_root_pose_uniform
    ]
    # Everything is validated: now edit the config.
    for asset, transmission in compliant.items():
        build_compliant(env_cfg, asset, transmission)
    if push is not None:
        push_term.interval_range_s = push["interval_range_s"]
        push_term.params["magnitude_mps"] = push["magnitude_mps"]
    for old in replaced:
        if old is not None:
            setattr(env_cfg.events, old, None)  # the profile's initial pose replaces the task's root reset
    for name, term in terms.items():
        setattr(env_cfg.events, name, term)
    for term, params in owned:
        term.params.update(params)
    return applied
