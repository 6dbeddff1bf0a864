"""What a domain-randomization profile can target in a task's env config, read before the env is built: the bodies,
joints and collider types of each scene entity (from its USD file, no simulator), its realgap actuators and their specs,
the task's root-reset and body-owning event terms, and the checks that a requested change is one the task can make.

:func:`build_compliant` is the one function here that edits the config: it rebuilds an asset's realgap actuators with
compliant transmissions, which an ``actuator_stages`` group that randomizes backlash or transmission stiffness needs.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

from isaaclab.assets import ArticulationCfg, RigidObjectCfg
from isaaclab.managers import EventTermCfg, SceneEntityCfg

from realgap.actuators.spec import ActuatorSpec, resolve_joint_specs
from realgap.envs.dr.stages import with_transmission
from realgap.envs.rates import RateSpec

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


def use_actuator_model(env_cfg: Any, model: str) -> list[str]:
    """Rebuild every realgap actuator config of the scene for ``model`` (one of
    :data:`~realgap.envs.dr.profile.ACTUATOR_MODELS`): ``chain_no_delay`` keeps the chain with zero latency,
    ``implicit_pd`` swaps in Isaac Lab's implicit PD with the same datasheet numbers; ``chain`` changes nothing.
    Edits ``env_cfg`` before the env is built.

    Returns:
        ``asset/actuator`` of every config rebuilt.

    Raises:
        ValueError: A model other than ``chain`` on a scene with no realgap actuator.
    """
    from realgap.envs.sim.actuator import implicit_actuator_cfg, realgap_actuator_cfg, without_delay

    if model == "chain":
        return []
    rebuilt = []
    for asset in [n for n in dir(env_cfg.scene) if not n.startswith("_")]:
        for name, cfg in realgap_actuator_cfgs(env_cfg, asset).items():
            specs = {k: ActuatorSpec.from_dict(v) for k, v in cfg.specs.items()}
            new = (
                implicit_actuator_cfg(specs)
                if model == "implicit_pd"
                else realgap_actuator_cfg(without_delay(specs), RateSpec.from_dict(cfg.rates), cfg.seed)
            )
            rebuilt.append((asset, name, new))
    if not rebuilt:
        raise ValueError(f"actuator_model {model!r}: the scene has no realgap actuator to rebuild")
    for asset, name, new in rebuilt:  # all built: nothing is changed on error
        getattr(env_cfg.scene, asset).actuators[name] = new
    return [f"{asset}/{name}" for asset, name, _ in rebuilt]


def joint_specs(env_cfg: Any, asset: str, joints: list[str]) -> tuple[dict[str, str], dict[str, ActuatorSpec]]:
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


def check_actuated(env_cfg: Any, asset: str, joints: list[str], where: str) -> None:
    """Every joint must be driven by a realgap actuator (its gains live in the actuator chain)."""
    exprs = [
        e for c in getattr(env_cfg.scene, asset).actuators.values() if hasattr(c, "rates") for e in c.joint_names_expr
    ]
    missing = [j for j in joints if not any(re.fullmatch(e, j) for e in exprs)]
    if missing:
        raise ValueError(f"{where}: joints {missing} are not driven by a realgap actuator (RealgapActuatorCfg)")


def check_scalable(env_cfg: Any, asset: str, body_ids: list[int], where: str) -> None:
    """Every selected body must have colliders, none of them a mesh (the size of a mesh collider is shared by all
    worlds in MuJoCo-Warp, so it cannot differ per env)."""
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


def root_reset_of(env_cfg: Any, asset: str) -> str | None:
    """Name of the task's root-reset event term of ``asset`` (one of :data:`ROOT_RESETS`), or ``None``."""
    for name, term in vars(env_cfg.events).items():
        if isinstance(term, EventTermCfg) and getattr(term.func, "__name__", "") in ROOT_RESETS:
            target = term.params.get("asset_cfg", SceneEntityCfg("robot")).name
            if target == asset:
                return name
    return None


def body_owners(env_cfg: Any) -> dict[str, EventTermCfg]:
    """Asset name -> the task's event term that owns that asset's body (``owns_body = True`` on its class)."""
    owners = {}
    for term in vars(env_cfg.events).values():
        if isinstance(term, EventTermCfg) and getattr(term.func, "owns_body", False):
            owners[term.params.get("object_cfg", SceneEntityCfg("object")).name] = term
    return owners
