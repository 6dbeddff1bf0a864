"""The SRBD balance law (:mod:`realgap.envs.srbd.law`) as a policy of the Isaac Lab balance task.

:class:`SRBDLabPolicy` is a :data:`~realgap.envs.eval.policies.Policy` (observation ``(E, D)`` → action ``(E, A)``)
that ignores the observation: each policy step it reads every env's state from the articulation (root link pose and
velocity relative to the env's origin, joint positions and velocities by name), computes the law per env (wrench PD,
contact-force QP, ``τ = h − J_cᵀ f``, ``q* = q_nom + τ / kp``) and returns the raw actions of the task's own
joint-position term that make the term's targets ``q*``:

    a = (q* − offset) / scale        (the term's ``q_target = offset + scale · a`` solved for ``a``)

with ``offset`` and ``scale`` read from the term's config (a ramped term's offset as its next step applies it). The
actuator chain behind the term (gains, command delay, torque–speed envelope, every sweep factor) is the env's.

Differences from the MuJoCo controller (:mod:`realgap.envs.srbd.controller`), both of the action interface: the law
runs once per policy step (50 Hz, its targets held for the 4 control periods in between) instead of every control
period (200 Hz); ``kp`` and the torque clip are the actuators' nominal values read when the policy is built (a swept
gain or torque limit is a model error to the law, as to the learned policy). The state is the simulator's: a perfect
state estimate, which the learned policy (IMU and encoders) does not get.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from realgap.envs.export.metadata import actuator_groups
from realgap.envs.robots import G1
from realgap.envs.srbd.dynamics import wxyz_from_xyzw
from realgap.envs.srbd.law import BalanceLaw, Reference, joint_index


def raw_actions(q_target: torch.Tensor, offset: torch.Tensor | float, scale: torch.Tensor | float) -> torch.Tensor:
    """The raw actions ``(q* − offset) / scale`` of a joint-position term whose targets are ``offset + scale · a``.

    Shape: ``q_target`` ``(E, J)``; ``offset``, ``scale`` ``(E, J)``, ``(J,)`` or scalars, rad and rad per unit.

    Raises:
        ValueError: A zero scale (no action reaches that joint's target).
    """
    scale_t = torch.as_tensor(scale, dtype=q_target.dtype, device=q_target.device)
    if bool((scale_t == 0).any()):
        raise ValueError("the action term has a zero scale on some joint: no raw action reaches its target")
    return (q_target - offset) / scale_t


def term_values(table: float | Mapping[str, float], names: Sequence[str], default: float) -> np.ndarray:
    """Per joint of ``names``, a term config's value: a number for every joint, or a ``{regex: value}`` table
    (``default`` where no pattern matches: Isaac Lab's 1 for ``scale``, 0 for ``offset``).

    Raises:
        ValueError: A pattern that matches no joint, or a joint matched by two patterns (Isaac Lab refuses both).
    """
    from isaaclab.utils.string import resolve_matching_names_values

    out = np.full(len(names), float(default))
    if isinstance(table, (int, float)):
        out[:] = float(table)
        return out
    index, _, values = resolve_matching_names_values(dict(table), list(names))
    out[index] = values
    return out


def position_term(env: Any) -> tuple[Any, int]:
    """The env's one joint-position action term of the robot and where its slice of the action vector starts.

    Raises:
        ValueError: No such term, or several (the policy would not know which targets to write).
    """
    from isaaclab.envs.mdp.actions.joint_actions import JointPositionAction

    found, start = [], 0
    for name in env.action_manager.active_terms:
        term = env.action_manager.get_term(name)
        if isinstance(term, JointPositionAction):
            found.append((term, start))
        start += term.action_dim
    if len(found) != 1:
        raise ValueError(f"the SRBD policy needs exactly one joint-position action term, the env has {len(found)}")
    return found[0]


class SRBDLabPolicy:
    """The SRBD law per env of an Isaac Lab G1 balance env (module docstring).

    Args:
        env: The unwrapped env (a ManagerBasedRLEnv of the balance task).
        mjcf_path: The robot's MJCF for pinocchio (default: the G1's, the file the env's USD was converted from).
        gains: Overrides of the law's task-space gains.
        mu: Friction coefficient of the law's QP.
        ramp_s: The law's ramp into the crouch, s.
    """

    def __init__(
        self,
        env: Any,
        mjcf_path: str | Path | None = None,
        *,
        gains: Mapping[str, float] | None = None,
        mu: float = 0.6,
        ramp_s: float = 1.0,
    ) -> None:

        self.env = env
        self.robot = env.scene["robot"]
        names = list(self.robot.joint_names)
        self.law = BalanceLaw(mjcf_path or G1.mjcf_path(), names, gains=gains, mu=mu, ramp_s=ramp_s)
        self.datas = [self.law.new_data() for _ in range(env.num_envs)]
        self.refs: list[Reference | None] = [None] * env.num_envs
        groups = actuator_groups(self.robot)  # nominal gains and peak torques, read once (module docstring)
        order = [j for g in groups for j in g.joint_names]
        by_name = joint_index(order, names)
        self.kp = np.concatenate([np.asarray(g.kp, dtype=float) for g in groups])[by_name]
        self.peak = np.concatenate([np.asarray(g.peak_torque, dtype=float) for g in groups])[by_name]
        self.term, self.start = position_term(env)
        cfg = self.term.cfg
        _, term_names = self.robot.find_joints(cfg.joint_names, preserve_order=cfg.preserve_order)
        self.term_index = joint_index(names, term_names)  # law (articulation) order -> the term's order
        self.scale = torch.as_tensor(term_values(cfg.scale, term_names, 1.0), dtype=torch.float32, device=env.device)
        self.last_q_target = np.zeros((env.num_envs, len(names)))
        self.last_tau = np.zeros((env.num_envs, len(names)))

    def _offset(self) -> torch.Tensor:
        """The term's offset at its next step ``(E, J)`` (term order): a ramped term's current one, the default pose,
        or the configured table."""
        if hasattr(self.term, "next_offset"):
            return self.term.next_offset()
        cfg = self.term.cfg
        if cfg.use_default_offset:
            return self.robot.data.default_joint_pos.torch[:, torch.as_tensor(self.term_index)]
        names = [self.law.joint_names[i] for i in self.term_index]
        return torch.as_tensor(term_values(cfg.offset, names, 0.0), dtype=torch.float32, device=self.env.device)

    def states(self) -> tuple[np.ndarray, np.ndarray]:
        """Every env's law state ``q`` ``(E, nq)``, ``v`` ``(E, nv)``: positions relative to the env's origin (the
        ground is z = 0 there), velocities in the world; Isaac Lab's (x, y, z, w) quaternion in realgap's (w, x, y, z)
        (:func:`~realgap.envs.srbd.dynamics.wxyz_from_xyzw`, at this boundary)."""
        d = self.robot.data
        pos = (d.root_link_pos_w.torch - self.env.scene.env_origins).double().cpu().numpy()
        quat = wxyz_from_xyzw(d.root_link_quat_w.torch.double().cpu().numpy())
        lin = d.root_link_lin_vel_w.torch.double().cpu().numpy()
        ang = d.root_link_ang_vel_w.torch.double().cpu().numpy()
        jp, jv = d.joint_pos.torch.double().cpu().numpy(), d.joint_vel.torch.double().cpu().numpy()
        pairs = [self.law.pin_state(pos[i], quat[i], lin[i], ang[i], jp[i], jv[i]) for i in range(len(pos))]
        return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])

    def targets(self) -> np.ndarray:
        """The law's PD targets ``q*`` of every env, ``(E, J)`` in the articulation's order (rad); an env at its
        first step after a reset takes its :class:`~realgap.envs.srbd.law.Reference` from the state first."""
        q, v = self.states()
        steps = self.env.episode_length_buf.cpu().numpy()
        out = np.empty((len(q), len(self.law.joint_names)))
        for i in range(len(q)):
            if steps[i] == 0 or self.refs[i] is None:
                self.refs[i] = self.law.reference(self.datas[i], q[i])
            t = float(steps[i]) * self.env.step_dt
            tau, _ = self.law.torques(self.datas[i], q[i], v[i], t, self.refs[i])
            self.last_tau[i] = tau
            out[i] = self.law.targets(tau, t, self.refs[i], self.kp, self.peak)
        self.last_q_target = out
        return out

    def __call__(self, obs: torch.Tensor) -> torch.Tensor:
        """Actions ``(E, A)`` for the env's current state (``obs`` only gives the batch size and device)."""
        q_target = torch.as_tensor(self.targets()[:, self.term_index], dtype=torch.float32, device=obs.device)
        actions = torch.zeros(obs.shape[0], self.env.action_manager.total_action_dim, device=obs.device)
        dim = self.term.action_dim
        actions[:, self.start : self.start + dim] = raw_actions(q_target, self._offset(), self.scale)
        return actions
