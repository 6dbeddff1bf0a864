"""SRBD parameters from a robot description: the G1's single body and sole points by MuJoCo forward kinematics.

Reads the MJCF the tasks and the deploy runtime use (``envs/robots/g1.py``); no hand-copied mass or inertia. The pose is
one of the robot facts' tables (joint name patterns → rad); the root sits at ``root_pos_w`` upright.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from realgap.envs.robots.g1 import G1, G1_FOOT_BODIES, G1_ROOT_BODY, G1_SOLE_POINTS_B
from realgap.envs.srbd.inertia import SingleBody, composite


@dataclass(frozen=True)
class PosedBody:
    """The single body of one pose and where its feet touch.

    Attributes:
        body: Mass, CoM and composite inertia (world frame).
        rot_w_root: Orientation of the root body (world ← root). Shape: ``(3, 3)``.
        sole_points_w: The sole's contact points, left foot's then right foot's, m. Shape: ``(2·P, 3)``.
    """

    body: SingleBody
    rot_w_root: np.ndarray
    sole_points_w: np.ndarray

    @property
    def sole_points_rel_com(self) -> np.ndarray:
        """Sole points relative to the CoM, m. Shape: ``(2·P, 3)``."""
        return self.sole_points_w - self.body.com_w


def _value(table: Mapping[str, float], name: str) -> float:
    """The table's value for joint ``name`` (its patterns are full-match regexes; 0 where none matches)."""
    hits = [v for pattern, v in table.items() if re.fullmatch(pattern, name)]
    if len(hits) > 1:
        raise ValueError(f"joint '{name}' matches {len(hits)} patterns of the pose table")
    return hits[0] if hits else 0.0


def set_pose(
    model,
    data,
    pose: Mapping[str, float],
    root_pos_w: Sequence[float],
    root_quat_wxyz: Sequence[float] = (1.0, 0.0, 0.0, 0.0),
) -> None:
    """Write the root and joint positions of ``pose`` into ``data`` (velocities zero) and run forward kinematics."""
    import mujoco

    data.qpos[:] = 0.0
    data.qvel[:] = 0.0
    for j in range(model.njnt):
        adr = model.jnt_qposadr[j]
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            data.qpos[adr : adr + 3] = root_pos_w
            data.qpos[adr + 3 : adr + 7] = root_quat_wxyz
        else:
            data.qpos[adr] = _value(pose, model.joint(j).name)
    mujoco.mj_forward(model, data)


def bodies_w(model, data) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per body (world body excluded): mass (kg), CoM (m) and rotational inertia about it (kg·m²), world frame, from
    the model's principal inertias and the inertial frames' orientations. Shapes ``(B,)``, ``(B, 3)``, ``(B, 3, 3)``."""
    rot = data.ximat[1:].reshape(-1, 3, 3)
    principal = model.body_inertia[1:]
    inertia = rot @ (principal[:, :, None] * np.swapaxes(rot, 1, 2))
    return model.body_mass[1:].copy(), data.xipos[1:].copy(), inertia


def posed_body(
    model,
    data,
    pose: Mapping[str, float],
    root_pos_w: Sequence[float],
    root_quat_wxyz: Sequence[float] = (1.0, 0.0, 0.0, 0.0),
) -> PosedBody:
    """The G1's :class:`PosedBody` in ``pose`` (``model``/``data``: a MuJoCo model of the G1 MJCF and its data)."""
    set_pose(model, data, pose, root_pos_w, root_quat_wxyz)
    body = composite(*bodies_w(model, data))
    soles = []
    for name in G1_FOOT_BODIES:
        b = model.body(name).id
        rot = data.xmat[b].reshape(3, 3)
        soles += [data.xpos[b] + rot @ np.asarray(p) for p in G1_SOLE_POINTS_B]
    root = model.body(G1_ROOT_BODY).id
    return PosedBody(body, data.xmat[root].reshape(3, 3).copy(), np.array(soles))


def g1_model(mjcf_path: str | Path | None = None):
    """The G1 MJCF as a MuJoCo model and data (the wheel's file unless ``mjcf_path`` is given)."""
    import mujoco

    model = mujoco.MjModel.from_xml_path(str(mjcf_path or G1.mjcf_path()))
    return model, mujoco.MjData(model)
