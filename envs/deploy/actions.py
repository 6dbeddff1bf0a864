"""The deploy runtime's action terms (:class:`ActionMapper`): the (raw-clipped) policy action → joint targets, term by
term, as in training (the terms as the metadata describes them: :mod:`realgap.envs.format.actions`).

The runtime runs the term types that need nothing but the action and the exported parameters:

- ``joint_position_offset`` (Isaac Lab ``JointPositionAction``):
  ``q_target[j] = clip(offset[j] + scale[j] · a[start + j], clip_min[j], clip_max[j])``; with ``ramp_s`` > 0 (the
  balance task's ``RampedJointPositionAction``) the offset moves linearly from ``joints.default_pos`` to ``offset``
  over the first ``ramp_s`` seconds after the start, ``k`` policy steps in: ``default + (offset − default) ·
  min(1, k · policy_dt / ramp_s)``;
- ``joint_position_measured`` (the balance task's ``relative_to="measured"``): ``q_target[j] = clip(q[j] + scale[j] ·
  a[start + j], clip_min[j], clip_max[j])`` about the joint positions ``q`` read at that policy step;
- ``binary_joint_position`` (``BinaryJointPositionAction``, e.g. a gripper):
  ``goal = close if a[start] < threshold else open``; with a ``speed`` (the hand's own controller, as trained) and a
  robot whose hand does not ramp itself (``ramp_binary``: a torque robot such as the MuJoCo one, whose finger PD is
  the runtime's, or a position robot whose finger servo takes a target at once, such as the hidden and suite robots)
  the setpoint moves toward the goal by at most ``speed · control_dt`` every control period, starting at the
  measured position after a reset (:func:`realgap.actuators.motion.ramp_toward`); otherwise ``q_target = goal`` (a
  real hand ramps itself: its driver passes the speed to the hand's controller);
- ``ee_pose_delta`` (Isaac Lab's differential IK, relative pose, damped least squares, with the nominal gravity
  feed-forward g(q)): :mod:`realgap.envs.deploy.task_space`, on the kinematics of the export's MJCF; it sets a target
  pose each policy step and joint targets and ``tau_ff`` each control period (:meth:`ActionMapper.track`).

A term of another type (joint increments, velocities, torques, computed torque, Cartesian impedance) or with another
feed-forward torque is refused when the runtime is built, naming the term and its type: running it needs state or
models the runtime does not have.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from realgap.actuators.motion import ramp_toward
from realgap.envs.deploy.kinematics import RobotKinematics
from realgap.envs.deploy.task_space import EePoseDeltaTerm, UnsupportedIkError, check_ik_params
from realgap.envs.format.actions import ActionTerm
from realgap.envs.format.description import locate_description
from realgap.envs.format.metadata import PolicyMetadata

SUPPORTED_ACTIONS: tuple[str, ...] = (
    "joint_position_offset",
    "joint_position_measured",
    "binary_joint_position",
    "ee_pose_delta",
)
"""Action term types the deploy runtime runs."""


class UnsupportedActionError(ValueError):
    """An action term the runtime cannot run (names the term, its type and what is supported)."""


class ActionMapper:
    """Write each action term's joint targets into a full-length target vector (``meta.joint_names`` order).

    Args:
        meta: Exported metadata.
        ramp_binary: Move a binary term's setpoint at its ``speed`` (the robot's hand does not ramp itself).
        control_dt: The robot's control period, s, the ramp's step (default: the export's physics step).

    Raises:
        UnsupportedActionError: A term of a type outside :data:`SUPPORTED_ACTIONS`, or with a feed-forward torque
            other than an ``ee_pose_delta`` term's gravity, or an IK configuration the runtime does not implement
            (:func:`~realgap.envs.deploy.task_space.check_ik_params`).
    """

    def __init__(self, meta: PolicyMetadata, ramp_binary: bool = True, control_dt: float | None = None) -> None:
        index = {j: i for i, j in enumerate(meta.joint_names)}
        self._ramp_binary = ramp_binary
        self.terms: list[tuple[ActionTerm, np.ndarray]] = []
        self.ik: dict[str, Any] = {}  # ee_pose_delta runners by term name (realgap.envs.deploy.task_space)
        self.kinematics = None
        for term in meta.actions.terms:
            if term.type not in SUPPORTED_ACTIONS:
                raise UnsupportedActionError(
                    f"action term '{term.name}' has type '{term.type}', which the deploy runtime cannot run (it runs "
                    f"{', '.join(SUPPORTED_ACTIONS)}); its equation: {term.equation}"
                )
            if term.type == "ee_pose_delta":
                self.ik[term.name] = self._ik_term(meta, term, index)
            elif term.feed_forward is not None:
                raise UnsupportedActionError(
                    f"action term '{term.name}' ({term.type}) adds a feed-forward torque ({term.feed_forward['type']} "
                    f"from {term.feed_forward['source']}), which the deploy runtime does not compute"
                )
            self.terms.append((term, np.array([index[j] for j in term.joint_names], dtype=np.int64)))
        default = np.asarray(meta.default_joint_pos, dtype=np.float64)
        self._params = [self._arrays(term, default[idx], meta.rates.policy_dt) for term, idx in self.terms]
        for (term, _), p in zip(self.terms, self._params, strict=True):
            if term.type == "binary_joint_position" and "speed" in term.params and ramp_binary:
                p["step"] = term.array("speed") * (meta.rates.sim_dt if control_dt is None else control_dt)
        self.reset()

    def _ik_term(self, meta: PolicyMetadata, term: ActionTerm, index: dict[str, int]) -> Any:
        """The term's IK runner on the kinematics of the export's MJCF (built once, shared with the observations)."""

        try:  # refuse before loading any model
            check_ik_params(term.name, term.params, term.feed_forward)
        except UnsupportedIkError as err:
            raise UnsupportedActionError(str(err)) from err
        if self.kinematics is None:
            self.kinematics = RobotKinematics(
                locate_description(meta.robot.description), meta.joint_names, meta.robot.root_body
            )
        cols = np.array([index[j] for j in term.joint_names], dtype=np.int64)
        return EePoseDeltaTerm(term.name, term.params, term.feed_forward, self.kinematics, cols)

    @property
    def tracks(self) -> bool:
        """True when a term sets targets every control period (:meth:`track`), not only every policy step."""
        return bool(self.ik) or any("step" in p for p in self._params)

    @staticmethod
    def _arrays(term: ActionTerm, default: np.ndarray, policy_dt: float) -> dict[str, np.ndarray]:
        if term.type == "ee_pose_delta":
            return {}
        if term.type in ("joint_position_offset", "joint_position_measured"):
            target = {
                "scale": term.array("scale"),
                "lo": term.array("clip_min", -np.inf),
                "hi": term.array("clip_max", np.inf),
            }
            if term.type == "joint_position_measured":  # about the reading: no offset, no ramp
                return target
            ramp_steps = float(term.params.get("ramp_s", 0.0)) / policy_dt
            return {**target, "offset": term.array("offset"), "ramp_steps": ramp_steps, "start": default}
        return {
            "open": term.array("open"),
            "close": term.array("close"),
            "threshold": np.float64(term.params["threshold"]),
        }

    def reset(self) -> None:
        """Back to the first policy step (a ``ramp_s`` starts again from the default pose; a hand's setpoint from the
        measured position)."""
        self.k = 0
        for p in self._params:
            p.pop("setpoint", None)

    def apply(self, action: np.ndarray, q_target: np.ndarray, q: np.ndarray | None = None) -> None:
        """Set the targets of every term's joints from ``action`` (already raw-clipped); an ``ee_pose_delta`` term sets
        its target pose from the measured joint positions ``q`` (its joint targets follow in :meth:`track`), a
        ``joint_position_measured`` term its targets about ``q``.

        Shape:
            ``action`` ``(A,)``; ``q_target`` ``(J,)`` float64, written in place; ``q`` ``(J,)``.
        """
        a = np.asarray(action, dtype=np.float64)
        for (term, idx), p in zip(self.terms, self._params, strict=True):
            if term.type in ("ee_pose_delta", "joint_position_measured") and q is None:
                raise ValueError(f"action term '{term.name}' ({term.type}) needs the measured joint positions")
            if term.type == "ee_pose_delta":
                self.ik[term.name].set_command(a[term.start : term.stop], np.asarray(q, dtype=np.float64))
            elif term.type == "joint_position_measured":
                anchor = np.asarray(q, dtype=np.float64)[idx]
                q_target[idx] = np.clip(anchor + p["scale"] * a[term.start : term.stop], p["lo"], p["hi"])
            elif term.type == "joint_position_offset":
                offset = p["offset"]
                if p["ramp_steps"] > 0:
                    offset = p["start"] + (offset - p["start"]) * min(1.0, self.k / p["ramp_steps"])
                q_target[idx] = np.clip(offset + p["scale"] * a[term.start : term.stop], p["lo"], p["hi"])
            else:
                p["goal"] = p["close"] if a[term.start] < p["threshold"] else p["open"]
                if "step" not in p:
                    q_target[idx] = p["goal"]
        self.k += 1

    def track(self, q: np.ndarray, q_target: np.ndarray, tau_ff: np.ndarray) -> None:
        """One control period of the terms that run every period (``ee_pose_delta``; a binary term's setpoint that
        moves at its ``speed``): joint targets and feed-forward torque of their joints from the measured ``q``.

        Shape:
            Every argument ``(J,)``; ``q_target`` and ``tau_ff`` written in place.
        """
        q = np.asarray(q, dtype=np.float64)
        for (term, idx), p in zip(self.terms, self._params, strict=True):
            if term.type == "ee_pose_delta":
                q_target[idx], tau_ff[idx] = self.ik[term.name].track(q)
            elif "step" in p and "goal" in p:
                p["setpoint"] = ramp_toward(p.get("setpoint", q[idx]), p["goal"], p["step"])
                q_target[idx] = p["setpoint"]
