"""What every realgap script does with bad input: print one clear message and exit with status 2, no traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from realgap.envs.robots.base import MissingRobotSourceError
from realgap.envs.sim.physics import DeviceUnavailableError
from realgap.tasks import UnknownTaskError

USER_ERRORS: tuple[type[BaseException], ...] = (
    UnknownTaskError,
    DeviceUnavailableError,
    MissingRobotSourceError,
    ValueError,
    FileNotFoundError,
)


def run_cli(main: Callable[[], int], extra_errors: tuple[type[BaseException], ...] = ()) -> None:
    """Run a script's ``main``; a user error becomes ``error: <message>`` on stderr and exit status 2."""
    try:
        sys.exit(main())
    except (*USER_ERRORS, *extra_errors) as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)


def add_push_arg(parser: argparse.ArgumentParser) -> None:
    """``--push_mps LO HI``: override the push magnitude range of a task with pushes (evaluation scripts)."""
    parser.add_argument("--push_mps", type=float, nargs=2, default=None, metavar=("LO", "HI"),
                        help="override the push magnitude range, m/s (tasks with pushes)")  # fmt: skip
