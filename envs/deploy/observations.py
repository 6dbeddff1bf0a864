"""The policy input, rebuilt on the robot from encoder and IMU readings with the training layout.

Each term of the exported layout is mapped to a numpy function of the robot's readings and post-processed as Isaac
Lab's observation manager does (clip, then scale). Training noise is not added: the robot's sensors bring their own.
``last_action`` is the previous step's action after the raw clip, as the training env saw it.
A term with an observation history (``history_length`` H) keeps its last H post-processed samples and is laid out
oldest first, as Isaac Lab's circular buffer flattens it; the first sample after a reset fills the whole history, as
Isaac Lab's buffer does on its first append. A term with no deploy implementation (a privileged quantity, a custom
function), an observation delay or custom modifiers is refused when the runtime is built, never silently fed zeros.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from realgap.envs.deploy.robot import ImuState, JointState
from realgap.envs.format.metadata import PolicyMetadata
from realgap.envs.format.observations import ISAACLAB_OBS_MODULE, ObsTerm


@dataclass(frozen=True)
class Readings:
    """One policy step's inputs.

    Attributes:
        joints: Encoder readings (robot joint order = metadata joint order).
        imu: Root-body IMU.
        last_action: The raw policy output of the previous policy step (zeros after a reset).
    """

    joints: JointState
    imu: ImuState
    last_action: np.ndarray


class UnsupportedObservationError(ValueError):
    """An observation term the runtime cannot compute on a robot (names the term and what is missing)."""


TermFn = Callable[[Readings], np.ndarray]


def _term_fn(
    term: ObsTerm, joint_index: dict[str, int], meta: PolicyMetadata, extra: Mapping[str, tuple[TermFn, int]]
) -> tuple[TermFn, int]:
    """The reading → values function of ``term`` and the size it returns (``extra``: task terms by ``func``)."""
    if term.func in extra:
        return extra[term.func]
    module, _, name = term.func.partition(":")
    if module != ISAACLAB_OBS_MODULE or name not in SUPPORTED_TERMS:
        raise UnsupportedObservationError(
            f"observation term '{term.name}' uses {term.func}, which the deploy runtime cannot compute from joint "
            f"encoders and an IMU; supported: {sorted(f'{ISAACLAB_OBS_MODULE}:{n}' for n in SUPPORTED_TERMS)}"
        )
    if name in ("base_ang_vel", "projected_gravity"):
        field = "ang_vel_b" if name == "base_ang_vel" else "projected_gravity_b"
        return (lambda r: getattr(r.imu, field)), 3
    if name == "last_action":
        return (lambda r: r.last_action), meta.action_dim
    names = term.joint_names or meta.joint_names
    missing = sorted(set(names) - set(joint_index))
    if missing:
        raise UnsupportedObservationError(f"observation term '{term.name}' reads unknown joints {missing}")
    idx = np.array([joint_index[j] for j in names], dtype=np.int64)
    q0 = np.asarray(meta.default_joint_pos)[idx]
    qd0 = np.asarray(meta.default_joint_vel)[idx]
    fns: dict[str, TermFn] = {
        "joint_pos": lambda r: r.joints.pos[idx],
        "joint_pos_rel": lambda r: r.joints.pos[idx] - q0,
        "joint_vel": lambda r: r.joints.vel[idx],
        "joint_vel_rel": lambda r: r.joints.vel[idx] - qd0,
    }
    return fns[name], len(idx)


SUPPORTED_TERMS: tuple[str, ...] = (
    "base_ang_vel",
    "projected_gravity",
    "joint_pos",
    "joint_pos_rel",
    "joint_vel",
    "joint_vel_rel",
    "last_action",
)
"""Isaac Lab observation functions with a deploy implementation (``isaaclab.envs.mdp.observations:<name>``)."""


class ObservationBuilder:
    """Concatenate the policy's observation terms from robot readings.

    Args:
        meta: Exported metadata (layout, default pose, action size).
        terms: Terms to build (default: all of ``meta.observations``).
        extra_terms: Functions of task terms by their exported ``func`` (e.g. the grasp's object and tool-centre-point
            terms, :func:`realgap.envs.deploy.objects.grasp_terms`) with the size each returns.

    Raises:
        UnsupportedObservationError: A term cannot be computed on a robot, or its size disagrees with the layout.
    """

    def __init__(
        self,
        meta: PolicyMetadata,
        terms: Sequence[ObsTerm] | None = None,
        extra_terms: Mapping[str, tuple[TermFn, int]] | None = None,
    ) -> None:
        self.meta = meta
        self.dim = meta.obs_dim
        joint_index = {j: i for i, j in enumerate(meta.joint_names)}
        self._terms: list[tuple[ObsTerm, TermFn, np.ndarray | float | None]] = []
        self._history: dict[str, np.ndarray] = {}
        for term in meta.observations if terms is None else terms:
            if term.delay_lag != (0, 0) or term.has_modifiers:
                raise UnsupportedObservationError(
                    f"observation term '{term.name}' uses delay_lag={term.delay_lag}, "
                    f"modifiers={term.has_modifiers}: not implemented by the runtime"
                )
            fn, size = _term_fn(term, joint_index, meta, extra_terms or {})
            frames = max(term.history_length, 1)
            if size * frames != term.dim:
                stacked = f" ({frames} frames: {size * frames})" if frames > 1 else ""
                raise UnsupportedObservationError(
                    f"observation term '{term.name}' computes {size} values on the "
                    f"robot{stacked} but spans {term.dim} in the layout"
                )
            scale = None if term.scale is None else np.asarray(term.scale, dtype=np.float64)
            self._terms.append((term, fn, scale))
            if term.history_length > 0:
                self._history[term.name] = np.zeros((frames, size), dtype=np.float64)
        self._fresh = True
        self._out = np.zeros(self.dim, dtype=np.float32)

    def reset(self) -> None:
        """Start a new episode: the next sample fills every term's history."""
        self._fresh = True

    def build(self, readings: Readings) -> np.ndarray:
        """The policy input for ``readings``.

        Shape:
            Output ``(D,)`` float32 (a buffer reused by the next call: copy it to keep it).
        """
        for term, fn, scale in self._terms:
            x = np.asarray(fn(readings), dtype=np.float64)
            if term.clip is not None:
                x = np.clip(x, term.clip[0], term.clip[1])
            if scale is not None:
                x = x * scale
            history = self._history.get(term.name)
            if history is not None:  # oldest first; a fresh episode repeats its first sample
                if self._fresh:
                    history[:] = x
                else:
                    history[:-1] = history[1:]
                    history[-1] = x
                x = history.reshape(-1)
            self._out[term.start : term.stop] = x
        self._fresh = False
        return self._out
