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
import os
import subprocess
import sys
import tempfile
from pathlib import Path

POLICY = "configs/policies/grasp_franka"


def franky_episode(policy: str, duration_s: float, seed: int) -> dict:
    """franky-sim (headless, MuJoCo) and the deploy CLI's franka driver as two processes; the driver's report."""
    sim = subprocess.Popen([sys.executable, "-m", "franky_sim.run_server", "-s", "mujoco", "--hostname", "127.0.0.1"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    for line in sim.stdout:
        if "Connect to the server" in line:
            break
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "franka.json"
        cmd = [sys.executable, "-m", "realgap.scripts.deploy", "--policy", policy, "--robot", "franka", "--hostname",
               "127.0.0.1", "--connect_timeout_s", "60", "--duration_s", str(duration_s), "--seed", str(seed),
               "--report", str(report)]  # fmt: skip
        drv = subprocess.run(cmd, capture_output=True, text=True)
        sim.terminate()
        sim.wait(timeout=30)
        if drv.returncode != 0:
            raise RuntimeError(f"the franka driver exited {drv.returncode}:\n{drv.stdout}{drv.stderr}")
        return {"duration_s": duration_s, "gripper_force_n": 20.0, **json.loads(report.read_text())}


def main() -> int:
    from realgap.envs.run.cli import add_shared_flag

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("part", choices=["mujoco", "franky"])
    add_shared_flag(p, "policy", POLICY)
    p.add_argument("--episodes", type=int, default=256, help="mujoco: episodes")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--duration_s", type=float, default=4.0, help="franky: episode length, s")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    from realgap.envs.deploy import load_policy

    meta, policy = load_policy(args.policy)
    if args.part == "mujoco":
        from realgap.envs.deploy.grasp_scene import grasp_report

        result = grasp_report(meta, policy, args.episodes, args.seed)
    else:
        result = franky_episode(args.policy, args.duration_s, args.seed)
    result = {"policy": args.policy, **result, "cpu_count": os.cpu_count(), "loadavg": list(os.getloadavg())}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
