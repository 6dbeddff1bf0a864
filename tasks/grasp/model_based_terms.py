"""Model-based arm interfaces of the grasp task: computed torque and Cartesian impedance (Isaac Lab glue).

Both turn the policy's command into a joint torque every physics step from the *simulated* robot's own dynamics
model (Newton's ``mass_matrix`` M(q) and ``gravity_compensation_forces`` g(q) of the articulation, randomized
payloads included): a perfect model, so they are an upper bound on what a real model-based controller, which knows
only its nominal model, gets. The torque then goes through realgap's actuator chain with Kp = Kd = 0 (1–5 ms command
delay, torque envelope), like ``joint_torque``.

- :class:`ComputedTorqueAction`: τ = M(q)·q̈* + h(q, q̇), q̈* = Kp·(s − q) − Kd·q̇, with s the rate-limited setpoint
  of an absolute joint target (the motion generator of ``joint_pos``). h(q, q̇) = g(q) + C(q, q̇)·q̇ when
  ``cfg.coriolis`` is on (Newton's passive inverse dynamics), else h ≈ g(q).
- :class:`CartesianImpedanceAction`: Isaac Lab's operational-space controller with fixed impedance, relative pose
  targets and gravity compensation, τ = Jᵀ·(Kx·(x* − x) − Dx·ẋ) + g(q) + a null-space posture term.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
from isaaclab.envs.mdp.actions import OperationalSpaceControllerActionCfg
from isaaclab.envs.mdp.actions.task_space_actions import OperationalSpaceControllerAction
from isaaclab.utils import configclass

from realgap.envs.format import terms as fmt
from realgap.envs.sim.passive_forces import PassiveForces
from realgap.tasks.grasp.action_terms import RateLimitedJointPositionAction, RateLimitedJointPositionActionCfg

if TYPE_CHECKING:
    from isaaclab.assets import Articulation
    from isaaclab.envs import ManagerBasedEnv


def simulator_bias_fn(asset: Articulation, joint_ids: list[int] | slice, coriolis: bool) -> Callable[[], torch.Tensor]:
    """A function returning h(q, q̇) = g(q) [+ C(q, q̇)·q̇] of ``joint_ids`` from Newton, ``(E, J)`` N·m.

    g(q) is what Isaac Lab's ``gravity_compensation_forces`` gives (fixed base: no base DoFs lead the columns). Isaac
    Lab's articulation data does not expose the Coriolis/centrifugal term; Newton computes it in the same passive
    inverse dynamics (``eval_inverse_dynamics_passive``). Both come from :class:`PassiveForces`, whose buffers are
    allocated once (Newton's own call allocates its scratch every physics step).
    """
    forces = PassiveForces(asset.data, coriolis=coriolis)
    offset = asset.num_base_dofs
    if not coriolis:
        return lambda: forces.gravity()[:, offset:][:, joint_ids]
    return lambda: (forces.gravity() + forces.coriolis())[:, offset:][:, joint_ids]


class ComputedTorqueAction(RateLimitedJointPositionAction):
    """Computed torque on an absolute joint target: τ = M(q)·q̈* + h(q, q̇), q̈* = Kp·(s − q) − Kd·q̇.

    The target q* = offset + scale·a is set once per policy step; every physics step the setpoint s follows it within
    ``max_velocity`` / ``max_acceleration`` (the motion generator of :class:`RateLimitedJointPositionAction`) and the
    law above runs on the measured q, q̇ with the simulated robot's M(q) (Newton's ``mass_matrix`` of the links plus
    the joints' armature, ``joint_armature``) and h (see :func:`simulator_bias_fn`). With a perfect model and no
    delay the joint error obeys ë + Kd·ė + Kp·e = 0 (s held): with Kp = ω², Kd = 2ω it is critically damped at
    ω rad/s. The torque is written as the effort command; the arm's chain (Kp = Kd = 0 in its spec) delays and
    saturates it.

    Shape: M ``(E, 7, 7)`` kg·m², q̈* ``(E, 7)`` rad/s², τ ``(E, 7)`` N·m.
    """

    cfg: ComputedTorqueActionCfg

    def __init__(self, cfg: ComputedTorqueActionCfg, env: ManagerBasedEnv) -> None:
        super().__init__(cfg, env)
        self._cols = [j + self._asset.num_base_dofs for j in self._joint_ids]  # M's DoF columns (fixed base: + 0)
        self._bias = simulator_bias_fn(self._asset, self._joint_ids, cfg.coriolis)

    def apply_actions(self) -> None:
        super().apply_actions()  # advances the setpoint and writes it as the position target (the chain's Kp = 0)
        target = self._setpoint if self._limited else self.processed_actions
        self._asset.actuators.target_command.set_effort_index(value=self.torque(target), joint_ids=self._joint_ids)

    def torque(self, target: torch.Tensor) -> torch.Tensor:
        """τ = M(q)·(Kp·(target − q) − Kd·q̇) + h(q, q̇) at the current state, N·m. Shape: ``(E, J)``."""
        q = self._asset.data.joint_pos.torch[:, self._joint_ids]
        qd = self._asset.data.joint_vel.torch[:, self._joint_ids]
        mass = self._asset.data.mass_matrix.torch[:, self._cols][:, :, self._cols]
        # Newton's M(q) holds the links only; the solver adds each joint's armature (the reflected rotor inertia N²·I_m,
        # 0.1 kg·m² on the Panda: more than the wrist links' own 0.007–0.05) to the diagonal when it integrates
        mass = mass + torch.diag_embed(self._asset.data.joint_armature.torch[:, self._joint_ids])
        qdd = self.cfg.kp * (target - q) - self.cfg.kd * qd
        return (mass @ qdd.unsqueeze(-1)).squeeze(-1) + self._bias()

    def export_description(self) -> dict[str, Any]:
        """``joint_computed_torque`` with the motion generator's parameters and the gains (the deploy runtime refuses
        the type: it needs the robot's dynamics model; :mod:`realgap.envs.format.terms`)."""
        return fmt.joint_computed_torque(
            self._joint_names, self.motion_params(), self.cfg.kp, self.cfg.kd, self.cfg.coriolis, None
        )


class CartesianImpedanceAction(OperationalSpaceControllerAction):
    """Isaac Lab's operational-space controller, its torque routed into realgap's actuator chain.

    The only change: Isaac Lab's term writes its efforts with the deprecated
    ``Articulation.set_joint_effort_target_index``; this writes the same tensor with
    ``actuators.target_command.set_effort_index`` (what every realgap term calls), so the arm's chain (Kp = Kd = 0)
    delays and saturates it. The law is Isaac Lab's: with ``inertial_dynamics_decoupling``
    off, τ = Jᵀ·(Kx·e − Dx·ẋ) + g(q) + τ_null, e the pose error (position, axis-angle) of the controlled frame in the
    root frame, Dx = 2·ζ·√Kx, g(q) the simulator's, τ_null = (I − Jᵀ·J⁺ᵀ)·M(q)·(k_n·(q_0 − q) − 2√k_n·q̇).
    """

    cfg: CartesianImpedanceActionCfg

    def __init__(self, cfg: CartesianImpedanceActionCfg, env: ManagerBasedEnv) -> None:
        super().__init__(cfg, env)
        self._passive = PassiveForces(self._asset.data)

    def _compute_dynamic_quantities(self) -> None:
        """Isaac Lab's, with g(q) from :class:`PassiveForces` (buffers kept) instead of the allocating property."""
        if self._needs_mass_matrix:
            mass = self._asset.data.mass_matrix.torch
            self._mass_matrix[:] = mass[:, self._jacobi_joint_idx, :][:, :, self._jacobi_joint_idx]
        if self._needs_gravity:
            self._gravity[:] = self._passive.gravity()[:, self._jacobi_joint_idx]

    def apply_actions(self) -> None:
        self._compute_dynamic_quantities()
        self._compute_ee_jacobian()
        self._compute_ee_pose()
        self._compute_ee_velocity()
        self._compute_ee_force()
        self._compute_joint_states()
        self._joint_efforts[:] = self._osc.compute(
            jacobian_b=self._jacobian_b,
            current_ee_pose_b=self._ee_pose_b,
            current_ee_vel_b=self._ee_vel_b,
            current_ee_force_b=self._ee_force_b,
            mass_matrix=self._mass_matrix if self._needs_mass_matrix else None,
            gravity=self._gravity if self._needs_gravity else None,
            current_joint_pos=self._joint_pos,
            current_joint_vel=self._joint_vel,
            nullspace_joint_pos_target=self._nullspace_joint_pos_target,
        )
        self._asset.actuators.target_command.set_effort_index(value=self._joint_efforts, joint_ids=self._joint_ids)

    def export_description(self) -> dict[str, Any]:
        """``ee_impedance`` with the controller's impedance and null-space settings (the deploy runtime refuses the
        type; :mod:`realgap.envs.format.terms`)."""
        return fmt.ee_impedance(self._joint_names, self._ee_body_name, self.cfg, None)


@configclass
class ComputedTorqueActionCfg(RateLimitedJointPositionActionCfg):
    class_type: type = ComputedTorqueAction
    kp: float = 400.0
    """Joint-space stiffness of the desired acceleration, 1/s² (ω² with ω = 20 rad/s)."""
    kd: float = 40.0
    """Joint-space damping of the desired acceleration, 1/s (2ω: critically damped)."""
    coriolis: bool = True
    """Add Newton's C(q, q̇)·q̇ to h; ``False``: h ≈ g(q)."""


@configclass
class CartesianImpedanceActionCfg(OperationalSpaceControllerActionCfg):
    class_type: type = CartesianImpedanceAction
