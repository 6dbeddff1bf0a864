"""Isaac Lab event terms that randomize contacts and initial placement: collider friction and size, object pose;
the per-world contact solref writer (:class:`ColliderSolref`) they and the robustness sweeps share.

Glue only, like :mod:`realgap.envs.dr.events` (explicit generators, nominal read once, batched writes). Newton keeps
one friction coefficient μ and one scale per collider *per world*, and the MuJoCo-Warp solver copies both into its
per-world ``geom_friction`` / ``geom_size`` / ``geom_pos`` on a shape-property update (no ``set_const``: cheap).

Friction: MuJoCo uses the larger μ of the two touching geoms unless one has a higher ``priority``, so a sampled μ is
the pair's μ only against partners with μ ≤ it or with lower priority (the G1's foot spheres carry priority 1 in the
Menagerie model, so their μ is the foot–ground μ).

Geometry: a primitive collider (sphere, capsule, cylinder, box, ellipsoid) is scaled about its body's frame origin
-- its size and its position in the body by the same factor, so a sole made of contact spheres keeps its shape and
its footprint scales. Mesh colliders cannot be scaled per world (MuJoCo-Warp shares mesh vertices between worlds)
and are rejected. MuJoCo-Warp's broad phase uses a bounding radius per world (scaled here with the geom) and a
bounding box shared by all worlds (enlarged once by the largest scale, so a grown collider is never culled).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch
import warp as wp
from isaaclab.assets import BaseArticulation
from isaaclab.managers import ManagerTermBase, SceneEntityCfg
from isaaclab.utils import math as math_utils
from newton import GeoType, ModelFlags, ShapeFlags

from realgap.envs.contact.params import DOMINANT_SOLMIX
from realgap.envs.dr.events import (
    WidthTerm,
    draw_columns,
    env_ids_tensor,
    group_bounds,
    term_generator,
    torch_stream_order,
)
from realgap.envs.dr.inertia_sampling import validate_range
from realgap.envs.dr.sampling import check_disjoint, resolve_names, uniform

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedEnv
    from isaaclab.managers import EventTermCfg

SCALABLE = (GeoType.SPHERE, GeoType.CAPSULE, GeoType.CYLINDER, GeoType.BOX, GeoType.ELLIPSOID)
"""Collider types whose size is a per-world parameter of MuJoCo-Warp."""
_MJ_PRIMITIVES = (2, 3, 4, 5, 6)  # mjtGeom sphere, capsule, ellipsoid, cylinder, box
SOLREF_MODE_RAW = 1
"""Newton's ``mujoco.solref_mode`` whose ``mujoco.solref`` goes to MuJoCo as written (its SOLREF_MODE_RAW)."""


def _body_colliders(asset: Any, body_ids: Sequence[int]) -> list[list[int]]:
    """For each body, the indices of its *colliding* shapes on the asset view's shape axis (sites are skipped)."""
    from isaaclab_newton.physics import NewtonManager

    flags = asset._root_view.get_attribute("shape_flags", NewtonManager.get_model())[:, 0].numpy()[0]
    if isinstance(asset, BaseArticulation):
        backend = asset.map_body_ids_to_backend(list(body_ids))
        shapes = [list(asset._root_view.body_shapes[b]) for b in backend]
    else:  # a rigid object is one body holding every shape of its view
        shapes = [list(range(flags.shape[0]))]
    return [[s for s in group if int(flags[s]) & int(ShapeFlags.COLLIDE_SHAPES)] for group in shapes]


def _selection(asset: Any, groups: Sequence[dict], where: str, key: str, kind: str) -> tuple[list, list]:
    """Per group: body ids and the validated range ``group[key]``; groups must not share a body."""
    names = list(asset.body_names)
    selections = [resolve_names(g["bodies"], names, f"{where}.groups[{i}]", "body") for i, g in enumerate(groups)]
    check_disjoint(selections, names, where)
    ranges = [validate_range(f"{where}.groups[{i}].{key}", g[key], kind) for i, g in enumerate(groups)]
    return selections, ranges


def _shape_plan(asset: Any, selections: list, ranges: list, where: str, device: Any) -> tuple:
    """One value per (env, body), broadcast to the body's colliders: shape columns, their body slot, slot bounds."""
    shape_cols, slot_of_shape, bounds = [], [], []
    for ids, rng in zip(selections, ranges, strict=True):
        for body, colliders in zip(ids, _body_colliders(asset, ids), strict=True):
            if not colliders:
                raise ValueError(f"{where}: body {asset.body_names[body]!r} has no collider")
            slot = len(bounds)
            bounds.append(([slot], rng))
            shape_cols += colliders
            slot_of_shape += [slot] * len(colliders)
    _, lo, hi = group_bounds(bounds, device)
    cols = torch.tensor(shape_cols, dtype=torch.long, device=device)
    return cols, torch.tensor(slot_of_shape, dtype=torch.long, device=device), lo, hi


class _ColliderTerm(WidthTerm):
    """Shared set-up of the per-body collider terms: the asset, the term's random stream and the column plan of the
    selected bodies' colliders with each group's ``[lo, hi]`` range of ``RANGE_KEY``."""

    RANGE_KEY: str
    RANGE_KIND: str

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedEnv):
        super().__init__(cfg, env)
        params = cfg.params
        self.asset = env.scene[params["asset_cfg"].name]
        self.where = f"{params.get('seed_key') or type(self).__name__} ({params['asset_cfg'].name})"
        self.generator = term_generator(env, params.get("seed_key", ""))
        selections, ranges = _selection(self.asset, params["groups"], self.where, self.RANGE_KEY, self.RANGE_KIND)
        self.cols, self.slot, self.lo, self.hi = _shape_plan(self.asset, selections, ranges, self.where, env.device)


class randomize_contact_friction(_ColliderTerm):
    """Collider friction μ per env and body (one μ for all colliders of a body: one surface material).

    Params:
        asset_cfg: The articulation or rigid object.
        groups: ``[{"bodies": [regex, ...], "friction": [lo, hi]}, ...]`` (μ unit-less, >= 0).
        seed_key: Name of the term's random stream.
    """

    RANGE_KEY, RANGE_KIND = "friction", "nonneg"

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedEnv):
        super().__init__(cfg, env)
        binding = self.asset._root_view.get_attribute("shape_material_mu", env.sim.physics_manager.get_model())[:, 0]
        self.mu = wp.to_torch(binding)  # (E, S) view of Newton's per-world μ
        self.last: tuple[torch.Tensor, torch.Tensor] | None = None
        """(env_ids, μ per body slot (n, K)) of the latest call."""

    def __call__(
        self,
        env: ManagerBasedEnv,
        env_ids: torch.Tensor | slice | None,
        asset_cfg: SceneEntityCfg,
        groups: list[dict],
        seed_key: str = "",
    ) -> None:
        ids = env_ids_tensor(env, env_ids)
        mu = draw_columns(self.lo, self.hi, len(ids), self.generator, self.width)
        with torch_stream_order(env.device):  # a torch write into Newton's array: ordered like every DR writer
            self.mu[ids[:, None], self.cols] = mu[:, self.slot]
        env.sim.physics_manager.add_model_change(ModelFlags.SHAPE_PROPERTIES)
        self.last = (ids, mu)


class ColliderSolref:
    """Per-world contact solref ``(timeconst, dampratio)`` of some colliders of an asset, written into Newton's MuJoCo
    shape attributes (``mujoco.solref``, read by MuJoCo-Warp at a shape-property update, per world).

    The written value is the *pair's* value against every partner: MuJoCo takes a pair's solref from the geom of higher
    ``priority``, and mixes geoms of equal priority by ``solmix``; a written collider gets :data:`DOMINANT_SOLMIX`, so
    against equal-priority partners (the Panda's pads on the object) its solref -- and its solimp -- are the pair's, and
    a model where any geom outranks the colliders is refused. Envs whose value equals the nominal keep the task's
    solref and solmix untouched.

    Args:
        env: The env (its Newton model holds the attributes).
        asset: The articulation or rigid object.
        cols: The colliders, as columns of the asset view's shape axis (:func:`_body_colliders`).
        where: Name for error messages.

    Raises:
        ValueError: A collider whose solref is not in MuJoCo's raw form (Newton derives it from ke/kd then), or a geom
            of higher priority than the colliders (its solref would be the pair's).
    """

    def __init__(self, env: ManagerBasedEnv, asset: Any, cols: torch.Tensor, where: str):
        model = env.sim.physics_manager.get_model()
        view = asset._root_view
        column = cols.tolist()
        mode = view.get_attribute("mujoco.solref_mode", model)[:, 0].numpy()[0]
        if derived := [c for c in column if int(mode[c]) != SOLREF_MODE_RAW]:
            raise ValueError(
                f"{where}: colliders {derived} take their solref from Newton's ke/kd, not a raw MuJoCo "
                "solref: the contact solref cannot be set per world for them"
            )
        priority = view.get_attribute("mujoco.geom_priority", model)[:, 0].numpy()[0]
        ours, top = min(int(priority[c]) for c in column), int(model.mujoco.geom_priority.numpy().max())
        if top > ours:
            raise ValueError(
                f"{where}: a geom of priority {top} outranks the colliders' {ours}: its solref, not "
                "theirs, would be the pair's"
            )
        self.env, self.cols = env, cols
        self.solref = wp.to_torch(view.get_attribute("mujoco.solref", model)[:, 0])  # (E, S, 2) view
        self.solmix = wp.to_torch(view.get_attribute("mujoco.geom_solmix", model)[:, 0])  # (E, S) view
        self.nominal = self.solref[:, cols].clone()
        self.nominal_solmix = self.solmix[:, cols].clone()

    def nominal_mean(self) -> tuple[float, float]:
        """The colliders' nominal ``(timeconst, dampratio)``, averaged over colliders and envs."""
        mean = self.nominal.double().mean(dim=(0, 1))
        return float(mean[0]), float(mean[1])

    def write(self, ids: torch.Tensor, timeconst: torch.Tensor, dampratio: torch.Tensor) -> None:
        """Give envs ``ids`` the solref ``(timeconst [s], dampratio)``: each ``(n,)`` (one value for all colliders of
        an env) or ``(n, C)`` (per collider, in the order of ``cols``); a collider whose pair of values equals the
        nominal mean keeps the task's own solref and solmix.

        Shape: ids ``(n,)``; timeconst, dampratio ``(n,)`` or ``(n, C)``.
        """
        tc_nom, dr_nom = self.nominal_mean()
        n, c = len(ids), len(self.cols)
        timeconst, dampratio = (x.reshape(n, -1).expand(n, c) for x in (timeconst, dampratio))
        keep = torch.isclose(timeconst, torch.full_like(timeconst, tc_nom), rtol=1e-6, atol=0.0)  # float32 values
        keep &= torch.isclose(dampratio, torch.full_like(dampratio, dr_nom), rtol=1e-6, atol=0.0)
        value = torch.stack([timeconst, dampratio], dim=-1)  # (n, C, 2)
        rows = ids[:, None]
        with torch_stream_order(self.env.device):  # a torch write into Newton's arrays: ordered like every DR writer
            self.solref[rows, self.cols] = torch.where(keep[..., None], self.nominal[ids], value)
            self.solmix[rows, self.cols] = torch.where(keep, self.nominal_solmix[ids], DOMINANT_SOLMIX)
        self.env.sim.physics_manager.add_model_change(ModelFlags.SHAPE_PROPERTIES)


class randomize_contact_geometry(_ColliderTerm):
    """Collider size scale per env and body: every primitive collider's size and its position in the body × s.

    Params:
        asset_cfg: The articulation or rigid object.
        groups: ``[{"bodies": [regex, ...], "size_scale": [lo, hi]}, ...]`` (unit-less, > 0).
        seed_key: Name of the term's random stream.
    """

    RANGE_KEY, RANGE_KIND = "size_scale", "scale"

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedEnv):
        super().__init__(cfg, env)
        asset, where = self.asset, self.where
        model = env.sim.physics_manager.get_model()
        view = asset._root_view
        types = view.get_attribute("shape_type", model)[:, 0].numpy()[0]
        for s in self.cols.tolist():
            if int(types[s]) not in [int(t) for t in SCALABLE]:
                raise ValueError(
                    f"{where}: collider type {GeoType(int(types[s])).name} cannot be scaled per env "
                    "(MuJoCo-Warp shares mesh data between worlds); only primitive colliders can"
                )
        self.scale = wp.to_torch(view.get_attribute("shape_scale", model)[:, 0])  # (E, S, 3) size parameters [m]
        self.pose = wp.to_torch(view.get_attribute("shape_transform", model)[:, 0])  # (E, S, 7) pos + quat in body
        self.nominal_scale = self.scale[:, self.cols].clone()
        self.nominal_pos = self.pose[:, self.cols, :3].clone()
        self.max_scale = max(1.0, float(self.hi.max()))
        self.solver: Any = None  # bound at the first call: the solver is created after the terms
        self.last: tuple[torch.Tensor, torch.Tensor] | None = None
        """(env_ids, scale per body slot (n, K)) of the latest call."""

    def _bind_solver(self, env: ManagerBasedEnv) -> None:
        """Nominal MuJoCo-Warp geom sizes and bounding radii (all worlds are identical before the first write)."""
        self.solver = env.sim.physics_manager._solver
        if not hasattr(self.solver, "mjw_model") or self.solver.use_mujoco_cpu:
            raise ValueError(f"{self.where}: contact geometry randomization needs Newton's MuJoCo-Warp solver")
        mjw = self.solver.mjw_model
        self.geom_size, self.geom_rbound = wp.to_torch(mjw.geom_size), wp.to_torch(mjw.geom_rbound)
        self.nominal_size, self.nominal_rbound = self.geom_size[0].clone(), self.geom_rbound[0].clone()
        geom_type = wp.to_torch(mjw.geom_type).to(env.device)
        self.primitive = torch.isin(geom_type, torch.tensor(_MJ_PRIMITIVES, device=env.device))
        self.primitive &= self.nominal_size[:, 0] > 0
        self.aabb_grown = torch.zeros_like(self.primitive)

    def __call__(
        self,
        env: ManagerBasedEnv,
        env_ids: torch.Tensor | slice | None,
        asset_cfg: SceneEntityCfg,
        groups: list[dict],
        seed_key: str = "",
    ) -> None:
        if self.solver is None:
            self._bind_solver(env)
        ids = env_ids_tensor(env, env_ids)
        scale = draw_columns(self.lo, self.hi, len(ids), self.generator, self.width)
        per_shape = scale[:, self.slot, None]
        rows = ids[:, None]
        self.scale[rows, self.cols] = self.nominal_scale[ids] * per_shape
        self.pose[rows, self.cols, :3] = self.nominal_pos[ids] * per_shape
        # Apply now (no set_const: ~5 ms at 256 worlds) so the broad-phase bounds can follow the new sizes.
        env.sim.physics_manager._model_changes.discard(ModelFlags.SHAPE_PROPERTIES)  # covered by this update
        with wp.ScopedDevice(self.solver.model.device):
            self.solver.notify_model_changed(ModelFlags.SHAPE_PROPERTIES)
        ratio = torch.where(self.primitive, self.geom_size[..., 0] / self.nominal_size[:, 0].clamp_min(1e-12), 1.0)
        self.geom_rbound.copy_(self.nominal_rbound * ratio)
        grow = (ratio > 1.0).any(0) & ~self.aabb_grown
        aabb = wp.to_torch(self.solver.mjw_model.geom_aabb)  # (1, G, 2, 3): centre, half size; shared by all worlds
        aabb[:, :, 1] *= torch.where(grow, self.max_scale, 1.0)[None, :, None]  # x·1.0 = x: no boolean-mask sync
        self.aabb_grown |= grow
        self.last = (ids, scale)


class reset_root_pose_uniform(ManagerTermBase):
    """Reset an asset's root to its default pose plus a uniform offset: position in the world [m], yaw about z [rad].

    The root velocity is reset to its default. For placing a grasped object; replaces the task's root reset of the
    same asset (the profile's ``initial_pose``).

    Params:
        asset_cfg: The articulation or rigid object.
        position_m: ``[[lo, hi]] * 3`` offset ranges along world x, y, z [m].
        yaw_rad: ``[lo, hi]`` yaw offset [rad], applied about the world z axis.
        seed_key: Name of the term's random stream.
    """

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedEnv):
        super().__init__(cfg, env)
        params = cfg.params
        self.asset = env.scene[params["asset_cfg"].name]
        self.generator = term_generator(env, params.get("seed_key", ""))
        self.position = [
            validate_range(f"initial_pose.position_m.{a}", r) for a, r in zip("xyz", params["position_m"], strict=True)
        ]
        self.yaw = validate_range("initial_pose.yaw_rad", params.get("yaw_rad", (0.0, 0.0)))

    def __call__(
        self,
        env: ManagerBasedEnv,
        env_ids: torch.Tensor | slice | None,
        asset_cfg: SceneEntityCfg,
        position_m: list,
        yaw_rad: tuple[float, float] = (0.0, 0.0),
        seed_key: str = "",
    ) -> None:
        ids = env_ids_tensor(env, env_ids)
        n = len(ids)
        offset = torch.stack([uniform(r, (n,), self.generator) for r in self.position], dim=-1).to(env.device)
        yaw = uniform(self.yaw, (n,), self.generator).to(env.device)
        default = self.asset.data.default_root_pose.torch[ids]
        pos = default[:, :3] + env.scene.env_origins[ids] + offset
        zeros = torch.zeros_like(yaw)
        quat = math_utils.quat_mul(math_utils.quat_from_euler_xyz(zeros, zeros, yaw), default[:, 3:7])
        self.asset.write_root_pose_to_sim_index(root_pose=torch.cat([pos, quat], dim=-1), env_ids=ids)
        self.asset.write_root_velocity_to_sim_index(
            root_velocity=self.asset.data.default_root_vel.torch[ids], env_ids=ids
        )
