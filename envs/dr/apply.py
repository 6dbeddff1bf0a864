"""Turn a :class:`~realgap.envs.dr.profile.DRProfile` into named event terms of a task's env config.

:func:`apply_dr_profile` validates the whole profile against the task *before* anything is built -- every asset, body
and joint selector is resolved against the names in the assets' USD files (or the rigid object's prim name), and every
requested change must be one the task can make -- then appends one event term per error source, in the profile's
priority order (largest expected sim-to-real error first): ``dr_payload``, ``dr_link_inertia``, ``dr_joint_friction``,
``dr_actuator``, ``dr_actuator_stages``, ``dr_command_delay``, ``dr_holding_drive``, ``dr_contact_friction``,
``dr_contact_solref``, ``dr_contact_geometry``, ``dr_initial_pose`` (suffixed ``_<asset>`` when a section spans several
assets). Sections a task already covers are *replaced*, not added twice: the profile's pushes set the params of the
task's own push term, and an ``initial_pose`` takes the place of the task's root reset of that asset (which is set to
``None``). ``push: null`` leaves the task's own pushes as the task defines them. ``contact_solref`` time constants are
checked against the task's physics step (at least 2·dt: MuJoCo clamps shorter ones).

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

A profile's ``width_curriculum`` adds the curriculum term ``dr_width`` (:class:`realgap.envs.dr.curriculum.
dr_width_curriculum`) that narrows every term above about its ranges' midpoints and widens them as training survival
rises (or, with ``signal: success``, the task's episode success); refused where the task draws a body itself with a
term that cannot narrow (not a :class:`~realgap.envs.dr.events.WidthTerm`: it would keep its full ranges) or where no
term draws.

A profile's ``actuator_model`` other than the chain rebuilds the robot's actuator configs first
(:func:`realgap.envs.dr.targets.use_actuator_model`), after refusing sections that need the chain it removes.

The terms are built in :mod:`realgap.envs.dr.terms`, against what the task offers (:mod:`realgap.envs.dr.targets`);
this module routes body-owned groups, then writes everything into the config once all of it is validated.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from isaaclab.managers import CurriculumTermCfg, EventTermCfg

from realgap.envs.dr.contact import reset_root_pose_uniform
from realgap.envs.dr.curriculum import dr_width_curriculum
from realgap.envs.dr.events import WidthTerm
from realgap.envs.dr.profile import DRProfile, load_dr_profile
from realgap.envs.dr.push import find_push
from realgap.envs.dr.targets import ROOT_RESETS as ROOT_RESETS
from realgap.envs.dr.targets import asset_names as asset_names
from realgap.envs.dr.targets import body_owners, root_reset_of, use_actuator_model
from realgap.envs.dr.targets import build_compliant as build_compliant
from realgap.envs.dr.targets import realgap_actuator_cfgs as realgap_actuator_cfgs
from realgap.envs.dr.terms import SECTIONS as SECTIONS
from realgap.envs.dr.terms import build_dr_terms


def _route_owned(env_cfg: Any, profile: DRProfile) -> tuple[DRProfile, list[tuple[EventTermCfg, dict[str, Any]]]]:
    """Split the groups of body-owned assets off ``profile``: the profile without them, and the params each owner
    takes instead (nothing is written here).

    Raises:
        ValueError: A group the owner cannot take (link inertia of an owned body, or several groups of one section).
    """
    owners = body_owners(env_cfg)
    updates = []
    for asset, term in owners.items():
        params: dict[str, Any] = {}
        for section in ("payload", "link_inertia", "contact_geometry", "initial_pose"):
            groups = [g for g in getattr(profile, section) if g.asset == asset]
            if not groups:
                continue
            if section == "link_inertia" or len(groups) > 1:
                raise ValueError(
                    f"{profile.name}: {section} of '{asset}': its body is drawn by the task's own "
                    f"reset term, which takes one payload, contact_geometry and initial_pose group "
                    f"(found {len(groups)} {section} group(s))"
                )
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


def _check_actuator_model(profile: DRProfile, compliant: bool) -> None:
    """Refuse sections that act on a chain the profile's ``actuator_model`` does not run.

    Raises:
        ValueError: ``chain_no_delay`` with a delay range; ``implicit_pd`` with actuator, stage, delay or transmission
            randomization (the solver's PD has no chain for them to write into).
    """
    delay = profile.command_delay_s != (0.0, 0.0)
    if profile.actuator_model == "chain_no_delay" and delay:
        raise ValueError(
            f"{profile.name}: actuator_model chain_no_delay runs without delay, but command_delay_s is "
            f"{list(profile.command_delay_s)}; set command_delay_s: [0.0, 0.0]"
        )
    if profile.actuator_model == "implicit_pd":
        on_chain = {
            "actuator": bool(profile.actuator),
            "actuator_stages": bool(profile.actuator_stages) or compliant,
            "command_delay_s": delay,
            "holding_drive_fraction": bool(profile.holding_drive_fraction),
        }
        if any(on_chain.values()):
            raise ValueError(
                f"{profile.name}: actuator_model implicit_pd has no actuator chain for "
                f"{[k for k, on in on_chain.items() if on]} to randomize; leave them empty"
            )


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
    found = find_push(env_cfg.events)
    push_term = None if found is None else found[1]
    if push is not None and push_term is None:
        raise ValueError(
            f"{profile.name}: the profile sets pushes but this task has no push term (an event term of "
            "realgap.envs.dr.push.push_robot)"
        )
    replaced = [
        root_reset_of(env_cfg, t.params["asset_cfg"].name) for t in terms.values() if t.func is reset_root_pose_uniform
    ]
    _check_actuator_model(profile, bool(compliant))
    curriculum = _width_curriculum(env_cfg, applied, terms, owned)
    # Everything is validated: now edit the config.
    use_actuator_model(env_cfg, profile.actuator_model)  # builds every new config before it writes one
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
    if curriculum is not None:
        env_cfg.curriculum.dr_width = curriculum
    return applied


def _width_curriculum(env_cfg: Any, profile: DRProfile, terms: dict[str, Any], owned: list) -> Any:
    """The ``dr_width`` curriculum term of ``profile.width_curriculum`` (``None`` without one), checked first."""
    spec = profile.width_curriculum
    if spec is None:
        return None
    where = f"{profile.name}: width_curriculum"
    fixed = [t.func.__name__ for t, _ in owned if not (isinstance(t.func, type) and issubclass(t.func, WidthTerm))]
    if fixed:
        raise ValueError(
            f"{where}: this task draws {fixed} itself, whose ranges a width curriculum does not narrow; remove "
            "width_curriculum or the owned sections"
        )
    if not terms:
        raise ValueError(f"{where}: the profile randomizes nothing a width curriculum could narrow")
    if getattr(env_cfg, "curriculum", None) is None:
        raise ValueError(f"{where}: this task has no curriculum table to add the term to")
    return CurriculumTermCfg(func=dr_width_curriculum, params=dataclasses.asdict(spec))
