"""``realgap deploy --robot franka``: one episode of a Franka export over franky, ending stopped.

The object's pose comes from an :class:`~realgap.envs.deploy.objects.ObjectPose`; this CLI feeds the scene's nominal
placement (:meth:`StaticObjectPose.nominal`: a dry run, e.g. on franky-sim, which has no table or object); a cell
with perception plugs its own source into :class:`~realgap.envs.deploy.runtime.DeployRuntime` (``objects=``).

Exit status: 0 the episode ran; 2 bad input or no robot within the connect timeout; 3 a safety stop (the robot left
control, watchdog, a non-finite action or target); 130 Ctrl-C. Every ending stops the arm's motion (the robot holds
its pose; the hand keeps its grip).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from realgap.envs.deploy import ZeroPolicy
from realgap.envs.deploy.drivers.franka import FrankaRobot, SafetyStop
from realgap.envs.deploy.objects import StaticObjectPose
from realgap.envs.deploy.runtime import DeployRuntime


def _stats(values: np.ndarray) -> dict:
    return (
        {"p50": float(np.percentile(values, 50)), "p99": float(np.percentile(values, 99)), "max": float(np.max(values))}
        if len(values)
        else {}
    )


def franka_report(robot: FrankaRobot) -> dict:
    """Tracking error (|q(k+1) − q*(k)| over the arm joints, rad) next to the commanded step (|q*(k) − q(k)|, rad),
    loop periods (wall and robot clock, ms), the robot-clock to wall-clock ratio, the hand's widths and
    how many steps its grasp detection held (with the window it judged by)."""
    wall, clock = np.diff(robot.step_times) * 1e3, np.diff(robot.robot_times) * 1e3
    track = np.array(robot.tracking)
    span = (robot.step_times[-1] - robot.step_times[0]) if len(robot.step_times) > 1 else 0.0
    widths = {"min": min(robot.widths, default=None), "max": max(robot.widths, default=None)}
    return {
        "steps": len(robot.step_times),
        "fault": robot.fault,
        "tracking_rad": _stats(track.reshape(-1))
        | ({"per_joint_p50": np.percentile(track, 50, axis=0).tolist()} if len(track) else {}),
        "commanded_step_rad": _stats(np.array(robot.commanded).reshape(-1)),
        "period_wall_ms": _stats(wall),
        "period_robot_ms": _stats(clock),
        "robot_to_wall_time": (robot.robot_times[-1] - robot.robot_times[0]) / span if span > 0 else None,
        "gripper_width_m": widths,
        "gripper_grasped_steps": int(sum(robot.grasped)),
        "grasp_window_m": list(robot.grasp_window_m),
    }


def run_franka(args: argparse.Namespace, meta, policy) -> int:
    """Connect, move to the start pose, run ``args.duration_s`` of the policy (default: the scene's episode length),
    stop; the exit status."""

    if args.zero_action:
        policy = ZeroPolicy(meta.action_dim)
    robot = FrankaRobot(
        meta,
        args.hostname,
        connect_timeout_s=args.connect_timeout_s,
        watchdog_s=args.watchdog_s,
        gripper_force_n=args.gripper_force_n,
    )
    runtime = DeployRuntime(meta, robot, policy, seed=args.seed, objects=StaticObjectPose.nominal(meta))
    steps = round((meta.scene.episode_s if args.duration_s is None else args.duration_s) / robot.control_dt)
    print(
        f"[realgap] Franka over franky: {args.hostname}, control {1 / robot.control_dt:g} Hz (joint impedance, the "
        f"export's gains), gripper force {args.gripper_force_n:g} N; object: the scene's nominal placement",
        flush=True,
    )
    status = 0
    try:
        robot.move_to_start()
        for _ in range(steps):
            runtime.step()
        print(f"episode 1/1: {steps} policy steps", flush=True)
    except SafetyStop as err:
        print(f"episode 1/1: safety stop: {err}", flush=True)
        status = 3
    except FloatingPointError as err:
        robot.stop(f"non-finite action: {err}")
        print(f"episode 1/1: safety stop: {robot.fault}", flush=True)
        status = 3
    except KeyboardInterrupt:
        robot.stop("Ctrl-C")
        print("[realgap] Ctrl-C: arm stopped, exit", flush=True)
        status = 130
    finally:
        robot.close()
    report = franka_report(robot)
    t, p = report["tracking_rad"], report["period_wall_ms"]
    if t and p:
        print(
            f"[realgap] tracking |q - q*| p50 {t['p50']:.4f} rad, p99 {t['p99']:.4f} rad; control period (wall) p50 "
            f"{p['p50']:.2f} ms, p99 {p['p99']:.2f} ms over {report['steps']} steps",
            flush=True,
        )
    if args.report:
        Path(args.report).write_text(json.dumps(report | {"exit": status}, indent=1) + "\n")
    print(f"[realgap] ended stopped ({robot.fault or 'episode end'})", flush=True)
    return status
