"""Batched gravity torque g(q) in torch, on the env's device, from a pinocchio model read once.

pinocchio (:mod:`realgap.envs.sim2sim.dynamics`) is the reference, but it has no batched
call: one RNEA per env on the CPU,
plus a device round trip, every physics step. For gravity alone the RNEA collapses to a closed form. With joint j's
world axis a_j through its origin p_j, the links i of its subtree with masses m_i at CoMs c_i, and gravity g [m/s²]:

    g_j(q) = a_j · Σ_i (c_i − p_j) × (−m_i g) = a_j · ((S_j − M_j p_j) × (−g))     (revolute, N·m)
    g_j(q) = a_j · (−M_j g)                                                        (prismatic, N)

with M_j = Σ_i m_i [kg] and S_j = Σ_i m_i c_i [kg·m] over the subtree: g(q) = −Σ_i J_iᵀ m_i g = ∂V/∂q for the
potential V = −Σ_i m_i g·c_i. One forward-kinematics pass over the joints (batched over envs) and one subtree sum
give every joint's torque. Frames and conventions are pinocchio's: oMᵢ = oM_parent · jointPlacementᵢ · M_joint(qᵢ),
the inertia of each joint's body (fixed links merged) with its CoM in the joint frame. Pure torch at call time;
pinocchio is imported only by :meth:`TorchGravity.from_pinocchio`.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor


def _skew(axis: Tensor) -> Tensor:
    """K with K v = axis × v. Shape: ``(3,)`` → ``(3, 3)``."""
    x, y, z = axis.unbind(-1)
    zero = torch.zeros_like(x)
    return torch.stack([torch.stack([zero, -z, y]), torch.stack([z, zero, -x]), torch.stack([-y, x, zero])])


class TorchGravity:
    """g(q) of a tree of 1-DoF revolute / prismatic joints, batched over envs in torch.

    Args:
        parents: Parent joint index of each joint (``-1``: the world). Parents precede children. Length ``N``.
        placement_rot: Rotation of each joint frame in its parent's frame at q = 0. Shape: ``(N, 3, 3)``.
        placement_pos: Origin of each joint frame in its parent's frame at q = 0 [m]. Shape: ``(N, 3)``.
        axis: Unit joint axis in the joint's own frame. Shape: ``(N, 3)``.
        prismatic: True for a prismatic joint (axis a translation), False for revolute. Shape: ``(N,)``.
        mass: Mass carried by each joint's body [kg]. Shape: ``(N,)``.
        com: That body's CoM in the joint frame [m]. Shape: ``(N, 3)``.
        gravity: Gravity in the world (root) frame [m/s²]. Shape: ``(3,)``.
        columns: Model joint index of each column of the ``q`` passed in; model joints not listed stay at 0.

    Parameters are stored in float64 and cast once per (dtype, device) on first use.
    """

    def __init__(
        self,
        parents: Sequence[int],
        placement_rot: Any,
        placement_pos: Any,
        axis: Any,
        prismatic: Any,
        mass: Any,
        com: Any,
        gravity: Any,
        columns: Sequence[int],
    ) -> None:
        self.parents = [int(p) for p in parents]
        if any(p >= j for j, p in enumerate(self.parents)):
            raise ValueError(f"every parent must precede its joint, got parents {self.parents}")
        f64 = torch.float64
        self._params = {
            "rot": torch.as_tensor(np.asarray(placement_rot), dtype=f64),
            "pos": torch.as_tensor(np.asarray(placement_pos), dtype=f64),
            "axis": torch.as_tensor(np.asarray(axis), dtype=f64),
            "mass": torch.as_tensor(np.asarray(mass), dtype=f64),
            "com": torch.as_tensor(np.asarray(com), dtype=f64),
            "gravity": torch.as_tensor(np.asarray(gravity), dtype=f64),
        }
        self.prismatic = [bool(p) for p in np.asarray(prismatic)]
        n = len(self.parents)
        # subtree indicator: subtree[j, i] = 1 when body i hangs below joint j (i = j included)
        subtree = torch.eye(n, dtype=f64)
        for j in reversed(range(n)):
            if self.parents[j] >= 0:
                subtree[self.parents[j]] += subtree[j]
        self._params["subtree"] = subtree
        self.columns = [int(c) for c in columns]
        if any(not 0 <= c < n for c in self.columns):
            raise ValueError(f"columns {self.columns} must index the model's {n} joints")
        self._cache: dict[tuple[torch.dtype, torch.device], dict[str, Tensor]] = {}

    @classmethod
    def from_pinocchio(cls, model: Any, joint_names: Sequence[str], prefixes: Sequence[str] = ()) -> TorchGravity:
        """Read joint frames, axes, masses and CoMs of a pinocchio model (fixed links already merged).

        Args:
            model: A ``pinocchio.Model`` of 1-DoF revolute / prismatic joints (no floating base).
            joint_names: Joint of each column of ``q``; a prefix in ``prefixes`` (e.g. ``"panda_"``) is ignored on
                either side.
            prefixes: Name prefixes to ignore.

        Raises:
            ValueError: A joint is not 1-DoF revolute / prismatic, or a name is not a joint of the model.
        """
        import pinocchio as pin

        def bare(name: str) -> str:
            for prefix in prefixes:
                name = name.removeprefix(prefix)
            return name

        names = [bare(model.names[i]) for i in range(1, model.njoints)]
        missing = [n for n in joint_names if bare(n) not in names]
        if missing:
            raise ValueError(f"joints {missing} are not in the pinocchio model (joints: {names})")
        rot, pos, axis, prismatic, mass, com = [], [], [], [], [], []
        for i in range(1, model.njoints):
            joint = model.joints[i]
            unsupported = f"joint {model.names[i]!r} ({joint.shortname()}) is not 1-DoF revolute or prismatic"
            if joint.nq != 1 or joint.nv != 1:
                raise ValueError(unsupported)
            jdata = joint.createData()
            joint.calc(jdata, pin.neutral(model))
            motion = np.asarray(jdata.S).reshape(6)  # (linear, angular) motion subspace in the joint frame
            lin, ang = motion[:3], motion[3:]
            if np.any(lin) and np.any(ang):  # helical
                raise ValueError(unsupported)
            placement = model.jointPlacements[i]
            rot.append(placement.rotation)
            pos.append(placement.translation)
            axis.append(lin if np.any(lin) else ang)
            prismatic.append(bool(np.any(lin)))
            mass.append(model.inertias[i].mass)
            com.append(model.inertias[i].lever)
        parents = [model.parents[i] - 1 for i in range(1, model.njoints)]  # universe (0) → -1
        columns = [names.index(bare(n)) for n in joint_names]
        return cls(
            parents,
            np.stack(rot),
            np.stack(pos),
            np.stack(axis),
            np.array(prismatic),
            np.array(mass),
            np.stack(com),
            np.asarray(model.gravity.linear),
            columns,
        )

    def _on(self, like: Tensor) -> dict[str, Tensor]:
        key = (like.dtype, like.device)
        if key not in self._cache:
            p = {k: v.to(dtype=like.dtype, device=like.device) for k, v in self._params.items()}
            # joint motion in the parent frame: R_j(q) = B0 + sin q·B1 + (1 − cos q)·B2 (Rodrigues after the
            # placement, K = [a]×; prismatic joints have B1 = B2 = 0) and t_j(q) = placement + B0·a·q (prismatic)
            skew = torch.stack([_skew(a) for a in p["axis"]])  # (N, 3, 3)
            revolute = torch.tensor([not x for x in self.prismatic], dtype=like.dtype, device=like.device)
            p["b0"], p["b1"] = p["rot"], p["rot"] @ skew * revolute[:, None, None]
            p["b2"] = p["rot"] @ skew @ skew * revolute[:, None, None]
            p["slide"] = (p["rot"] @ p["axis"][..., None])[..., 0] * (1.0 - revolute)[:, None]  # (N, 3)
            p["prismatic"] = revolute == 0.0
            self._cache[key] = p
        return self._cache[key]

    def __call__(self, q: Tensor) -> Tensor:
        """g(q) in the column order of ``q``: N·m for revolute, N for prismatic joints.

        Shape:
            q: ``(E, C)`` rad / m, C = ``len(columns)`` → ``(E, C)``, same dtype and device.
        """
        p = self._on(q)
        num_envs, n = q.shape[0], len(self.parents)
        q_full = torch.zeros(num_envs, n, dtype=q.dtype, device=q.device)
        q_full[:, self.columns] = q
        sin, one_minus_cos = torch.sin(q_full)[..., None, None], (1.0 - torch.cos(q_full))[..., None, None]
        motion = p["b0"] + sin * p["b1"] + one_minus_cos * p["b2"]  # (E, N, 3, 3) joint frame in its parent's
        offset = p["pos"] + q_full[..., None] * p["slide"]  # (E, N, 3) m, joint origin in its parent's frame
        rot_w: list[Tensor] = []  # world rotation (E, 3, 3) and origin (E, 3) of each joint frame after its motion
        pos_w: list[Tensor] = []
        for j, parent in enumerate(self.parents):
            if parent < 0:
                rot_w.append(motion[:, j])
                pos_w.append(offset[:, j])
            else:
                rot_w.append(rot_w[parent] @ motion[:, j])
                pos_w.append(pos_w[parent] + (rot_w[parent] @ offset[:, j, :, None])[..., 0])
        rot = torch.stack(rot_w, dim=1)  # (E, N, 3, 3)
        origin = torch.stack(pos_w, dim=1)  # (E, N, 3) m
        com_w = origin + (rot @ p["com"][..., None])[..., 0]  # (E, N, 3) m
        axis_w = (rot @ p["axis"][..., None])[..., 0]  # (E, N, 3)
        weight = -p["gravity"]  # (3,) m/s²: the holding force per kg points against gravity
        mass_sub = p["subtree"] @ p["mass"]  # (N,) kg
        moment_sub = torch.einsum("ji,i,eik->ejk", p["subtree"], p["mass"], com_w)  # (E, N, 3) kg·m
        lever = moment_sub - mass_sub[None, :, None] * origin  # (E, N, 3) kg·m
        torque = torch.linalg.cross(lever, weight.expand_as(lever))  # (E, N, 3) N·m about each joint origin
        force = (mass_sub[:, None] * weight).expand(num_envs, n, 3)  # (E, N, 3) N carried by each joint
        g_full = (axis_w * torch.where(p["prismatic"][None, :, None], force, torque)).sum(-1)
        return g_full[:, self.columns]


def urdf_model(robot_urdf: str) -> Any:
    """A pinocchio model of a URDF inside the ``example-robot-data`` wheel (path relative to its distribution)."""
    import pinocchio as pin

    return pin.buildModelFromUrdf(str(importlib.metadata.distribution("example-robot-data").locate_file(robot_urdf)))
