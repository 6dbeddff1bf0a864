"""Figures for docs/robots.md (the Franka): the grasp export in the runtime's MuJoCo grasp scene (success over N
episodes with its Wilson interval, against Isaac Lab Play's 0.992), and the franky driver against franky-sim (joint
tracking error, loop timing, gripper).

    realgap franka_bridge mujoco --episodes 256 --out docs/results/robot_bridges/grasp_mujoco.json
    realgap franka_bridge franky --duration_s 4 --out docs/results/robot_bridges/franka_sim.json

``mujoco`` needs ``pip install '.[deploy,franka]'`` (the Panda MJCF); ``franky`` also starts franky-sim (headless,
MuJoCo) in a second process. Timing is wall clock on whatever machine runs it (the JSON records the CPU count and
load average).
"""

from __future__ import annotations

import argparse
import json
import sys


def main() -> int:
    from realgap.envs.deploy.drivers.bridge_runs import FRANKA_POLICY, FrankaBridgeRequest, franka_bridge
    from realgap.envs.run.cli import add_shared_flag

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("part", choices=["mujoco", "franky"])
    add_shared_flag(p, "policy", FRANKA_POLICY)
    p.add_argument("--episodes", type=int, default=256, help="mujoco: episodes")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--duration_s", type=float, default=4.0, help="franky: episode length, s")
    p.add_argument("--out", required=True)
    result = franka_bridge(FrankaBridgeRequest(**vars(p.parse_args())))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
