"""MDP terms of the grasp task that Isaac Lab does not ship: tool-centre-point observations, a new object per episode
(size, consistent mass / CoM / inertia, pose on the table), the contact-mode and lift-and-hold terms, and the metrics.

The pure math (contact modes, hold counting) lives in :mod:`realgap.tasks.grasp.contact_modes`, the inertia samplers in
:mod:`realgap.envs.dr.inertia_sampling`, the joint-speed limit terms in :mod:`realgap.tasks.grasp.joint_speed`
(re-exported here); the terms here only read the simulator and apply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from isaaclab.managers import ManagerTermBase, SceneEntityCfg
from isaaclab.utils.math import quat_apply, subtract_frame_transforms

from realgap.envs.robots.panda import PANDA_HAND_BODY, PANDA_TCP_OFFSET_HAND
from realgap.envs.sim.constants import device_constant
from realgap.envs.sim.device_stats import RunningMeans
from realgap.envs.sim.managers import curriculum_term
from realgap.tasks.grasp.contact_modes import (
    CONTACT_MODE_NAMES,
    ContactModeThresholds,
    classify_contact_mode,
    contact_slip_speed,
    hold_steps_required,
    is_pinch,
    lift_success,
    mode_counts,
    update_hold_steps,
)

# the speed-limit terms live in joint_speed.py; re-exported here, where the task's config reads every term
from realgap.tasks.grasp.joint_speed import joint_speed_margin as joint_speed_margin
from realgap.tasks.grasp.joint_speed import joint_speed_reflex as joint_speed_reflex

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedEnv, ManagerBasedRLEnv
    from isaaclab.managers import CurriculumTermCfg, RewardTermCfg

ROBOT = SceneEntityCfg("robot")
OBJECT = SceneEntityCfg("object")


def _term(manager: Any, name: str) -> ManagerTermBase:
    """The class-based term instance registered under ``name`` in an event / reward / curriculum manager."""
    return manager.get_term_cfg(name).func


def tcp_pos_w(env: ManagerBasedEnv, robot_cfg: SceneEntityCfg = ROBOT) -> torch.Tensor:
    """Tool centre point (between the fingertip pads) in the world frame, m. Shape: ``(E, 3)``."""
    robot = env.scene[robot_cfg.name]
    hand = robot.body_names.index(PANDA_HAND_BODY)
    offset = device_constant(PANDA_TCP_OFFSET_HAND, torch.float32, env.device).expand(env.num_envs, 3)
    return robot.data.body_link_pos_w.torch[:, hand] + quat_apply(robot.data.body_link_quat_w.torch[:, hand], offset)


def _in_base(env: ManagerBasedEnv, pos_w: torch.Tensor, robot_cfg: SceneEntityCfg) -> torch.Tensor:
    robot = env.scene[robot_cfg.name]
    pos_b, _ = subtract_frame_transforms(robot.data.root_link_pos_w.torch, robot.data.root_link_quat_w.torch, pos_w)
    return pos_b


def tcp_pos_b(env: ManagerBasedEnv, robot_cfg: SceneEntityCfg = ROBOT) -> torch.Tensor:
    """Tool centre point in the robot base frame, m. Shape: ``(E, 3)``."""
    return _in_base(env, tcp_pos_w(env, robot_cfg), robot_cfg)


def object_pos_b(
    env: ManagerBasedEnv, robot_cfg: SceneEntityCfg = ROBOT, object_cfg: SceneEntityCfg = OBJECT
) -> torch.Tensor:
    """Object position in the robot base frame, m. Shape: ``(E, 3)``."""
    return _in_base(env, env.scene[object_cfg.name].data.root_link_pos_w.torch, robot_cfg)


def object_quat_b(
    env: ManagerBasedEnv, robot_cfg: SceneEntityCfg = ROBOT, object_cfg: SceneEntityCfg = OBJECT
) -> torch.Tensor:
    """Object orientation in the robot base frame, quaternion (x, y, z, w). Shape: ``(E, 4)``."""
    robot, obj = env.scene[robot_cfg.name], env.scene[object_cfg.name]
    _, quat_b = subtract_frame_transforms(
        robot.data.root_link_pos_w.torch,
        robot.data.root_link_quat_w.torch,
        obj.data.root_link_pos_w.torch,
        obj.data.root_link_quat_w.torch,
    )
    return quat_b


def object_to_tcp_b(
    env: ManagerBasedEnv, robot_cfg: SceneEntityCfg = ROBOT, object_cfg: SceneEntityCfg = OBJECT
) -> torch.Tensor:
    """Object position relative to the tool centre point, base-frame axes, m. Shape: ``(E, 3)``."""
    return object_pos_b(env, robot_cfg, object_cfg) - tcp_pos_b(env, robot_cfg)


def object_lift_m(env: ManagerBasedEnv, object_term: str = "reset_object") -> torch.Tensor:
    """Height of the object above its resting height on the table (upright, current collider size), m.

    Shape: ``(E,)``.
    """
    term = _term(env.event_manager, object_term)  # a realgap.envs.dr.object.reset_object
    return env.scene[term.object_name].data.root_link_pos_w.torch[:, 2] - term.rest_z_w()


def tcp_object_distance(
    env: ManagerBasedRLEnv, std: float, robot_cfg: SceneEntityCfg = ROBOT, object_cfg: SceneEntityCfg = OBJECT
) -> torch.Tensor:
    """Reaching: ``1 − tanh(‖x_tcp − x_object‖ / std)`` (1 at the object, 0.24 at ``std``, m). Shape: ``(E,)``."""
    dist = torch.linalg.vector_norm(
        env.scene[object_cfg.name].data.root_link_pos_w.torch - tcp_pos_w(env, robot_cfg), dim=-1
    )
    return 1.0 - torch.tanh(dist / std)


def lift_progress(
    env: ManagerBasedRLEnv, lift_target_m: float, min_lift_m: float = 0.02, object_term: str = "reset_object"
) -> torch.Tensor:
    """Dense lift: ``clip((lift − min_lift_m) / (lift_target_m − min_lift_m), 0, 1)``, m in, unit-less out.

    Pays for every centimetre the object rises beyond ``min_lift_m``: 2 cm is more than tipping a box of edge ≤ 5 cm
    onto a corner raises its centre ((√3 − 1)/2 · 5 cm = 1.8 cm), so only lifting pays. Shape: ``(E,)``.
    """
    lift = object_lift_m(env, object_term)
    return torch.clamp((lift - min_lift_m) / (lift_target_m - min_lift_m), 0.0, 1.0)


def lift_while_pinched(
    env: ManagerBasedRLEnv, lift_target_m: float, contact_term: str = "grasp", object_term: str = "reset_object"
) -> torch.Tensor:
    """Staged lift: ``pinch · clip(lift / lift_target_m, 0, 1)`` (lift in m, unit-less out).

    Pays every millimetre the object rises from its resting height, but only while the fingers squeeze it from
    opposite sides (the :class:`grasp_contact` term of this step, computed before this one in the reward table): the
    bridge between "pinched" and the ungated :func:`lift_progress`, which starts at 2 cm so that tipping the box cannot
    pay. Without it a joint-target policy learned to pinch the object and never to raise it (measured: sticking
    contact in 48 % of steps, no lift, after 40 minutes). Shape: ``(E,)``.
    """
    pinch = _term(env.reward_manager, contact_term).pinch_now.float()
    lift = object_lift_m(env, object_term)
    return pinch * torch.clamp(lift / lift_target_m, 0.0, 1.0)


class grasp_contact(ManagerTermBase):
    """Pinch reward (1 while the fingers squeeze the object from opposite sides) and the per-step contact mode.

    Every call classifies each env into a :class:`~realgap.tasks.grasp.contact_modes.ContactMode` from the finger
    contact
    sensor (normal force, contact point, normal) and the finger / object velocities, keeps it in :attr:`mode` and
    adds it to :attr:`counts`, which the metrics term reads and clears. The reward manager skips terms of weight 0,
    so this term must keep a non-zero weight (checked by :class:`grasp_metrics`).

    Params:
        sensor_name: Scene name of the finger contact sensor (sensors: the two finger bodies, filter: the object).
        force_n, slip_speed_mps, pinch_cos: :class:`~realgap.tasks.grasp.contact_modes.ContactModeThresholds`.
    """

    def __init__(self, cfg: RewardTermCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        p = cfg.params
        self.thresholds = ContactModeThresholds(
            p.get("force_n", 0.05), p.get("slip_speed_mps", 0.01), p.get("pinch_cos", -0.5)
        )
        self.sensor = env.scene[p["sensor_name"]]
        self.robot = env.scene[p.get("robot_cfg", ROBOT).name]
        self.obj = env.scene[p.get("object_cfg", OBJECT).name]
        self.finger_ids = [self.robot.body_names.index(name) for name in self.sensor.sensor_names]
        self.pinched = torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)
        self.pinch_now = torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)
        """Whether the fingers squeeze the object from opposite sides in the current step."""
        self.mode = torch.zeros(env.num_envs, dtype=torch.int64, device=env.device)
        self.counts = torch.zeros(len(CONTACT_MODE_NAMES), dtype=torch.int64, device=env.device)

    def reset(self, env_ids: torch.Tensor | None = None) -> None:
        ids = slice(None) if env_ids is None else env_ids
        self.pinched[ids] = False
        self.mode[ids] = 0

    def __call__(
        self,
        env: ManagerBasedRLEnv,
        sensor_name: str,
        force_n: float = 0.05,
        slip_speed_mps: float = 0.01,
        pinch_cos: float = -0.5,
        robot_cfg: SceneEntityCfg = ROBOT,
        object_cfg: SceneEntityCfg = OBJECT,
    ) -> torch.Tensor:
        normal_vec = self.sensor.data.normal_force_matrix_w.torch[:, :, 0]  # (E, F, 3) on each finger, from the object
        force = torch.linalg.vector_norm(normal_vec, dim=-1)
        rd, od = self.robot.data, self.obj.data
        slip = contact_slip_speed(
            rd.body_com_lin_vel_w.torch[:, self.finger_ids],
            rd.body_com_ang_vel_w.torch[:, self.finger_ids],
            rd.body_com_pos_w.torch[:, self.finger_ids],
            od.root_com_lin_vel_w.torch,
            od.root_com_ang_vel_w.torch,
            od.root_com_pos_w.torch,
            self.sensor.data.contact_pos_w.torch[:, :, 0],
            normal_vec,
        )
        pinch_now = is_pinch(normal_vec, self.thresholds)
        self.pinch_now = pinch_now
        self.pinched = self.pinched | pinch_now
        self.mode = classify_contact_mode(force, slip, self.pinched, self.thresholds)
        self.counts += mode_counts(self.mode)
        return pinch_now.float()


class lift_hold(ManagerTermBase):
    """Success reward and metric: 1 while the object is at least ``lift_target_m`` above its resting height.

    Counts consecutive lifted policy steps; an episode succeeds once they reach ``hold_s`` (sticky until reset, kept
    in :attr:`succeeded`).
    """

    def __init__(self, cfg: RewardTermCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        self.required_steps = hold_steps_required(cfg.params["hold_s"], env.step_dt)
        self.hold_steps = torch.zeros(env.num_envs, dtype=torch.int64, device=env.device)
        self.succeeded = torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)

    def reset(self, env_ids: torch.Tensor | None = None) -> None:
        ids = slice(None) if env_ids is None else env_ids
        self.hold_steps[ids] = 0
        self.succeeded[ids] = False

    def __call__(
        self, env: ManagerBasedRLEnv, lift_target_m: float, hold_s: float, object_term: str = "reset_object"
    ) -> torch.Tensor:
        self.hold_steps = update_hold_steps(self.hold_steps, object_lift_m(env, object_term), lift_target_m)
        self.succeeded |= lift_success(self.hold_steps, self.required_steps)
        return (self.hold_steps > 0).float()


class grasp_metrics(ManagerTermBase):
    """Task metrics, logged every iteration as ``Curriculum/metrics/<name>``.

    Logged:
        success_rate: running mean (about the last ``window`` ended episodes) of lift-and-hold success, over the
            episodes that started from the task's normal resets.
        success_rate_from_states: the same over episodes started from a recorded grasp state (the reverse
            curriculum's ``reset_from_states`` event, when its fraction is > 0); never mixed into ``success_rate``.
        reflex_rate: the same running mean of episodes ended by the ``reflex_term`` termination (the joint-speed
            reflex: how often the policy breaks the arm's limits), when that term is active.
        mode_<name>: fraction of env-steps in each contact mode since the previous call (no_contact, sticking,
            sliding, separated); rsl-rl averages these over the iteration.

    Params:
        contact_term, hold_term: Names of the :class:`grasp_contact` and :class:`lift_hold` reward terms.
        reflex_term: Name of the joint-speed reflex termination (``reflex_rate`` is logged only if it is active).
        window: Effective number of episodes in the success running mean.
    """

    def __init__(self, cfg: CurriculumTermCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        for key in ("contact_term", "hold_term"):
            name = cfg.params[key]
            if name not in env.reward_manager.active_terms or env.reward_manager.get_term_cfg(name).weight == 0:
                raise ValueError(
                    f"grasp_metrics needs the reward term '{name}' ({key}) active with a non-zero weight (the reward "
                    "manager skips weight-0 terms, so it would never be computed)"
                )
        reflex = cfg.params.get("reflex_term", "joint_speed_reflex")
        self.reflex_term = reflex if reflex in env.termination_manager.active_terms else None
        names = ("success_rate", "reflex_rate", "success_rate_from_states")
        self.stats = RunningMeans(names, cfg.params.get("window", 256), env.device)  # on the device: no sync per reset
        self.mode_step = 0
        """``env.common_step_counter`` at the last call: the contact-mode counts hold the steps since then."""
        self.last_success = torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)
        """Outcome of each env's most recently ended episode (read by evaluation after the auto-reset)."""

    success_rate = property(lambda self: self.stats.value("success_rate"))
    reflex_rate = property(lambda self: self.stats.value("reflex_rate"))
    success_rate_from_states = property(lambda self: self.stats.value("success_rate_from_states"))
    episodes = property(lambda self: int(self.stats.counts[0]))
    curriculum_episodes = property(lambda self: int(self.stats.counts[2]))

    def __call__(
        self,
        env: ManagerBasedRLEnv,
        env_ids: torch.Tensor,
        contact_term: str = "grasp",
        hold_term: str = "hold",
        window: int = 256,
        reflex_term: str = "joint_speed_reflex",
    ) -> dict[str, torch.Tensor]:
        out: dict[str, torch.Tensor] = {}
        if env.common_step_counter > 0:  # the initial reset ends no episode
            succeeded = _term(env.reward_manager, hold_term).succeeded[env_ids]  # env_ids: a tensor or a slice
            self.last_success[env_ids] = succeeded
            # episodes started from recorded states are kept apart (reverse curriculum), by mask: no sync
            curriculum = self._from_states(env)
            started = curriculum[env_ids] if curriculum is not None else torch.zeros_like(succeeded)
            normal = ~started
            reflex = (
                env.termination_manager.get_term(self.reflex_term)[env_ids]
                if self.reflex_term is not None
                else torch.zeros_like(succeeded)
            )  # the termination's flags are still those of this step
            self.stats.update(
                torch.stack([succeeded, reflex, succeeded]),
                torch.stack([normal, normal & (self.reflex_term is not None), started]),
            )
        out |= self.stats.logged()
        counts = _term(env.reward_manager, contact_term).counts
        if env.common_step_counter > self.mode_step:  # every step since the last call counted each env once
            fractions = counts.double() / counts.sum()
            out |= {f"mode_{name}": f for name, f in zip(CONTACT_MODE_NAMES, fractions, strict=True)}
            counts.zero_()
        self.mode_step = env.common_step_counter
        return out

    @staticmethod
    def _from_states(env: ManagerBasedRLEnv) -> torch.Tensor | None:
        """``(E,)`` bool: episodes started from a recorded state, when the reverse curriculum is on; else None."""
        if "reset_from_states" not in env.event_manager.active_terms.get("reset", []):
            return None
        term = env.event_manager.get_term_cfg("reset_from_states").func
        return term.from_states if term.fraction > 0 else None


def episode_success(env: ManagerBasedRLEnv, metrics_term: str = "metrics") -> torch.Tensor:
    """Whether each env's most recently ended episode lifted and held the object (``(E,)`` bool).

    Valid right after a step that ended the episode (the metrics term stores it before the auto-reset clears the
    hold counter); used by :func:`realgap.envs.eval.rollout.rollout` through ``env_cfg.episode_success``.
    """
    return curriculum_term(env, metrics_term).last_success
