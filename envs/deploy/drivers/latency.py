"""Command-to-state latency over DDS, measured on the wire without a mock.

Every command the driver sends carries a sequence number (``LowCmd_.reserve[0]``); the driver keeps each one's send
time and the receive time of each new LowState ``tick`` (:class:`~realgap.envs.deploy.drivers.unitree_g1.UnitreeG1Robot`
with ``record_timing``), and ``g1_dds_sim --timing_log`` keeps, per command it applied, the receive time, the time it
was applied and the tick of the first LowState that reflects it. All times are ``CLOCK_MONOTONIC`` (Python's
``time.monotonic``), one clock for every process of a machine, so times from the two processes subtract directly:

- send → received: the DDS transport (driver publish to simulator callback);
- send → applied: plus the wait for the simulator's next physics step (up to one tick, 2 ms);
- send → state received: plus the step and the LowState back to the driver — what a controller sees as its
  command-to-state latency.

A command superseded by a newer one before a physics step applied it is counted, not timed. numpy only, except
:func:`measure_latency`, which runs the simulator and the driver.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from realgap.envs.deploy.drivers import g1_dds_sim as dds_sim
from realgap.envs.deploy.drivers.g1_dds_sim import PHYSICS_DT
from realgap.envs.deploy.drivers.unitree_g1 import UnitreeG1Robot
from realgap.envs.deploy.runtime import DeployRuntime
from realgap.envs.format import load_policy


def _percentiles(x_s: np.ndarray) -> dict[str, float | None]:
    if x_s.size == 0:
        return {"p50_ms": None, "p99_ms": None, "max_ms": None}
    ms = x_s * 1e3
    return {"p50_ms": float(np.percentile(ms, 50)), "p99_ms": float(np.percentile(ms, 99)), "max_ms": float(ms.max())}


def latency_stats(
    sent: Sequence[tuple[int, float]], states: Sequence[tuple[int, float]], applied: dict[str, np.ndarray]
) -> dict:
    """p50 / p99 / max of send → received, send → applied and send → state received, ms, with counts.

    Args:
        sent: ``(sequence number, send time s)`` per command (the driver's ``command_log``).
        states: ``(tick, receive time s)`` per new tick the driver saw (its ``state_log``).
        applied: The simulator's timing log: arrays ``seq``, ``received_s``, ``tick`` (first LowState reflecting the
            command), ``applied_s``.

    Raises:
        ValueError: No command was both sent and applied (nothing to time).
    """
    t_send = dict(sent)
    t_state = {}
    for tick, t in states:
        t_state.setdefault(int(tick), float(t))
    seq = np.asarray(applied["seq"], dtype=np.int64)
    keep = np.array([int(s) in t_send for s in seq], dtype=bool)
    if not keep.any():
        raise ValueError("no command was both sent by the driver and applied by the simulator: nothing to time")
    send = np.array([t_send[int(s)] for s in seq[keep]])
    recv, appl = np.asarray(applied["received_s"])[keep], np.asarray(applied["applied_s"])[keep]
    ticks = np.asarray(applied["tick"], dtype=np.int64)[keep]
    seen = np.array([int(k) in t_state for k in ticks], dtype=bool)
    back = np.array([t_state[int(k)] for k in ticks[seen]]) - send[seen]
    return {
        "commands_sent": len(t_send),
        "commands_applied": int(keep.sum()),
        "superseded_before_a_step": len(t_send) - int(keep.sum()),
        "states_missed": int((~seen).sum()),  # the tick reflecting a command never reached the driver
        "sim_ticks_per_wall_s": float((ticks[-1] - ticks[0]) / max(appl[-1] - appl[0], 1e-9)),  # 500: real time
        "send_to_received": _percentiles(recv - send),
        "send_to_applied": _percentiles(appl - send),
        "send_to_state_received": _percentiles(back),
    }


def measure_latency(policy: str, domain: int, seconds: float = 10.0, interface: str = "lo") -> dict:
    """Run ``g1_dds_sim`` (free-running, 2 ms ticks, no pushes) in a second process and hold the start pose with the
    driver in this one for ``seconds`` at the export's servo rate, then damp; :func:`latency_stats` of the run.

    Opens this process's DDS participant on ``domain`` (one per process: call it once).
    """

    meta, _ = load_policy(policy)
    with tempfile.TemporaryDirectory() as tmp:
        timing = Path(tmp) / "timing.npz"
        sim = subprocess.Popen(
            dds_sim.command(policy, domain, interface=interface, duration_s=seconds + 1.5, timing_log=timing),
            stdout=subprocess.DEVNULL,
            env=os.environ.copy(),
        )
        try:
            robot = UnitreeG1Robot(meta, domain, interface, connect_timeout_s=60.0, watchdog_s=1.0, record_timing=True)
            gains = DeployRuntime(meta, robot, None, command_delay=False)
            t0 = time.monotonic()
            robot.soft_start(gains.kp, gains.kd, seconds)  # a hold at the start pose: one command per period
            wall, held = time.monotonic() - t0, len(robot.command_log)
            robot.hold_damping(0.5)
            robot.close()
            sim.wait(timeout=120)
        finally:
            if sim.poll() is None:
                sim.kill()
        with np.load(timing) as f:
            applied = {k: f[k] for k in f.files}
    stats = latency_stats(robot.command_log[:held], robot.state_log, applied)  # the hold's commands, not the damping
    stats.update(
        {"control_hz": float(meta.rates.control_hz), "tick_ms": PHYSICS_DT * 1e3, "held_s": seconds, "wall_s": wall}
    )
    return stats
