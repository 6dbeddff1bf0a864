"""What every realgap script does with bad input: print one clear message and exit with status 2, no traceback."""

from __future__ import annotations

import argparse
import gc
import io
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
    """Run a script's ``main``; a user error becomes ``error: <message>`` on stderr and exit status 2.

    Either way the objects alive at the end are frozen out of the garbage collector (:func:`gc.freeze`) before the
    interpreter exits: Python's module teardown otherwise runs full collections over the millions of objects torch,
    Isaac Lab, Newton and warp leave behind, 5-7 s of every script's exit on this CPU (measured with gdb: all of it in
    ``gc_collect_main`` under ``finalize_modules``). ``atexit`` handlers still run; a file object that only the
    final collection would have reached (one held in a reference cycle) would no longer be flushed, so every open
    file object is flushed first (text layers before the buffers under them; about 0.3 s).
    """
    try:
        code = main()
    except (*USER_ERRORS, *extra_errors) as err:
        print(f"error: {err}", file=sys.stderr)
        code = 2
    _flush_open_files()
    gc.freeze()
    sys.exit(code)


def _flush_open_files() -> None:
    files = [obj for obj in gc.get_objects() if isinstance(obj, io.IOBase)]
    for f in sorted(files, key=lambda f: not isinstance(f, io.TextIOBase)):
        try:
            if not f.closed and f.writable():
                f.flush()
        except (OSError, ValueError):  # a pipe whose reader is gone, a file closed meanwhile: nothing to keep
            pass


def add_push_arg(parser: argparse.ArgumentParser) -> None:
    """``--push_mps LO HI``: override the push magnitude range of a task with pushes (evaluation scripts)."""
    parser.add_argument("--push_mps", type=float, nargs=2, default=None, metavar=("LO", "HI"),
                        help="override the push magnitude range, m/s (tasks with pushes)")  # fmt: skip
