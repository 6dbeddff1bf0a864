"""A drawn suite robot built on MuJoCo C: the hidden robot (:class:`~realgap.envs.deploy.hidden_robot.HiddenRobot`)
with the suite's drives, on a plant whose bodies, contacts and (grasp) scene carry the robot's other errors.

Balance (the G1, free base in the export's start pose):

- every link of the robot's tree: density scaled by ``link_mass_scale`` and the mass distribution shifted rigidly by
  ``link_com_shift_m`` (:func:`realgap.envs.dr.inertia_sampling.perturb_log_cholesky` without stretch or shear), then
  a solid box payload fixed to the payload body (:func:`~realgap.envs.dr.inertia_sampling.attach_payload`, the exact
  composite); each body checked physically consistent before it is written;
- the foot colliders' sliding friction and contact time constant (priority 1 over the ground: they set the pair's);
- a drive that holds its PD torque for ``hold_period_steps`` physics steps where the draw says so (a bridge
  receiving commands at that period).

Grasp (the Panda, its table and a new box every episode): the export's scene with the family's object ranges, the
drawn pad friction and a table raised by the drawn error; the pads' contact time constant; gravity compensated by the
robot (the Franka's controller; the runtime's g(q) feed-forward is not sent to a position robot); the object's pose
reported with a constant bias and white noise (:class:`NoisyObjectPose`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import mujoco
import numpy as np
import torch

from realgap.envs.deploy.grasp_scene import MujocoGraspRobot
from realgap.envs.deploy.hidden_robot import HiddenRobot
from realgap.envs.deploy.kinematics import quat_mul
from realgap.envs.deploy.mujoco_robot import MujocoRobot
from realgap.envs.deploy.objects import ObjectPose
from realgap.envs.dr.inertia import BodyInertia, check_consistency
from realgap.envs.dr.inertia_sampling import attach_payload, perturb_log_cholesky
from realgap.envs.eval.suite.draw import RobotDraw, draw_robot
from realgap.envs.eval.suite.schema import Suite, SuiteError, load_suite, task_of
from realgap.envs.format.metadata import PolicyMetadata


def robot_links(model: mujoco.MjModel, root_body: str) -> list[int]:
    """Ids of the bodies of the robot's kinematic tree (the root body's and its descendants; no world, no objects)."""
    root = model.body_rootid[model.body(root_body).id]
    return [b for b in range(1, model.nbody) if model.body_rootid[b] == root]


def _collider_geoms(model: mujoco.MjModel, bodies: Sequence[str], where: str) -> list[int]:
    known = {model.body(b).name for b in range(model.nbody)}
    unknown = sorted(set(bodies) - known)
    if unknown:
        raise SuiteError(f"{where}: the robot has no bodies {unknown}")
    ids = {model.body(b).id for b in bodies}
    return [
        g
        for g in range(model.ngeom)
        if model.geom_bodyid[g] in ids and (model.geom_contype[g] or model.geom_conaffinity[g])
    ]


def _set_contacts(model: mujoco.MjModel, geoms: list[int], friction: float | None, timeconst_s: float) -> None:
    """Sliding friction (None: keep) and solref time constant of ``geoms``; refuse a time constant under two steps."""
    if timeconst_s < 2 * model.opt.timestep:
        raise SuiteError(
            f"contact time constant {timeconst_s:g} s is under two physics steps ({model.opt.timestep:g} s "
            "each): MuJoCo's contact becomes unstable"
        )
    if friction is not None:
        model.geom_friction[geoms, 0] = friction
    model.geom_solref[geoms, 0] = timeconst_s


def perturbed_inertia(
    model: mujoco.MjModel, links: list[int], draw: RobotDraw, payload_body: str
) -> dict[str, BodyInertia]:
    """Link density scale and CoM shift on ``links`` of the nominal ``model``, then the payload box on
    ``payload_body`` (module docstring); by body name, inertia about the CoM in the body frame.

    Raises:
        ValueError: A perturbed body is not physically consistent (cannot happen for valid draws; checked anyway).
    """
    b = draw.body
    rot = np.zeros((len(links), 9))
    for i, body in enumerate(links):
        mujoco.mju_quat2Mat(rot[i], model.body_iquat[body])
    rot_t = torch.from_numpy(rot.reshape(-1, 3, 3))
    principal = torch.diag_embed(torch.from_numpy(model.body_inertia[links].copy()))
    nominal = BodyInertia(
        torch.from_numpy(model.body_mass[links].copy()),
        torch.from_numpy(model.body_ipos[links].copy()),
        rot_t @ principal @ rot_t.transpose(1, 2),
    )
    scale = torch.from_numpy(np.asarray(b["link_mass_scale"], dtype=np.float64))
    shift = torch.from_numpy(np.asarray(b["link_com_shift_m"], dtype=np.float64))
    ones, zeros = torch.ones(len(links), 3, dtype=torch.float64), torch.zeros(len(links), 3, dtype=torch.float64)
    bodies = perturb_log_cholesky(nominal, scale, ones, zeros, shift)
    names = [model.body(i).name for i in links]
    check_consistency(bodies, None, names, "suite link")
    out = {}
    for i, name in enumerate(names):
        one = BodyInertia(bodies.mass[i], bodies.com_b[i], bodies.inertia_c[i])
        if name == payload_body:
            one = attach_payload(
                one,
                torch.tensor(float(b["payload_mass_kg"]), dtype=torch.float64),
                torch.from_numpy(np.asarray(b["payload_offset_m"], dtype=np.float64)),
                torch.from_numpy(np.asarray(b["payload_size_m"], dtype=np.float64)),
            )
            check_consistency(one, None, None, f"suite payload body {payload_body}")
        out[name] = one
    return out


def inertia_edit(bodies: dict[str, BodyInertia]) -> Callable[[mujoco.MjSpec], None]:
    """A spec edit writing ``bodies`` (mass, CoM, full inertia about the CoM in the body frame) before compiling.

    Written in the spec, not into a compiled model: the compiler derives the principal frame and, from it, the bodies'
    bounding volumes for collision and its frame shortcuts; a compiled model edited in place keeps the old ones and
    misses contacts (measured: 2 of 4 foot contacts on a G1 whose principal axes were only relabelled).
    """

    def edit(spec: mujoco.MjSpec) -> None:
        for name, body in bodies.items():
            i_c = body.inertia_c.double().numpy()
            target = spec.body(name)
            target.mass = float(body.mass)
            target.ipos = body.com_b.double().numpy().tolist()
            target.iquat, target.inertia = [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0]  # fullinertia alone
            target.fullinertia = [i_c[0, 0], i_c[1, 1], i_c[2, 2], i_c[0, 1], i_c[0, 2], i_c[1, 2]]
            target.explicitinertial = True

    return edit


def balance_robot(meta: PolicyMetadata, suite: Suite, draw: RobotDraw, hang_m: float | None = None) -> HiddenRobot:
    """The drawn G1, free base in the export's start pose (module docstring); with ``hang_m``, welded that far above
    it instead (the identification motion: feet clear of the ground).

    Raises:
        SuiteError: A body the suite names is not the robot's; a contact time constant under two physics steps.
    """
    nominal = MujocoRobot.for_policy(meta)
    links = robot_links(nominal.model, nominal.imu_body)
    payload = suite.bodies["payload_body"]
    if payload not in {nominal.model.body(i).name for i in links}:
        raise SuiteError(f"{suite.source}: bodies.payload_body: the robot has no body {payload!r}")
    mount = {} if hang_m is None else {"fixed_base": True, "hang_m": hang_m}
    edit = inertia_edit(perturbed_inertia(nominal.model, links, draw, payload))
    sim = MujocoRobot.for_policy(meta, edit_spec=edit, **mount)
    feet = _collider_geoms(sim.model, suite.bodies["foot_bodies"], f"{suite.source}: bodies.foot_bodies")
    _set_contacts(sim.model, feet, draw.body["foot_friction"], draw.body["foot_timeconst_s"])
    period = draw.hold_period_steps
    if meta.rates.decimation % period:
        raise SuiteError(
            f"{suite.source}: hold_period_steps {period} does not divide the policy decimation "
            f"{meta.rates.decimation}: the runtime's commands would not line up with the policy steps"
        )
    return HiddenRobot(meta, truth=draw.truth, noise=draw.noise, sim=sim, hold_period_steps=period)


class NoisyObjectPose(ObjectPose):
    """The scene's object pose as a camera reports it: a constant position bias, white position noise and a white
    rotation (rotation vector, each axis) per reading.

    Args:
        source: The true pose. bias_m: Position bias, m, root frame. pos_noise_m: Position noise std, m.
        rot_noise_rad: Rotation noise std per axis, rad. seed: Seed of the noise.
    """

    def __init__(
        self, source: ObjectPose, bias_m: Sequence[float], pos_noise_m: float, rot_noise_rad: float, seed: int
    ) -> None:
        self.source, self.bias_m = source, np.asarray(bias_m, dtype=np.float64)
        self.pos_noise_m, self.rot_noise_rad = float(pos_noise_m), float(rot_noise_rad)
        self._rng = np.random.default_rng(seed)

    def read_object_pose(self) -> tuple[np.ndarray, np.ndarray]:
        pos, quat = self.source.read_object_pose()
        pos = pos + self.bias_m + self._rng.normal(0.0, self.pos_noise_m, 3)
        if self.rot_noise_rad > 0:
            rv = self._rng.normal(0.0, self.rot_noise_rad, 3)
            angle = float(np.linalg.norm(rv))
            axis = rv / angle if angle > 0 else np.array([1.0, 0.0, 0.0])
            turn = np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])
            quat = quat_mul(turn, np.asarray(quat, dtype=np.float64))
        return pos, quat


def grasp_robot(
    meta: PolicyMetadata, suite: Suite, draw: RobotDraw, family_values: dict
) -> tuple[HiddenRobot, MujocoGraspRobot, NoisyObjectPose]:
    """The drawn Panda cell: the robot (drives), its grasp scene (object, table, pads) and its object-pose source.

    Raises:
        SuiteError: A pad body the suite names is not the robot's; a contact time constant under two physics steps.
    """
    v, b, s = family_values, draw.body, meta.scene
    cx, cy, cz = s.table_center_m
    scene = dataclasses.replace(
        s,
        object_size_range_m=tuple(v["object_size_m"]),
        object_mass_scale=v["object_mass_scale"],
        object_com_shift_m=tuple(v["object_com_shift_m"]),
        object_friction=v["object_friction"],
        pad_friction=(b["pad_friction"], b["pad_friction"]),
        table_center_m=(cx, cy, cz + b["table_height_error_m"]),
    )
    sim = MujocoGraspRobot(
        dataclasses.replace(meta, scene=scene), seed=draw.episode_seed, start_noise=suite.episode["start_noise"]
    )
    # the scene compiles the object with its inertial frame at the body frame (body_sameframe) and then moves its CoM
    # in the compiled model, which MuJoCo ignores under that shortcut (xipos = xpos): turn it off so the CoM acts
    sim.model.body_sameframe[sim.model.body("object").id] = mujoco.mjtSameFrame.mjSAMEFRAME_NONE
    pads = _collider_geoms(sim.model, suite.bodies["pad_bodies"], f"{suite.source}: bodies.pad_bodies")
    _set_contacts(sim.model, pads, None, b["pad_timeconst_s"])
    robot = HiddenRobot(meta, truth=draw.truth, noise=draw.noise, sim=sim, gravity_compensated=True)
    objects = NoisyObjectPose(
        sim, b["object_pos_bias_m"], b["object_pos_noise_m"], b["object_rot_noise_rad"], seed=draw.noise.seed + 1
    )
    return robot, sim, objects


def excitation_robot(meta: PolicyMetadata, suite_path: str, family: str, index: int, hang_m: float) -> HiddenRobot:
    """Robot ``index`` of ``family`` welded ``hang_m`` above its start pose, for the identification motion
    (``realgap deploy --robot suite --excite``; the transfer study's identify-then-train arm).

    The G1 carries every drive, body and sensor error of its draw; the Panda its drives and sensors (no scene: the
    motion runs the bare arm, as the hidden Panda's does, and without the controller's gravity compensation, which the
    identification's model does not know).

    Raises:
        SuiteError: An invalid suite, an unknown family, an index outside it. ValueError: An export of another task or
            robot than the suite's.
    """

    suite = load_suite(suite_path)
    fam = suite.family(family)
    task = task_of(meta)
    if task != suite.task or meta.robot.name != suite.robot:
        raise ValueError(
            f"suite {suite.source} is for the {suite.task} task on robot '{suite.robot}'; the export is "
            f"{task} ({meta.task}) on '{meta.robot.name}'"
        )
    if not 0 <= index < fam.robots:
        raise SuiteError(f"{suite.source}: family {family!r} has robots 0..{fam.robots - 1}, not {index}")
    if suite.task == "grasp":
        draw = draw_robot(suite, fam, index, meta)
        sim = MujocoRobot.for_policy(meta, fixed_base=True, hang_m=hang_m)
        return HiddenRobot(meta, truth=draw.truth, noise=draw.noise, sim=sim)
    nominal = MujocoRobot.for_policy(meta)
    draw = draw_robot(suite, fam, index, meta, len(robot_links(nominal.model, nominal.imu_body)))
    return balance_robot(meta, suite, draw, hang_m=hang_m)
