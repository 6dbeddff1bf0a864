"""Which deploy flags each robot reads, and the refusal of one it would ignore.

``realgap deploy`` serves five kinds of run (pushed episodes on MuJoCo or the hidden robot, the grasp
scene, a G1 over DDS, a Franka over franky, and the ``--excite`` identification motion); each reads only some of the
flags. A flag given for a run that does not read it (``--log`` with the grasp scene, ``--hostname`` with MuJoCo) used
to be dropped without a word: the run "succeeded" and the log the user asked for was never written. Here every flag
written on the command line is checked against what the run reads, and one it would ignore is refused before anything
moves. It also declares the balance protocol's flags (``--push_mps``, ``--push_interval_s``, ``--fall_height``,
``--fall_tilt``) once, for the deploy CLI, the DDS simulator and every script (:func:`add_protocol_flags`), and reads
them into a :class:`~realgap.envs.format.protocol.BalanceProtocol` with one parser (:func:`protocol_from_flags`).
Standard library only.
"""

from __future__ import annotations

import argparse
import socket
import sys
from collections.abc import Sequence
from typing import Any

from realgap.envs.format.protocol import BalanceProtocol, ProtocolError, parse_range

COMMON = frozenset({"policy", "robot", "trust", "require_signature"})
"""Flags every run reads."""
EPISODES = frozenset(
    {"episodes", "duration_s", "push_mps", "push_interval_s", "fall_height", "fall_tilt", "log", "seed", "zero_action"}
)
"""Flags of the pushed episodes (a floating-base robot)."""
HIDDEN = frozenset({"hidden_seed", "hidden_drives", "sensor_noise"})
DDS = frozenset(
    {
        "interface",
        "domain",
        "connect_timeout_s",
        "watchdog_s",
        "soft_start_s",
        "tick_period_s",
        "clock",
        "state_crc",
        "motion_switcher",
    }
)
SUITE = frozenset({"suite", "suite_family", "suite_robot"})
EXCITE = frozenset({"excite", "hang_m", "log"})
READS: dict[str, frozenset[str]] = {
    "mujoco": EPISODES,
    "hidden": EPISODES | HIDDEN,
    "grasp": frozenset({"episodes", "seed", "zero_action"}),
    "unitree_g1": EPISODES | DDS,
    "franka": frozenset(
        {
            "hostname",
            "gripper_force_n",
            "report",
            "connect_timeout_s",
            "watchdog_s",
            "duration_s",
            "episodes",
            "seed",
            "zero_action",
        }
    ),
    "excite mujoco": EXCITE,
    "excite hidden": EXCITE | HIDDEN,
    "excite suite": EXCITE | SUITE,
    "excite unitree_g1": EXCITE | DDS | {"fall_tilt"},
}
"""The flags (besides :data:`COMMON`) each kind of run reads, by ``[excite ]<robot>`` (``grasp``: a manipulation
export on ``--robot mujoco``); from the code each run calls (``__main__``, ``drivers/run_g1.py``,
``drivers/run_franka.py``, ``grasp_scene.grasp_report``)."""
PAIR_FLAGS = ("--push_mps", "--push_interval_s")
POLICY_FLAG: dict[str, Any] = dict(default=None, metavar="DIR", help="export folder (policy.onnx + policy.json)")
"""``--policy``, declared once: for the deploy-side command lines (:func:`add_policy_flag`)
and, through :data:`realgap.envs.run.cli.FLAGS`, for every script."""


def add_policy_flag(container: Any, required: bool = False) -> None:
    """Add ``--policy`` (:data:`POLICY_FLAG`) to a deploy-side parser or group; ``required``: the command needs it."""
    spec = dict(POLICY_FLAG)
    if required:
        spec.pop("default")
        spec["required"] = True
    container.add_argument("--policy", **spec)


def given(argv: Sequence[str]) -> list[str]:
    """The flag names written in ``argv`` (``--log X`` and ``--log=X`` both give ``log``), in order, once each."""
    names = [a[2:].split("=", 1)[0] for a in argv if a.startswith("--") and len(a) > 2]
    return list(dict.fromkeys(names))


def run_kind(robot: str, grasp: bool, excite: bool) -> str:
    """The key of :data:`READS` for a run of ``robot`` (``grasp``: the export has a scene; ``excite``: ``--excite``)."""
    if excite:
        return f"excite {robot}"
    return "grasp" if grasp and robot == "mujoco" else robot


def check_flags(argv: Sequence[str], robot: str, grasp: bool, excite: bool) -> None:
    """Refuse flags in ``argv`` that the run ``robot`` / ``grasp`` / ``excite`` would ignore.

    Raises:
        ValueError: Names each ignored flag, the run, and the flags it does read.
    """
    kind = run_kind(robot, grasp, excite)
    reads = READS.get(kind)
    if reads is None:  # a combination refused elsewhere (e.g. --excite on franka)
        return
    ignored = [f"--{name}" for name in given(argv) if name not in reads | COMMON and name != "help"]
    if ignored:
        what = "the grasp scene (a manipulation export on --robot mujoco)" if kind == "grasp" else f"--robot {robot}"
        what += " with --excite" if excite else ""
        reads_text = ", ".join("--" + n for n in sorted(reads))
        raise ValueError(
            f"{', '.join(ignored)} would be ignored by {what}, which reads only {reads_text} "
            f"(and {', '.join('--' + n for n in sorted(COMMON))}): drop it"
        )


def join_pair_values(argv: Sequence[str]) -> list[str]:
    """``--push_mps -1,0.2`` as ``--push_mps=-1,0.2``: argparse reads a value that starts with ``-`` and is not a plain
    negative number as a flag, and would say only "expected one argument"; joined, the range check names it. Every
    parser :func:`add_protocol_flags` declares the flags on applies it."""
    out: list[str] = []
    items = list(argv)
    i = 0
    while i < len(items):
        if items[i] in PAIR_FLAGS and i + 1 < len(items) and items[i + 1].startswith("-") and "," in items[i + 1]:
            out.append(f"{items[i]}={items[i + 1]}")
            i += 2
            continue
        out.append(items[i])
        i += 1
    return out


def check_interface(name: str) -> None:
    """``--interface`` must be a network interface of this machine (the DDS layer otherwise fails with a bare
    "channel factory init error" traceback).

    Raises:
        ValueError: Names the interface and lists the machine's interfaces.
    """
    names = [n for _, n in socket.if_nameindex()]
    if name not in names:
        raise ValueError(f"--interface {name!r} is not a network interface of this machine; it has: {', '.join(names)}")


def add_protocol_flags(parser: argparse.ArgumentParser, fall: bool = True, interval: bool = True) -> None:
    """Declare ``--push_mps LO,HI`` (and ``--push_interval_s LO,HI``, ``--fall_height M``, ``--fall_tilt RAD`` unless
    switched off): the one definition of the balance protocol's flags. Each defaults to None, meaning the protocol
    of the policy or task being run (:func:`protocol_from_flags` fills it in); values are read by one parser
    (:func:`realgap.envs.format.protocol.parse_range`), so a bad one is named the same way by every command. The
    parser then reads its command line through :func:`join_pair_values`, so ``--push_mps -1,0.2`` reaches that check
    in every command that declares these flags."""
    parse = parser.parse_known_args

    def parse_joined(args: Sequence[str] | None = None, namespace: Any = None) -> tuple[Any, list[str]]:
        return parse(join_pair_values(sys.argv[1:] if args is None else args), namespace)

    parser.parse_known_args = parse_joined  # parse_args goes through it too
    parser.add_argument(
        "--push_mps",
        default=None,
        metavar="LO,HI",
        help="push magnitude range, m/s (0,0: no pushes; default: the policy's or task's protocol)",
    )
    if interval:
        parser.add_argument(
            "--push_interval_s", default=None, metavar="LO,HI", help="time between pushes, s (default: the protocol's)"
        )
    if fall:
        parser.add_argument(
            "--fall_height",
            type=float,
            default=None,
            metavar="M",
            help="fall: root below this height, m (default: the protocol's)",
        )
        parser.add_argument(
            "--fall_tilt",
            type=float,
            default=None,
            metavar="RAD",
            help="fall: root tilted beyond this angle, rad (default: the protocol's)",
        )


def protocol_from_flags(args: Any, base: BalanceProtocol, duration_s: float | None = None) -> BalanceProtocol:
    """``base`` (the policy's or task's protocol) with the protocol flags ``args`` holds (those absent or None keep
    ``base``'s) and ``duration_s`` as the episode length when given.

    Raises:
        ProtocolError: A flag that is malformed or out of range, named as on the command line (``--push_mps ...``).
    """
    flags = {
        "push_mps": "push_mps",
        "push_interval_s": "push_interval_s",
        "fall_height": "fall_height_m",
        "fall_tilt": "fall_tilt_rad",
    }
    changes: dict[str, Any] = {"episode_s": duration_s}
    for flag, field in flags.items():
        value = getattr(args, flag, None)
        if value is not None and flag in ("push_mps", "push_interval_s"):
            value = parse_range(value, f"--{flag}")
        changes[field] = value
    try:
        return base.with_changes(**changes)
    except ProtocolError as err:
        text = str(err)
        for flag, field in flags.items():
            text = text.replace(f"protocol.{field}", f"--{flag}")
        raise ProtocolError(text.replace("protocol.episode_s", "--duration_s")) from None
