"""A safe identification motion: one joint at a time, small steps then a chirp around the default pose, logged.

Run it with the robot hanging (base welded or on a gantry, feet free; :meth:`MujocoRobot.for_policy` with
``fixed_base=True, hang_m=...`` in simulation) so that no contact acts on the joints. Per excited joint ``j``, at the
policy rate (targets held between policy steps, exactly as a policy's would be), every other joint holds its default:

1. rest ``rest_s`` at the default pose;
2. steps: ``+A_s``, ``−A_s``, back to 0, each held ``step_hold_s`` — the step edges time the command delay exactly,
   the settled offsets against gravity give kp, and a large enough step saturates the drive (torque limit);
3. chirp ``A_c·sin(2π(f0·t + (f1 − f0)·t²/(2T)))`` for ``T = chirp_s`` from ``f0`` to ``f1`` Hz, with a
   ``fade_s`` cosine fade at both ends — velocity reverses sign many times (Coulomb vs viscous friction), and the
   acceleration at the higher frequencies exposes the inertia (armature);
4. rest again (the joint settles before the next one starts).

Amplitudes are clipped to the joint's range minus ``margin_rad``. What each part determines, and what an ordinary
policy log can determine, is listed in :mod:`realgap.envs.identify.fit`. numpy only (the robot is given).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from realgap.envs.deploy.log import LogRecorder, RobotLog
from realgap.envs.deploy.robot import Robot
from realgap.envs.deploy.runtime import DeployRuntime
from realgap.envs.format.metadata import PolicyMetadata


@dataclass(frozen=True)
class ExcitationPlan:
    """Parameters of the identification motion (see the module docstring).

    Attributes:
        joints: Joints to excite, one after another (names of ``meta.joint_names``).
        step_rad: Step amplitude ``A_s``, rad (one value, or one per joint of ``joints``).
        step_hold_s: Hold of each step, s.
        chirp_rad: Chirp amplitude ``A_c``, rad (one value, or one per joint).
        chirp_f0_hz: Start frequency, Hz. chirp_f1_hz: End frequency, Hz. chirp_s: Chirp duration, s.
        fade_s: Cosine fade-in/out of the chirp amplitude, s.
        rest_s: Rest at the default pose before and after each joint, s.
        margin_rad: Distance kept from the joint limits, rad.
    """

    joints: tuple[str, ...]
    step_rad: float | tuple[float, ...] = 0.08
    step_hold_s: float = 0.4
    chirp_rad: float | tuple[float, ...] = 0.1
    chirp_f0_hz: float = 0.5
    chirp_f1_hz: float = 4.0
    chirp_s: float = 3.0
    fade_s: float = 0.3
    rest_s: float = 0.3
    margin_rad: float = 0.05

    def amplitudes(self, key: str) -> np.ndarray:
        """``step_rad`` or ``chirp_rad`` per excited joint."""
        value = np.atleast_1d(np.asarray(getattr(self, key), dtype=float))
        if value.size == 1:
            value = np.full(len(self.joints), float(value[0]))
        if value.size != len(self.joints):
            raise ValueError(f"ExcitationPlan.{key}: {value.size} values for {len(self.joints)} joints")
        return value


def _chirp(n: int, dt: float, plan: ExcitationPlan) -> np.ndarray:
    """Unit-amplitude faded chirp, ``n`` samples at ``dt``."""
    t = np.arange(n) * dt
    T = plan.chirp_s
    phase = 2 * math.pi * (plan.chirp_f0_hz * t + (plan.chirp_f1_hz - plan.chirp_f0_hz) * t * t / (2 * T))
    fade = np.clip(np.minimum(t, T - t) / max(plan.fade_s, 1e-9), 0.0, 1.0)
    return np.sin(phase) * 0.5 * (1 - np.cos(math.pi * fade))


def excitation_targets(meta: PolicyMetadata, plan: ExcitationPlan) -> tuple[np.ndarray, np.ndarray]:
    """Joint targets at the policy rate and the excited joint's index per policy step.

    Returns:
        ``(q_target, segment)``: ``(N, J)`` rad and ``(N,)`` int (index into ``meta.joint_names``, −1 at rest).

    Raises:
        ValueError: An unknown joint, a non-positive duration, a chirp above the policy's Nyquist rate, or a joint
            whose range cannot fit the motion around its default (names the joint and both numbers).
    """
    names = meta.joint_names
    unknown = [j for j in plan.joints if j not in names]
    if unknown or not plan.joints:
        raise ValueError(f"excitation joints {unknown or '[]'}: choose among {list(names)}")
    dt = meta.rates.policy_dt
    if min(plan.step_hold_s, plan.chirp_s, plan.rest_s) <= 0 or not 0 < plan.chirp_f0_hz <= plan.chirp_f1_hz:
        raise ValueError("excitation: durations must be > 0 s and 0 < chirp_f0_hz <= chirp_f1_hz")
    if plan.chirp_f1_hz > 0.25 / dt:
        raise ValueError(
            f"excitation: chirp_f1_hz {plan.chirp_f1_hz:g} Hz is above a quarter of the policy rate "
            f"({0.25 / dt:g} Hz); the held targets could not follow it"
        )
    default = np.asarray(meta.default_joint_pos, dtype=float)
    steps_a, chirp_a = plan.amplitudes("step_rad"), plan.amplitudes("chirp_rad")
    rest, hold = round(plan.rest_s / dt), round(plan.step_hold_s / dt)
    chirp = _chirp(round(plan.chirp_s / dt), dt, plan)
    rows, segs = [], []
    for k, joint in enumerate(plan.joints):
        j = names.index(joint)
        lo, hi = meta.joint_pos_lower[j], meta.joint_pos_upper[j]
        room = min(default[j] - (-math.inf if lo is None else lo), (math.inf if hi is None else hi) - default[j])
        room -= plan.margin_rad
        amp = max(steps_a[k], chirp_a[k])
        if room < amp:
            raise ValueError(
                f"excitation of '{joint}': amplitude {amp:g} rad does not fit its range around the "
                f"default {default[j]:g} rad (room {room:g} rad after the {plan.margin_rad:g} rad margin)"
            )
        offsets = np.concatenate(
            [
                np.zeros(rest),
                np.full(hold, steps_a[k]),
                np.full(hold, -steps_a[k]),
                np.zeros(hold),
                chirp_a[k] * chirp,
                np.zeros(rest),
            ]
        )
        q = np.tile(default, (offsets.size, 1))
        q[:, j] += offsets
        rows.append(q)
        segs.append(np.full(offsets.size, j))
    return np.concatenate(rows), np.concatenate(segs)


def implied_action(meta: PolicyMetadata, q_target: np.ndarray) -> np.ndarray:
    """The raw action a ``joint_position_offset`` policy would output for ``q_target`` (zero for other terms; not
    clipped: an excitation may leave the policy's action range). Shape: ``(J,)`` → ``(A,)``."""
    action = np.zeros(meta.action_dim)
    for term in meta.actions.terms:
        if term.type == "joint_position_offset":
            idx = [meta.joint_names.index(j) for j in term.joint_names]
            action[term.start : term.stop] = (q_target[idx] - term.array("offset")) / term.array("scale")
    return action


def run_excitation(
    meta: PolicyMetadata,
    robot: Robot,
    plan: ExcitationPlan,
    *,
    fixed_base: bool = True,
    root_pos_w: Sequence[float] | None = None,
) -> RobotLog:
    """Drive ``robot`` through the plan with the deploy runtime (its command path, rates and log) and return the log.

    The policy is bypassed: each policy period the plan's targets are written where the action terms would write
    them. Torque robots get the training chain's torque (``tau_source`` commanded); position robots the training
    gains, and ``tau`` is logged when the robot reports one (:meth:`Robot.read_torque`).
    """
    q_plan, segment = excitation_targets(meta, plan)
    tau_source = "commanded" if robot.command_mode == "torque" else "measured"
    if robot.command_mode != "torque" and robot.read_torque() is None:
        tau_source = "none"
    recorder = LogRecorder(
        meta,
        robot.control_dt,
        robot.command_mode,
        tau_source,
        source="excitation",
        fixed_base=fixed_base,
        root_pos_w=root_pos_w,
    )
    runtime = DeployRuntime(meta, robot, None, command_delay=False, log=recorder)
    for q_target, seg in zip(q_plan, segment, strict=True):
        runtime.q_target[:] = q_target
        runtime.last_action = implied_action(meta, q_target).astype(np.float32)
        recorder.segment = int(seg)
        for _ in range(runtime.steps_per_policy):
            runtime.control()
    return recorder.to_log()
