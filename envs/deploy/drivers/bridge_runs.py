"""Runs of the G1 DDS bridge for the figures of docs/robots.md (``scripts/robot_bridges.py``): a pushed balance
episode over DDS as two processes. Command-to-state latency is :mod:`realgap.envs.deploy.drivers.latency`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path


def dds_episode(policy: str, seed: int, duration_s: float, push: str, domain: int, tmp: Path) -> dict:
    """One pushed balance episode over DDS (``g1_dds_sim`` and the deploy CLI's ``unitree_g1`` driver, two
    processes on ``domain``): the simulator's report (fall, pushes, CRC failures, commands) and the driver's control
    period p50/p99 (wall clock, ms) and its safety stop, if any. The simulator's report goes to ``tmp`` and is removed
    after reading."""
    report = tmp / f"sim_{seed}.json"
    sim = subprocess.Popen([sys.executable, "-m", "realgap.envs.deploy.drivers.g1_dds_sim", "--policy", policy,
                            "--domain", str(domain), "--duration_s", str(1.0 + duration_s), "--push_mps", push,
                            "--seed", str(seed), "--report", str(report)], stdout=subprocess.DEVNULL)  # fmt: skip
    drv = subprocess.run([sys.executable, "-m", "realgap.scripts.deploy", "--policy", policy, "--robot", "unitree_g1",
                          "--domain", str(domain), "--connect_timeout_s", "60", "--duration_s", str(duration_s),
                          "--push_mps", push, "--seed", str(seed)], capture_output=True, text=True)  # fmt: skip
    sim.wait(timeout=300)
    rep = json.loads(report.read_text())
    report.unlink()
    m = re.search(r"p50 ([\d.]+) ms, p99 ([\d.]+) ms", drv.stdout)
    fell = rep["fell_at_s"] is not None and rep["fell_at_s"] <= 1.0 + duration_s
    p50, p99 = (float(m.group(1)), float(m.group(2))) if m else (None, None)
    stop = re.search(r"safety stop at [\d.]+ s [a-z ]+ \(control time; wall [\d.]+ s\): (.*); damping", drv.stdout)
    return {"seed": seed, "exit": drv.returncode, "fell": fell, "fell_at_s": rep["fell_at_s"],
            "pushes": rep["pushes"], "crc_failures": rep["crc_failures"], "commands": rep["commands"],
            "period_p50_ms": p50, "period_p99_ms": p99,
            "safety_stop": stop.group(1) if stop else None}  # fmt: skip
