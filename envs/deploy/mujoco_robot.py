"""A torque-controlled robot on plain MuJoCo C: the test robot behind the deploy runtime (and a sim2sim plant).

Built from the *same* robot description file the Isaac Lab asset was converted from (the Menagerie MJCF), edited the
way the training asset was (:mod:`realgap.envs.assets`, :mod:`realgap.actuators.lab`):

- the MJCF's ``<position kp=500>`` servos are removed (and the keyframes that set their controls); one ``motor`` per
  joint takes the runtime's torque, so all PD torque comes from the actuator chain;
- joint ``armature`` = the spec's reflected rotor inertia ``N²·I_m``, ``frictionloss`` / ``damping`` = the spec's
  Coulomb / viscous friction (when the chain did not model friction itself), actuator force range = ± peak torque;
- self-collisions off (the Isaac Lab articulation disables them), a ground plane added (friction 1, as the task's
  ground material; MuJoCo takes the larger geom friction, so the MJCF's foot friction applies where it is larger);
- the floating base starts at the training spawn pose; the step is the training physics step.

The solver keeps the MJCF's options (``implicitfast``, pyramidal cone), which are also what the task's Newton
MuJoCo-Warp solver uses (:func:`realgap.envs.physics.newton_physics`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import mujoco
import numpy as np

from realgap.envs.deploy.metadata import PolicyMetadata
from realgap.envs.deploy.robot import ImuState, JointState, Robot

_ROBOT_CONTYPE, _ROBOT_CONAFFINITY = 2, 1  # robot geoms collide with the ground (1/1) but not with each other


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
    ) -> None:
        if not physics_dt > 0:
            raise ValueError(f"physics_dt must be > 0 s, got {physics_dt}")
        self.mjcf_path = Path(mjcf_path)
        self._hash = hashlib.sha256(self.mjcf_path.read_bytes()).hexdigest()
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
                geom.contype, geom.conaffinity = _ROBOT_CONTYPE, _ROBOT_CONAFFINITY
        spec.worldbody.add_geom(name="realgap_ground", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0.0, 0.0, 0.05],
                                friction=[ground_friction, 0.005, 0.0001])  # fmt: skip
        spec.option.timestep = physics_dt
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        jid = [self.model.joint(n).id for n in self._names]
        self._qadr = np.array([self.model.jnt_qposadr[j] for j in jid])
        self._vadr = np.array([self.model.jnt_dofadr[j] for j in jid])
        free = [j for j in range(self.model.njnt) if self.model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
        self.floating = bool(free)
        self._root_body = int(self.model.jnt_bodyid[free[0]]) if free else 1
        self._init_root = np.concatenate([np.asarray(init_root_pos, float), np.asarray(init_root_quat_wxyz, float)])
        self._init_joints = np.array([float((init_joint_pos or {}).get(n, 0.0)) for n in self._names])
        self.reset()

    @classmethod
    def for_policy(cls, meta: PolicyMetadata, physics_dt: float | None = None, **kwargs) -> MujocoRobot:
        """The robot the policy was trained on, with the training actuator properties and spawn pose.

        Args:
            meta: Exported metadata (robot name, specs, rates, spawn pose).
            physics_dt: Physics step, s (default: the training physics step).
            kwargs: Further :class:`MujocoRobot` arguments.

        Raises:
            KeyError: ``meta.robot.name`` is not a known realgap robot.
        """
        from realgap.envs.robots import ROBOTS

        if meta.robot.name not in ROBOTS:
            raise KeyError(f"unknown robot '{meta.robot.name}'; known: {sorted(ROBOTS)}")
        armature, friction, damping, limit = {}, {}, {}, {}
        for group in meta.actuator_groups:
            for joint, spec in zip(group.joint_names, group.actuator_specs(), strict=True):
                armature[joint], limit[joint] = spec.reflected_inertia, spec.peak_torque
                plant_friction = not group.friction_in_chain  # the simulator, not the chain, applied it in training
                friction[joint] = spec.coulomb_friction if plant_friction else 0.0
                damping[joint] = spec.viscous_friction if plant_friction else 0.0
        return cls(
            ROBOTS[meta.robot.name].mjcf_path(), meta.rates.sim_dt if physics_dt is None else physics_dt,
            joint_names=meta.joint_names, armature=armature, frictionloss=friction, damping=damping,
            effort_limit=limit, init_root_pos=meta.robot.init_root_pos,
            init_root_quat_wxyz=meta.robot.init_root_quat_wxyz,
            init_joint_pos=dict(zip(meta.joint_names, meta.default_joint_pos, strict=True)), **kwargs,
        )  # fmt: skip

    # -- Robot interface ---------------------------------------------------------------------------------------------
    @property
    def joint_names(self) -> tuple[str, ...]:
        return self._names

    @property
    def control_dt(self) -> float:
        return float(self.model.opt.timestep)

    @property
    def description_hash(self) -> str:
        """SHA-256 of the MJCF file (as :func:`realgap.envs.assets.description_hash`)."""
        return self._hash

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
