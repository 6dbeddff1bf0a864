"""The named event terms of a domain-randomization profile for a task's env config, one per error source in the
profile's priority order, each validated against what the task offers (:mod:`realgap.envs.dr.targets`) before it is
returned; nothing is written to the config here (:func:`realgap.envs.dr.apply.apply_dr_profile` does that).
"""

from __future__ import annotations

from typing import Any

from isaaclab.assets import ArticulationCfg
from isaaclab.managers import EventTermCfg, SceneEntityCfg

from realgap.envs.dr.actuation import (
    randomize_actuator_gains,
    randomize_actuator_stages,
    randomize_command_delay,
    randomize_holding_drive,
)
from realgap.envs.dr.contact import randomize_contact_friction, randomize_contact_geometry, reset_root_pose_uniform
from realgap.envs.dr.contact_solref import SOLREF_KEYS, randomize_contact_solref
from realgap.envs.dr.events import randomize_body_inertia
from realgap.envs.dr.friction import randomize_joint_friction
from realgap.envs.dr.profile import DRProfile, check_timeconst_range
from realgap.envs.dr.sampling import check_disjoint, push_magnitude, randomization_to_params, resolve_names
from realgap.envs.dr.stages import NEEDS_COMPLIANT, check_stage_ranges, with_transmission
from realgap.envs.dr.targets import asset_names, check_actuated, check_scalable, joint_specs
from realgap.envs.robots import COMPLIANT_TRANSMISSION, robot_name

SECTIONS = (
    "payload",
    "link_inertia",
    "joint_friction",
    "actuator",
    "actuator_stages",
    "command_delay",
    "contact_friction",
    "contact_solref",
    "contact_geometry",
    "initial_pose",
)
"""Error sources in the profile's priority order (pushes modify the task's own term)."""


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
    terms |= _holding_drive_terms(env_cfg, profile)
    for section, func, keys in (
        ("contact_friction", randomize_contact_friction, ("friction",)),
        ("contact_solref", randomize_contact_solref, SOLREF_KEYS),
        ("contact_geometry", randomize_contact_geometry, ("size_scale",)),
    ):
        by_asset = _by_asset(getattr(profile, section), section)
        if section == "contact_solref":
            _check_solref(env_cfg, src, by_asset)
        for asset, groups in by_asset.items():
            name = _name(section, asset, by_asset)
            entries = _entries(env_cfg, src, groups, "bodies", keys)
            terms[name] = _term(func, mode, asset, groups=entries, seed_key=name)
    terms |= _initial_pose_terms(env_cfg, profile)
    if profile.push is not None:
        terms["push"] = {
            "interval_range_s": tuple(profile.push.interval_s),
            "magnitude_mps": push_magnitude(profile.push.velocity_mps, f"{src}: push.velocity_mps"),
        }
    return terms


def _check_solref(env_cfg: Any, src: str, by_asset: dict[str, list]) -> None:
    """``contact_solref`` groups: on one asset (two dominant colliders that touch would mix their solrefs, and neither
    would be the pair's), time constants of at least 2 physics steps of the task (MuJoCo clamps shorter ones)."""
    if len(by_asset) > 1:
        raise ValueError(
            f"{src}: contact_solref has groups on assets {sorted(by_asset)}: where their colliders touch, "
            "MuJoCo would average the two written solrefs; randomize one side of each contact "
            "pair"
        )
    dt = getattr(getattr(env_cfg, "sim", None), "dt", None)
    if dt is None:
        return
    for where, g in (wg for groups in by_asset.values() for wg in groups):
        if g.timeconst_s is not None:
            check_timeconst_range(f"{src}: {where}.timeconst_s", g.timeconst_s, float(dt))


def _entries(env_cfg: Any, src: str, groups: list, selector: str, keys: tuple[str, ...]) -> list[dict]:
    """Plain params of one section's groups of one asset, after checking their selectors against its names."""
    out, selections = [], []
    for where, g in groups:
        patterns = getattr(g, selector)
        bodies, joints, _ = asset_names(env_cfg, g.asset, f"{src}: {where}")
        names = bodies if selector == "bodies" else joints
        ids = resolve_names(patterns, names, f"{src}: {where}", "body" if selector == "bodies" else "joint")
        if "size_scale" in keys:
            check_scalable(env_cfg, g.asset, ids, f"{src}: {where}")
        if "kp_scale" in keys:
            check_actuated(env_cfg, g.asset, [names[i] for i in ids], f"{src}: {where}")
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
            check_actuated(env_cfg, asset, names, w)
            group_of, spec_of = joint_specs(env_cfg, asset, names)
            ranges = g.ranges()
            if any(k in ranges for k in NEEDS_COMPLIANT):
                rigid = sorted({group_of[j] for j in names if spec_of[j].transmission_stiffness is None})
                standin = COMPLIANT_TRANSMISSION.get(robot_name(joints), {})
                lacking = [grp for grp in rigid if grp not in standin]
                if lacking:
                    fields = [k for k in NEEDS_COMPLIANT if k in ranges]
                    raise ValueError(
                        f"{w}: {fields} need joints built with a compliant transmission; spec groups "
                        f"{lacking} are rigid and the robot has no compliant stand-in for them "
                        f"(available: {sorted(standin)}); select other joints"
                    )
                for grp in rigid:
                    compliant.setdefault(asset, {})[grp] = standin[grp]
                    spec_of |= {
                        j: with_transmission({grp: s}, {grp: standin[grp]}, env_cfg.sim.dt)[grp]
                        for j, s in spec_of.items()
                        if group_of[j] == grp
                    }
            check_stage_ranges(ranges, [spec_of[j] for j in names], env_cfg.sim.dt, w)
            selections.append(ids)
            entries.append({"joints": list(g.joints)} | {k: list(v) for k, v in ranges.items()})
        check_disjoint(selections, joints, f"{profile.name}: actuator_stages ({asset})")
        name = _name("actuator_stages", asset, by_asset)
        terms[name] = _term(randomize_actuator_stages, mode, asset, groups=entries, seed_key=name)
    if compliant:
        terms["compliant"] = compliant
    return terms


def _chain_terms(env_cfg: Any, profile: DRProfile, section: str, what: str, func: Any, **params: Any) -> dict[str, Any]:
    """One term of ``section`` per robot driven by realgap actuators (their configs carry the task's rates).

    Raises:
        ValueError: The task has no such robot (``what`` names the profile's field).
    """
    robots = [
        a
        for a, cfg in vars(env_cfg.scene).items()
        if isinstance(cfg, ArticulationCfg) and any(hasattr(c, "rates") for c in cfg.actuators.values())
    ]
    if not robots:
        raise ValueError(
            f"{profile.name}: {what} needs a robot driven by realgap actuators (RealgapActuatorCfg); this task has none"
        )
    terms = {}
    for asset in robots:
        name = _name(section, asset, dict.fromkeys(robots))
        terms[name] = _term(func, "reset", asset, seed_key=name, **params)
    return terms


def _holding_drive_terms(env_cfg: Any, profile: DRProfile) -> dict[str, Any]:
    """One holding-drive term per robot driven by realgap actuators (none without a fraction)."""
    if not profile.holding_drive_fraction:
        return {}
    fraction = profile.holding_drive_fraction
    return _chain_terms(
        env_cfg, profile, "holding_drive", "holding_drive_fraction", randomize_holding_drive, fraction=fraction
    )


def _command_delay_terms(env_cfg: Any, profile: DRProfile) -> dict[str, Any]:
    """One command-delay term per robot driven by realgap actuators (none when the profile's delay is 0)."""
    if profile.command_delay_s == (0.0, 0.0):
        return {}
    delay = list(profile.command_delay_s)
    what = f"command_delay_s {delay}"
    return _chain_terms(env_cfg, profile, "command_delay", what, randomize_command_delay, latency_range_s=delay)


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
