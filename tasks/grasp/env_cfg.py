"""Grasp-and-lift: a fixed-base Franka Panda grasps an object of randomized physics from a table, lifts it to a target
height and holds it there.

The MDP reads as a table below. The action space is a variant (``actions.py``: joint positions, joint position
increments, joint velocities, joint torques, PD + gravity compensation, end-effector pose increments through
differential IK); observations, rewards, terminations, events and the budget are the same for all of them. Build a
variant with :func:`grasp_env_cfg`; every variant records its name, low-level actuator model and rates in
``env_cfg.action_space_info``.

Objects of randomized physics (the task's own variety, every reset): box edges 4–5 cm per axis at 800 kg/m³
(0.05–0.1 kg), perturbed by the ``grasp_nominal`` profile's object ranges: mass ±25 % and CoM ±1 cm per axis with half
the mass moved (consistent inertia by construction, :mod:`realgap.envs.dr.inertia_sampling`); placement ±5 cm, yaw ±45°;
friction of the object (0.4–0.9) and of the finger pads (0.6–1.0) drawn once per env at startup.

The full ``grasp_nominal`` DR profile (robot link inertia, wrist payload, joint friction, actuator gains, command
delay, contact friction and geometry, object pose) plugs in through the standard seam,
``scripts/train.py --dr_profile grasp_nominal`` (``realgap.envs.dr.apply.apply_dr_profile``): its ``dr_*`` event terms
run after the task's own terms; the object's body has one owner, ``reset_object``, which takes the profile's object
payload, collider tolerance and placement ranges as its params, so mass, CoM and inertia always match the collider
(tests/sim/test_grasp_dr_profile.py).
"""

from __future__ import annotations

import dataclasses

import isaaclab.envs.mdp as mdp
import isaaclab.sim as sim_utils
from isaaclab.assets import AssetBaseCfg, RigidObjectCfg
from isaaclab.envs import ManagerBasedRLEnvCfg
from isaaclab.managers import CurriculumTermCfg as CurrTerm
from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import ObservationGroupCfg as ObsGroup
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.managers import SceneEntityCfg
from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.scene import InteractiveSceneCfg
from isaaclab.sensors import ContactSensorCfg
from isaaclab.sim import SimulationCfg
from isaaclab.utils import configclass

from realgap.envs.dr.object import reset_object
from realgap.envs.dr.profile import load_dr_profile
from realgap.envs.rates import load_rate_profile
from realgap.envs.robots.panda import PANDA, PANDA_ACTUATORS, PANDA_ARM_JOINTS
from realgap.envs.sim.actuator import realgap_actuator_cfg
from realgap.envs.sim.nan_guard import non_finite_state
from realgap.envs.sim.physics import default_device, newton_physics
from realgap.envs.sim.scene import robot_cfg
from realgap.tasks.grasp import mdp as grasp_mdp
from realgap.tasks.grasp.actions import ActionSpace, GraspActionsCfg, get_action_space
from realgap.tasks.grasp.reverse_curriculum import reset_from_grasp_states

RATES = load_rate_profile("default")
"""Physics 200 Hz (5 ms: the Panda + cube grasp holds under MuJoCo contacts), servo 200 Hz, policy 50 Hz, hold."""
DR = load_dr_profile("grasp_nominal")
"""The task's nominal randomization profile (configs/dr/grasp_nominal.yaml); the object groups are applied here."""

TABLE_SIZE_M = (0.5, 0.8, 0.2)
TABLE_POS_M = (0.55, 0.0, 0.1)  # robot base at the origin; table from x = 0.3 to 0.8 m
TABLE_TOP_Z = TABLE_POS_M[2] + TABLE_SIZE_M[2] / 2  # 0.2 m
OBJECT_XY_M = (0.5, 0.0)  # nominal object position on the table, 0.5 m in front of the base
OBJECT_MAX_EDGE_M = 0.05  # spawned box; sizes are scaled down from it
OBJECT_SIZE_RANGE_M = ((0.04, 0.05),) * 3  # fits the 8 cm finger opening in any orientation
OBJECT_DENSITY = 800.0  # kg/m³, wood / plastic: 0.1 kg for a 5 cm cube
LIFT_TARGET_M = 0.10  # success: the object at least 10 cm above its resting height ...
HOLD_S = 1.0  # ... for 1 s without interruption
EPISODE_S = 5.0


def _object_group(groups: tuple) -> object:
    return next(g for g in groups if g.asset == "object")


_OBJ_INERTIA = _object_group(DR.payload).randomization()
_OBJ_POSE = _object_group(DR.initial_pose)
_OBJ_FRICTION = _object_group(DR.contact_friction).friction
_PAD_FRICTION = next(g for g in DR.contact_friction if g.asset == "robot").friction
_DEFAULT_SPACE = get_action_space("joint_pos")


def _info(space: ActionSpace) -> dict:
    return {"name": space.name, "low_level": space.low_level, "rates": RATES.to_dict()}


@configclass
class GraspSceneCfg(InteractiveSceneCfg):
    # Static collider cuboid (collision API, no rigid body): declared here, or Newton never imports it.
    table = AssetBaseCfg(
        prim_path="{ENV_REGEX_NS}/Table",
        spawn=sim_utils.CuboidCfg(size=TABLE_SIZE_M, collision_props=sim_utils.UsdPhysicsCollisionCfg()),
        init_state=AssetBaseCfg.InitialStateCfg(pos=TABLE_POS_M),
    )
    # the actuator specs depend on the action space (grasp_env_cfg); joint position targets by default
    robot = robot_cfg(PANDA, actuators={"panda": realgap_actuator_cfg(_DEFAULT_SPACE.specs, RATES)})
    object = RigidObjectCfg(
        prim_path="{ENV_REGEX_NS}/Object",
        spawn=sim_utils.CuboidCfg(
            size=(OBJECT_MAX_EDGE_M,) * 3,
            rigid_props=sim_utils.UsdPhysicsRigidBodyCfg(),
            mass_props=sim_utils.MassCfg(mass=OBJECT_DENSITY * OBJECT_MAX_EDGE_M**3),
            collision_props=sim_utils.UsdPhysicsCollisionCfg(),
        ),
        init_state=RigidObjectCfg.InitialStateCfg(pos=(*OBJECT_XY_M, TABLE_TOP_Z + OBJECT_MAX_EDGE_M / 2 + 0.001)),
    )
    # Finger pads vs the object: normal force, contact point and normal for the contact modes.
    finger_contact = ContactSensorCfg(
        prim_path="{ENV_REGEX_NS}/Robot/Geometry/.*/hand/(left|right)_finger",
        filter_prim_paths_expr=["{ENV_REGEX_NS}/Object"],
        track_contact_points=True,
    )


@configclass
class ObservationsCfg:
    @configclass
    class PolicyCfg(ObsGroup):
        """Encoders (arm and fingers) and the object pose from a perception system, all in the robot base frame."""

        joint_pos = ObsTerm(func=mdp.joint_pos_rel)  # rad / m from the default pose
        joint_vel = ObsTerm(func=mdp.joint_vel_rel)  # rad/s, m/s
        tcp_pos = ObsTerm(func=grasp_mdp.tcp_pos_b)  # m
        object_pos = ObsTerm(func=grasp_mdp.object_pos_b)  # m
        object_quat = ObsTerm(func=grasp_mdp.object_quat_b)  # (x, y, z, w)
        object_to_tcp = ObsTerm(func=grasp_mdp.object_to_tcp_b)  # m
        actions = ObsTerm(func=mdp.last_action)

        enable_corruption: bool = False
        concatenate_terms: bool = True

    policy: PolicyCfg = PolicyCfg()


ARM_SPEED_LIMITS: dict[str, float] = {
    expr: spec.velocity_limit
    for spec in PANDA_ACTUATORS.values()
    if "finger" not in spec.name
    for expr in spec.joint_names_expr
}
"""Arm joint velocity limits, rad/s (Franka's interface limits: 2.175 for joints 1-4, 2.61 for 5-7)."""


@configclass
class RewardsCfg:
    # -- task, dense to sparse (Isaac Lab's lift task as the model): reach, pinch, raise, hold at the target height
    reach = RewTerm(func=grasp_mdp.tcp_object_distance, weight=1.0, params={"std": 0.2})  # 0.1 at 30 cm, 0.9 at 2 cm
    # grasp also classifies the contact mode every step (logged by the metrics term): keep its weight non-zero
    grasp = RewTerm(func=grasp_mdp.grasp_contact, weight=2.0, params={"sensor_name": "finger_contact"})
    # staged: from the first millimetre while pinched (the bridge from grasp to lift), then ungated from 2 cm
    grasped_lift = RewTerm(func=grasp_mdp.lift_while_pinched, weight=5.0, params={"lift_target_m": LIFT_TARGET_M})
    lift = RewTerm(func=grasp_mdp.lift_progress, weight=10.0, params={"lift_target_m": LIFT_TARGET_M})  # from 2 cm
    # hold: 1 while the object is at the target height; also counts the hold time of the success metric
    hold = RewTerm(func=grasp_mdp.lift_hold, weight=10.0, params={"lift_target_m": LIFT_TARGET_M, "hold_s": HOLD_S})
    # -- smoothness
    action_rate = RewTerm(func=mdp.action_rate_l2, weight=-1.0e-3)
    joint_vel = RewTerm(
        func=mdp.joint_vel_l2, weight=-1.0e-4, params={"asset_cfg": SceneEntityCfg("robot", joint_names="joint.*")}
    )


@configclass
class LeverRewardsCfg(RewardsCfg):
    """The task's rewards plus the speed-margin penalty studied as a lever, at weight 0 (not computed) until a run
    sets it (``--set env.rewards.speed_margin.weight=-2.0``): a penalty from 0.7 x the speed reflex's limit up, 1 per
    joint at it. Its measured effect is within the run-to-run spread (docs/results/grasp.md), so the shipped tasks
    leave it out.
    """

    speed_margin = RewTerm(
        func=grasp_mdp.joint_speed_margin, weight=0.0, params={"limits_rad_s": ARM_SPEED_LIMITS, "onset": 0.7}
    )


@configclass
class TerminationsCfg:
    time_out = DoneTerm(func=mdp.time_out, time_out=True)
    object_dropped = DoneTerm(  # off the table
        func=mdp.root_height_below_minimum,
        params={"minimum_height": TABLE_TOP_Z - 0.05, "asset_cfg": SceneEntityCfg("object")},
    )
    # the real arm stops with a reflex error when a joint crosses its velocity limit: so does the episode
    joint_speed_reflex = DoneTerm(func=grasp_mdp.joint_speed_reflex, params={"limits_rad_s": ARM_SPEED_LIMITS})
    # a diverged env (NaN / Inf in the robot's or the object's state) is reset and counted, never fed to PPO
    non_finite_robot = DoneTerm(func=non_finite_state)
    non_finite_object = DoneTerm(func=non_finite_state, params={"asset_cfg": SceneEntityCfg("object")})


@configclass
class EventsCfg:
    """The task's own events, in order (a DR profile's ``dr_*`` terms are appended after them)."""

    reset_scene = EventTerm(func=mdp.reset_scene_to_default, mode="reset", params={"reset_joint_targets": True})
    reset_arm = EventTerm(
        func=mdp.reset_joints_by_offset,
        mode="reset",
        params={
            "position_range": (-0.05, 0.05),
            "velocity_range": (0.0, 0.0),
            "asset_cfg": SceneEntityCfg("robot", joint_names=list(PANDA_ARM_JOINTS)),
        },
    )
    reset_object = EventTerm(
        func=reset_object,
        mode="reset",
        params={
            "spawned_size_m": (OBJECT_MAX_EDGE_M,) * 3,
            "size_range_m": OBJECT_SIZE_RANGE_M,
            "density_kg_m3": OBJECT_DENSITY,
            "inertia": dataclasses.asdict(_OBJ_INERTIA),
            "table_top_z": TABLE_TOP_Z,
            "position_range_m": _OBJ_POSE.position_m,
            "yaw_range_rad": _OBJ_POSE.yaw_rad,
            "object_cfg": SceneEntityCfg("object"),
        },
    )
    # the reverse curriculum's slot, after the object's reset: empty in the shipped tasks, filled in LeverEventsCfg
    reset_from_states: EventTerm | None = None
    object_friction = EventTerm(
        func=mdp.randomize_rigid_body_material,
        mode="startup",
        params={
            "asset_cfg": SceneEntityCfg("object"),
            "static_friction_range": _OBJ_FRICTION,
            "dynamic_friction_range": _OBJ_FRICTION,
            "restitution_range": (0.0, 0.0),
            "num_buckets": 64,
        },
    )
    pad_friction = EventTerm(
        func=mdp.randomize_rigid_body_material,
        mode="startup",
        params={
            "asset_cfg": SceneEntityCfg("robot", body_names=".*_finger"),
            "static_friction_range": _PAD_FRICTION,
            "dynamic_friction_range": _PAD_FRICTION,
            "restitution_range": (0.0, 0.0),
            "num_buckets": 64,
        },
    )


@configclass
class LeverEventsCfg(EventsCfg):
    """The task's events plus the reverse curriculum, off (``fraction`` 0) until a run sets it, e.g.
    ``--set env.events.reset_from_states.params.fraction=0.5``: that share of *training* resets starts from a state
    recorded along the scripted grasp (tasks/grasp/reverse_curriculum.py). It is what made the absolute joint-target
    interfaces lift (docs/results/grasp.md); the recommended interface learns without it, so the shipped tasks leave
    it out."""

    reset_from_states = EventTerm(
        func=reset_from_grasp_states,
        mode="reset",
        params={"fraction": 0.0, "path": None, "phases": None, "object_term": "reset_object"},
    )


@configclass
class CurriculumCfg:
    metrics = CurrTerm(func=grasp_mdp.grasp_metrics, params={"contact_term": "grasp", "hold_term": "hold"})


@configclass
class GraspEnvCfg(ManagerBasedRLEnvCfg):
    """Panda grasp-and-lift with joint position targets; :func:`grasp_env_cfg` builds every action space."""

    sim: SimulationCfg = SimulationCfg(
        device=default_device(),
        dt=RATES.sim_dt,
        render_interval=RATES.decimation,
        physics=newton_physics(njmax=250, nconmax=64),  # Panda + table + cube overflowed at 178 / 50 (measured)
        use_newton_actuators=False,  # realgap's actuator chain runs on the Isaac Lab side
    )
    scene: GraspSceneCfg = GraspSceneCfg(num_envs=256, env_spacing=2.0)
    episode_success: object = grasp_mdp.episode_success
    """Per-env outcome of the last ended episode, for evaluation (balance tasks have none: success = survival)."""
    observations: ObservationsCfg = ObservationsCfg()
    actions: GraspActionsCfg = GraspActionsCfg(arm=_DEFAULT_SPACE.arm_action())
    rewards: RewardsCfg = RewardsCfg()
    terminations: TerminationsCfg = TerminationsCfg()
    events: EventsCfg = EventsCfg()
    curriculum: CurriculumCfg = CurriculumCfg()
    decimation: int = RATES.decimation
    episode_length_s: float = EPISODE_S
    rates: dict = RATES.to_dict()
    """Physics / control / policy rates and target mode (RateSpec.to_dict()); recorded in every run folder."""
    action_space_info: dict = _info(_DEFAULT_SPACE)
    """``{"name", "low_level", "rates"}``: the arm action space, its low-level actuator model in words, and the
    physics / control / policy rates (``RateSpec.to_dict()``) it was built with."""

    def play_mode(self) -> None:
        """Evaluation settings, in place: Isaac Lab's (no observation noise), 32 envs, the task's normal resets only
        (never the reverse curriculum). ``isaaclab play`` calls it; the ``-Play-v0`` ids are built with it."""
        super().play_mode()
        self.scene.num_envs = 32
        self.events.reset_from_states = None


def grasp_env_cfg(action_space: str = "joint_pos", play: bool = False, levers: bool = False) -> GraspEnvCfg:
    """The grasp task with the arm action space ``action_space`` (a key of ``actions.ACTION_SPACES``).

    Args:
        action_space: ``joint_pos``, ``joint_pos_delta``, ``joint_vel``, ``joint_torque``, ``joint_pd_gravity`` or
            ``ee_pose_delta``.
        play: Evaluation settings (32 envs; never the reverse curriculum).
        levers: With the terms studied as levers, off until set (:class:`LeverRewardsCfg`, :class:`LeverEventsCfg`).

    Raises:
        ValueError: Unknown action space; the message lists the known ones.
    """
    space = get_action_space(action_space)
    cfg = GraspEnvCfg()
    cfg.actions.arm = space.arm_action()
    cfg.scene.robot.actuators = {"panda": realgap_actuator_cfg(space.specs, RATES)}
    cfg.action_space_info = _info(space)
    if levers:
        cfg.rewards = LeverRewardsCfg()
        cfg.events = LeverEventsCfg()
    if play:
        cfg.play_mode()
    return cfg
