"""The grasped object's reset as a domain-randomization event term: a box of random size with a consistent mass, centre
of mass and inertia derived from that size, set on the table at a random pose (the grasp task's ``reset_object``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import warp as wp
from isaaclab.managers import SceneEntityCfg
from isaaclab.utils.math import quat_from_euler_xyz
from newton import ModelFlags

from realgap.envs.dr.events import WidthTerm, env_ids_tensor, solver_update, term_generator, torch_stream_order
from realgap.envs.dr.inertia import BodyInertia, box_inertia_c
from realgap.envs.dr.inertia_sampling import InertiaRandomization, cast_consistent, sample_inertia, validate_vec3_range
from realgap.envs.dr.sampling import body_to_flat, uniform
from realgap.envs.dr.width import narrow, narrow_randomization
from realgap.envs.sim.constants import device_constant

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedEnv
    from isaaclab.managers import EventTermCfg

OBJECT = SceneEntityCfg("object")


class reset_object(WidthTerm):
    """Draw a new object and set it on the table: box size, consistent mass / CoM / inertia, pose.

    Per env at every reset: edge lengths ``size_range_m`` (uniform per axis, m); the nominal body is a solid box of
    that size at ``density_kg_m3``; ``inertia`` (the fields of :class:`~realgap.envs.dr.inertia_sampling.
    InertiaRandomization`: density scale, CoM shift with a moved mass fraction, ...) perturbs it, so every sample is
    physically consistent (J ≻ 0); the box is set upright on the table top ``table_top_z`` (+ 1 mm), shifted by
    ``position_range_m`` (m, world axes) and turned by ``yaw_range_rad`` about z. Draws come from the term's own
    generator (seeded from the env seed and the term name); inertia writes use the fast MuJoCo-Warp sync of
    :func:`realgap.envs.dr.events.solver_update`.

    Sizes scale the spawned box's collider down (the spawned size must be the largest, so the collision broadphase's
    bounding radius stays conservative); ``size_scale_range`` (a DR profile's collider tolerance, unit-less) scales
    the drawn size, clipped to the spawned box.

    This term is the object's single owner (``owns_body``): a DR profile's payload, contact-geometry and initial-pose
    groups of the object become its params (:mod:`realgap.envs.dr.apply`), so mass, centre of mass and inertia always
    belong to the collider drawn in the same reset.

    A width curriculum (``width`` < 1) narrows the model errors it draws -- ``inertia`` and ``size_scale_range`` --
    about their midpoints; the object set (``size_range_m``) and the placement are the task's resets and keep their
    ranges, as a profile's ``initial_pose`` does.

    Attributes:
        size_m: Edge lengths of the collider this term set per env, m. Shape: ``(E, 3)``.
    """

    owns_body = True

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedEnv) -> None:
        super().__init__(cfg, env)
        params = cfg.params
        self.object_name = params.get("object_cfg", OBJECT).name
        self.asset = env.scene[self.object_name]
        self.spawned_size_m = torch.tensor(params["spawned_size_m"], device=env.device)
        lo_hi = torch.tensor(validate_vec3_range("size_range_m", params["size_range_m"], "positive", "m"))
        if bool((lo_hi[:, 1] > self.spawned_size_m.cpu() + 1e-9).any()):
            raise ValueError(
                f"size_range_m {params['size_range_m']} exceeds the spawned box {params['spawned_size_m']}"
            )
        self.size_lo, self.size_hi = lo_hi[:, 0].to(env.device), lo_hi[:, 1].to(env.device)
        self.inertia = InertiaRandomization(**params["inertia"])  # validates the ranges
        self.generator = term_generator(env, "reset_object")
        model = env.sim.physics_manager.get_model()
        self._scale_view = wp.to_torch(self.asset._root_view.get_attribute("shape_scale", model)[:, 0])  # (E, S, 3)
        self._nominal_scale = self._scale_view.clone()
        self.size_m = self.spawned_size_m.expand(env.num_envs, 3).clone()
        self.table_top_z = float(params["table_top_z"])

    def collider_size_m(self) -> torch.Tensor:
        """Edge lengths of the box collider the simulator holds now, m (twice Newton's box scale, the half
        extents): what :attr:`size_m` must equal after a draw. Shape: ``(E, 3)``."""
        return 2.0 * self._scale_view[:, 0, :]

    def rest_z_w(self) -> torch.Tensor:
        """Height of the object's origin when it rests upright on the table, m: table top + half the collider's
        current height (Newton's box scale is the half extents). Shape: ``(E,)``."""
        return self._env.scene.env_origins[:, 2] + self.table_top_z + self._scale_view[:, 0, 2]

    def set_body(self, ids: torch.Tensor, size: torch.Tensor, density_kg_m3: float | None = None) -> None:
        """Give the objects of ``ids`` the box collider ``size`` (m, ``(n, 3)``, at most the spawned box) and a body
        drawn for it: the solid box at ``density_kg_m3`` (the term's own when None), perturbed by the term's inertia
        randomization (J ≻ 0 for every sample). The pose is not touched."""
        if bool((size > self.spawned_size_m + 1e-6).any()) or bool((size <= 0).any()):
            raise ValueError(f"object size must be in (0, {self.spawned_size_m.tolist()}] m, got {size.tolist()}")
        env, n = self._env, len(ids)
        density = self.cfg.params["density_kg_m3"] if density_kg_m3 is None else density_kg_m3
        self.size_m[ids] = size
        with torch_stream_order(env.device):  # a torch write into Newton's shape scale: ordered like every DR writer
            self._scale_view[ids] = self._nominal_scale[ids] * (size / self.spawned_size_m)[:, None, :]
        env.sim.physics_manager.add_model_change(ModelFlags.SHAPE_PROPERTIES)
        mass = density * size.prod(-1)
        com_b = torch.zeros(n, 1, 3, device=env.device)
        nominal = BodyInertia(mass[:, None], com_b, box_inertia_c(mass, size)[:, None])
        randomization = narrow_randomization(self.inertia, self.width)
        drawn = cast_consistent(sample_inertia(nominal, randomization, self.generator), what="object")
        masses, coms, inertias = body_to_flat(drawn)  # float32 as written, checked as written
        with solver_update(env, ModelFlags.BODY_INERTIAL_PROPERTIES, fast=True):
            self.asset.set_masses_index(masses=masses, env_ids=ids)
            self.asset.set_coms_index(coms=coms, env_ids=ids)
            self.asset.set_inertias_index(inertias=inertias, env_ids=ids)

    def _uniform(self, shape: tuple[int, ...]) -> torch.Tensor:
        return uniform((0.0, 1.0), shape, self.generator).to(self._env.device)

    def __call__(
        self,
        env: ManagerBasedEnv,
        env_ids: torch.Tensor | slice | None,
        spawned_size_m: tuple[float, float, float],
        size_range_m: tuple,
        density_kg_m3: float,
        inertia: dict,
        table_top_z: float,
        position_range_m: tuple,
        yaw_range_rad: tuple[float, float],
        object_cfg: SceneEntityCfg = OBJECT,
        size_scale_range: tuple[float, float] = (1.0, 1.0),
    ) -> None:
        ids = env_ids_tensor(env, env_ids)
        n = len(ids)
        # 1-2. size (Newton box scale = half extents), then a consistent body drawn for it
        size = self.size_lo + (self.size_hi - self.size_lo) * self._uniform((n, 3))
        if tuple(size_scale_range) != (1.0, 1.0):  # a collider tolerance (no extra draw without: the stream is kept)
            lo, hi = narrow(*size_scale_range, self.width)
            size = torch.minimum(size * (lo + (hi - lo) * self._uniform((n, 1))), self.spawned_size_m)
        self.set_body(ids, size, density_kg_m3)
        # 3. pose: upright on the table (1 mm clearance), shifted and turned about z
        pose = self.asset.data.default_root_pose.torch[ids].clone()
        pos_lo = device_constant([r[0] for r in position_range_m], torch.float32, env.device)  # no copy per reset
        pos_hi = device_constant([r[1] for r in position_range_m], torch.float32, env.device)
        pose[:, :3] += env.scene.env_origins[ids] + pos_lo + (pos_hi - pos_lo) * self._uniform((n, 3))
        pose[:, 2] = table_top_z + 0.5 * size[:, 2] + 0.001
        yaw = yaw_range_rad[0] + (yaw_range_rad[1] - yaw_range_rad[0]) * self._uniform((n,))
        pose[:, 3:7] = quat_from_euler_xyz(torch.zeros_like(yaw), torch.zeros_like(yaw), yaw)
        self.asset.write_root_pose_to_sim_index(root_pose=pose, env_ids=ids)
        self.asset.write_root_velocity_to_sim_index(root_velocity=torch.zeros(n, 6, device=env.device), env_ids=ids)
