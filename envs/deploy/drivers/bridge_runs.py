"""Runs of the robot bridges for the figures of docs/robots.md: a pushed balance episode of the G1 over DDS as two
processes (``scripts/robot_bridges.py``; command-to-state latency is :mod:`realgap.envs.deploy.drivers.latency`), and
the Franka grasp export in the runtime's MuJoCo grasp scene or against franky-sim (``scripts/franka_bridge.py``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realgap.envs.deploy import load_policy
from realgap.envs.deploy.drivers import g1_dds_sim as dds_sim
from realgap.envs.deploy.drivers.latency import measure_latency
from realgap.envs.deploy.flags import protocol_from_flags
from realgap.envs.deploy.runtime import DeployRuntime
from realgap.envs.format import load_metadata
from realgap.envs.format.protocol import BalanceProtocol

BALANCE_POLICY = "configs/policies/balance_g1"
FRANKA_POLICY = "configs/policies/grasp_franka"


def dds_episode(policy: str, seed: int, duration_s: float, push: str, domain: int, tmp: Path) -> dict:
    """One pushed balance episode over DDS (``g1_dds_sim`` and the deploy CLI's ``unitree_g1`` driver, two
    processes on ``domain``): the simulator's report (fall, pushes, CRC failures, commands) and the driver's control
    period p50/p99 (wall clock, ms) and its safety stop, if any. The simulator's report goes to ``tmp`` and is removed
    after reading."""
    report = tmp / f"sim_{seed}.json"
    sim = subprocess.Popen(
        dds_sim.command(policy, domain, duration_s=1.0 + duration_s, push_mps=push, seed=seed, report=report),
        stdout=subprocess.DEVNULL,
    )
    drv = subprocess.run(
        [
            sys.executable,
            "-m",
            "realgap.scripts.deploy",
            "--policy",
            policy,
            "--robot",
            "unitree_g1",
            "--domain",
            str(domain),
            "--connect_timeout_s",
            "60",
            "--duration_s",
            str(duration_s),
            "--push_mps",
            push,
            "--seed",
            str(seed),
        ],
        capture_output=True,
        text=True,
    )
    sim.wait(timeout=300)
    rep = json.loads(report.read_text())
    report.unlink()
    m = re.search(r"p50 ([\d.]+) ms, p99 ([\d.]+) ms", drv.stdout)
    fell = rep["fell_at_s"] is not None and rep["fell_at_s"] <= 1.0 + duration_s
    p50, p99 = (float(m.group(1)), float(m.group(2))) if m else (None, None)
    stop = re.search(r"safety stop at [\d.]+ s [a-z ]+ \(control time; wall [\d.]+ s\): (.*); damping", drv.stdout)
    return {
        "seed": seed,
        "exit": drv.returncode,
        "fell": fell,
        "fell_at_s": rep["fell_at_s"],
        "pushes": rep["pushes"],
        "crc_failures": rep["crc_failures"],
        "commands": rep["commands"],
        "period_p50_ms": p50,
        "period_p99_ms": p99,
        "safety_stop": stop.group(1) if stop else None,
    }


@dataclass(frozen=True)
class BalanceBridgeRequest:
    """The G1 figures as scripts/robot_bridges.py's flags give them (see its ``--help`` for each)."""

    seeds: list[int]
    out: str
    duration_s: float = 6.0
    latency_s: float = 10.0
    push_mps: str | None = None
    domain: int = 77


def balance_bridge(req: BalanceBridgeRequest) -> dict[str, Any]:
    """The balance export over DDS (:func:`dds_episode`) and in process (:func:`inprocess_episode`) on the same push
    seeds, and command-to-state latency (:func:`~realgap.envs.deploy.drivers.latency.measure_latency`), with the
    machine's CPU count and load average; written as JSON to ``req.out`` and returned."""
    protocol = protocol_from_flags(req, load_metadata(BALANCE_POLICY).balance_protocol, req.duration_s)
    lo, hi = protocol.push_mps
    out = Path(req.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    push = f"{lo!r},{hi!r}"
    dds = [dds_episode(BALANCE_POLICY, s, req.duration_s, push, req.domain, out.parent) for s in req.seeds]
    local = [inprocess_episode(s, protocol) for s in req.seeds]
    latency = measure_latency(BALANCE_POLICY, req.domain + 1, req.latency_s)  # this process's one DDS participant
    result = {
        "policy": BALANCE_POLICY,
        "duration_s": req.duration_s,
        "push_mps": [lo, hi],
        "push_interval_s": list(protocol.push_interval_s),
        "soft_start_s": 1.0,
        "cpu_count": os.cpu_count(),
        "loadavg": list(os.getloadavg()),
        "dds": dds,
        "in_process": local,
        "latency": latency,
    }
    out.write_text(json.dumps(result, indent=1))
    return result


def inprocess_episode(seed: int, protocol: BalanceProtocol) -> dict:
    """The same seed's pushes on the in-process MuJoCo robot."""
    from realgap.envs.deploy.episode import run_episode, schedules  # MuJoCo: loaded only where it runs
    from realgap.envs.deploy.mujoco_robot import MujocoRobot

    meta, policy = load_policy(BALANCE_POLICY)
    robot = MujocoRobot.for_policy(meta)
    runtime = DeployRuntime(meta, robot, policy, seed=seed)
    res = run_episode(runtime, robot, schedules(1, protocol, seed)[0], protocol)
    return {"seed": seed, "fell": res.fell, "time_up_s": res.time_up_s, "pushes": res.pushes}


@dataclass(frozen=True)
class FrankaBridgeRequest:
    """A Franka figure as scripts/franka_bridge.py's flags give it (see its ``--help`` for each)."""

    part: str
    out: str
    policy: str = FRANKA_POLICY
    episodes: int = 256
    seed: int = 0
    duration_s: float = 4.0


def franka_bridge(req: FrankaBridgeRequest) -> dict[str, Any]:
    """The grasp export in the MuJoCo grasp scene (``part`` "mujoco": success over ``episodes``) or one franky-sim
    episode (``part`` "franky"), with the machine's CPU count and load average; written as JSON to ``req.out`` and
    returned."""
    meta, policy = load_policy(req.policy)
    if req.part == "mujoco":
        from realgap.envs.deploy.grasp_scene import grasp_report  # the Panda MJCF: the optional franka extra

        result = grasp_report(meta, policy, req.episodes, req.seed)
    else:
        result = franky_episode(req.policy, req.duration_s, req.seed)
    result = {"policy": req.policy, **result, "cpu_count": os.cpu_count(), "loadavg": list(os.getloadavg())}
    out = Path(req.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    return result


def franky_episode(policy: str, duration_s: float, seed: int) -> dict:
    """franky-sim (headless, MuJoCo) and the deploy CLI's franka driver as two processes; the driver's report."""
    sim = subprocess.Popen(
        [sys.executable, "-m", "franky_sim.run_server", "-s", "mujoco", "--hostname", "127.0.0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    for line in sim.stdout:
        if "Connect to the server" in line:
            break
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "franka.json"
        cmd = [
            sys.executable,
            "-m",
            "realgap.scripts.deploy",
            "--policy",
            policy,
            "--robot",
            "franka",
            "--hostname",
            "127.0.0.1",
            "--connect_timeout_s",
            "60",
            "--duration_s",
            str(duration_s),
            "--seed",
            str(seed),
            "--report",
            str(report),
        ]
        drv = subprocess.run(cmd, capture_output=True, text=True)
        sim.terminate()
        sim.wait(timeout=30)
        if drv.returncode != 0:
            raise RuntimeError(f"the franka driver exited {drv.returncode}:\n{drv.stdout}{drv.stderr}")
        return {"duration_s": duration_s, "gripper_force_n": 20.0, **json.loads(report.read_text())}
