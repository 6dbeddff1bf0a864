"""A torque-controlled robot on plain MuJoCo C: the test robot behind the deploy runtime (and a sim2sim plant).

Built from the robot description the policy names (``robot.description``: import package, path, hash), edited the
way the training asset was (:mod:`realgap.envs.sim.assets`, :mod:`realgap.envs.sim.actuator`; listed in the metadata's
``simulator.robot_model``):

- the MJCF's ``<position kp=500>`` servos are removed (and the keyframes that set their controls); one ``motor`` per
  joint takes the runtime's torque, so all PD torque comes from the actuator chain;
- joint ``armature`` = the exported armature (``N²·I_m``, less the motor inertia the runtime's chain integrates where
  the transmission is compliant), ``frictionloss`` / ``damping`` = the exported
  Coulomb / viscous friction (when the simulator applied it in training), actuator force range = ± peak torque;
- self-collisions off (the Isaac Lab articulation disables them), a ground plane added with the training ground's
  friction (``simulator.ground``); the MJCF's geoms keep their friction and priority, so each contact pair gets what
  it got in training (``simulator.contacts``: the G1's foot spheres, priority 1, set 0.6 against the ground's 1.0);
- the floating base starts in the exported start pose (feet on the ground); the step is the training physics step.

The solver keeps the MJCF's options (``implicitfast``, pyramidal cone), which are also what the task's Newton
MuJoCo-Warp solver uses (:func:`realgap.envs.sim.physics.newton_physics`). :func:`mjcf_facts` gives the exporter what it
reads from the MJCF (root body, joint types and ranges, the start pose's height).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import mujoco
import numpy as np

from realgap.envs.deploy.robot import ImuState, JointState, Robot
from realgap.envs.format.description import description_sha256, locate_description
from realgap.envs.format.metadata import PolicyMetadata

ROBOT_CONTYPE, ROBOT_CONAFFINITY = 2, 1  # robot geoms collide with the ground (1/1) but not with each other


def _quat_rotate_inverse(q_wxyz: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``R(q)ᵀ·v``: a world vector in the frame of orientation ``q`` (w, x, y, z), unit quaternion."""
    w, x, y, z = q_wxyz
    u = np.array([x, y, z])
    cross = np.array([y * v[2] - z * v[1], z * v[0] - x * v[2], x * v[1] - y * v[0]])  # u × v (np.cross is slow)
    return v * (2.0 * w * w - 1.0) - cross * (2.0 * w) + u * (2.0 * (x * v[0] + y * v[1] + z * v[2]))


class MujocoRobot(Robot):
    """A floating- or fixed-base robot in MuJoCo C driven by joint torques, one :meth:`step` per physics step.

    Args:
        mjcf_path: The robot description (MJCF).
        physics_dt: Physics step, s.
        joint_names: Joints to drive, in the order of every array (default: every hinge/slide joint, model order).
        armature: Reflected inertia by joint, kg·m² (joints not named keep the MJCF's value).
        frictionloss: Coulomb friction by joint, N·m (likewise).
        damping: Viscous friction by joint, N·m·s/rad (likewise).
        effort_limit: Actuator force range ± by joint, N·m (likewise).
        init_root_pos: Start position of the root body, m.
        init_root_quat_wxyz: Start orientation of the root body.
        init_joint_pos: Start joint positions by name, rad (others 0).
        ground_friction: Sliding friction of the ground plane.
        fixed_base: Weld the root body to the world at ``init_root_pos`` (its free joint removed), e.g. for
            contact-free alignment checks with the robot hanging in the air.
        edit_spec: Called with the ``MjSpec`` just before it is compiled, to add a scene (a table, an object) or set
            solver options (:mod:`realgap.envs.deploy.grasp_scene`).
    """

    command_mode = "torque"
    simulated = True

    def __init__(
        self,
        mjcf_path: str | Path,
        physics_dt: float,
        *,
        joint_names: Sequence[str] | None = None,
        armature: Mapping[str, float] | None = None,
        frictionloss: Mapping[str, float] | None = None,
        damping: Mapping[str, float] | None = None,
        effort_limit: Mapping[str, float] | None = None,
        init_root_pos: Sequence[float] = (0.0, 0.0, 0.0),
        init_root_quat_wxyz: Sequence[float] = (1.0, 0.0, 0.0, 0.0),
        init_joint_pos: Mapping[str, float] | None = None,
        ground_friction: float = 1.0,
        fixed_base: bool = False,
        edit_spec: Callable[[mujoco.MjSpec], None] | None = None,
    ) -> None:
        if not physics_dt > 0:
            raise ValueError(f"physics_dt must be > 0 s, got {physics_dt}")
        self.mjcf_path = Path(mjcf_path)
        self._hash = description_sha256(self.mjcf_path)
        spec = mujoco.MjSpec.from_file(str(self.mjcf_path))
        for element in [*spec.actuators, *spec.keys]:
            spec.delete(element)
        if fixed_base:
            for joint in [j for j in spec.joints if j.type == mujoco.mjtJoint.mjJNT_FREE]:
                joint.parent.pos = list(init_root_pos)
                joint.parent.quat = list(init_root_quat_wxyz)
                spec.delete(joint)
        movable = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)
        all_joints = [j.name for j in spec.joints if j.type in movable]
        self._names = tuple(joint_names) if joint_names is not None else tuple(all_joints)
        unknown = sorted(set(self._names) - set(all_joints))
        if unknown:
            raise ValueError(f"{self.mjcf_path.name} has no joints {unknown}")
        for name, value in (armature or {}).items():
            spec.joint(name).armature = float(value)
        for name, value in (frictionloss or {}).items():
            spec.joint(name).frictionloss = float(value)
        for name, value in (damping or {}).items():
            spec.joint(name).damping = [float(value), 0.0, 0.0]  # (linear, quadratic, cubic) coefficients
        for name, limit in (effort_limit or {}).items():
            joint = spec.joint(name)
            joint.actfrclimited = mujoco.mjtLimited.mjLIMITED_TRUE
            joint.actfrcrange = [-float(limit), float(limit)]
        for name in self._names:
            spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)  # motor: force = ctrl
        for geom in spec.geoms:
            if geom.contype or geom.conaffinity:
                geom.contype, geom.conaffinity = ROBOT_CONTYPE, ROBOT_CONAFFINITY
        spec.worldbody.add_geom(
            name="realgap_ground",
            type=mujoco.mjtGeom.mjGEOM_PLANE,
            size=[0.0, 0.0, 0.05],
            friction=[ground_friction, 0.005, 0.0001],
        )
        spec.option.timestep = physics_dt
        robot_free = [j.name for j in spec.joints if j.type == mujoco.mjtJoint.mjJNT_FREE]  # not a scene's objects
        if edit_spec is not None:
            edit_spec(spec)
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        jid = [self.model.joint(n).id for n in self._names]
        self._qadr = np.array([self.model.jnt_qposadr[j] for j in jid])
        self._vadr = np.array([self.model.jnt_dofadr[j] for j in jid])
        free = [self.model.joint(name).id for name in robot_free]
        self.floating = bool(free)
        self._root_body = int(self.model.jnt_bodyid[free[0]]) if free else 1
        self.imu_body = self.model.body(self._root_body).name
        self._init_root = np.concatenate([np.asarray(init_root_pos, float), np.asarray(init_root_quat_wxyz, float)])
        self._init_joints = np.array([float((init_joint_pos or {}).get(n, 0.0)) for n in self._names])
        self.reset()

    @classmethod
    def for_policy(
        cls,
        meta: PolicyMetadata,
        physics_dt: float | None = None,
        pose: Literal["start", "training_spawn"] = "start",
        hang_m: float = 0.0,
        **kwargs,
    ) -> MujocoRobot:
        """The robot the policy was trained on, from the metadata alone: its description, actuator properties, pose.

        Args:
            meta: Exported metadata (robot description, actuator groups, rates, start pose, ground).
            physics_dt: Physics step, s (default: the training physics step).
            pose: ``"start"``: the exported start pose (feet on the ground); ``"training_spawn"``: where training
                resets placed the robot (e.g. to compare with Isaac Lab from the same spawn).
            hang_m: Raise the root this far above the pose, m (with ``fixed_base=True``: the robot hangs, its feet
                clear of the ground, e.g. for an identification motion).
            kwargs: Further :class:`MujocoRobot` arguments.

        Raises:
            DescriptionError: The description's package is not installed (the message names it) or lacks the file.
        """
        return cls(**(cls.policy_kwargs(meta, physics_dt, pose, hang_m) | kwargs))

    @staticmethod
    def policy_kwargs(
        meta: PolicyMetadata,
        physics_dt: float | None = None,
        pose: Literal["start", "training_spawn"] = "start",
        hang_m: float = 0.0,
    ) -> dict:
        """The :class:`MujocoRobot` arguments of :meth:`for_policy` (a subclass adding a scene builds from them)."""
        names = meta.joint_names
        # the simulator (not the chain) applied friction in training: the plant gets it only then
        plant_friction = np.array([not meta.group_of(j)[0].friction_in_chain for j in names])

        def by_joint(field: str, applied: np.ndarray | bool = True) -> dict[str, float]:
            return dict(zip(names, np.where(applied, meta.joint_array(field), 0.0).tolist(), strict=True))

        r = meta.robot
        root_pos, root_quat = (
            (r.start_root_pos, r.start_root_quat_wxyz)
            if pose == "start"
            else (r.spawn_root_pos, r.spawn_root_quat_wxyz)
        )
        root_pos = (root_pos[0], root_pos[1], root_pos[2] + float(hang_m))
        ground = (meta.simulator.get("ground") or {}).get("dynamic_friction")
        return dict(
            mjcf_path=locate_description(r.description),
            physics_dt=meta.rates.sim_dt if physics_dt is None else physics_dt,
            joint_names=meta.joint_names,
            armature=by_joint("armature"),
            frictionloss=by_joint("coulomb_friction", plant_friction),
            damping=by_joint("viscous_friction", plant_friction),
            effort_limit=by_joint("peak_torque"),
            init_root_pos=root_pos,
            init_root_quat_wxyz=root_quat,
            init_joint_pos=dict(zip(meta.joint_names, meta.default_joint_pos, strict=True)),
            ground_friction=1.0 if ground is None else float(ground),
        )

    # -- Robot interface ---------------------------------------------------------------------------------------------
    @property
    def joint_names(self) -> tuple[str, ...]:
        return self._names

    @property
    def control_dt(self) -> float:
        return float(self.model.opt.timestep)

    @property
    def description_hash(self) -> str:
        """SHA-256 of the MJCF and every file it references (as :func:`realgap.envs.sim.assets.description_hash`)."""
        return self._hash

    @property
    def qpos_adr(self) -> np.ndarray:
        """``qpos`` address of each joint of :attr:`joint_names` (a copy), for code that reads the MuJoCo state."""
        return self._qadr.copy()

    @property
    def dof_adr(self) -> np.ndarray:
        """DOF address of each joint of :attr:`joint_names` (a copy): the index of ``qvel`` and ``model.dof_*``."""
        return self._vadr.copy()

    @property
    def start_root_pos_w(self) -> np.ndarray:
        """Where :meth:`reset` places (or welds) the root body, m, world frame (a copy)."""
        return self._init_root[:3].copy()

    def read_joints(self) -> JointState:
        return JointState(self.data.qpos[self._qadr].copy(), self.data.qvel[self._vadr].copy())

    def read_imu(self) -> ImuState:
        if not self.floating:
            return ImuState(np.zeros(3), np.array([0.0, 0.0, -1.0]))
        quat = self.data.qpos[3:7]
        # MuJoCo's free-joint angular velocity is already in the body frame.
        return ImuState(self.data.qvel[3:6].copy(), _quat_rotate_inverse(quat, np.array([0.0, 0.0, -1.0])))

    def send_torques(self, tau: np.ndarray) -> None:
        self.data.ctrl[:] = tau

    def step(self) -> None:
        mujoco.mj_step(self.model, self.data)

    # -- simulation helpers (not part of the Robot interface) ----------------------------------------------------------
    def reset(self) -> None:
        """Back to the spawn pose at rest, time 0, zero torque."""
        mujoco.mj_resetData(self.model, self.data)
        if self.floating:
            self.data.qpos[:7] = self._init_root
        self.data.qpos[self._qadr] = self._init_joints
        mujoco.mj_forward(self.model, self.data)

    @property
    def time(self) -> float:
        """Simulated time since :meth:`reset`, s."""
        return float(self.data.time)

    def root_height(self) -> float:
        """Height of the root body origin, m."""
        return float(self.data.qpos[2]) if self.floating else float(self.data.xpos[self._root_body, 2])

    def tilt(self) -> float:
        """Angle between the root body's z axis and the world vertical, rad."""
        g_b = self.read_imu().projected_gravity_b
        return float(np.arccos(np.clip(-g_b[2], -1.0, 1.0)))

    def push(self, dv_xy: Sequence[float]) -> None:
        """Add a horizontal velocity change to the floating base, m/s (the balance task's push)."""
        if not self.floating:
            raise ValueError("push needs a floating base")
        self.data.qvel[0:2] += np.asarray(dv_xy, dtype=float)

    def lowest_collider_height(self) -> float:
        """Signed distance from the ground plane to the robot's nearest collision geom in the current state, m."""
        m, d = self.model, self.data
        ground = m.geom("realgap_ground").id
        robot = [g for g in range(m.ngeom) if g != ground and (m.geom_contype[g] or m.geom_conaffinity[g])]
        return min(float(mujoco.mj_geomDistance(m, d, ground, g, 10.0, None)) for g in robot)


@dataclass(frozen=True)
class MjcfFacts:
    """What the exporter reads from the MJCF.

    Attributes:
        root_body: Name of the articulation's root body (the free joint's body, else the first body).
        joint_types: ``"hinge"`` or ``"slide"`` per joint.
        pos_lower: Lower joint limit per joint, rad / m (``None``: unlimited). pos_upper: Upper limit.
        start_root_pos: Root position with the lowest collider on the ground (fixed base: the given position), m.
        start_clearance_m: Lowest collider height in that pose, m (``None`` for a fixed base).
    """

    root_body: str
    joint_types: tuple[str, ...]
    pos_lower: tuple[float | None, ...]
    pos_upper: tuple[float | None, ...]
    start_root_pos: tuple[float, float, float]
    start_clearance_m: float | None


def mjcf_facts(
    mjcf_path: str | Path,
    joint_names: Sequence[str],
    joint_pos: Sequence[float],
    root_pos: Sequence[float],
    root_quat_wxyz: Sequence[float],
    fixed_base: bool,
) -> MjcfFacts:
    """Root body, joint types and limits, and the start pose (root lowered until the lowest collider touches z = 0,
    in the joint pose ``joint_pos`` and orientation ``root_quat_wxyz``) of the robot in ``mjcf_path``."""
    pose = dict(zip(joint_names, joint_pos, strict=True))
    robot = MujocoRobot(
        mjcf_path,
        0.005,
        joint_names=joint_names,
        init_root_pos=root_pos,
        init_root_quat_wxyz=root_quat_wxyz,
        init_joint_pos=pose,
        fixed_base=fixed_base,
    )
    m = robot.model
    jid = [m.joint(n).id for n in joint_names]
    types = tuple("slide" if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_SLIDE else "hinge" for j in jid)
    lower = tuple(float(m.jnt_range[j, 0]) if m.jnt_limited[j] else None for j in jid)
    upper = tuple(float(m.jnt_range[j, 1]) if m.jnt_limited[j] else None for j in jid)
    start, clearance = tuple(float(v) for v in root_pos), None
    if not fixed_base:  # to the micrometre: the lowest collider then touches the ground to within 1e-6 m
        start = (start[0], start[1], round(start[2] - robot.lowest_collider_height(), 6))
        robot._init_root[:3] = start
        robot.reset()
        clearance = round(robot.lowest_collider_height(), 6) + 0.0  # + 0.0: no -0.0
    return MjcfFacts(robot.imu_body, types, lower, upper, start, clearance)
