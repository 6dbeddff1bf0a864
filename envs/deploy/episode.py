"""The MuJoCo balance episode: an exported policy through the deploy runtime on a MuJoCo robot, pushed, falls timed.

The same push schedule (drawn from the seed) is replayed for every policy compared, so a policy and the zero-action
baseline face identical disturbances. Pushes, falls and the episode length follow a
:class:`~realgap.envs.format.protocol.BalanceProtocol` (the export's, :attr:`PolicyMetadata.balance_protocol`, with a
run's overrides): a horizontal velocity change of random heading and magnitude ``U(push_mps)`` every
``U(push_interval_s)`` seconds, applied between policy steps; an episode ends at ``episode_s`` or at the fall rule.

Any robot with the simulation helpers of :class:`BalanceRobot` runs these episodes: the MuJoCo robot of the export
(the default) or, through ``make_robot``, another plant such as the free-floating hidden G1
(:class:`~realgap.envs.deploy.hidden_robot.HiddenRobot`). :func:`paired_time_up` compares two policies' episodes
schedule by schedule: the mean of the per-episode differences of time up and its standard error.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from realgap.envs.deploy.mujoco_robot import MujocoRobot
from realgap.envs.deploy.robot import Robot
from realgap.envs.deploy.runtime import DeployRuntime, Policy
from realgap.envs.format.metadata import PolicyMetadata
from realgap.envs.format.protocol import BALANCE_PROTOCOL, BalanceProtocol
from realgap.envs.format.terms import joint_position_offset


class BalanceRobot(Protocol):
    """A simulated :class:`~realgap.envs.deploy.robot.Robot` that balance episodes can reset, push and judge."""

    def reset(self) -> None:
        """Back to the start pose at rest."""

    def push(self, dv_xy: Sequence[float]) -> None:
        """Add a horizontal velocity change to the floating base, m/s."""

    def root_height(self) -> float:
        """Height of the root body origin, m."""

    def tilt(self) -> float:
        """Angle between the root body's z axis and the world vertical, rad."""


@dataclass(frozen=True)
class Push:
    """One push: at ``time_s`` (s after reset), add ``dv_xy`` (m/s) to the base velocity."""

    time_s: float
    dv_xy: tuple[float, float]


@dataclass(frozen=True)
class EpisodeResult:
    """How long the robot stayed up.

    Attributes:
        time_up_s: Time until the fall, or ``duration_s`` when it never fell, s.
        fell: Whether a fall ended the episode.
        pushes: Pushes applied before the end.
    """

    time_up_s: float
    fell: bool
    pushes: int


def push_schedule(rng: np.random.Generator, protocol: BalanceProtocol) -> list[Push]:
    """Push times and velocity changes for one episode of ``protocol`` (empty when it does not push)."""
    pushes, t = [], 0.0
    while protocol.pushes:
        t += rng.uniform(*protocol.push_interval_s)
        if t >= protocol.episode_s:
            break
        magnitude, heading = rng.uniform(*protocol.push_mps), rng.uniform(0.0, 2.0 * math.pi)
        pushes.append(Push(t, (magnitude * math.cos(heading), magnitude * math.sin(heading))))
    return pushes


def schedules(episodes: int, protocol: BalanceProtocol, seed: int = 0) -> list[list[Push]]:
    """One push schedule per episode of ``protocol``, drawn from ``seed``: every policy compared faces the same list."""
    rng = np.random.default_rng(seed)
    return [push_schedule(rng, protocol) for _ in range(episodes)]


def run_episode(
    runtime: DeployRuntime, robot: BalanceRobot, pushes: Sequence[Push], protocol: BalanceProtocol = BALANCE_PROTOCOL
) -> EpisodeResult:
    """Reset ``robot`` and ``runtime``, run policy steps until ``protocol``'s fall rule or its ``episode_s``."""
    robot.reset()
    runtime.reset()
    policy_dt = runtime.meta.rates.policy_dt
    queue = list(pushes)
    applied = 0
    for k in range(int(round(protocol.episode_s / policy_dt))):
        t = k * policy_dt
        while queue and queue[0].time_s <= t + 1e-9:
            robot.push(queue.pop(0).dv_xy)
            applied += 1
        runtime.step()
        if protocol.fell(robot.root_height(), robot.tilt()):
            return EpisodeResult((k + 1) * policy_dt, True, applied)
    return EpisodeResult(protocol.episode_s, False, applied)


def survival(
    meta: PolicyMetadata,
    policy: Policy,
    *,
    episodes: int = 8,
    protocol: BalanceProtocol | None = None,
    seed: int = 0,
    make_robot: Callable[[], Robot] | None = None,
) -> list[EpisodeResult]:
    """Episodes of ``policy`` on a robot (pushes drawn from ``seed``: equal across policies).

    Args:
        protocol: Pushes, falls and episode length; default: the export's (:attr:`PolicyMetadata.balance_protocol`).
        make_robot: Builds the robot (a :class:`~realgap.envs.deploy.robot.Robot` with the helpers of
            :class:`BalanceRobot`); default: the MuJoCo robot of ``meta`` in its start pose.
    """
    protocol = meta.balance_protocol if protocol is None else protocol
    robot = MujocoRobot.for_policy(meta) if make_robot is None else make_robot()
    runtime = DeployRuntime(meta, robot, policy, seed=seed)
    return [run_episode(runtime, robot, s, protocol) for s in schedules(episodes, protocol, seed)]


def stance_metadata(meta: PolicyMetadata) -> PolicyMetadata:
    """``meta`` with the offset of every ``joint_position_offset`` term at the robot's default pose: the metadata under
    which :class:`~realgap.envs.deploy.ZeroPolicy` is the *task's* zero action (hold the stance).

    An export trained around another nominal pose (e.g. the crouch lever, ``--set env.actions.joint_pos.offset=...``)
    holds its own pose at a zero action; its baseline, as in Isaac Lab, is the task's stance. For an export of the task
    as defined (offset = default pose) this is ``meta`` unchanged. A ``joint_position_measured`` term (whose zero
    action holds wherever the robot is) becomes the ``joint_position_offset`` term at the stance with its scale and
    clip.
    """
    terms = []
    for term in meta.actions.terms:
        pose = [meta.default_joint_pos[meta.joint_names.index(j)] for j in term.joint_names]
        if term.type == "joint_position_offset":
            term = replace(term, params={**term.params, "offset": pose})
        elif term.type == "joint_position_measured":  # its zero action holds where the robot is: hold the stance
            params = {k: term.params[k] for k in ("scale", "clip_min", "clip_max")}
            equation = joint_position_offset(term.joint_names, 1.0, 0.0, None, None)["equation"]  # values: params
            term = replace(term, type="joint_position_offset", params={**params, "offset": pose}, equation=equation)
        terms.append(term)
    actions = replace(meta.actions, terms=tuple(terms))
    return meta if actions == meta.actions else replace(meta, actions=actions)


@dataclass(frozen=True)
class PairedTimeUp:
    """Two policies on the same push schedules, episode by episode (``a`` minus ``b``).

    Attributes:
        episodes: Number of paired episodes.
        mean_time_up_a_s: Mean time up of ``a``, s. mean_time_up_b_s: Of ``b``, s.
        falls_a: Episodes ``a`` fell in. falls_b: Episodes ``b`` fell in.
        diff_mean_s: Mean over episodes of ``time_up_a - time_up_b``, s.
        diff_se_s: Its standard error, sample standard deviation / √episodes, s (NaN for one episode).
    """

    episodes: int
    mean_time_up_a_s: float
    mean_time_up_b_s: float
    falls_a: int
    falls_b: int
    diff_mean_s: float
    diff_se_s: float


def paired_time_up(a: Sequence[EpisodeResult], b: Sequence[EpisodeResult]) -> PairedTimeUp:
    """Compare ``a`` and ``b`` run on the same schedules (episode ``k`` of each faced schedule ``k``).

    Pairing removes the schedule-to-schedule spread (a hard push sequence topples both) from the comparison, so the
    standard error is that of the per-episode difference, not of two independent means.

    Raises:
        ValueError: Different numbers of episodes, or none.
    """
    if len(a) != len(b) or not a:
        raise ValueError(f"paired episodes need equal, non-zero counts; got {len(a)} and {len(b)}")
    diff = [x.time_up_s - y.time_up_s for x, y in zip(a, b, strict=True)]
    se = statistics.stdev(diff) / math.sqrt(len(diff)) if len(diff) > 1 else math.nan
    return PairedTimeUp(
        len(a),
        statistics.fmean(r.time_up_s for r in a),
        statistics.fmean(r.time_up_s for r in b),
        sum(r.fell for r in a),
        sum(r.fell for r in b),
        statistics.fmean(diff),
        se,
    )


def check_comparable(exports: Mapping[str, PolicyMetadata]) -> None:
    """Refuse exports that cannot be compared on one robot under one task's pushes.

    Args:
        exports: Metadata by label (e.g. the export folder).

    Raises:
        ValueError: The exports differ in task, robot (name, description hash) or joint order, naming each; or their
            robot is fixed to the world (no base to push or to fall).
    """
    (label, first), *others = exports.items()

    def what(meta: PolicyMetadata) -> tuple:
        return meta.task, meta.robot.name, meta.robot.description_sha256, meta.joint_names

    for other_label, other in others:
        differ = [
            n
            for n, x, y in zip(("task", "robot", "description", "joint order"), what(first), what(other), strict=True)
            if x != y
        ]
        if differ:
            raise ValueError(
                f"a paired comparison needs exports of one task on one robot; they differ in "
                f"{', '.join(differ)}: {label} is {first.task} on '{first.robot.name}' (description "
                f"{first.robot.description_sha256[:12]}…), {other_label} is {other.task} on "
                f"'{other.robot.name}' (description {other.robot.description_sha256[:12]}…)"
            )
    if first.robot.fixed_base:
        raise ValueError(
            f"push-and-fall episodes need a floating base; robot '{first.robot.name}' of {first.task} "
            f"({label}) is fixed to the world"
        )
