"""Figures for docs/robots.md: the balance export over DDS (g1_dds_sim + the unitree_g1 driver, two processes on
loopback) against the in-process MuJoCo robot on the same push seeds, and the driver's loop timing.

    python scripts/robot_bridges.py --seeds 0 1 2 --duration_s 6 --out docs/results/robot_bridges/balance_dds.json

Needs ``pip install '.[deploy,unitree]'``. Timing is wall clock on whatever machine runs it (the JSON records the
CPU count and load average next to it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

POLICY = "configs/policies/balance_g1"


def dds_episode(seed: int, duration_s: float, push: str, domain: int, tmp: Path) -> dict:
    """One pushed episode over DDS: the simulator's report plus the driver's timing line."""
    report = tmp / f"sim_{seed}.json"
    sim = subprocess.Popen([sys.executable, "-m", "realgap.envs.deploy.drivers.g1_dds_sim", "--policy", POLICY,
                            "--domain", str(domain), "--duration_s", str(1.0 + duration_s), "--push_mps", push,
                            "--seed", str(seed), "--report", str(report)], stdout=subprocess.DEVNULL)  # fmt: skip
    drv = subprocess.run([sys.executable, "-m", "realgap.envs.deploy", "--policy", POLICY, "--robot", "unitree_g1",
                          "--domain", str(domain), "--connect_timeout_s", "60", "--duration_s", str(duration_s),
                          "--push_mps", push, "--seed", str(seed)], capture_output=True, text=True)  # fmt: skip
    sim.wait(timeout=300)
    rep = json.loads(report.read_text())
    m = re.search(r"p50 ([\d.]+) ms, p99 ([\d.]+) ms", drv.stdout)
    fell = rep["fell_at_s"] is not None and rep["fell_at_s"] <= 1.0 + duration_s
    p50, p99 = (float(m.group(1)), float(m.group(2))) if m else (None, None)
    return {"seed": seed, "exit": drv.returncode, "fell": fell, "fell_at_s": rep["fell_at_s"],
            "pushes": rep["pushes"], "crc_failures": rep["crc_failures"], "commands": rep["commands"],
            "period_p50_ms": p50, "period_p99_ms": p99}  # fmt: skip


def inprocess_episode(seed: int, duration_s: float, push: tuple[float, float]) -> dict:
    """The same seed's pushes on the in-process MuJoCo robot."""
    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.deploy.runtime import DeployRuntime
    from realgap.envs.deploy.sim2sim import run_episode, schedules
    from realgap.envs.format import load_policy

    meta, policy = load_policy(POLICY)
    robot = MujocoRobot.for_policy(meta)
    runtime = DeployRuntime(meta, robot, policy, seed=seed)
    res = run_episode(runtime, robot, schedules(1, duration_s, push, (3.0, 5.0), seed)[0], duration_s, 0.45, 1.0)
    return {"seed": seed, "fell": res.fell, "time_up_s": res.time_up_s, "pushes": res.pushes}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--duration_s", type=float, default=6.0)
    p.add_argument("--push_mps", default="0.2,0.4")
    p.add_argument("--domain", type=int, default=77)
    p.add_argument("--out", default="docs/results/robot_bridges/balance_dds.json")
    args = p.parse_args()
    lo, hi = (float(v) for v in args.push_mps.split(","))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    dds = [dds_episode(s, args.duration_s, args.push_mps, args.domain, out.parent) for s in args.seeds]
    for s in args.seeds:
        (out.parent / f"sim_{s}.json").unlink(missing_ok=True)
    local = [inprocess_episode(s, args.duration_s, (lo, hi)) for s in args.seeds]
    result = {"policy": POLICY, "duration_s": args.duration_s, "push_mps": [lo, hi], "push_interval_s": [3.0, 5.0],
              "soft_start_s": 1.0, "cpu_count": os.cpu_count(), "loadavg": list(os.getloadavg()),
              "dds": dds, "in_process": local}  # fmt: skip
    out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
