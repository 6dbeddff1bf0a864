"""Humanoid balance: a Unitree G1 stands on flat ground and keeps its balance under random pushes.

The MDP reads as a table: observations, actions, rewards, terminations, events and curriculum below are named,
weighted terms. Designed to learn on a CPU, where a naive balance setup does not learn in a CPU budget: the zero
action is the default stance held by the PD servos, the action scale is bounded, initial exploration noise is small
(agent_cfg.py), survival is paid from the first step, and the pushes (PROTOCOL.push_mps, full magnitude from the
start) are the ones standing balance can absorb. Reward and curriculum terms studied as levers live in
:class:`LeverRewardsCfg` and :class:`LeverCurriculumCfg` (the ``Realgap-Balance-G1-Levers-v0`` variant), not in the
shipped tasks.
"""

from __future__ import annotations

import isaaclab.envs.mdp as mdp
from isaaclab.envs import ManagerBasedRLEnvCfg
from isaaclab.managers import CurriculumTermCfg as CurrTerm
from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import ObservationGroupCfg as ObsGroup
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.managers import SceneEntityCfg
from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.scene import InteractiveSceneCfg
from isaaclab.sim import SimulationCfg
from isaaclab.utils import configclass
from isaaclab.utils.noise import UniformNoiseCfg as Unoise

from realgap.envs.dr.push import push_robot
from realgap.envs.format.protocol import BALANCE_PROTOCOL
from realgap.envs.rates import load_rate_profile
from realgap.envs.robots.g1 import (
    G1,
    G1_ACTION_SCALE,
    G1_ACTUATORS,
    G1_CROUCH_ROOT_HEIGHT,
    G1_CROUCH_TARGETS,
    G1_FOOT_BODIES,
    G1_ROOT_HEIGHT,
)
from realgap.envs.sim.actuator import realgap_actuator_cfg
from realgap.envs.sim.nan_guard import non_finite_state
from realgap.envs.sim.physics import default_device, newton_physics
from realgap.envs.sim.scene import ground_cfg, robot_cfg
from realgap.tasks.balance import mdp as balance_mdp
from realgap.tasks.balance.action_terms import RampedJointPositionActionCfg

PROTOCOL = BALANCE_PROTOCOL
"""Pushes, fall rule and episode length (realgap.envs.format.protocol, where each number has its reason): the push
term, the fall terminations and ``episode_length_s`` below read it, and the export records it."""
RATES = load_rate_profile("default")
"""Physics 200 Hz, PD servo 200 Hz, policy 50 Hz, targets held (configs/rates/default.yaml)."""


@configclass
class BalanceSceneCfg(InteractiveSceneCfg):
    ground = ground_cfg()
    # Datasheet actuators (envs/robots/g1.py): explicit PD + torque-speed envelope + per-env command delay,
    # armature = reflected rotor inertia N²·I_m, joint friction from the spec.
    robot = robot_cfg(G1, actuators={"g1": realgap_actuator_cfg(G1_ACTUATORS, RATES)})


@configclass
class ActionsCfg:
    # Joint position targets around the default pose: a = 0 is "hold the stance". The raw action is clipped to +-4
    # (agent_cfg.clip_actions), i.e. at most 100 % of peak torque worth of target offset per joint.
    # ramp_s: the nominal pose reached over that many seconds after a reset, from the spawn pose (a lever with another
    # nominal pose, env.actions.joint_pos.offset; 0 as shipped: Isaac Lab's term)
    joint_pos = RampedJointPositionActionCfg(
        asset_name="robot", joint_names=[".*"], scale=G1_ACTION_SCALE, use_default_offset=True, preserve_order=True
    )


@configclass
class ObservationsCfg:
    @configclass
    class PolicyCfg(ObsGroup):
        """What the robot measures (IMU + encoders), with noise sized to those sensors and to the signal of a push.

        A 0.2-0.4 m/s push turns the body at 0.3-0.5 rad/s (v / h, h = 0.76 m) and the ankles and hips by as much, so
        noise of that size hides the very event the policy must react to: the locomotion convention of +-1.5 rad/s on
        joint velocity left the channel carrying noise only (docs/results/balance.md, "What made it learn"). The
        bounds below are still several times the sensors': a MEMS gyro's noise is ~0.005 rad/s at this bandwidth,
        and a 14-bit encoder differenced at 1 kHz is quantized to 2π/2¹⁴·1000 = 0.38 rad/s before any filtering.
        """

        base_ang_vel = ObsTerm(func=mdp.base_ang_vel, noise=Unoise(n_min=-0.05, n_max=0.05))  # rad/s, gyro
        projected_gravity = ObsTerm(func=mdp.projected_gravity, noise=Unoise(n_min=-0.05, n_max=0.05))  # IMU tilt
        joint_pos = ObsTerm(func=mdp.joint_pos_rel, noise=Unoise(n_min=-0.01, n_max=0.01))  # rad, encoder
        joint_vel = ObsTerm(func=mdp.joint_vel_rel, noise=Unoise(n_min=-0.4, n_max=0.4))  # rad/s, differentiated
        actions = ObsTerm(func=mdp.last_action)

        enable_corruption: bool = True
        concatenate_terms: bool = True

    @configclass
    class CriticCfg(ObsGroup):
        """Privileged critic: noise-free state plus what the robot cannot measure (base velocity and height)."""

        base_lin_vel = ObsTerm(func=mdp.base_lin_vel)
        base_ang_vel = ObsTerm(func=mdp.base_ang_vel)
        projected_gravity = ObsTerm(func=mdp.projected_gravity)
        base_height = ObsTerm(func=mdp.base_pos_z)
        joint_pos = ObsTerm(func=mdp.joint_pos_rel)
        joint_vel = ObsTerm(func=mdp.joint_vel_rel)
        actions = ObsTerm(func=mdp.last_action)

        enable_corruption: bool = False
        concatenate_terms: bool = True

    policy: PolicyCfg = PolicyCfg()
    critic: CriticCfg = CriticCfg()


@configclass
class RewardsCfg:
    # -- task: stay up, upright, at stance height (paid from the first step: never worse than standing still)
    alive = RewTerm(func=mdp.is_alive, weight=2.0)
    fall = RewTerm(func=mdp.is_terminated, weight=-100.0)
    upright = RewTerm(func=mdp.flat_orientation_l2, weight=-5.0)
    base_height = RewTerm(func=mdp.base_height_l2, weight=-10.0, params={"target_height": G1_ROOT_HEIGHT})
    # -- settle back to the stance after a push
    stance = RewTerm(func=balance_mdp.nominal_pose_deviation_l1, weight=-0.1)  # from the pose a zero action holds
    base_lin_vel = RewTerm(func=balance_mdp.base_lin_vel_xy_l2, weight=-4.0)  # a 0.3 m/s push: -0.36 of alive's 2
    base_ang_vel = RewTerm(func=mdp.ang_vel_xy_l2, weight=-0.05)
    # -- effort and smoothness (what the motors and the gearboxes pay for)
    torque = RewTerm(func=mdp.joint_torques_l2, weight=-1.0e-5)
    joint_acc = RewTerm(func=mdp.joint_acc_l2, weight=-1.0e-7)
    action_rate = RewTerm(func=mdp.action_rate_l2, weight=-0.01)
    joint_limits = RewTerm(func=mdp.joint_pos_limits, weight=-1.0)


@configclass
class LeverRewardsCfg(RewardsCfg):
    """The task's rewards plus the capture-point and stepping terms studied as levers, each at weight 0 (not computed)
    until a run sets one, e.g. ``--task Realgap-Balance-G1-Levers-v0 --set env.rewards.capture_point.weight=-50``.

    None of them raised Play survival beyond the spread between seeds (docs/results/balance.md), so the shipped tasks
    leave them out.
    """

    # capture point over the feet (ankle, hip or step strategy alike)
    capture_point = RewTerm(
        func=balance_mdp.capture_point_offset_l2,
        weight=0.0,
        params={"feet_cfg": SceneEntityCfg("robot", body_names=list(G1_FOOT_BODIES)), "forward_offset": 0.0},
    )
    # capture point outside the support polygon (zero while the ankles can hold it; a step brings it back)
    capture_support = RewTerm(
        func=balance_mdp.capture_point_outside_support,
        weight=0.0,
        # contact_tolerance: how near the ground a sole point counts as support (a large value counts every point, so
        # the hull is that of both feet wherever they are: a swing foot carried toward the capture point pays at once)
        params={"feet_cfg": SceneEntityCfg("robot", body_names=list(G1_FOOT_BODIES)), "contact_tolerance": 0.01},
    )
    # margin of the capture point inside the support polygon (a reward: a deeper polygon in the worst heading, e.g. a
    # staggered stance, raises the largest push the ankles can take)
    capture_margin = RewTerm(
        func=balance_mdp.capture_point_margin,
        weight=0.0,
        params={"feet_cfg": SceneEntityCfg("robot", body_names=list(G1_FOOT_BODIES))},
    )
    # single support while the capture point lies outside both feet (pays the swing of a step, only when the ankles
    # cannot hold it)
    step_when_needed = RewTerm(
        func=balance_mdp.step_when_needed,
        weight=0.0,
        params={"feet_cfg": SceneEntityCfg("robot", body_names=list(G1_FOOT_BODIES))},
    )
    # one foot lifted above the other while the capture point lies outside both feet (the dense form of the above)
    lift_when_needed = RewTerm(
        func=balance_mdp.lift_when_needed,
        weight=0.0,
        params={"feet_cfg": SceneEntityCfg("robot", body_names=list(G1_FOOT_BODIES))},
    )


@configclass
class TerminationsCfg:
    time_out = DoneTerm(func=mdp.time_out, time_out=True)
    fall_height = DoneTerm(func=mdp.root_height_below_minimum, params={"minimum_height": PROTOCOL.fall_height_m})
    fall_tilt = DoneTerm(func=mdp.bad_orientation, params={"limit_angle": PROTOCOL.fall_tilt_rad})
    non_finite_state = DoneTerm(func=non_finite_state)  # a diverged env is reset and counted, never fed to PPO


@configclass
class EventsCfg:
    reset_base = EventTerm(
        func=mdp.reset_root_state_uniform,
        mode="reset",
        params={
            "pose_range": {"x": (-0.1, 0.1), "y": (-0.1, 0.1), "yaw": (-3.14, 3.14)},
            "velocity_range": {"x": (-0.1, 0.1), "y": (-0.1, 0.1)},
        },
    )
    reset_joints = EventTerm(
        func=mdp.reset_joints_by_offset,
        mode="reset",
        params={"position_range": (-0.05, 0.05), "velocity_range": (0.0, 0.0)},
    )
    push = EventTerm(
        func=push_robot,
        mode="interval",
        interval_range_s=PROTOCOL.push_interval_s,
        params={"magnitude_mps": PROTOCOL.push_mps, "asset_cfg": SceneEntityCfg("robot")},
    )


@configclass
class CurriculumCfg:
    """The task metrics are logged through the curriculum manager (it runs before the resets)."""

    metrics = CurrTerm(func=balance_mdp.balance_metrics, params={"window": 512})


@configclass
class LeverCurriculumCfg(CurriculumCfg):
    """The task's curriculum terms plus the push curriculum, off (``start_mps`` None: the task's pushes from the first
    step) until a run sets it, e.g. ``--set "env.curriculum.push_level.params.start_mps=[0.0,0.2]"`` starts with pushes
    of 0-0.2 m/s and grows them to the task's range by a quarter of the way each time 128 ended episodes survived
    >= 75 %. It spent most of a CPU budget below the task's pushes (docs/results/balance.md), so the shipped tasks leave
    it out."""

    push_level = CurrTerm(
        func=balance_mdp.push_curriculum,
        params={"start_mps": None, "step": 0.25, "promote": 0.75, "demote": 0.4, "min_episodes": 128},
    )


@configclass
class BalanceEnvCfg(ManagerBasedRLEnvCfg):
    """G1 balance under pushes. Rates from :data:`RATES`; change them with ``realgap.envs.run.factory.apply_rates``."""

    sim: SimulationCfg = SimulationCfg(
        device=default_device(),
        dt=RATES.sim_dt,
        render_interval=RATES.decimation,
        physics=newton_physics(njmax=100, nconmax=40),
        use_newton_actuators=False,  # realgap's actuator chain runs on the Isaac Lab side
    )
    scene: BalanceSceneCfg = BalanceSceneCfg(num_envs=256, env_spacing=2.5)
    observations: ObservationsCfg = ObservationsCfg()
    actions: ActionsCfg = ActionsCfg()
    rewards: RewardsCfg = RewardsCfg()
    terminations: TerminationsCfg = TerminationsCfg()
    events: EventsCfg = EventsCfg()
    curriculum: CurriculumCfg = CurriculumCfg()
    decimation: int = RATES.decimation
    episode_length_s: float = PROTOCOL.episode_s
    rates: dict = RATES.to_dict()
    """Physics / control / policy rates and target mode (RateSpec.to_dict()); recorded in every run folder."""

    def play_mode(self) -> None:
        """Evaluation settings, in place: Isaac Lab's (no observation noise) and 32 envs; the pushes stay the task's.
        ``isaaclab play`` calls it on the training id's config; the ``-Play-v0`` ids are built with it."""
        super().play_mode()
        self.scene.num_envs = 32


CROUCH_RAMP_S = 1.0
"""Seconds over which the crouch task's nominal pose moves from the spawn stance to the crouch after each reset, s.

Without the ramp the knee targets jump ~0.9 rad at the first step and the drives knock the robot over before the first
push (docs/results/balance_levers.md)."""


def use_crouch(cfg: BalanceEnvCfg) -> BalanceEnvCfg:
    """Act around the G1's deep crouch (``G1_CROUCH_TARGETS``) instead of the stance, in place; returns ``cfg``.

    The action's offset becomes the crouch's servo targets, reached over :data:`CROUCH_RAMP_S` after each reset, and
    the base-height reward aims at the crouch's pelvis height (``G1_CROUCH_ROOT_HEIGHT``). The spawn pose, pushes,
    episode length and terminations stay the task's. Why: a push of dv moves the capture point by dv * sqrt(c_z / g),
    so a lower centre of mass absorbs larger pushes with the ankles alone.
    """
    cfg.actions.joint_pos.use_default_offset = False
    cfg.actions.joint_pos.offset = dict(G1_CROUCH_TARGETS)
    cfg.actions.joint_pos.ramp_s = CROUCH_RAMP_S
    cfg.rewards.base_height.params["target_height"] = G1_CROUCH_ROOT_HEIGHT
    return cfg


def balance_env_cfg(play: bool = False, crouch: bool = False, levers: bool = False) -> BalanceEnvCfg:
    """The balance task; ``play``: evaluation settings (the same pushes, no observation noise, 32 envs); ``crouch``:
    act around the deep crouch (:func:`use_crouch`, the shipped recipe); ``levers``: with the studied reward and
    curriculum terms, off until set (:class:`LeverRewardsCfg`, :class:`LeverCurriculumCfg`)."""
    cfg = BalanceEnvCfg()
    if crouch:
        use_crouch(cfg)
    if levers:
        cfg.rewards = LeverRewardsCfg()
        cfg.curriculum = LeverCurriculumCfg()
    if play:
        cfg.play_mode()
    return cfg
