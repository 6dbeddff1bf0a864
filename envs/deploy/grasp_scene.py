"""The grasp on plain MuJoCo C: the export's Panda, table and object built from its metadata alone, run by the runtime.

:class:`MujocoGraspRobot` is the :class:`~realgap.envs.deploy.mujoco_robot.MujocoRobot` of the export plus the scene
its ``scene`` facts describe (:class:`realgap.envs.format.scene.SceneFacts`): the table box, and a free box object
redrawn every episode — edge lengths, mass from the density and mass scale, a centre of mass shifted by moving a lump
of the mass from the CoM (training's consistent body: the solid box's inertia plus the lump's parallel-axis term), the
object's friction and each finger geom's own pad friction, the placement on the table and the yaw. It reports the
object's true pose (:class:`ObjectPose`). Solver settings follow the export's ``simulator.solver`` (cone, iterations,
tolerance, impratio).

:func:`run_grasp_episode` runs one episode through :class:`~realgap.envs.deploy.runtime.DeployRuntime` and judges it
by the export's success test (lift above the drawn box's rest height for ``hold_steps`` policy steps), its drop rule
and the arm's joint-speed reflex (the datasheet velocity limits on the peak speed of every physics step, as training's
termination).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np

from realgap.envs.deploy.kinematics import quat_conj, quat_mul, rotate
from realgap.envs.deploy.mujoco_robot import ROBOT_CONAFFINITY, ROBOT_CONTYPE, MujocoRobot
from realgap.envs.deploy.objects import ObjectPose
from realgap.envs.deploy.runtime import DeployRuntime
from realgap.envs.format.metadata import PolicyMetadata
from realgap.envs.format.scene import SceneFacts
from realgap.envs.format.stats import wilson_interval

SCENE_CONTYPE = SCENE_CONAFFINITY = (
    1 | ROBOT_CONTYPE | ROBOT_CONAFFINITY
)  # table and object touch the robot and each other


class MujocoGraspRobot(MujocoRobot, ObjectPose):
    """The export's robot with its table and object (module docstring); :meth:`reset` draws a new object.

    Args:
        meta: An export with ``scene`` facts.
        seed: Seed of the object draws and the arm's start noise.
        start_noise: Add training's reset noise (``scene.start.arm_joint_noise_rad``) to the arm's start pose (the
            comparison with Isaac Lab's evaluation); False: start at ``joints.default_pos`` as a robot does.

    Raises:
        ValueError: The export has no scene facts.
    """

    def __init__(self, meta: PolicyMetadata, seed: int = 0, start_noise: bool = True) -> None:
        if meta.scene is None:
            raise ValueError(
                f"{meta.task}: the export has no scene facts (a manipulation export upgraded with "
                "scripts/export.py --upgrade has them)"
            )
        self.scene: SceneFacts = meta.scene
        self._rng = np.random.default_rng(seed)
        self._noise = start_noise
        self._peak_speed: np.ndarray | None = None  # arm |q̇| peak since the reflex last looked (arm_speed_exceeded)
        solver = meta.simulator.get("solver") or {}
        self._arm = np.array(
            [meta.joint_names.index(j) for t in meta.actions.terms if t.type == "ee_pose_delta" for j in t.joint_names],
            dtype=np.int64,
        )
        self.speed_limit = meta.joint_array("velocity_limit", [meta.joint_names[i] for i in self._arm])

        def edit(spec: mujoco.MjSpec) -> None:
            s = self.scene
            spec.worldbody.add_geom(
                name="table",
                type=mujoco.mjtGeom.mjGEOM_BOX,
                pos=list(s.table_center_m),
                size=[v / 2 for v in s.table_size_m],
                contype=SCENE_CONTYPE,
                conaffinity=SCENE_CONAFFINITY,
            )
            body = spec.worldbody.add_body(name="object")
            body.simple = False  # its inertial frame moves with every draw: no compile-time shortcut for it
            body.add_freejoint(name="object_free")
            half = [r[1] / 2 for r in s.object_size_range_m]
            body.add_geom(
                name="object",
                type=mujoco.mjtGeom.mjGEOM_BOX,
                size=half,
                mass=0.1,
                contype=SCENE_CONTYPE,
                conaffinity=SCENE_CONAFFINITY,
            )
            if solver.get("cone") == "pyramidal":
                spec.option.cone = mujoco.mjtCone.mjCONE_PYRAMIDAL
            for key in ("iterations", "ls_iterations", "tolerance", "impratio"):
                if solver.get(key) is not None:
                    setattr(spec.option, key, solver[key])

        super().__init__(**MujocoRobot.policy_kwargs(meta), edit_spec=edit)
        m = self.model
        self._obj_body, self._obj_geom = m.body("object").id, m.geom("object").id
        self._obj_qadr = m.jnt_qposadr[m.joint("object_free").id]
        self._obj_vadr = m.jnt_dofadr[m.joint("object_free").id]
        self._pads = [
            g
            for g in range(m.ngeom)
            if "finger" in m.body(m.geom_bodyid[g]).name and (m.geom_contype[g] or m.geom_conaffinity[g])
        ]
        self.size_m = np.array([r[1] for r in self.scene.object_size_range_m])
        self.reset()

    # -- the object -------------------------------------------------------------------------------------------------
    def _draw_object(self) -> None:
        """A new box: size, consistent mass / CoM / inertia, friction, placement (module docstring)."""
        s, m, u = self.scene, self.model, self._rng.uniform
        size = np.array([u(lo, hi) for lo, hi in s.object_size_range_m])
        mass = s.object_density_kg_m3 * float(np.prod(size)) * u(*s.object_mass_scale)
        com = np.array([u(lo, hi) for lo, hi in s.object_com_shift_m])
        f = s.object_com_moved_fraction
        com = f * np.clip(com / f, -size / 2, size / 2)  # the moved lump f·m sits at c/f: the CoM lands at c
        # training's body (envs/dr/inertia_sampling.shift_com): the solid box's inertia about its CoM, plus the lump
        # f·m taken from the CoM and moved by c/f: I_C = I_box(m) + m·(1 − f)/f·(|c|²·1 − c·cᵀ)
        inertia = (
            mass
            / 12
            * np.array([size[1] ** 2 + size[2] ** 2, size[0] ** 2 + size[2] ** 2, size[0] ** 2 + size[1] ** 2])
        )
        full = np.diag(inertia) + mass * (1 - f) / f * (com @ com * np.eye(3) - np.outer(com, com))
        m.body_mass[self._obj_body] = mass
        # the compiled model marked the body's inertial frame as its own frame: clear that, or the CoM shift is ignored
        m.body_sameframe[self._obj_body] = mujoco.mjtSameFrame.mjSAMEFRAME_NONE
        m.body_ipos[self._obj_body] = com
        m.body_inertia[self._obj_body] = np.linalg.eigvalsh(full)  # principal moments...
        m.body_iquat[self._obj_body] = _principal_quat(full)  # ...along the principal axes
        m.geom_size[self._obj_geom] = size / 2
        m.geom_rbound[self._obj_geom] = float(np.linalg.norm(size / 2))
        m.geom_aabb[self._obj_geom, 3:] = size / 2
        m.geom_friction[self._obj_geom, 0] = u(*s.object_friction)
        m.geom_friction[self._pads, 0] = self._rng.uniform(*s.pad_friction, len(self._pads))  # per geom, as training
        # the contacts' softness scales with the bodies' inverse weights (body_invweight0), which MuJoCo computes from
        # the masses once: recompute them for the new object, as training's engine does after every mass draw
        if getattr(self, "_const_data", None) is None:  # mj_setConst's scratch (it overwrites the state it is given)
            self._const_data = mujoco.MjData(m)
        mujoco.mj_setConst(m, self._const_data)
        self.size_m = size
        xy = np.array(s.object_nominal_xy_m) + [u(*s.object_position_range_m[0]), u(*s.object_position_range_m[1])]
        yaw = u(*s.object_yaw_range_rad)
        q = self.data.qpos
        q[self._obj_qadr : self._obj_qadr + 3] = [*xy, s.table_top_z_m + size[2] / 2 + s.object_clearance_m]
        q[self._obj_qadr + 3 : self._obj_qadr + 7] = [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]
        self.data.qvel[self._obj_vadr : self._obj_vadr + 6] = 0.0

    def reset(self) -> None:
        """Start pose (plus training's arm noise when asked), a new object on the table, all at rest."""
        super().reset()
        self._peak_speed = None
        if not hasattr(self, "_obj_body"):
            return  # the base class resets once while it is being built
        if self._noise:
            lo, hi = self.scene.arm_joint_noise_rad
            self.data.qpos[self._qadr[self._arm]] += self._rng.uniform(lo, hi, len(self._arm))
        self._draw_object()
        mujoco.mj_forward(self.model, self.data)

    def read_object_pose(self) -> tuple[np.ndarray, np.ndarray]:
        root_p, root_q = self.data.xpos[self._root_body], self.data.xquat[self._root_body]
        p_w, q_w = self.data.xpos[self._obj_body], self.data.xquat[self._obj_body]
        return rotate(quat_conj(root_q), p_w - root_p), quat_mul(quat_conj(root_q), q_w)

    def object_lift_m(self) -> float:
        """Height of the object's centre above its resting height on the table, m."""
        return float(self.data.xpos[self._obj_body, 2] - (self.scene.table_top_z_m + self.size_m[2] / 2))

    def step(self) -> None:
        super().step()
        speed = np.abs(self.read_joints().vel[self._arm])  # the reflex watches every physics step
        self._peak_speed = speed if self._peak_speed is None else np.maximum(self._peak_speed, speed)

    def arm_speed_exceeded(self) -> bool:
        """True when an arm joint moved faster than its datasheet limit at any physics step since the last call (the
        Franka's reflex, checked every controller cycle)."""
        peak, self._peak_speed = self._peak_speed, None
        speed = np.abs(self.read_joints().vel[self._arm]) if peak is None else peak
        return bool((speed > self.speed_limit).any())


def _principal_quat(inertia: np.ndarray) -> np.ndarray:
    """Orientation (w, x, y, z) of the principal axes of a symmetric 3 × 3 inertia, eigenvalues ascending."""
    _, vecs = np.linalg.eigh(inertia)
    if np.linalg.det(vecs) < 0:
        vecs[:, 2] = -vecs[:, 2]
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, vecs.reshape(-1))
    return quat


@dataclass(frozen=True)
class GraspEpisode:
    """One grasp episode's outcome.

    Attributes:
        success: The export's success test passed (lift held for ``hold_steps`` policy steps).
        steps: Policy steps run (the episode stops at success, a drop, a reflex or its length).
        max_lift_m: Highest lift of the object above its rest height, m.
        ended_by: ``"success"``, ``"drop"``, ``"reflex"`` or ``"time_out"``.
    """

    success: bool
    steps: int
    max_lift_m: float
    ended_by: str


def run_grasp_episode(
    runtime: DeployRuntime, robot: MujocoGraspRobot, scene_robot: MujocoGraspRobot | None = None
) -> GraspEpisode:
    """Reset robot and runtime, then run policy steps until the episode is decided (see :class:`GraspEpisode`).

    The outcome is sticky at success as in training, so stopping there does not change it. ``scene_robot``: the grasp
    scene when ``robot`` is another robot wrapped around it (the held-out suite's perturbed drives); default ``robot``.
    """
    scene_robot = robot if scene_robot is None else scene_robot
    scene = scene_robot.scene
    robot.reset()
    runtime.reset()
    hold, best = 0, -math.inf
    for k in range(1, scene.episode_steps + 1):
        runtime.step()
        lift = scene_robot.object_lift_m()
        best = max(best, lift)
        hold = hold + 1 if lift >= scene.lift_target_m else 0
        if hold >= scene.hold_steps:
            return GraspEpisode(True, k, best, "success")
        if lift + scene.table_top_z_m + scene_robot.size_m[2] / 2 < scene.drop_below_z_m:  # the object's origin
            return GraspEpisode(False, k, best, "drop")
        if scene_robot.arm_speed_exceeded():
            return GraspEpisode(False, k, best, "reflex")
    return GraspEpisode(False, scene.episode_steps, best, "time_out")


def grasp_report(
    meta: PolicyMetadata, policy: object, episodes: int, seed: int = 0, start_noise: bool = True, progress: bool = False
) -> dict:
    """Run ``episodes`` grasp episodes of ``policy`` on the MuJoCo grasp scene; success rate, Wilson interval, endings.

    Args:
        meta: An export with scene facts. policy: Observation → action (``OnnxPolicy`` or ``ZeroPolicy``).
        episodes: Number of episodes (each draws a new object and start from ``seed``'s stream).
        seed: Seed of the object draws, the start noise and the simulated command delay.
        start_noise: Training's arm start noise (as Isaac Lab's evaluation resets); False: the default pose.
        progress: Print one line per episode.
    """
    robot = MujocoGraspRobot(meta, seed=seed, start_noise=start_noise)
    runtime = DeployRuntime(meta, robot, policy, seed=seed)
    results = []
    for k in range(episodes):
        res = run_grasp_episode(runtime, robot)
        results.append(res)
        if progress:
            print(
                f"episode {k + 1}/{episodes}: {res.ended_by} after {res.steps} steps, max lift "
                f"{res.max_lift_m * 100:.1f} cm",
                flush=True,
            )
    wins = sum(r.success for r in results)
    lo, hi = wilson_interval(wins, episodes)
    endings = {e: sum(r.ended_by == e for r in results) for e in ("success", "drop", "reflex", "time_out")}
    return {
        "episodes": episodes,
        "successes": wins,
        "success_rate": wins / episodes,
        "wilson95": [lo, hi],
        "endings": endings,
        "seed": seed,
        "start_noise": start_noise,
        "mean_steps_to_success": (sum(r.steps for r in results if r.success) / wins) if wins else None,
    }
