"""Rigid-body dynamics references from pinocchio: gravity torque g(q) and joint-space inertia M(q).

The models come from example-robot-data's URDFs (a PyPI wheel), which have the same masses, inertias and kinematics
as the MuJoCo Menagerie models the simulator loads (measured: total masses equal, Panda holding
torques equal g(q) to 0.02 %, FK to 0.00 mm). A URDF carries no rotor inertia: M(q) here is the *link* inertia only;
realgap adds the actuators' reflected inertia N²·I_m (armature) on the diagonal itself.

Used by tests that check the simulator against the equations and by controllers that compensate gravity.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Sequence

import numpy as np

URDF_PATHS = {
    "panda": "cmeel.prefix/share/example-robot-data/robots/panda_description/urdf/panda.urdf",
    "g1": "cmeel.prefix/share/example-robot-data/robots/g1_description/urdf/g1_29dof_rev_1_0.urdf",
}
"""URDF of each robot inside the ``example-robot-data`` wheel (a cmeel prefix; the wheel has no Python module)."""

_PREFIXES = ("panda_",)


def _bare(name: str) -> str:
    for prefix in _PREFIXES:
        name = name.removeprefix(prefix)
    return name


class RobotDynamics:
    """pinocchio model of a fixed-base robot, indexed by the simulator's joint names.

    Args:
        robot: ``"panda"`` or ``"g1"`` (see :data:`URDF_PATHS`). A floating-base robot is loaded with its root fixed:
            the reference for tests that weld the root.
        joint_names: Simulator joint names, in the column order of the ``q`` arrays passed in (URDF prefixes such as
            ``panda_`` are matched either way). Joints of the model not named here stay at their neutral value.

    Raises:
        ValueError: A name is not a joint of the model (lists the model's joints).
    """

    def __init__(self, robot: str, joint_names: Sequence[str]) -> None:
        import pinocchio as pin

        if robot not in URDF_PATHS:
            raise ValueError(f"no pinocchio model for robot {robot!r}; known: {sorted(URDF_PATHS)}")
        urdf = importlib.metadata.distribution("example-robot-data").locate_file(URDF_PATHS[robot])
        self._pin = pin
        self.model = pin.buildModelFromUrdf(str(urdf))
        self.data = self.model.createData()
        model_joints = [_bare(self.model.names[i]) for i in range(1, self.model.njoints)]
        missing = [n for n in joint_names if _bare(n) not in model_joints]
        if missing:
            raise ValueError(f"joints {missing} are not in the pinocchio {robot} model (joints: {model_joints})")
        # every named joint is 1-DoF: its q index equals its v index in the model
        self._cols = np.array([model_joints.index(_bare(n)) for n in joint_names])
        self._neutral = pin.neutral(self.model)

    def _full_q(self, q: np.ndarray) -> np.ndarray:
        full = self._neutral.copy()
        full[self._cols] = q
        return full

    def gravity(self, q: np.ndarray) -> np.ndarray:
        """g(q) = RNEA(q, 0, 0), N·m (N for prismatic joints), in the column order of ``q``.

        Shape:
            q: ``(J,)`` or ``(E, J)`` → same shape.
        """
        q = np.asarray(q, dtype=np.float64)
        rows = np.atleast_2d(q)
        out = np.stack([self._pin.computeGeneralizedGravity(self.model, self.data, self._full_q(r)) for r in rows])
        out = out[:, self._cols]
        return out if q.ndim == 2 else out[0]

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """Joint-space link inertia M(q) (CRBA, no rotor inertia) restricted to the named joints, kg·m².

        Shape:
            q: ``(J,)`` → ``(J, J)``.
        """
        full = self._full_q(np.asarray(q, dtype=np.float64))
        m = self._pin.crba(self.model, self.data, full)
        m = np.triu(m) + np.triu(m, 1).T  # crba fills the upper triangle
        return m[np.ix_(self._cols, self._cols)]
