"""Run an exported policy on a robot through the deploy runtime and report time up and falls per episode.

    realgap deploy --policy configs/policies/balance_g1 --robot mujoco
    realgap deploy --policy configs/policies/balance_g1 --robot mujoco --episodes 8 --push_mps 0.2,0.4
    realgap deploy --policy configs/policies/balance_g1 --robot mujoco --log runs/logs/ep.npz
    realgap deploy --policy configs/policies/balance_g1 --robot unitree_g1 --interface lo --domain 0
    realgap deploy --policy configs/policies/balance_g1 --robot hidden --hidden_seed 3 --episodes 8
    realgap deploy --policy configs/policies/grasp_franka --robot mujoco --episodes 16
    realgap deploy --policy configs/policies/grasp_franka --robot franka --hostname 127.0.0.1
    realgap deploy --policy configs/policies/balance_g1 --robot hidden --excite left_knee_joint \
        --log runs/identify/hidden.npz

``--robot mujoco``: the robot the metadata names, in plain MuJoCo C (:class:`~realgap.envs.deploy.mujoco_robot.
MujocoRobot`, built from the description package and checked against its hash), started in the exported start
pose, pushed like the balance task (a horizontal velocity change of random heading, ``--push_mps`` every
``--push_interval_s``); an episode ends at ``--duration_s`` or at a fall (root below ``--fall_height`` or tilted
beyond ``--fall_tilt``). ``--log FILE`` records every control period (:mod:`realgap.envs.deploy.log`; with several
episodes, one file per episode: ``FILE`` with ``_ep<k>`` before the suffix). ``--excite JOINT ...`` instead runs the
identification motion (:mod:`realgap.envs.identify.excitation`) on those joints with the base welded ``--hang_m`` above
the start pose and logs it (``--log`` required). ``--robot hidden`` is the G1 with hidden drive parameters drawn from
``--hidden_seed`` (:mod:`realgap.envs.deploy.hidden_robot`), a stand-in for real hardware: free-floating in the start
pose for the pushed episodes, welded for ``--excite`` (the same drives either way). ``scripts/hidden_compare.py``
runs two exports on it with paired push schedules. ``--robot suite`` with ``--excite`` logs robot ``--suite_robot``
of family ``--suite_family`` of the held-out suite ``--suite`` (:mod:`realgap.envs.eval.suite`), welded: the log the
transfer study's identify-then-train arm identifies; its episodes run with ``scripts/evaluate_suite.py``.
``--robot unitree_g1`` drives a Unitree G1 over unitree_sdk2 DDS (:mod:`realgap.envs.deploy.drivers.unitree_g1`;
``pip install '.[deploy,unitree]'``) on ``--domain`` / ``--interface``: a real robot, or
``realgap g1_dds_sim`` (which pushes on its own seeded schedule). It connects within
``--connect_timeout_s`` or exits with an error, checks the stream and the motion switcher before any command
(``--clock``, ``--tick_period_s``, ``--state_crc``, ``--motion_switcher``: a refusal exits 2), soft-starts to the
start pose over ``--soft_start_s``, runs one episode, and ends in damping (also on Ctrl-C: 130; a watchdog trip, a
bad state or a non-finite action: 3; a fall: 0). Falls are judged by tilt only (no root height over DDS). With
``--excite`` it soft-starts, runs the identification motion over DDS (against ``g1_dds_sim --hidden_seed N
--lockstep`` with ``--clock tick``, welded ``--hang_m`` above the start pose) and logs it.
A manipulation export (one with scene facts, ``grasp_franka``) on ``--robot mujoco`` runs in its MuJoCo grasp scene
(:mod:`realgap.envs.deploy.grasp_scene`: table and object from the metadata) and prints its success rate;
``--robot franka`` drives a Franka over franky (:mod:`realgap.envs.deploy.drivers.franka`; ``pip install
'.[deploy,franka]'``) at ``--hostname``, a real arm or franky-sim: connect within ``--connect_timeout_s``, move to
the start pose, one episode of ``--duration_s``, then stop (also on Ctrl-C, a non-finite action or a fault: exit 3).
Needs numpy, onnxruntime, jsonschema, mujoco and the robot's description package: ``pip install '.[deploy]'`` from a
clone, or the wheel built from it with ``[deploy]`` (docs/getting_started.md).
Bad input exits with status 2 and one message.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

from realgap.envs.deploy import MetadataMismatchError, UnsupportedActionError, UnsupportedObservationError, ZeroPolicy
from realgap.envs.deploy.drivers.g1_stream import G1_WATCHDOG_S
from realgap.envs.deploy.drivers.run_franka import run_franka
from realgap.envs.deploy.drivers.run_g1 import excite_g1, run_g1
from realgap.envs.deploy.flags import (
    add_policy_flag,
    add_protocol_flags,
    check_flags,
    check_interface,
    protocol_from_flags,
)
from realgap.envs.deploy.log import LogRecorder
from realgap.envs.deploy.runtime import DeployRuntime, Policy
from realgap.envs.format import DescriptionError, MetadataError, PolicyMetadata, load_policy
from realgap.envs.format.protocol import BALANCE_PROTOCOL, BalanceProtocol
from realgap.envs.format.verify import check_export_signature
from realgap.envs.identify.excitation import ExcitationPlan, run_excitation
from realgap.envs.run.paths import check_output_file


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """``realgap deploy``'s flags (``argv``; None: the process's)."""
    p = argparse.ArgumentParser(
        prog="realgap deploy", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_policy_flag(p, required=True)
    _add_target_flags(p)
    _add_g1_flags(p)
    _add_run_flags(p)
    return p.parse_args(argv)


# The flags in three groups, added in this order: ``--help`` lists them as they always were.
def _add_target_flags(p: argparse.ArgumentParser) -> None:
    """The robot to run on (``--robot``) and the flags that address a suite robot or a Franka."""
    p.add_argument(
        "--robot",
        required=True,
        choices=["mujoco", "hidden", "unitree_g1", "franka", "suite"],
        help="mujoco: the MuJoCo robot; hidden: the same robot with hidden drive parameters (--excite: welded); "
        "unitree_g1: a G1 (or g1_dds_sim) over unitree_sdk2 DDS; franka: a Franka (or franky-sim) over franky; "
        "suite: a robot of a held-out suite (--excite only)",
    )
    p.add_argument("--suite", default=None, help="--robot suite: the suite file (configs/suites/*.yaml)")
    p.add_argument("--suite_family", default="worn", help="--robot suite: the robot's family (default worn)")
    p.add_argument("--suite_robot", type=int, default=0, help="--robot suite: the robot's index in its family")
    p.add_argument("--hostname", default=None, help="franka: the robot's FCI address (franky-sim: 127.0.0.1)")
    p.add_argument("--gripper_force_n", type=float, default=20.0, help="franka: grasp force of a closing command, N")
    p.add_argument("--report", default=None, help="franka: write tracking, timing and gripper figures (JSON)")


def _add_g1_flags(p: argparse.ArgumentParser) -> None:
    """The Unitree G1 over DDS: the link, the watchdog, the soft start and the stream checks before a command."""
    p.add_argument("--interface", default="lo", help="unitree_g1: network interface of the robot (default lo)")
    p.add_argument("--domain", type=int, default=0, help="unitree_g1: DDS domain id, 0..232 (default 0)")
    p.add_argument("--connect_timeout_s", type=float, default=3.0, help="unitree_g1: wait for LowState, s")
    p.add_argument(
        "--watchdog_s",
        type=float,
        default=None,
        help="unitree_g1: damping after no fresh state (default 0.25: g1_stream.G1_WATCHDOG_S); franka: stop when "
        "the robot clock stands still (default 0.1), s",
    )
    p.add_argument("--soft_start_s", type=float, default=1.0, help="unitree_g1: move to the start pose over, s")
    p.add_argument(
        "--tick_period_s",
        type=float,
        default=0.002,
        help="unitree_g1: one LowState tick, s (a real G1 and g1_dds_sim: 0.002; g1_dds_sim --hidden_seed: 0.005); "
        "measured at connect, a mismatch is refused",
    )
    p.add_argument(
        "--clock",
        choices=["auto", "tick", "arrival"],
        default="auto",
        help="unitree_g1: pace on the LowState tick if it advances while connecting, else on message arrival and the "
        "host clock (auto); tick: a lockstep simulator, whose tick stands still until the first command",
    )
    p.add_argument(
        "--state_crc",
        choices=["on", "off"],
        default="on",
        help="unitree_g1: check the LowState CRC (off: only for a stream without one, as Unitree's simulator sends)",
    )
    p.add_argument(
        "--motion_switcher",
        choices=["check", "release", "skip"],
        default="check",
        help="unitree_g1: before the first command, refuse (check) or release a high-level motion service holding "
        "the robot; skip: a simulator that does not serve it (unitree_mujoco)",
    )


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    """What is run and recorded: the log, the identification motion, the hidden robot, the episodes and their
    protocol, the zero action, the seed and the signature checks."""
    p.add_argument(
        "--log",
        default=None,
        metavar="FILE",
        help="record a robot log of every control period, .npz or .mcap (the suffix decides)",
    )
    p.add_argument("--excite", nargs="+", default=None, metavar="JOINT", help="run the identification motion")
    p.add_argument("--hang_m", type=float, default=0.5, help="--excite: base welded this far above the start pose, m")
    p.add_argument("--hidden_seed", type=int, default=0, help="--robot hidden: seed of the hidden parameters")
    p.add_argument(
        "--hidden_drives",
        default="default",
        help="--robot hidden: the family the hidden drives are drawn from (default, worn: hidden_robot.DRIVE_FAMILIES)",
    )
    p.add_argument(
        "--sensor_noise",
        choices=["none", "typical"],
        default="none",
        help="--robot hidden: noise on the joint states and torque it reports (hidden_robot.SENSOR_NOISE)",
    )
    p.add_argument("--episodes", type=int, default=1, help="episodes to run (default 1)")
    p.add_argument("--duration_s", type=float, default=None, help="episode length, s (default: the protocol's)")
    add_protocol_flags(p)
    p.add_argument("--zero_action", action="store_true", help="run the zero action instead of the policy")
    p.add_argument("--seed", type=int, default=0, help="seed of the pushes and the simulated command delay")
    p.add_argument("--trust", nargs="+", default=[], metavar="PUB", help="public keys (PEM, or folders of *.pub)")
    p.add_argument("--require_signature", action="store_true", help="refuse an export not signed by a --trust key")


_POSITIVE = ("connect_timeout_s", "watchdog_s")
_NONNEGATIVE = ("hang_m", "soft_start_s")
"""Checked here when given; the protocol's flags (``--duration_s``, ``--push_mps``, ``--fall_tilt``, ...) are checked
once, by the protocol itself (:func:`protocol_from_flags`)."""


def check_numbers(args: argparse.Namespace) -> None:
    """Refuse a non-finite or out-of-range numeric flag that is not the protocol's before anything runs (a NaN
    threshold never trips); fill ``--watchdog_s``'s per-robot default."""
    if args.watchdog_s is None:  # the G1's reason is at G1_WATCHDOG_S; the Franka keeps its 0.1 s
        args.watchdog_s = G1_WATCHDOG_S if args.robot == "unitree_g1" else 0.1
    for name in _POSITIVE + _NONNEGATIVE:
        v = getattr(args, name)
        if v is None:
            continue
        if not math.isfinite(v) or v < 0 or (name in _POSITIVE and v == 0):
            raise ValueError(f"--{name} must be a finite number {'> 0' if name in _POSITIVE else '>= 0'}, got {v}")
    if args.robot == "unitree_g1" and args.episodes != 1:
        raise ValueError("--robot unitree_g1 runs one pushed episode or one --excite motion (--episodes 1)")
    if not (math.isfinite(args.tick_period_s) and args.tick_period_s > 0):
        raise ValueError(f"--tick_period_s must be a finite number > 0, got {args.tick_period_s}")
    if args.robot == "franka" and (args.excite is not None or args.episodes != 1 or not args.hostname):
        raise ValueError("--robot franka runs one episode on --hostname ADDRESS (no --excite, --episodes 1)")
    if not (math.isfinite(args.gripper_force_n) and 0 < args.gripper_force_n <= 140):
        raise ValueError(
            f"--gripper_force_n must be in (0, 140] N (the Franka Hand's limit), got {args.gripper_force_n}"
        )
    if not 0 <= args.domain <= 232:
        raise ValueError(f"--domain must be a DDS domain id in 0..232, got {args.domain}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    check_numbers(args)

    # the protocol flags' one check (named as on the command line), before the export is read; the export's own
    # protocol with the same flags is built below
    protocol_from_flags(args, BALANCE_PROTOCOL, args.duration_s)
    if args.episodes < 1:
        raise ValueError("--episodes must be >= 1")

    if args.trust or args.require_signature or Path(args.policy, "policy.sig").is_file():
        print(f"[realgap] {check_export_signature(args.policy, args.trust, args.require_signature)}", flush=True)
    meta, policy = load_policy(args.policy)
    protocol = None if not meta.is_balance else protocol_from_flags(args, meta.balance_protocol, args.duration_s)
    r = meta.rates
    print(
        f"[realgap] {args.policy}: {meta.task} on '{meta.robot.name}' ({meta.robot.description['path']}), obs "
        f"{meta.obs_dim} -> actions {meta.action_dim}; physics {r.physics_hz:g} Hz, servo {r.control_hz:g} Hz, "
        f"policy {r.policy_hz:g} Hz ({r.target_mode})",
        flush=True,
    )
    if args.sensor_noise != "none" and args.robot != "hidden":
        raise ValueError(f"--sensor_noise {args.sensor_noise} is a property of the hidden robot: add --robot hidden")
    if args.robot == "suite" and (args.excite is None or args.suite is None):
        raise ValueError(
            "--robot suite runs the identification motion on a suite robot: give --suite FILE and "
            "--excite JOINT ...; episodes on suite robots run with scripts/evaluate_suite.py"
        )
    check_flags(argv, args.robot, meta.scene is not None, args.excite is not None)  # a flag it would ignore: refused
    if args.robot == "unitree_g1":
        check_interface(args.interface)

    if args.log is not None:  # a folder, a link or another suffix is refused before the robot moves, not at the end
        check_output_file(args.log, "--log", (".npz", ".mcap"))
    if args.report is not None:
        check_output_file(args.report, "--report", (".json",))
    if args.excite is not None:
        return _excite(args, meta, protocol)
    if args.robot == "unitree_g1":
        return run_g1(args, meta, policy, protocol)
    if args.robot == "franka":
        return run_franka(args, meta, policy)
    if meta.scene is not None and args.robot == "mujoco":
        return _grasp(args, meta, policy)
    return _balance(args, meta, policy, protocol)


def _balance(args: argparse.Namespace, meta: PolicyMetadata, policy: Policy, protocol: BalanceProtocol | None) -> int:
    """A balance export on ``--robot mujoco`` or ``hidden``: ``--episodes`` pushed episodes (each logged with
    ``--log``), each one's time up and fall, then their mean time up and falls."""
    if meta.robot.fixed_base:
        raise ValueError(
            f"--robot {args.robot} runs push-and-fall episodes, which need a floating base; robot "
            f"'{meta.robot.name}' of {meta.task} is fixed to the world"
        )
    try:
        from realgap.envs.deploy.mujoco_robot import MujocoRobot
    except ModuleNotFoundError as err:
        msg = f"--robot {args.robot} needs the '{err.name}' package: the deploy extra, pip install '.[deploy]'"
        raise ModuleNotFoundError(msg) from err
    from realgap.envs.deploy.episode import run_episode, schedules, stance_metadata

    if args.robot == "hidden":
        from realgap.envs.deploy.hidden_robot import SENSOR_NOISE, HiddenRobot

        noise = SENSOR_NOISE[args.sensor_noise]
        robot = HiddenRobot(meta, args.hidden_seed, fixed_base=False, noise=noise, drives=args.hidden_drives)
        tau_source = "measured"
        where = (
            f"hidden G1 ({args.hidden_drives} drives, seed {args.hidden_seed}, command delay "
            f"{robot.truth.delay_steps} steps), free base"
        )
    else:
        robot, tau_source = MujocoRobot.for_policy(meta), "commanded"
        where = f"{robot.mjcf_path}"
    recorder = LogRecorder(meta, robot.control_dt, robot.command_mode, tau_source) if args.log else None
    if args.zero_action:  # the task's zero action: hold the stance, whatever nominal pose the policy acts around
        meta, policy = stance_metadata(meta), ZeroPolicy(meta.action_dim)
    runtime = DeployRuntime(meta, robot, policy, seed=args.seed, log=recorder)
    print(
        f"[realgap] MuJoCo robot: {where} (description sha256 {robot.description_hash[:12]}… = the "
        f"policy's), start pose root height {meta.robot.start_root_pos[2]:.3f} m, "
        f"{'zero action' if args.zero_action else 'policy.onnx on onnxruntime'}",
        flush=True,
    )
    results = []
    for k, pushes in enumerate(schedules(args.episodes, protocol, args.seed)):
        res = run_episode(runtime, robot, pushes, protocol)
        results.append(res)
        if recorder is not None:
            path = Path(args.log) if args.episodes == 1 else Path(args.log).with_stem(f"{Path(args.log).stem}_ep{k}")
            print(f"[realgap] log: {recorder.save(path)} ({len(recorder.to_log().t)} samples)", flush=True)
            recorder = LogRecorder(meta, robot.control_dt, robot.command_mode, tau_source)
            runtime.log = recorder
        print(
            f"episode {k + 1}/{args.episodes}: time up {res.time_up_s:.2f} s, {'fell' if res.fell else 'no fall'}, "
            f"{res.pushes} pushes",
            flush=True,
        )
    falls = sum(r.fell for r in results)
    lo, hi = protocol.push_mps
    print(
        f"[realgap] {len(results)} episodes of {protocol.episode_s:g} s, pushes {lo:g}-{hi:g} m/s: "
        f"mean time up {statistics.mean(r.time_up_s for r in results):.2f} s, falls {falls}"
    )
    return 0


def _grasp(args: argparse.Namespace, meta, policy) -> int:
    """A manipulation export on ``--robot mujoco``: its scene from the metadata, ``--episodes`` judged by its success
    test; the success rate with its Wilson 95 % interval."""
    from realgap.envs.deploy.grasp_scene import grasp_report

    if args.zero_action:
        policy = ZeroPolicy(meta.action_dim)
    rep = grasp_report(meta, policy, args.episodes, args.seed, progress=True)
    lo, hi = rep["wilson95"]
    print(
        f"[realgap] {rep['episodes']} grasp episodes on MuJoCo (scene from the metadata): success "
        f"{rep['success_rate']:.3f} (Wilson 95 % {lo:.3f}-{hi:.3f}), endings {rep['endings']}"
    )
    return 0


def _excite(args: argparse.Namespace, meta, protocol: BalanceProtocol | None) -> int:
    """``--excite``: the identification motion on a hanging robot, logged (over DDS, the G1 driver's fall tilt is
    ``protocol``'s)."""
    if args.log is None:
        raise ValueError("--excite runs the identification motion and logs it: give --log FILE")

    if args.robot == "unitree_g1":
        plan = ExcitationPlan(tuple(args.excite))
        tilt = (protocol or meta.balance_protocol).fall_tilt_rad  # None: not a balance export, refused by name
        return excite_g1(args, meta, tilt, lambda robot, root: run_excitation(meta, robot, plan, root_pos_w=root))
    if args.robot == "hidden":
        from realgap.envs.deploy.hidden_robot import SENSOR_NOISE, HiddenRobot

        noise = SENSOR_NOISE[args.sensor_noise]
        robot = HiddenRobot(
            meta, args.hidden_seed, fixed_base=True, hang_m=args.hang_m, noise=noise, drives=args.hidden_drives
        )
        root = robot.root_pos_w
    elif args.robot == "suite":
        from realgap.envs.eval.suite.plant import excitation_robot

        robot = excitation_robot(meta, args.suite, args.suite_family, args.suite_robot, args.hang_m)
        root = robot.root_pos_w
    else:
        from realgap.envs.deploy.mujoco_robot import MujocoRobot

        robot = MujocoRobot.for_policy(meta, fixed_base=True, hang_m=args.hang_m)
        root = robot.start_root_pos_w
    log = run_excitation(meta, robot, ExcitationPlan(tuple(args.excite)), root_pos_w=root)
    print(
        f"[realgap] excitation of {len(args.excite)} joints, {log.num_samples} samples "
        f"({log.t[-1]:.1f} s), torque {log.tau_source}: {log.save(args.log)}"
    )
    return 0


def cli() -> None:
    """``realgap deploy`` (``scripts/deploy.py``): :func:`main` with every refusal as one message and exit status 2."""

    try:
        sys.exit(main())
    except (
        MetadataError,
        MetadataMismatchError,
        UnsupportedActionError,
        UnsupportedObservationError,
        DescriptionError,
        FileNotFoundError,
        ValueError,
        ModuleNotFoundError,
        TimeoutError,
    ) as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
