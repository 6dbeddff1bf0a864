"""The deploy runtime's action terms (:class:`ActionMapper`): the (raw-clipped) policy action → joint targets, term by
term, as in training (the terms as the metadata describes them: :mod:`realgap.envs.format.actions`).

The runtime runs the term types that need nothing but the action and the exported parameters:

- ``joint_position_offset`` (Isaac Lab ``JointPositionAction``):
  ``q_target[j] = clip(offset[j] + scale[j] · a[start + j], clip_min[j], clip_max[j])``; with ``ramp_s`` > 0 (the
  balance task's ``RampedJointPositionAction``) the offset moves linearly from ``joints.default_pos`` to ``offset``
  over the first ``ramp_s`` seconds after the start, ``k`` policy steps in: ``default + (offset − default) ·
  min(1, k · policy_dt / ramp_s)``;
- ``binary_joint_position`` (``BinaryJointPositionAction``, e.g. a gripper):
  ``q_target = close if a[start] < threshold else open``.

A term of another type (joint increments, velocities, torques, end-effector pose increments through differential
IK, computed torque, Cartesian impedance) or with a feed-forward torque (gravity compensation from a robot model) is
refused when the runtime is built, naming the term and its type: running it needs state or models the runtime does not
have.
"""

from __future__ import annotations

import numpy as np

from realgap.envs.format.actions import ActionTerm
from realgap.envs.format.metadata import PolicyMetadata

SUPPORTED_ACTIONS: tuple[str, ...] = ("joint_position_offset", "binary_joint_position")
"""Action term types the deploy runtime runs."""


class UnsupportedActionError(ValueError):
    """An action term the runtime cannot run (names the term, its type and what is supported)."""


class ActionMapper:
    """Write each action term's joint targets into a full-length target vector (``meta.joint_names`` order).

    Args:
        meta: Exported metadata.

    Raises:
        UnsupportedActionError: A term of a type outside :data:`SUPPORTED_ACTIONS`, or with a feed-forward torque.
    """

    def __init__(self, meta: PolicyMetadata) -> None:
        index = {j: i for i, j in enumerate(meta.joint_names)}
        self.terms: list[tuple[ActionTerm, np.ndarray]] = []
        for term in meta.actions.terms:
            if term.type not in SUPPORTED_ACTIONS:
                raise UnsupportedActionError(
                    f"action term '{term.name}' has type '{term.type}', which the deploy runtime cannot run (it runs "
                    f"{', '.join(SUPPORTED_ACTIONS)}); its equation: {term.equation}"
                )
            if term.feed_forward is not None:
                raise UnsupportedActionError(
                    f"action term '{term.name}' ({term.type}) adds a feed-forward torque ({term.feed_forward['type']} "
                    f"from {term.feed_forward['source']}), which the deploy runtime does not compute"
                )
            self.terms.append((term, np.array([index[j] for j in term.joint_names], dtype=np.int64)))
        default = np.asarray(meta.default_joint_pos, dtype=np.float64)
        self._params = [self._arrays(term, default[idx], meta.rates.policy_dt) for term, idx in self.terms]
        self.reset()

    @staticmethod
    def _arrays(term: ActionTerm, default: np.ndarray, policy_dt: float) -> dict[str, np.ndarray]:
        if term.type == "joint_position_offset":
            return {"scale": term.array("scale"), "offset": term.array("offset"),
                    "lo": term.array("clip_min", -np.inf), "hi": term.array("clip_max", np.inf),
                    "ramp_steps": float(term.params.get("ramp_s", 0.0)) / policy_dt, "start": default}  # fmt: skip
        return {"open": term.array("open"), "close": term.array("close"),
                "threshold": np.float64(term.params["threshold"])}  # fmt: skip

    def reset(self) -> None:
        """Back to the first policy step (a ``ramp_s`` starts again from the default pose)."""
        self.k = 0

    def apply(self, action: np.ndarray, q_target: np.ndarray) -> None:
        """Set the targets of every term's joints from ``action`` (already raw-clipped).

        Shape:
            ``action`` ``(A,)``; ``q_target`` ``(J,)`` float64, written in place.
        """
        a = np.asarray(action, dtype=np.float64)
        for (term, idx), p in zip(self.terms, self._params, strict=True):
            if term.type == "joint_position_offset":
                offset = p["offset"]
                if p["ramp_steps"] > 0:
                    offset = p["start"] + (offset - p["start"]) * min(1.0, self.k / p["ramp_steps"])
                q_target[idx] = np.clip(offset + p["scale"] * a[term.start : term.stop], p["lo"], p["hi"])
            else:
                q_target[idx] = p["close"] if a[term.start] < p["threshold"] else p["open"]
        self.k += 1
