"""Reverse curriculum for the grasp: start a share of *training* episodes from states recorded from the scripted grasp.

A policy that pinches the cube but never lifts it (the absolute joint-target interfaces, measured) rarely sees what
lifting pays, because an episode from the normal reset spends most of its time reaching. Starting some episodes with
the fingers already around the object (late descent, closing, early lift) shows it. Evaluation never uses this: the
Play variant keeps ``fraction = 0`` and success is measured from the task's normal resets only.

The states come from :mod:`realgap.envs.eval.grasp.scripted` (``scripts/record_grasp_states.py``), a file of this
format (``.npz``, every array float32 unless stated, frames relative to the env origin):

=================  =========  ==========================================================================
key                shape      meaning
=================  =========  ==========================================================================
``joint_names``    (J,) str   the robot's joints, in the order of the columns below
``joint_pos``      (N, J)     rad / m (finger joints)
``joint_vel``      (N, J)     rad/s, m/s
``object_pose``    (N, 7)     object position (m, env frame) and orientation, as the root pose stores it
``object_vel``     (N, 6)     linear (m/s) and angular (rad/s) velocity, world axes
``object_size``    (N, 3)     the box collider's edge lengths, m
``phase``          (N,) int   the scripted grasp's phase when recorded (0 approach, 1 descend, 2 close, 3 lift)
=================  =========  ==========================================================================
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
from isaaclab.managers import ManagerTermBase, SceneEntityCfg

from realgap.envs.dr.events import env_ids_tensor, term_generator

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedEnv
    from isaaclab.managers import EventTermCfg

STATE_SHAPES = {"joint_pos": None, "joint_vel": None, "object_pose": 7, "object_vel": 6, "object_size": 3}
"""Float arrays of a grasp-state file and their column counts (None: one per joint)."""

DEFAULT_STATES = Path(__file__).resolve().parents[2] / "configs" / "grasp_states" / "franka_scripted.npz"
"""The shipped file, recorded from the scripted grasp (``scripts/record_grasp_states.py``)."""


def save_grasp_states(path: str | Path, joint_names: list[str], states: dict[str, np.ndarray]) -> None:
    """Write ``states`` (the arrays of the table above, ``phase`` included) to ``path`` after checking them."""
    arrays = {k: np.asarray(v, dtype=np.int64 if k == "phase" else np.float32) for k, v in states.items()}
    _check(arrays, list(joint_names), str(path))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, joint_names=np.asarray(joint_names), **arrays)


def load_grasp_states(path: str | Path, joint_names: list[str]) -> dict[str, np.ndarray]:
    """The arrays of a grasp-state file, checked against the robot's ``joint_names``.

    Raises:
        FileNotFoundError: No such file (names the recording script).
        ValueError: Not a grasp-state file, missing or misshaped arrays, non-finite values, or recorded for other
            joints (names them).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"grasp states {path} not found: record them with scripts/record_grasp_states.py")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except Exception as exc:  # zip / npy errors of a corrupted file
        why = "it holds pickled Python objects, which are never loaded" if "pickle" in str(exc) else str(exc)
        raise ValueError(f"grasp states {path}: not a readable .npz file ({why})") from None
    recorded = [str(n) for n in arrays.pop("joint_names", np.asarray([]))]
    if recorded != list(joint_names):
        raise ValueError(f"grasp states {path} were recorded for joints {recorded}, the robot has {list(joint_names)}")
    _check(arrays, recorded, str(path))
    return arrays


def _check(arrays: dict[str, np.ndarray], joint_names: list[str], what: str) -> None:
    missing = sorted((set(STATE_SHAPES) | {"phase"}) - set(arrays))
    if missing:
        raise ValueError(f"grasp states {what}: missing arrays {missing}")
    n = len(arrays["phase"])
    if n == 0:
        raise ValueError(f"grasp states {what}: no states")
    for key, cols in STATE_SHAPES.items():
        shape = (n, len(joint_names) if cols is None else cols)
        if arrays[key].shape != shape:
            raise ValueError(f"grasp states {what}: {key} has shape {arrays[key].shape}, expected {shape}")
        if not np.isfinite(arrays[key]).all():
            raise ValueError(f"grasp states {what}: {key} has non-finite values")


class reset_from_grasp_states(ManagerTermBase):
    """Reset event: a share ``fraction`` of the resetting envs starts from a recorded grasp state.

    For each chosen env, a state drawn uniformly from the file's states of ``phases`` (all when None) sets the
    robot's joint positions and velocities, the object's collider size and a body drawn for it (through the
    ``object_term``, the object's single owner: inertia stays consistent with the collider), its pose and velocity.
    Must come after ``object_term`` in the event table.
    ``fraction = 0`` (the task's default and the Play variant's) touches nothing and reads no file.

    Attributes:
        from_states: ``(E,)`` bool, the envs whose current episode started from a recorded state (the metrics term
            keeps their success apart from that of normal resets).
    """

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedEnv) -> None:
        super().__init__(cfg, env)
        self.fraction = float(cfg.params.get("fraction", 0.0))
        if not 0.0 <= self.fraction <= 1.0:
            raise ValueError(f"reset_from_grasp_states: fraction must be in [0, 1], got {self.fraction}")
        self.from_states = torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)
        self.generator = term_generator(env, "reset_from_grasp_states")
        self.robot = env.scene[(cfg.params.get("robot_cfg") or SceneEntityCfg("robot")).name]
        self.states: dict[str, torch.Tensor] = {}
        if self.fraction > 0.0:
            path = cfg.params.get("path") or DEFAULT_STATES
            arrays = load_grasp_states(path, list(self.robot.joint_names))
            phases = cfg.params.get("phases")
            rows = np.isin(arrays["phase"], phases) if phases is not None else np.ones(len(arrays["phase"]), bool)
            if not rows.any():
                raise ValueError(
                    f"reset_from_grasp_states: {path} has no state of phases {phases} "
                    f"(it has {sorted(set(arrays['phase'].tolist()))})"
                )
            self.states = {k: torch.as_tensor(arrays[k][rows], device=env.device) for k in STATE_SHAPES}

    def __call__(
        self,
        env: ManagerBasedEnv,
        env_ids: torch.Tensor | slice | None,
        fraction: float = 0.0,
        path: str | None = None,
        phases: list[int] | None = None,
        object_term: str = "reset_object",
        robot_cfg: SceneEntityCfg | None = None,
    ) -> None:
        ids = env_ids_tensor(env, env_ids)
        self.from_states[ids] = False
        if self.fraction == 0.0 or len(ids) == 0:
            return
        chosen = torch.rand(len(ids), generator=self.generator, device=env.device) < self.fraction
        ids = ids[chosen]
        if len(ids) == 0:
            return
        n_states = len(self.states["joint_pos"])
        pick = torch.randint(n_states, (len(ids),), generator=self.generator, device=env.device)
        s = {k: v[pick] for k, v in self.states.items()}
        owner = env.event_manager.get_term_cfg(object_term).func
        owner.set_body(ids, s["object_size"])
        pose = s["object_pose"].clone()
        pose[:, :3] += env.scene.env_origins[ids]
        owner.asset.write_root_pose_to_sim_index(root_pose=pose, env_ids=ids)
        owner.asset.write_root_velocity_to_sim_index(root_velocity=s["object_vel"], env_ids=ids)
        self.robot.write_joint_state_to_sim_index(position=s["joint_pos"], velocity=s["joint_vel"], env_ids=ids)
        self.from_states[ids] = True
