"""Figures for docs/robots.md: the balance export over DDS (g1_dds_sim + the unitree_g1 driver, two processes on
loopback) against the in-process MuJoCo robot on the same push seeds, the driver's loop timing, and command-to-state
latency (:func:`realgap.envs.deploy.drivers.latency.measure_latency`: a ``--latency_s`` hold of the start pose).

    realgap robot_bridges --seeds 0 1 2 --duration_s 6 --out docs/results/robot_bridges/balance_dds.json

Needs ``pip install '.[deploy,unitree]'``. Timing is wall clock on whatever machine runs it (the JSON records the
CPU count and load average next to it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from realgap.envs.deploy.drivers.bridge_runs import dds_episode
from realgap.envs.deploy.drivers.latency import measure_latency
from realgap.envs.deploy.flags import add_protocol_flags, protocol_from_flags
from realgap.envs.format import load_metadata

POLICY = "configs/policies/balance_g1"


def inprocess_episode(seed: int, protocol) -> dict:
    """The same seed's pushes on the in-process MuJoCo robot."""
    from realgap.envs.deploy.episode import run_episode, schedules
    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.deploy.runtime import DeployRuntime
    from realgap.envs.format import load_policy

    meta, policy = load_policy(POLICY)
    robot = MujocoRobot.for_policy(meta)
    runtime = DeployRuntime(meta, robot, policy, seed=seed)
    res = run_episode(runtime, robot, schedules(1, protocol, seed)[0], protocol)
    return {"seed": seed, "fell": res.fell, "time_up_s": res.time_up_s, "pushes": res.pushes}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--duration_s", type=float, default=6.0)
    p.add_argument("--latency_s", type=float, default=10.0, help="hold of the latency measurement, s")
    add_protocol_flags(p, fall=False, interval=False)
    p.add_argument("--domain", type=int, default=77)
    p.add_argument("--out", default="docs/results/robot_bridges/balance_dds.json")
    args = p.parse_args()
    protocol = protocol_from_flags(args, load_metadata(POLICY).balance_protocol, args.duration_s)
    lo, hi = protocol.push_mps
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    dds = [dds_episode(POLICY, s, args.duration_s, f"{lo!r},{hi!r}", args.domain, out.parent) for s in args.seeds]
    local = [inprocess_episode(s, protocol) for s in args.seeds]
    latency = measure_latency(POLICY, args.domain + 1, args.latency_s)  # this process's one DDS participant
    result = {"policy": POLICY, "duration_s": args.duration_s, "push_mps": [lo, hi],
              "push_interval_s": list(protocol.push_interval_s),
              "soft_start_s": 1.0, "cpu_count": os.cpu_count(), "loadavg": list(os.getloadavg()),
              "dds": dds, "in_process": local, "latency": latency}  # fmt: skip
    out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
