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
import sys


def main() -> int:
    from realgap.envs.deploy.drivers.bridge_runs import BalanceBridgeRequest, balance_bridge
    from realgap.envs.deploy.flags import add_protocol_flags

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--duration_s", type=float, default=6.0)
    p.add_argument("--latency_s", type=float, default=10.0, help="hold of the latency measurement, s")
    add_protocol_flags(p, fall=False, interval=False)
    p.add_argument("--domain", type=int, default=77)
    p.add_argument("--out", default="docs/results/robot_bridges/balance_dds.json")
    result = balance_bridge(BalanceBridgeRequest(**vars(p.parse_args())))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
