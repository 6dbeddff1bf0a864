"""Where a manipulation policy's object comes from on a robot, and the grasp task's observation terms built from it.

:class:`ObjectPose` is the one thing the runtime asks of a perception stack: the pose of the object's frame in the
robot's root body frame (``robot.root_body``), the frame the policy observes it in. A real cell gets it from a
calibrated camera or motion capture; the MuJoCo grasp scene (:mod:`realgap.envs.deploy.grasp_scene`) reports the
simulator's ground truth. The object's frame is the one the export's scene facts name (the cuboid's centre, axes along
its edges).

The grasp terms (:func:`grasp_terms`) are the numpy twins of ``realgap.tasks.grasp.mdp``'s ``tcp_pos_b``,
``object_pos_b``, ``object_quat_b`` (x, y, z, w, as Isaac Lab 3 writes quaternions) and ``object_to_tcp_b``
(object minus tool centre point); the tool centre point comes from forward kinematics of the measured joints.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

import numpy as np

from realgap.envs.deploy.kinematics import RobotKinematics
from realgap.envs.deploy.observations import Readings, TermFn, UnsupportedObservationError
from realgap.envs.format.description import locate_description
from realgap.envs.format.metadata import PolicyMetadata

GRASP_MDP = "realgap.tasks.grasp.mdp"


class ObjectPose(abc.ABC):
    """A source of the object's pose."""

    @abc.abstractmethod
    def read_object_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """Latest position (m) and orientation (w, x, y, z) of the object's frame in the robot's root body frame.

        Shape:
            ``(3,)``, ``(4,)``.
        """


class MissingObjectPoseError(ValueError):
    """The policy observes an object and no :class:`ObjectPose` source was given."""


def grasp_terms(
    kinematics: RobotKinematics, objects: ObjectPose | None, tcp_body: str, tcp_offset: Sequence[float]
) -> dict[str, tuple[TermFn, int]]:
    """The grasp task's observation functions by exported ``func``, for :class:`ObservationBuilder`'s extra terms.

    Args:
        kinematics: Forward kinematics of the robot (the export's MJCF, joint order).
        objects: The object's pose source (``None``: the object terms raise :class:`MissingObjectPoseError` when the
            builder is made, through a function that is never called).
        tcp_body: Body of the tool centre point (e.g. ``hand``).
        tcp_offset: Position of the tool centre point in that body's frame, m.
    """

    def tcp(r: Readings) -> np.ndarray:
        return kinematics.frame_pose(r.joints.pos, tcp_body, tcp_offset)[0]

    def obj_pos(r: Readings) -> np.ndarray:
        return np.asarray(objects.read_object_pose()[0], dtype=np.float64)

    def obj_quat_xyzw(r: Readings) -> np.ndarray:
        w, x, y, z = np.asarray(objects.read_object_pose()[1], dtype=np.float64)
        q = np.array([x, y, z, w])
        return q / np.linalg.norm(q)

    def obj_to_tcp(r: Readings) -> np.ndarray:
        return obj_pos(r) - tcp(r)

    terms: dict[str, tuple[TermFn, int]] = {f"{GRASP_MDP}:tcp_pos_b": (tcp, 3)}
    if objects is not None:
        terms |= {
            f"{GRASP_MDP}:object_pos_b": (obj_pos, 3),
            f"{GRASP_MDP}:object_quat_b": (obj_quat_xyzw, 4),
            f"{GRASP_MDP}:object_to_tcp_b": (obj_to_tcp, 3),
        }
    return terms


def needs_object(funcs: Sequence[str]) -> list[str]:
    """The exported observation ``func`` entries that read the object's pose."""
    return [f for f in funcs if f.startswith(f"{GRASP_MDP}:object_")]


def task_observation_terms(
    meta: PolicyMetadata, kinematics: RobotKinematics | None, objects: ObjectPose | None
) -> dict[str, tuple[TermFn, int]]:
    """The task observation functions ``meta`` needs beyond encoders and an IMU (none: ``{}``).

    The tool centre point is the export's (``scene.tcp`` when recorded, else the ``ee_pose_delta`` term's controlled
    frame); ``kinematics`` is built from the export's MJCF when not given.

    Raises:
        MissingObjectPoseError: The policy observes the object and ``objects`` is None.
        UnsupportedObservationError: A grasp term but no tool-centre-point definition in the export.
    """
    funcs = [t.func for t in meta.observations]
    if not any(f.startswith(f"{GRASP_MDP}:") for f in funcs):
        return {}
    reading = needs_object(funcs)
    if reading and objects is None:
        raise MissingObjectPoseError(
            f"the policy observes the object ({', '.join(reading)}): give the runtime an ObjectPose source "
            "(realgap.envs.deploy.objects.ObjectPose: a calibrated camera, or the MuJoCo grasp scene's ground truth)"
        )
    body, offset = tcp_frame(meta)
    if kinematics is None:
        kinematics = RobotKinematics(locate_description(meta.robot.description), meta.joint_names, meta.robot.root_body)
    return grasp_terms(kinematics, objects, body, offset)


def tcp_frame(meta: PolicyMetadata) -> tuple[str, tuple[float, float, float]]:
    """Body and offset (m, in the body frame) of the tool centre point the grasp observations use."""
    scene = getattr(meta, "scene", None)
    if scene is not None:
        return scene.tcp_body, tuple(scene.tcp_offset_m)
    for term in meta.actions.terms:
        if term.type == "ee_pose_delta":
            return str(term.params["body"]), tuple(term.params["body_offset"]["pos"])
    raise UnsupportedObservationError(
        "the policy observes the tool centre point, and the export defines it nowhere "
        "(no scene.tcp, no ee_pose_delta term)"
    )


class StaticObjectPose(ObjectPose):
    """An object that stays where it was placed: a fixed pose (e.g. the scene's nominal placement for a dry run on a
    robot or simulator without the object). Position m, orientation (w, x, y, z), in the robot's root body frame."""

    def __init__(self, pos: Sequence[float], quat_wxyz: Sequence[float] = (1.0, 0.0, 0.0, 0.0)) -> None:
        self.pos, self.quat_wxyz = np.asarray(pos, dtype=np.float64), np.asarray(quat_wxyz, dtype=np.float64)

    @classmethod
    def nominal(cls, meta: PolicyMetadata) -> StaticObjectPose:
        """The scene's nominal placement: the largest box resting at the nominal position, yaw 0.

        Raises:
            ValueError: The export has no scene facts.
        """
        s = meta.scene
        if s is None:
            raise ValueError(f"{meta.task}: the export has no scene facts, so no nominal object placement")
        z = s.table_top_z_m + s.object_size_range_m[2][1] / 2 + s.object_clearance_m
        return cls((*s.object_nominal_xy_m, z))

    def read_object_pose(self) -> tuple[np.ndarray, np.ndarray]:
        return self.pos, self.quat_wxyz
