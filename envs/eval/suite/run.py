"""Run an export (or the zero action) on every robot of a suite: episodes per robot, summary per family.

:func:`evaluate_suite` is ``scripts/evaluate_suite.py``: it validates the suite and the request before anything is
built, refuses an export of another task or robot, draws every robot (:mod:`~realgap.envs.eval.suite.draw`), builds
it (:mod:`~realgap.envs.eval.suite.plant`) and runs it through the deploy runtime on MuJoCo C:

- balance: the push-and-fall episodes of :mod:`realgap.envs.deploy.episode` (the suite's pushes, length and fall
  test; push schedules from the robot's episode seed); an episode *survives* when it reaches its length;
- grasp: the export's grasp episode (:func:`grasp_episode`: success = the lift held for ``hold_steps`` policy steps;
  a drop below the drawn table, the arm's speed reflex or the time-out end it as a failure).

The statistics per family and over the whole suite are :func:`realgap.envs.eval.suite.report.summarize`'s.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realgap.envs.eval.suite.schema import load_suite, task_of


@dataclass(frozen=True)
class SuiteRequest:
    """One suite evaluation as scripts/evaluate_suite.py's flags give it (see its ``--help`` for each)."""

    policy: str
    suite: str
    episodes: int = 4
    out: str = "runs/suite"
    zero_action: bool = False
    robots: int | None = None
    families: tuple[str, ...] | list[str] | None = None
    restore: tuple[str, ...] | list[str] = ()
    restore_from: str = "typical"


@dataclass(frozen=True)
class Outcome:
    """One episode on one suite robot.

    Attributes:
        family: The robot's family. robot: Its index. episode: The episode's index on that robot.
        success: Balance: survived to the end; grasp: the lift held. time_s: Balance: time up, s; grasp: time to
            the end of the episode, s. ended_by: ``fall``/``time_out`` (balance), ``success``/``drop``/``reflex``/
            ``time_out`` (grasp). max_lift_m: Grasp only (NaN for balance): highest lift of the object, m.
    """

    family: str
    robot: int
    episode: int
    success: bool
    time_s: float
    ended_by: str
    max_lift_m: float = math.nan


def check_request(req: SuiteRequest) -> None:
    """Refuse counts no evaluation can run with.

    Raises:
        ValueError: ``episodes`` < 1 or ``robots`` < 1; an unknown ``--restore`` group.
    """
    if req.episodes < 1 or (req.robots is not None and req.robots < 1):
        raise ValueError(f"--episodes and --robots must be >= 1, got {req.episodes} and {req.robots}")
    from realgap.envs.eval.suite.draw import check_groups

    check_groups(req.restore, "--restore")


def grasp_episode(runtime: Any, robot: Any, scene_robot: Any, family: str, index: int, episode: int) -> Outcome:
    """One grasp episode on a suite cell (the export's success and drop tests, the arm's reflex; see the module
    docstring). ``robot`` is the position robot the runtime drives, ``scene_robot`` its grasp scene."""
    from realgap.envs.deploy.grasp_scene import run_grasp_episode

    ep = run_grasp_episode(runtime, robot, scene_robot)
    dt = runtime.meta.rates.policy_dt
    return Outcome(family, index, episode, ep.success, ep.steps * dt, ep.ended_by, ep.max_lift_m)


def _robot_episodes(
    meta: Any, run_meta: Any, policy: Any, suite: Any, family: Any, draw: Any, episodes: int
) -> list[Outcome]:
    from realgap.envs.deploy.episode import run_episode, schedules
    from realgap.envs.deploy.runtime import DeployRuntime
    from realgap.envs.eval.suite.plant import balance_robot, grasp_robot
    from realgap.envs.format.protocol import BalanceProtocol

    if suite.task == "grasp":
        robot, scene_robot, objects = grasp_robot(meta, suite, draw, family.values)
        runtime = DeployRuntime(run_meta, robot, policy, seed=draw.episode_seed, objects=objects)
        return [grasp_episode(runtime, robot, scene_robot, family.name, draw.index, e) for e in range(episodes)]
    ep = suite.episode
    robot = balance_robot(meta, suite, draw)
    runtime = DeployRuntime(run_meta, robot, policy, seed=draw.episode_seed)
    protocol = BalanceProtocol(
        ep["push_mps"], ep["push_interval_s"], ep["fall_height_m"], ep["fall_tilt_rad"], ep["duration_s"]
    )
    out = []
    for e, pushes in enumerate(schedules(episodes, protocol, draw.episode_seed)):
        r = run_episode(runtime, robot, pushes, protocol)
        out.append(Outcome(family.name, draw.index, e, not r.fell, r.time_up_s, "fall" if r.fell else "time_out"))
    return out


def _print_now(line: str) -> None:
    print(line, flush=True)


def evaluate_suite(req: SuiteRequest, echo: Callable[[str], None] = _print_now) -> tuple[dict[str, Any], Path]:
    """Run the request (module docstring), ``echo`` one line per robot and per family, write the report into
    ``req.out`` (``summary.json``, ``summary.md``, ``episodes.csv``, plots). Returns the report and the folder.

    Raises:
        ValueError: See :func:`check_request`; an export of another task or robot than the suite's; an unknown family.
        SuiteError: An invalid suite file.
        MetadataError: An export that cannot be read.
    """
    check_request(req)
    from realgap.envs.deploy.episode import stance_metadata
    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.deploy.runtime import ZeroPolicy
    from realgap.envs.eval.suite.draw import draw_robot, restore_groups
    from realgap.envs.eval.suite.plant import robot_links
    from realgap.envs.eval.suite.report import write_report
    from realgap.envs.format import load_policy

    suite = load_suite(req.suite)
    families = [suite.family(name) for name in req.families] if req.families else list(suite.families)
    source = suite.family(req.restore_from) if req.restore else None
    meta, policy = load_policy(req.policy)
    if task_of(meta) != suite.task or meta.robot.name != suite.robot:
        raise ValueError(
            f"suite {suite.source} is for the {suite.task} task on robot '{suite.robot}'; the export "
            f"{req.policy} is {task_of(meta)} ({meta.task}) on '{meta.robot.name}'"
        )
    run_meta = meta
    if req.zero_action:  # the task's zero action: hold the stance (balance) / hold the pose, gripper open (grasp)
        run_meta = stance_metadata(meta) if suite.task == "balance" else meta
        policy = ZeroPolicy(meta.action_dim)
    links = 0
    if suite.task == "balance":
        sim = MujocoRobot.for_policy(meta)
        links = len(robot_links(sim.model, sim.imu_body))
    outcomes, draws, t0 = [], [], time.perf_counter()
    for family in families:
        count = family.robots if req.robots is None else min(req.robots, family.robots)
        for k in range(count):
            draw = draw_robot(suite, family, k, meta, links)
            if source is not None and family.name != source.name:  # robot k of the source family lends its groups
                draw = restore_groups(draw, draw_robot(suite, source, k % source.robots, meta, links), req.restore)
            res = _robot_episodes(meta, run_meta, policy, suite, family, draw, req.episodes)
            outcomes += res
            draws.append(draw)
            wins = sum(r.success for r in res)
            echo(
                f"[realgap] {family.name} robot {k} (seed {draw.seed}, hold {draw.hold_period_steps} steps): "
                f"{wins}/{len(res)} "
                f"{'survived' if suite.task == 'balance' else 'succeeded'}, mean time "
                f"{sum(r.time_s for r in res) / len(res):.2f} s"
            )
    wall = time.perf_counter() - t0
    label = "zero action" if req.zero_action else req.policy
    report, out = write_report(
        suite, label, req, [dataclasses.asdict(r) for r in outcomes], [d.to_dict() for d in draws], wall
    )
    for name, fam in report["families"].items():
        lo, hi = fam["wilson95"]
        echo(
            f"[realgap] {name}: {fam['successes']}/{fam['episodes']} = {fam['rate']:.3f} (Wilson 95 % "
            f"{lo:.3f}-{hi:.3f}), mean time {fam['mean_time_s']:.2f} s"
        )
    echo(f"[realgap] wrote {out}")
    return report, out
