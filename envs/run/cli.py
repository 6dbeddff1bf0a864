"""The command-line vocabulary every realgap script shares, and what every script does with bad input.

The shared flags (``--task --num_envs --device --seed --episodes --policy --checkpoint``) are defined once here
(:func:`shared_flags`, an argparse parent parser): one type, one range check, one help text and one default per flag.
Every numeric flag is checked for finiteness and range while the command line is parsed, so a bad number is refused
before any module loads a simulator or writes a file. Bad input of any kind ends the same way: ``error: <message>`` on
stderr and exit status 2, no traceback (:class:`CliParser` for the command line, :func:`run_cli` for what the
library refuses later).
"""

from __future__ import annotations

import argparse
import gc
import io
import math
import os
import re
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from realgap.envs.deploy.flags import POLICY_FLAG
from realgap.envs.robots.base import MissingRobotSourceError
from realgap.envs.run.paths import PathRefused, check_output_dir, check_output_file
from realgap.envs.sim.physics import DETERMINISTIC_ENV, DeviceUnavailableError
from realgap.tasks import DEFAULT_TASK, UnknownTaskError

USER_ERRORS: tuple[type[BaseException], ...] = (
    UnknownTaskError,
    DeviceUnavailableError,
    MissingRobotSourceError,
    ValueError,
    FileNotFoundError,
)
EXIT_USAGE = 2
"""Exit status of a refused input (argparse's and the shell's convention for bad usage)."""


class UsageError(ValueError, SystemExit):
    """A command line refused while it is parsed; already printed as ``error: <message>``.

    Both a ``ValueError`` (what a script's ``main`` raises for bad input, so callers and tests treat both alike) and a
    ``SystemExit`` with status 2 (argparse's contract: a script without :func:`run_cli` still exits 2, silently)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.code = EXIT_USAGE


class CliParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose parse errors read like every other refusal: ``error: --flag <what is wrong> (see
    <script> --help)`` on stderr, exit status 2 (:class:`UsageError`)."""

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        message = re.sub(r"^argument (--\w+)(?:/\S+)?: ", r"\1 ", message)
        message += self._missing_values_hint(message) + f" (see {self.prog} --help)"
        print(f"error: {message}", file=sys.stderr)
        raise UsageError(message)

    def _missing_values_hint(self, message: str) -> str:
        """For "--flag expected N argument(s)": what the flag takes, and the value it was given if argparse read that
        value as a flag because it starts with '-' (``--checkpoint -run``); else nothing."""
        found = re.match(r"^(--\w+) expected ", message)
        if not found:
            return ""
        flag = found.group(1)
        action = next((a for a in self._actions if flag in a.option_strings), None)
        metavar = action.metavar if action is not None else None
        takes = " ".join(metavar) if isinstance(metavar, tuple) else (metavar or flag.lstrip("-").upper())
        hint = f": {flag} takes {takes}" + (f" ({action.help})" if action is not None and action.help else "")
        argv = sys.argv[1:]
        if flag in argv and argv.index(flag) + 1 < len(argv) and argv[argv.index(flag) + 1].startswith("-"):
            given = argv[argv.index(flag) + 1]
            hint += f"; it was given {given!r}, which starts with '-' and so reads as a flag"
        return hint


def parser(doc: str | None, *parents: argparse.ArgumentParser) -> CliParser:
    """A script's parser: its module docstring as the description (examples kept as written) and the shared flags
    of ``parents`` (:func:`shared_flags`); flags are spelled out (no abbreviations), so one never shadows another."""
    return CliParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter, parents=list(parents), allow_abbrev=False
    )


def given_flags(argv: list[str]) -> set[str]:
    """The flags written on the command line ``argv`` (``--task``, ...), told apart from defaults (abbreviations are
    off in :func:`parser`, so each is spelled out)."""
    return {arg.split("=", 1)[0] for arg in argv if arg.startswith("--")}


def _number(kind: type, text: str) -> Any:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def _at_least(kind: type, text: str, bound: float, strict: bool) -> Any:
    """``text`` as a finite ``kind`` that is ``> bound`` (``strict``) or ``>= bound``; the one range check of the
    parsers below."""
    value = _number(kind, text)
    if value < bound or (strict and value == bound):
        raise argparse.ArgumentTypeError(f"must be {'>' if strict else '>='} {bound:g}, got {text}")
    return value


def positive_int(text: str) -> int:
    """An integer ≥ 1 (a count: envs, episodes, iterations, processes)."""
    return _at_least(int, text, 1, strict=False)


def nonnegative_int(text: str) -> int:
    """An integer ≥ 0 (a seed, an index)."""
    return _at_least(int, text, 0, strict=False)


def finite_float(text: str) -> float:
    """A finite number (NaN and ±inf refused: either would pass every comparison check silently)."""
    return _number(float, text)


def positive_float(text: str) -> float:
    """A finite number > 0 (a duration, a rate, a budget)."""
    return _at_least(float, text, 0.0, strict=True)


def nonnegative_float(text: str) -> float:
    """A finite number ≥ 0 (a magnitude, a threshold)."""
    return _at_least(float, text, 0.0, strict=False)


def output_dir(text: str) -> str:
    """A folder a script creates or fills (``--out``): not an existing file, not a symbolic link
    (:func:`realgap.envs.run.paths.check_output_dir`), checked while the command line is parsed."""

    try:
        check_output_dir(text, "--out")
    except PathRefused as err:
        raise argparse.ArgumentTypeError(str(err).removeprefix("--out ")) from None
    return text


def output_file(*suffixes: str) -> Callable[[str], str]:
    """An argparse type: a file a script writes, ending in one of ``suffixes``, not a folder, not a symbolic link
    (:func:`realgap.envs.run.paths.check_output_file`)."""

    def parse(text: str) -> str:
        try:
            check_output_file(text, "--out", suffixes)
        except PathRefused as err:
            raise argparse.ArgumentTypeError(str(err).removeprefix("--out ")) from None
        return text

    parse.__name__ = f"output file ({' or '.join(suffixes)})"
    return parse


class _Deterministic(argparse.Action):
    """``--deterministic`` (no value): True, and ``REALGAP_DETERMINISTIC=1``, read where the physics config is
    resolved (:func:`realgap.envs.sim.physics.apply_device`) here and in every process this one starts."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, True)
        os.environ[DETERMINISTIC_ENV] = "1"


FLAGS: dict[str, dict[str, Any]] = {
    "task": dict(default=DEFAULT_TASK, metavar="ID", help=f"registered task id (default: {DEFAULT_TASK})"),
    "num_envs": dict(type=positive_int, default=None, metavar="N", help="parallel envs (default: see the script)"),
    "device": dict(default=None, help="cpu | cuda | cuda:N (default: cuda if torch sees one, else cpu)"),
    "seed": dict(type=nonnegative_int, default=0, help="seed of every random stream the script draws (default: 0)"),
    "episodes": dict(type=positive_int, default=16, metavar="N", help="episodes per evaluated point (default: 16)"),
    "policy": POLICY_FLAG,
    "checkpoint": dict(default=None, metavar="PATH", help="run folder (its latest model_<it>.pt) or a model_<it>.pt"),
    "deterministic": dict(
        action=_Deterministic,
        default=False,
        help="CUDA: bit-exact runs on one GPU model (Newton run_to_run, torch deterministic "
        "algorithms), slower; refused on the CPU, which is exact anyway (docs/gpu.md)",
    ),
}
"""The shared flags: type (with its range check), default and help, each defined once."""


def shared_flags(
    *names: str, required: tuple[str, ...] = (), repeatable: tuple[str, ...] = (), **defaults: Any
) -> argparse.ArgumentParser:
    """A parent parser holding the shared flags ``names`` (keys of :data:`FLAGS`), each added by
    :func:`add_shared_flag`: ``required`` and ``repeatable`` name the flags the script needs given, or takes several
    times; ``defaults`` replaces a flag's default where the script's job gives it another.
    """
    unknown = sorted(set(names) - set(FLAGS)) + sorted((set(defaults) | set(required) | set(repeatable)) - set(names))
    if unknown:
        raise KeyError(f"not shared flags of this parser: {unknown} (shared: {sorted(FLAGS)})")
    parent = argparse.ArgumentParser(add_help=False)
    for name in names:
        default = defaults.get(name, _FLAG_DEFAULT)
        add_shared_flag(parent, name, default, required=name in required, repeatable=name in repeatable)
    return parent


_FLAG_DEFAULT: Any = object()
"""The default of :func:`add_shared_flag`'s ``default``: the flag's own (:data:`FLAGS`)."""


def add_shared_flag(
    container: Any, name: str, default: Any = _FLAG_DEFAULT, required: bool = False, repeatable: bool = False
) -> None:
    """Add the shared flag ``name`` (a key of :data:`FLAGS`) to ``container``, a parser or an argument group (e.g. a
    mutually exclusive one), with its type, help and default.

    Args:
        container: Where the flag goes (``add_argument`` is called on it).
        name: The flag, without its dashes.
        default: Replaces the flag's default where the script's job gives it another (e.g. ``num_envs=64`` envs per
            evaluation batch, ``task=None`` where the task comes from the run or the export); the help text says so.
        required: The script needs the flag given (no default).
        repeatable: The flag may be given several times; the script reads the list of values (default: none).
    """
    spec = dict(FLAGS[name])
    meaning = spec["help"].split(" (default")[0]
    if default is not _FLAG_DEFAULT:
        spec["default"] = default
        shown = "from the run, the export or the task" if default is None else default
        spec["help"] = meaning + f" (default: {shown})"
    if required:
        spec.pop("default", None)
        spec.update(required=True, help=meaning)
    if repeatable:
        spec.update(action="append", default=[], help=meaning + " (repeatable)")
    container.add_argument(f"--{name}", **spec)


def warn_num_procs(num_procs: int, cores: int | None = None) -> str | None:
    """The warning for more processes than CPU cores (each then shares a core: no faster, more memory), else None."""
    cores = cores if cores is not None else (os.cpu_count() or 1)
    if num_procs > cores:
        return f"--num_procs {num_procs} exceeds the {cores} CPU cores of this machine: processes will share cores"
    return None


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
    except UsageError:  # printed where it was raised
        code = EXIT_USAGE
    except (*USER_ERRORS, *extra_errors) as err:
        print(f"error: {err}", file=sys.stderr)
        code = EXIT_USAGE
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
