"""``realgap deploy --robot unitree_g1``: one balance episode (or, with ``--excite``, the identification
motion) on a G1 over DDS, ending in damping.

Exit status: 0 the episode ran (fell or not: printed, like ``--robot mujoco``); 2 bad input, no robot within the
connect timeout, or a stream refused at connect (tick period, CRC, AB mode, motion service); 3 a safety stop other
than a fall (watchdog, bad state, non-finite action); 130 Ctrl-C. Every ending sends damping for 0.5 s first, because
the drives hold the last command they received. Every time printed is control time (completed control periods ×
the control period: the robot's clock on the tick clock), except where a line says "wall".
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from realgap.envs.deploy import ZeroPolicy
from realgap.envs.deploy.drivers.unitree_g1 import SafetyStop, UnitreeG1Robot
from realgap.envs.deploy.log import LogRecorder, RobotLog
from realgap.envs.deploy.runtime import DeployRuntime
from realgap.envs.format.protocol import BalanceProtocol


def _connect(args: argparse.Namespace, meta, fall_tilt_rad: float) -> UnitreeG1Robot:
    """Connect to the G1 on ``args``' domain and interface, its fall judged by tilt beyond ``fall_tilt_rad``; print
    the stream's checks."""
    robot = UnitreeG1Robot(
        meta,
        args.domain,
        args.interface,
        connect_timeout_s=args.connect_timeout_s,
        watchdog_s=args.watchdog_s,
        fall_tilt=fall_tilt_rad,
        tick_period_s=args.tick_period_s,
        clock=args.clock,
        state_crc=args.state_crc == "on",
        motion_switcher=args.motion_switcher,
    )
    c = robot.clock_choice
    tick = (
        f", {c.tick_period_s * 1e3:.2f} ms per tick (expected {args.tick_period_s * 1e3:g})" if c.tick_period_s else ""
    )
    crc = "checked" if robot.stream.check_crc else "not checked (--state_crc off)"
    for note in robot.connect_notes:
        print(f"[realgap] {note}", flush=True)
    print(
        f"[realgap] LowState stream: {c.clock} clock ({c.states} states in the connect window, one every "
        f"{c.message_period_s * 1e3:.2f} ms{tick}); state CRC {crc}; watchdog {args.watchdog_s * 1e3:g} ms",
        flush=True,
    )
    return robot


def excite_g1(
    args: argparse.Namespace, meta, fall_tilt_rad: float, motion: Callable[[UnitreeG1Robot, np.ndarray], RobotLog]
) -> int:
    """``--excite`` over DDS: connect (a fall: tilt beyond ``fall_tilt_rad``, the protocol's), soft-start, the
    identification motion of the in-process ``--excite``
    (``motion(robot, root_pos_w)`` → the log: the command line passes
    :func:`~realgap.envs.identify.excitation.run_excitation` with the default plan), damp; log it to ``args.log``.

    The robot must hang (a real G1 on its gantry; ``g1_dds_sim --hidden_seed N``: welded ``--hang_m`` above the start
    pose): the log records the root there, as the in-process ``--excite`` does. Logged torque: the drives' ``tau_est``;
    logged target: the one sent (after the driver's clamps; float32), so a clamp that bound is not read as a drive
    fault. Exit status as :func:`run_g1` (a safety stop: 3, and no log).
    """

    robot = _connect(args, meta, fall_tilt_rad)
    root = np.asarray(meta.robot.start_root_pos, dtype=float) + np.array([0.0, 0.0, args.hang_m])
    print(
        f"[realgap] G1 over DDS: domain {args.domain}, interface {args.interface}; soft start "
        f"{args.soft_start_s:g} s, then excitation of {', '.join(args.excite)} (hanging {args.hang_m:g} m up)",
        flush=True,
    )
    status, log = 0, None
    try:
        gains = DeployRuntime(meta, robot, None, command_delay=False)  # the export's kp/kd in joint order
        robot.soft_start(gains.kp, gains.kd, args.soft_start_s)
        robot.record_targets, first = True, len(robot.sent_targets)
        log = motion(robot, root)
        # log what went on the wire: the driver's clamps may have moved a target (and the wire carries float32)
        sent = np.array(robot.sent_targets[first : first + log.num_samples], dtype=float)
        log = dataclasses.replace(log, q_target=sent)
    except SafetyStop as err:
        print(f"[realgap] safety stop: {err}; damping", flush=True)
        status = 3
    except KeyboardInterrupt:
        robot.damp("Ctrl-C")
        status = 130
    finally:
        robot.damp(robot.fault or "excitation end")
        robot.hold_damping(0.5)
    if log is not None:
        print(
            f"[realgap] excitation of {len(args.excite)} joints over DDS, {log.num_samples} samples "
            f"({log.t[-1]:.1f} s), torque {log.tau_source} (tau_est): {log.save(args.log)}",
            flush=True,
        )
    print(f"[realgap] commands sent {robot.commands_sent}; ended in damping ({robot.fault or 'excitation end'})")
    robot.close()
    return status


def run_g1(args: argparse.Namespace, meta, policy, protocol: BalanceProtocol) -> int:
    """Connect, soft-start, run one episode of ``protocol`` (the export's with the command line's flags) with the
    runtime, damp; the exit status."""
    from realgap.envs.deploy.episode import run_episode, schedules, stance_metadata

    if args.zero_action:
        meta, policy = stance_metadata(meta), ZeroPolicy(meta.action_dim)
    robot = _connect(args, meta, protocol.fall_tilt_rad)
    recorder = LogRecorder(meta, robot.control_dt, robot.command_mode, "measured") if args.log else None
    runtime = DeployRuntime(meta, robot, policy, seed=args.seed, log=recorder)
    print(
        f"[realgap] G1 over DDS: domain {args.domain}, interface {args.interface}, control {1 / robot.control_dt:g} "
        f"Hz, watchdog {args.watchdog_s * 1e3:g} ms; soft start {args.soft_start_s:g} s",
        flush=True,
    )
    pushes = schedules(1, protocol, args.seed)[0]
    status, episode_step, wall0 = 0, None, time.monotonic()
    try:
        robot.soft_start(runtime.kp, runtime.kd, args.soft_start_s)
        episode_step = robot.steps_done
        res = run_episode(runtime, robot, pushes, protocol)
        # the driver cannot push a robot: these are the schedule's pushes (seed, --push_mps, --push_interval_s) that
        # fell due; the robot side applies its own (g1_dds_sim's --report counts those it applied)
        print(
            f"episode 1/1: time up {res.time_up_s:.2f} s, {'fell' if res.fell else 'no fall'}, {res.pushes} pushes "
            f"due on the schedule of seed {args.seed} (applied by the robot side, not counted here)",
            flush=True,
        )
    except SafetyStop as err:
        fell = str(err).startswith("fall")
        t = robot.control_time_s - (episode_step or 0) * robot.control_dt
        where = "into the episode" if episode_step is not None else "into the soft start"
        print(
            f"episode 1/1: safety stop at {t:.2f} s {where} (control time; wall {time.monotonic() - wall0:.2f} s): "
            f"{err}; damping",
            flush=True,
        )
        status = 0 if fell else 3
    except KeyboardInterrupt:
        robot.damp("Ctrl-C")
        print("[realgap] Ctrl-C: damping, then exit", flush=True)
        status = 130
    finally:
        robot.damp(robot.fault or "episode end")
        robot.hold_damping(0.5)
    samples = 0 if episode_step is None else robot.steps_done - episode_step  # one per completed control period
    if recorder is not None and samples > 0:
        print(f"[realgap] log: {recorder.save(Path(args.log))} ({samples} samples)", flush=True)
    elif recorder is not None:
        print(f"[realgap] no log written to {args.log}: the run stopped before the first policy step", flush=True)
    if len(robot.step_times) > 2:
        period = np.diff(robot.step_times) * 1e3
        print(
            f"[realgap] control period (wall clock) p50 {np.percentile(period, 50):.2f} ms, p99 "
            f"{np.percentile(period, 99):.2f} ms over {len(period)} periods",
            flush=True,
        )
    print(f"[realgap] commands sent {robot.commands_sent}; ended in damping ({robot.fault or 'episode end'})")
    robot.close()
    return status
