"""``python -m realgap.envs.deploy.drivers.g1_dds_sim``: the command line of the headless G1 DDS simulator
(:mod:`realgap.envs.deploy.drivers.g1_dds_sim`); ``--hidden_seed`` builds identification's hidden robot here."""

from __future__ import annotations

import argparse
import signal
import sys

import numpy as np

from realgap.envs.deploy.drivers import g1_dds_sim
from realgap.envs.deploy.drivers.g1_dds_sim import run
from realgap.envs.deploy.flags import add_policy_flag, add_protocol_flags
from realgap.envs.format.metadata import PolicyMetadata


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m realgap.envs.deploy.drivers.g1_dds_sim",
        description=g1_dds_sim.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_policy_flag(p, required=True)  # the export whose MJCF, drives and start pose are simulated
    p.add_argument("--domain", type=int, default=1, help="DDS domain id (default 1; a real G1 uses 0)")
    p.add_argument("--interface", default="lo", help="network interface (default lo: loopback)")
    add_protocol_flags(p, fall=False)  # default here: no pushes (the simulator pushes only when asked)
    p.add_argument(
        "--settle_s",
        type=float,
        default=1.0,
        help="pushes start this long after the first command, s (the driver's soft start; default 1)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the push schedule")
    p.add_argument("--duration_s", type=float, default=0.0, help="stop after this simulated time, s (0: run on)")
    p.add_argument("--report", default=None, help="write counts, fall time, last command gains as JSON")
    p.add_argument("--hidden_seed", type=int, default=None, help="simulate the hidden robot of this seed (welded)")
    p.add_argument("--hidden_drives", default="default", help="--hidden_seed: drive family (default, worn)")
    p.add_argument("--hang_m", type=float, default=0.5, help="--hidden_seed: base welded this far above the start, m")
    p.add_argument("--lockstep", action="store_true", help="step once per new command (see above)")
    p.add_argument("--lockstep_wait_s", type=float, default=0.5, help="--lockstep: longest wait for a command, s")
    p.add_argument(
        "--bridge",
        choices=["realgap", "unitree"],
        default="realgap",
        help="unitree: behave like Unitree's unitree_mujoco bridge (tick, state CRC, mode_machine 0; PD "
        "torque computed once per command and held; no motion switcher)",
    )
    p.add_argument(
        "--physics_dt",
        type=float,
        default=g1_dds_sim.PHYSICS_DT,
        help="physics step of the free-base robot, s (default 0.002; Unitree's simulator: 0.005)",
    )
    p.add_argument(
        "--motion_mode",
        default="",
        help="a high-level motion service holding the robot at start (a real G1: its locomotion mode, "
        "e.g. ai), released through the motion switcher; default none",
    )
    p.add_argument(
        "--fault",
        choices=["crc", "quat", "tick_back", "tick_jump"],
        default=None,
        help="corrupt the published state from --fault_at_s on (see above)",
    )
    p.add_argument("--fault_at_s", type=float, default=1.5, help="--fault: simulated time after the first command, s")
    p.add_argument("--timing_log", default=None, help="write per-command receive/apply times and ticks (.npz)")
    args = p.parse_args(argv)
    if not (np.isfinite(args.physics_dt) and 0.0005 <= args.physics_dt <= 0.02):
        raise ValueError(f"--physics_dt must be in [0.0005, 0.02] s, got {args.physics_dt}")
    if args.bridge == "unitree" and (args.hidden_seed is not None or args.lockstep):
        raise ValueError(
            "--bridge unitree simulates Unitree's bridge on the free-base robot: no --hidden_seed, no --lockstep"
        )
    times = np.array([args.duration_s, args.settle_s, args.hang_m, args.lockstep_wait_s, args.fault_at_s])
    if not (np.isfinite(times).all() and (times >= 0).all()) or not 0 <= args.domain <= 232:
        raise ValueError(
            "--duration_s, --settle_s, --hang_m, --lockstep_wait_s, --fault_at_s must be finite and >= 0, --domain "
            "in 0..232"
        )
    make_hidden = None
    if args.hidden_seed is not None:
        from realgap.envs.deploy.hidden_robot import HiddenRobot

        def make_hidden(meta: PolicyMetadata) -> HiddenRobot:
            return HiddenRobot(meta, args.hidden_seed, fixed_base=True, hang_m=args.hang_m, drives=args.hidden_drives)

    run(args, make_hidden)
    return 0


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM stops the run as Ctrl-C does: the report is still written


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminate)
    try:
        sys.exit(main())
    except (ValueError, FileNotFoundError, ModuleNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
