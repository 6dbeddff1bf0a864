"""A scripted grasp for the ``ee_pose_delta`` action space: approach, descend, close, lift, hold.

It proves the task solvable and its success metric honest: it reads the (privileged) object pose and the tool centre
point, and commands TCP pose increments through Isaac Lab's differential IK action term, like a policy would.

Phases (per env, from the latest reset):

1. ``APPROACH``: TCP to ``approach_height_m`` above the object, fingers open, gripper yaw turned to the nearest
   face pair of the box (a box is symmetric under 90° of yaw, the gripper under 180°);
2. ``DESCEND``: TCP down to the object's centre;
3. ``CLOSE``: hold the pose and close the fingers for ``close_s``;
4. ``LIFT``: TCP up to the lift target plus ``lift_margin_m`` and stay there (the success metric needs the object
   held ``hold_s`` at the target).

Position tracking is a PI law on the TCP error, clipped to ``max_speed_mps`` (the action space compensates the arm's
own gravity; the small integral removes what the nominal model does not know, e.g. the grasped object's weight).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from isaaclab.utils.math import euler_xyz_from_quat, quat_box_minus, quat_from_euler_xyz, quat_mul

from realgap.envs.robots.panda import PANDA_HAND_BODY
from realgap.envs.run.factory import load_cfgs, make_env, simulation
from realgap.tasks.grasp import mdp as grasp_mdp
from realgap.tasks.grasp.actions import IK_SCALE
from realgap.tasks.grasp.contact_modes import CONTACT_MODE_NAMES
from realgap.tasks.grasp.reverse_curriculum import DEFAULT_STATES, save_grasp_states

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv


class Phase(IntEnum):
    APPROACH = 0
    DESCEND = 1
    CLOSE = 2
    LIFT = 3


# Hand pointing straight down, fingers closing along the world y axis (the Panda's ready pose): 180° about x, (x,y,z,w).
HAND_DOWN_QUAT = (1.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True)
class ScriptedGraspCfg:
    """Waypoints and gains of the scripted grasp (lengths in m, times in s, speeds in m/s).

    Attributes:
        approach_height_m: TCP height above the object centre before descending.
        grasp_offset_m: TCP height above the object centre when closing (negative: below).
        lift_m: TCP rise from the grasp pose (success needs the object 0.10 m up).
        reach_tol_m: TCP position error that ends APPROACH / DESCEND.
        close_s: Time to close the fingers before lifting (the finger servo closes 2 cm in ~0.4 s).
        max_speed_mps: TCP speed limit.
        kp: Proportional gain on the TCP error, 1/s.
        ki: Integral gain on the TCP error, 1/s².
        k_rot: Proportional gain on the orientation error, 1/s.
    """

    approach_height_m: float = 0.08
    grasp_offset_m: float = 0.0
    lift_m: float = 0.13
    reach_tol_m: float = 0.01
    close_s: float = 0.6
    max_speed_mps: float = 1.0
    kp: float = 15.0
    ki: float = 2.0
    k_rot: float = 8.0


class ScriptedGrasp:
    """Scripted controller emitting ``ee_pose_delta`` actions ``(E, 7)``: TCP Δx, Δθ (scaled), gripper.

    Args:
        env: A grasp env built with the ``ee_pose_delta`` action space.
        cfg: Waypoints and gains.
    """

    def __init__(self, env: ManagerBasedRLEnv, cfg: ScriptedGraspCfg | None = None) -> None:
        if env.cfg.action_space_info.get("name") != "ee_pose_delta":
            raise ValueError(
                f"ScriptedGrasp drives the 'ee_pose_delta' action space, the env has "
                f"{env.cfg.action_space_info.get('name')!r}"
            )
        self.env = env
        self.cfg = cfg or ScriptedGraspCfg()
        n, dev = env.num_envs, env.device
        self.phase = torch.zeros(n, dtype=torch.int64, device=dev)
        self.phase_time = torch.zeros(n, device=dev)
        self.integral = torch.zeros(n, 3, device=dev)
        self.grasp_pos = torch.zeros(n, 3, device=dev)
        self.scale = torch.tensor(IK_SCALE, device=dev)
        self.hand_down = torch.tensor(HAND_DOWN_QUAT, device=dev).expand(n, 4)

    def reset(self, env_ids: torch.Tensor | None = None) -> None:
        """Start over (from APPROACH) in ``env_ids`` (all when None)."""
        ids = slice(None) if env_ids is None else env_ids
        self.phase[ids] = Phase.APPROACH
        self.phase_time[ids] = 0.0
        self.integral[ids] = 0.0

    def _enter(self, mask: torch.Tensor, phase: Phase) -> None:
        self.phase = torch.where(mask, int(phase), self.phase)
        self.phase_time = torch.where(mask, 0.0, self.phase_time)
        self.integral = torch.where(mask[:, None], 0.0, self.integral)

    def __call__(self) -> torch.Tensor:
        """Actions for the current state, ``(E, 7)``; call once per env step, :meth:`reset` the envs that reset."""
        env, c, dt = self.env, self.cfg, self.env.step_dt
        obj = env.scene["object"].data
        robot = env.scene["robot"].data
        origin = env.scene.env_origins
        tcp = grasp_mdp.tcp_pos_w(env) - origin
        obj_pos = obj.root_link_pos_w.torch - origin
        hand_quat = robot.body_link_quat_w.torch[:, env.scene["robot"].body_names.index(PANDA_HAND_BODY)]
        # gripper yaw: the object's yaw folded into [-45°, 45°) (90° box symmetry)
        _, _, yaw = euler_xyz_from_quat(obj.root_link_quat_w.torch)
        yaw = torch.remainder(yaw + math.pi / 4, math.pi / 2) - math.pi / 4
        zero = torch.zeros_like(yaw)
        quat_des = quat_mul(quat_from_euler_xyz(zero, zero, yaw), self.hand_down)

        # phase targets
        above = obj_pos + torch.tensor([0.0, 0.0, c.approach_height_m], device=env.device)
        at_object = obj_pos + torch.tensor([0.0, 0.0, c.grasp_offset_m], device=env.device)
        phase = self.phase
        target = torch.where((phase == Phase.APPROACH)[:, None], above, at_object)
        target = torch.where((phase >= Phase.CLOSE)[:, None], self.grasp_pos, target)
        lift = torch.tensor([0.0, 0.0, c.lift_m], device=env.device)
        target = torch.where((phase == Phase.LIFT)[:, None], self.grasp_pos + lift, target)

        # PI on the TCP position, clipped to the speed limit; P on the orientation
        err = target - tcp
        self.integral = self.integral + err * dt
        vel = c.kp * err + c.ki * self.integral
        speed = torch.linalg.vector_norm(vel, dim=-1, keepdim=True)
        vel = vel * torch.clamp(c.max_speed_mps / speed.clamp_min(1e-9), max=1.0)
        rot = c.k_rot * quat_box_minus(quat_des, hand_quat) * dt
        action = torch.cat([vel * dt, rot], dim=-1) / self.scale
        gripper = torch.where(phase >= Phase.CLOSE, -1.0, 1.0)

        # transitions
        self.phase_time += dt
        reached = torch.linalg.vector_norm(err, dim=-1) < c.reach_tol_m
        self._enter((phase == Phase.APPROACH) & reached, Phase.DESCEND)
        descended = (phase == Phase.DESCEND) & reached
        self.grasp_pos = torch.where(descended[:, None], tcp, self.grasp_pos)
        self._enter(descended, Phase.CLOSE)
        self._enter((phase == Phase.CLOSE) & (self.phase_time >= c.close_s), Phase.LIFT)
        # at most 2 units: 2 cm (1 m/s) and 0.04 rad (2 rad/s) per step, inside the arm's Cartesian limits
        return torch.cat([torch.clamp(action, -2.0, 2.0), gripper[:, None]], dim=-1)


def run_scripted_episodes(
    env: ManagerBasedRLEnv, cfg: ScriptedGraspCfg | None = None, keep_open: torch.Tensor | None = None
) -> dict[str, object]:
    """Run one episode in every env with :class:`ScriptedGrasp` (stops early once every env is decided).

    Args:
        env: A grasp env with the ``ee_pose_delta`` action space.
        cfg: Waypoints and gains.
        keep_open: ``(E,)`` bool, envs whose gripper is never closed: a control group whose objects must not count
            as lifted if the metric is honest.

    Returns:
        ``succeeded`` (``(E,)`` bool: object held at the target for the hold time), ``max_lift_m`` (``(E,)``, m) and
        ``mode_fractions`` (fraction of env-steps in each contact mode, by name).
    """

    env.reset()
    policy = ScriptedGrasp(env, cfg)
    hold = env.reward_manager.get_term_cfg("hold").func
    contact = env.reward_manager.get_term_cfg("grasp").func
    n = env.num_envs
    keep_open = torch.zeros(n, dtype=torch.bool, device=env.device) if keep_open is None else keep_open
    succeeded = torch.zeros(n, dtype=torch.bool, device=env.device)
    active = torch.ones(n, dtype=torch.bool, device=env.device)  # still in its first episode
    max_lift = torch.full((n,), -math.inf, device=env.device)
    contact.counts.zero_()
    # at most one step short of the time-out: no env is reset by the time limit before `hold.succeeded` is read
    for _ in range(env.max_episode_length - 1):
        action = policy()
        action[:, -1] = torch.where(keep_open, 1.0, action[:, -1])
        _, _, terminated, truncated, _ = env.step(action)
        succeeded |= hold.succeeded & active
        max_lift = torch.where(active, torch.maximum(max_lift, grasp_mdp.object_lift_m(env)), max_lift)
        active &= ~(terminated | truncated)
        if bool((succeeded | ~active | keep_open).all()) and bool((policy.phase[keep_open] == Phase.LIFT).all()):
            break
    counts = contact.counts.float()
    fractions = {name: float(v) for name, v in zip(CONTACT_MODE_NAMES, counts / counts.sum(), strict=True)}
    return {"succeeded": succeeded, "max_lift_m": max_lift, "mode_fractions": fractions}


def record_grasp_states(
    env: ManagerBasedRLEnv, per_phase: int, cfg: ScriptedGraspCfg | None = None, seed: int = 0
) -> dict[str, object]:
    """States of the scripted grasp for the grasp task's reverse curriculum (:mod:`realgap.tasks.grasp.
    reverse_curriculum`): one episode in every env, every env-step kept (APPROACH from the reset on, DESCEND, CLOSE,
    LIFT), of the episodes that succeeded only; ``per_phase`` states drawn from each phase (with replacement if
    fewer).

    Returns:
        ``joint_names`` and the arrays of the grasp-state format (numpy, env frame), plus ``success_rate`` of the
        scripted episodes and ``recorded`` (states seen per phase before drawing).
    """

    env.reset()
    policy = ScriptedGrasp(env, cfg)
    hold = env.reward_manager.get_term_cfg("hold").func
    robot, obj = env.scene["robot"], env.scene["object"]
    size_term = env.event_manager.get_term_cfg("reset_object").func
    n = env.num_envs
    succeeded = torch.zeros(n, dtype=torch.bool, device=env.device)
    active = torch.ones(n, dtype=torch.bool, device=env.device)
    rows: list[dict[str, torch.Tensor]] = []
    for _ in range(env.max_episode_length - 1):
        phase = policy.phase.clone()
        keep = active.clone()
        rows.append(
            {
                "env": torch.nonzero(keep).flatten(),
                "joint_pos": robot.data.joint_pos.torch[keep].clone(),
                "joint_vel": robot.data.joint_vel.torch[keep].clone(),
                "object_pose": torch.cat(
                    [obj.data.root_link_pos_w.torch - env.scene.env_origins, obj.data.root_link_quat_w.torch], dim=-1
                )[keep],
                "object_vel": obj.data.root_com_vel_w.torch[keep].clone(),
                "object_size": size_term.size_m[keep].clone(),
                "phase": phase[keep],
            }
        )
        _, _, terminated, truncated, _ = env.step(policy())
        succeeded |= hold.succeeded & active
        active &= ~(terminated | truncated)
        if not bool(active.any()) or bool((succeeded | ~active).all()):
            break
    cat = {k: torch.cat([r[k] for r in rows]) for k in rows[0]}
    good = succeeded[cat.pop("env")]
    cat = {k: v[good].cpu().numpy() for k, v in cat.items()}
    rng = np.random.default_rng(seed)
    picks, recorded = [], {}
    for phase in Phase:
        idx = np.flatnonzero(cat["phase"] == int(phase))
        recorded[phase.name.lower()] = len(idx)
        if len(idx):
            picks.append(rng.choice(idx, size=per_phase, replace=len(idx) < per_phase))
    if not picks:
        raise RuntimeError("the scripted grasp succeeded in no episode: no states to record")
    pick = np.concatenate(picks)
    out: dict[str, object] = {k: v[pick] for k, v in cat.items()}
    out |= {
        "joint_names": list(robot.joint_names),
        "success_rate": float(succeeded.float().mean()),
        "recorded": recorded,
    }
    return out


SCRIPTED_TASK = "Realgap-Grasp-Franka-EEPoseDelta-v0"
"""The scripted grasp drives the end effector: it runs in the end-effector action space."""


@dataclass(frozen=True)
class GraspStatesRequest:
    """A recording as scripts/record_grasp_states.py's flags give it (see its ``--help`` for each)."""

    num_envs: int = 256
    seed: int = 0
    per_phase: int = 1024
    out: str = str(DEFAULT_STATES)


def record_grasp_state_file(req: GraspStatesRequest) -> tuple[float, Any, int]:
    """Run the scripted grasp once in each of ``req.num_envs`` CPU envs and save ``req.per_phase`` states of each
    phase to ``req.out`` (:func:`record_grasp_states`); returns the scripted success rate, the states seen per phase
    and the states written.

    Raises:
        ValueError: A count < 1.
    """
    if req.num_envs < 1 or req.per_phase < 1:
        raise ValueError("--num_envs and --per_phase must be >= 1")
    env_cfg, _ = load_cfgs(SCRIPTED_TASK, "cpu", req.num_envs, req.seed)
    with simulation(env_cfg):
        env = make_env(SCRIPTED_TASK, env_cfg)
        try:
            out = record_grasp_states(env, req.per_phase, seed=req.seed)
        finally:
            env.close()
    joint_names, success, recorded = out.pop("joint_names"), out.pop("success_rate"), out.pop("recorded")
    save_grasp_states(req.out, joint_names, out)
    return success, recorded, len(out["phase"])
