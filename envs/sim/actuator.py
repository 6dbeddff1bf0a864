"""Isaac Lab adapter: the datasheet actuator chain as an Isaac Lab explicit actuator model.

Thin glue (the only module of ``realgap.actuators`` that imports Isaac Lab). Per physics step Isaac Lab calls
:meth:`RealgapActuator.compute` with the held policy target; the pure :class:`~realgap.actuators.chain.ActuatorChain`
turns it into a joint torque (interpolation / delay / PD at the servo rate / torque envelope), and the solver
integrates it. What the solver itself must know follows the spec, written once at construction by Isaac Lab:

- armature = reflected rotor inertia ``N²·I_m`` of each joint's gearbox, less the motor inertia ``J_m`` where the
  transmission is compliant: the chain integrates ``J_m`` behind the spring (``ActuatorSpec.solver_armature``);
- joint friction = the spec's Coulomb friction, as the solver's implicit ``frictionloss`` (stable at any step, unlike
  an explicit tanh term), and the spec's viscous friction as the solver's viscous friction;
- solver effort limit = the spec's peak torque (a backstop: the chain already saturates), velocity limit likewise;
- solver stiffness/damping = 0 (explicit model: all PD torque comes from the chain).

Requires ``SimulationCfg(use_newton_actuators=False)``: Newton executes only Isaac Lab's built-in models natively.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import MISSING
from typing import Any

import torch
from isaaclab.actuators import ActuatorBase, ActuatorBaseCfg, ImplicitActuator, ImplicitActuatorCfg
from isaaclab.utils import configclass
from isaaclab.utils.types import ArticulationActions

from realgap.actuators.chain import ActuatorChain, ChainTiming
from realgap.actuators.spec import ActuatorSpec, resolve_joint_specs
from realgap.envs.rates import RateSpec


class RealgapActuator(ActuatorBase):
    """Explicit actuator running :class:`ActuatorChain` for its joints (one command bus: one delay per env).

    Attributes:
        chain: The pure actuator chain; its ``params`` are per-env ``(num_envs, num_joints)`` tensors, written in place
            by randomization events (gains, torque limits), and ``chain.delay`` holds the per-env delays.
        specs: The datasheet spec of each of this group's joints, in joint order.
        rates: The physics / control / policy rates the chain was built for.
    """

    cfg: RealgapActuatorCfg
    is_implicit_model = False

    def __init__(
        self, cfg: RealgapActuatorCfg, joint_names: list[str], joint_ids, num_envs: int, device: str, **kwargs: Any
    ):
        kwargs.pop("stiffness", None)
        kwargs.pop("damping", None)
        super().__init__(cfg, joint_names, joint_ids, num_envs, device, **kwargs)
        self.rates = RateSpec.from_dict(cfg.rates)
        self.specs: list[ActuatorSpec] = resolve_joint_specs(
            joint_names, {k: ActuatorSpec.from_dict(v) for k, v in cfg.specs.items()}
        )
        generator = torch.Generator(device=device)
        generator.manual_seed(cfg.seed)
        self.chain = ActuatorChain.from_specs(
            self.specs,
            ChainTiming.from_rates(self.rates),
            num_envs,
            generator=generator,
            backend="torch",
            device=device,
            apply_friction=False,  # the solver applies the spec's friction (see module docstring)
        )
        self.chain.params = self.chain.params.expand(num_envs)
        # Isaac Lab reads these for logging / rewards (joint_torques_l2 uses applied torque from the articulation).
        self.stiffness = self.chain.params.kp
        self.damping = self.chain.params.kd
        self.actuator_effort_limit = self.chain.params.peak_torque
        self._peak_speed = torch.zeros(num_envs, len(joint_names), device=device)

    def reset(self, env_ids: Sequence[int] | torch.Tensor | slice | None) -> None:
        ids = None if env_ids is None or isinstance(env_ids, slice) else torch.as_tensor(env_ids, device=self._device)
        self.chain.reset(ids)
        self._peak_speed[slice(None) if ids is None else ids] = 0.0

    def pop_peak_speed(self) -> torch.Tensor:
        """The largest ``|q̇|`` of each joint at any physics step since the last call (rad/s or m/s), then zero.

        A real robot's speed reflex watches every controller cycle, not each policy step: a termination that reads
        this sees the speeds of every physics step in between. Shape: ``(E, J)`` in this group's joint order.
        """
        peak = self._peak_speed.clone()
        self._peak_speed.zero_()
        return peak

    def compute(
        self, control_action: ArticulationActions, joint_pos: torch.Tensor, joint_vel: torch.Tensor
    ) -> ArticulationActions:
        torch.maximum(self._peak_speed, joint_vel.abs(), out=self._peak_speed)  # every physics step (pop_peak_speed)
        out = self.chain.compute(
            control_action.joint_positions,
            control_action.joint_velocities,
            joint_pos,
            joint_vel,
            control_action.joint_efforts,
        )
        self.computed_effort = out.tau_computed
        self.applied_effort = out.tau_applied
        control_action.joint_efforts = out.tau_applied
        control_action.joint_positions = None
        control_action.joint_velocities = None
        return control_action


@configclass
class RealgapActuatorCfg(ActuatorBaseCfg):
    """Isaac Lab config of :class:`RealgapActuator`; build it with :func:`realgap_actuator_cfg`."""

    class_type: type = RealgapActuator
    specs: dict = MISSING
    """Datasheet specs by group name, as ``ActuatorSpec.to_dict()`` (plain data, so the run folder records them)."""
    rates: dict = MISSING
    """``RateSpec.to_dict()``: the chain's physics step, servo period, decimation and target mode."""
    seed: int = 0
    """Seed of the generator drawing the per-env command delays."""


def _solver_properties(specs: Mapping[str, ActuatorSpec], *, chain_transmission: bool) -> dict:
    """Joint selection and the per-joint solver properties the specs imply: gains, armature, friction and effort
    limit, keyed by each spec's joint-name expressions.

    Args:
        specs: Datasheet specs by group name.
        chain_transmission: The realgap chain drives the joints and integrates a compliant transmission's motor
            inertia ``J_m`` itself, so the armature is ``N²·I_m − J_m`` (:attr:`ActuatorSpec.solver_armature`);
            ``False`` (a solver drive, rigid): the whole reflected inertia ``N²·I_m``.
    """

    def per_expr(value_of) -> dict[str, float]:
        return {expr: float(value_of(s)) for s in specs.values() for expr in s.joint_names_expr}

    return dict(
        joint_names_expr=[e for s in specs.values() for e in s.joint_names_expr],
        stiffness=per_expr(lambda s: s.kp),
        damping=per_expr(lambda s: s.kd),
        armature=per_expr(lambda s: s.solver_armature if chain_transmission else s.reflected_inertia),
        friction=per_expr(lambda s: s.coulomb_friction),
        viscous_friction=per_expr(lambda s: s.viscous_friction),
        joint_effort_limit=per_expr(lambda s: s.peak_torque),
    )


def realgap_actuator_cfg(specs: Mapping[str, ActuatorSpec], rates: RateSpec, seed: int = 0) -> RealgapActuatorCfg:
    """One actuator group covering every joint the specs select, with the solver properties the specs imply."""
    props = _solver_properties(specs, chain_transmission=True)
    return RealgapActuatorCfg(
        **props,
        specs={k: s.to_dict() for k, s in specs.items()},
        rates=rates.to_dict(),
        seed=seed,
        actuator_effort_limit=props["joint_effort_limit"],
        actuator_velocity_limit={e: float(s.velocity_limit) for s in specs.values() for e in s.joint_names_expr},
    )


class RealgapImplicitActuator(ImplicitActuator):
    """Isaac Lab's implicit PD that keeps the datasheet specs it was built from, so an export can describe the joints
    (:func:`realgap.envs.export.metadata.actuator_groups`) as it does a chain's."""

    cfg: RealgapImplicitActuatorCfg

    def __init__(self, cfg: RealgapImplicitActuatorCfg, joint_names: list[str], *args: Any, **kwargs: Any):
        super().__init__(cfg, joint_names, *args, **kwargs)
        specs = {k: ActuatorSpec.from_dict(v) for k, v in cfg.specs.items()}
        self.specs: list[ActuatorSpec] = resolve_joint_specs(joint_names, specs)


@configclass
class RealgapImplicitActuatorCfg(ImplicitActuatorCfg):
    """Isaac Lab config of :class:`RealgapImplicitActuator`; build it with :func:`implicit_actuator_cfg`."""

    class_type: type = RealgapImplicitActuator
    specs: dict = MISSING
    """Datasheet specs by group name, as ``ActuatorSpec.to_dict()``, latency zero (the solver drive has none)."""


def without_delay(specs: Mapping[str, ActuatorSpec]) -> dict[str, ActuatorSpec]:
    """``specs`` with every command latency at zero: a chain without the datasheet's delay."""
    return {k: dataclasses.replace(s, latency_range_s=(0.0, 0.0)) for k, s in specs.items()}


def implicit_actuator_cfg(specs: Mapping[str, ActuatorSpec]) -> RealgapImplicitActuatorCfg:
    """Isaac Lab's implicit PD (solver drive) with the same gains, armature, friction and effort limits as ``specs``.

    The baseline realgap's explicit chain is compared against: no delay, no servo hold, no torque–speed line, and the
    solver integrates the PD implicitly (stable at any gain, unlike an explicit PD); no compliant transmission either,
    so the joint carries the whole reflected inertia.
    """
    return RealgapImplicitActuatorCfg(
        **_solver_properties(specs, chain_transmission=False),
        specs={k: s.to_dict() for k, s in without_delay(specs).items()},
    )
