"""g(q) and C(q, q̇)·q̇ of an Isaac Lab articulation from Newton, with every buffer allocated once per articulation.

Rule: the model-based action terms (computed torque, Cartesian impedance, gravity compensation from the simulator)
read the bias forces every physics step through :class:`PassiveForces`, which runs the same Newton kernels as Isaac
Lab's ``ArticulationData.gravity_compensation_forces`` and Newton's ``eval_inverse_dynamics_passive`` (same results,
bit for bit) into scratch, model-wide and gathered buffers made at construction. Why: Newton's call allocates its
RNEA scratch (about 15 arrays) every time and Isaac Lab's property calls it at every read, so each physics step
allocated and freed them, on the GPU too.

Newton keeps that scratch class private (``newton._src.sim.inverse_dynamics``, Newton 1.6). Where it is missing or
its signature differs, :attr:`PassiveForces.retained` is False and the public per-call path runs instead (correct,
allocating); the sim tier asserts ``retained`` for the pinned Newton.
"""

from __future__ import annotations

from typing import Any

import torch
import warp as wp


class PassiveForces:
    """Bias forces of one articulation's envs, ``(E, base DoFs + J)`` in Isaac Lab's joint order, N·m (N on
    prismatic joints); the returned tensors are views of retained buffers, overwritten by the next call.

    Args:
        data: The articulation's ``data`` (Isaac Lab's Newton ``ArticulationData``).
        coriolis: Also allocate for :meth:`coriolis`.
    """

    def __init__(self, data: Any, coriolis: bool = False) -> None:
        self._data = data
        self._view = data._root_view
        model = self._view.model
        device = data.device
        self._scratch, self._passes = _retained_scratch(model)
        shape = (data._num_instances, data._num_joints + data._num_base_dofs)
        self._full = {"gravity": wp.zeros(model.joint_dof_count, dtype=wp.float32, device=device)}
        self._out = {"gravity": wp.empty(shape, dtype=wp.float32, device=device)}
        if coriolis:
            self._full["coriolis"] = wp.zeros(model.joint_dof_count, dtype=wp.float32, device=device)
            self._out["coriolis"] = wp.empty(shape, dtype=wp.float32, device=device)
        self._torch = {k: wp.to_torch(v) for k, v in self._out.items()}

    @property
    def retained(self) -> bool:
        """The scratch is allocated once (Newton's private scratch class was found)."""
        return self._scratch is not None

    def gravity(self) -> torch.Tensor:
        """g(q): the joint forces that hold the articulation static under gravity. Shape ``(E, base + J)``."""
        return self._evaluate("gravity")

    def coriolis(self) -> torch.Tensor:
        """C(q, q̇)·q̇: Coriolis and centrifugal joint forces. Shape ``(E, base + J)``."""
        return self._evaluate("coriolis")

    def _evaluate(self, kind: str) -> torch.Tensor:
        from isaaclab_newton.assets.articulation import kernels as articulation_kernels
        from isaaclab_newton.physics import NewtonManager

        data, view, full, out = self._data, self._view, self._full[kind], self._out[kind]
        data.body_link_pose_w  # noqa: B018 - the passes read state.body_q: the property refreshes stale kinematics
        state, model = NewtonManager.get_state_0(), view.model
        if self._scratch is not None:
            self._passes[kind](model, state, full, self._scratch, mask=view.get_model_articulation_mask())
        else:
            view.eval_inverse_dynamics_passive(state, **{f"{kind}_force": full})
        wp.launch(
            articulation_kernels.gather_dof_force_rows,
            dim=out.shape,
            inputs=[
                full,
                data._jacobian_view_art_ids,
                model.articulation_start,
                model.joint_qd_start,
                data.joint_ordering.user_to_backend if data.has_joint_ordering else None,
                data._num_base_dofs,
                data.has_joint_ordering,
            ],
            outputs=[out],
            device=data.device,
        )
        return self._torch[kind]


def _retained_scratch(model: Any) -> tuple[Any, dict[str, Any]]:
    """Newton's RNEA scratch for ``model`` and its two compensation passes, or ``(None, {})`` where absent."""
    try:
        from newton._src.sim import inverse_dynamics as nid

        scratch = nid._InverseDynamicsScratchBuffer(
            body_count=model.body_count,
            articulation_count=model.articulation_count,
            joint_dof_count=model.joint_dof_count,
            joint_target_q_count=model.joint_target_q.shape[0],
            max_dofs_per_articulation=model.max_dofs_per_articulation,
            max_joints_per_articulation=model.max_joints_per_articulation,
            world_count=model.world_count,
            device=model.device,
        )
        return scratch, {"gravity": nid._compute_gravity_force, "coriolis": nid._compute_coriolis_force}
    except (ImportError, AttributeError, TypeError):
        return None, {}
