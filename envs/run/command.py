"""The ``realgap`` command: one subcommand per job, each the script of the same name with its own flags.

    realgap --help                                   # every job with its one-line summary
    realgap train --task Realgap-Balance-G1-v0 --num_envs 64 --max_iterations 10
    realgap play --checkpoint runs/balance_g1/<run>
    realgap train --help                             # one job's flags
    python -m realgap.scripts play --zero_action     # the same without the console script (scripts/__main__.py)

A job runs exactly as ``python scripts/<job>.py`` does from a clone (same flags, defaults, messages and exit
status; ``--help`` per job), so the scripts in the repository and the installed command cannot drift apart: the
``scripts/`` folder is the package ``realgap.scripts`` of the wheel, and its jobs are found from the folder, not listed
by hand. ``[project.scripts]`` in pyproject.toml installs :func:`main` as ``realgap``. :data:`ALIASES` adds the short
names the docs use and the robot-side job that lives in the library (``g1_dds_sim``: the G1 DDS simulator).
"""

from __future__ import annotations

import ast
import runpy
import sys
from pathlib import Path

PACKAGE = "realgap.scripts"
ALIASES: dict[str, str] = {
    "compare": f"{PACKAGE}.compare_actions",
    "g1_dds_sim": "realgap.envs.deploy.drivers.g1_dds_sim",
}
"""Subcommands that are not a file of this folder, by the module each runs (``runpy``: its ``__main__``)."""
PROG = "realgap"
EXIT_USAGE = 2
"""Exit status of an unknown subcommand (argparse's convention for bad usage, as every job's parser)."""


def _root() -> Path:
    """The folder holding realgap's packages: ``realgap/`` in an install, the repository root in a clone (setup.py
    maps each top-level folder to ``realgap.<folder>``); this file is ``<root>/envs/run/command.py`` either way."""
    return Path(__file__).resolve().parents[2]


def _folder() -> Path:
    return _root() / "scripts"


def jobs() -> dict[str, str]:
    """Every subcommand and the module it runs: each ``<job>.py`` of this folder, then :data:`ALIASES`."""
    found = {path.stem: f"{PACKAGE}.{path.stem}" for path in sorted(_folder().glob("*.py"))}
    return {name: module for name, module in found.items() if not name.startswith("_")} | ALIASES


def _source(module: str) -> Path:
    """The file of ``module`` (``realgap.<path>``) found under :func:`_root`, so listing the jobs imports none."""
    base = _root().joinpath(*module.split(".")[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"no source file for {module} under {_root()}")


def summary(module: str, width: int = 96) -> str:
    """The first paragraph of ``module``'s docstring on one line, cut to ``width`` characters at a word; read without
    importing the module (jobs import torch, Isaac Lab, MuJoCo)."""
    doc = ast.get_docstring(ast.parse(_source(module).read_text(encoding="utf-8"))) or ""
    line = " ".join(doc.split("\n\n", 1)[0].split())
    return line if len(line) <= width else line[: width - 1].rsplit(" ", 1)[0] + " …"


def usage() -> str:
    """``realgap --help``: how to call it and every job with its summary."""
    table = jobs()
    width = max(map(len, table))
    lines = [f"usage: {PROG} <job> [flags]   ({PROG} <job> --help: the job's flags)", "", "jobs:"]
    scripts = {module: name for name, module in table.items() if name not in ALIASES}
    for name, module in sorted(table.items()):
        text = f"the same as {scripts[module]}" if name in ALIASES and module in scripts else summary(module)
        lines.append(f"  {name:<{width}}  {text}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the job named by ``argv[0]`` with the rest of ``argv`` as its command line.

    Returns:
        0 for ``--help`` / ``--version``; otherwise the job ends the process with its own exit status (or returns it
        when it returns normally); 2 for a missing or unknown job (the message lists the jobs), and for a job whose
        third-party package is not installed (a training job in a robot-side install: the message names the package
        and the extra).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["-h"], ["--help"]):
        print(usage())
        return 0
    if argv[:1] == ["--version"]:
        from importlib.metadata import version

        print(f"{PROG} {version('realgap')}")
        return 0
    table = jobs()
    if not argv or argv[0] not in table:
        what = f"unknown job '{argv[0]}'" if argv else "no job given"
        print(f"{usage()}\n\nerror: {what}; the jobs are listed above", file=sys.stderr)
        return EXIT_USAGE
    job, rest = argv[0], argv[1:]
    # the job sees the command line it would see as a script; its parser shows "usage: realgap <job> ..."
    saved = sys.argv
    sys.argv = [f"{PROG} {job}", *rest]
    try:
        runpy.run_module(table[job], run_name="__main__")
    except ModuleNotFoundError as err:
        if (err.name or "realgap").split(".")[0] == "realgap":
            raise  # a module of realgap itself missing is a broken install, not a usage error: the traceback says where
        print(
            f"error: realgap {job} needs the package '{err.name}', which is not installed here ({err}); training, "
            "evaluation and export need the train extra (README 'Setup'), the robot jobs the deploy extra "
            "(docs/getting_started.md)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    finally:
        sys.argv = saved
    return 0
