"""Where a command may write: names and output paths checked before anything is created.

Every command that writes takes its places from the command line (``--run_name``, ``--out``, ``--log``). A name that
holds a path separator or ``..`` would put a run folder outside its root (``--run_name ../../x`` wrote into the
repository root), a symbolic link at an output path writes wherever the link points, and an output path that is an
existing folder (or a file where a folder is expected) fails only after other outputs were written beside it. The
checks here refuse each case with one message naming the flag, the value and what is expected, before any file or
folder exists. Standard library only: every layer (training, deploy, identification, contact lab) may use them.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+=@,-]{0,99}$")
"""A name that is one path component on every file system we write to: starts with a letter or digit (no hidden
``.x``, no ``-x`` read as a flag by the next tool), then letters, digits and ``._+=@,-``; at most 100 characters."""


class PathRefused(ValueError):
    """A name or output path a command refuses before writing anything; the message names the flag and the rule."""


def check_name(text: str, flag: str) -> str:
    """``text`` as a single folder or file name (:data:`NAME_RE`), e.g. ``--run_name``.

    Raises:
        PathRefused: A separator, ``..``, a leading dot or dash, a space or control character, or over 100 characters.
    """
    if not NAME_RE.match(text):
        raise PathRefused(
            f"{flag} {text!r} is not a plain name: use letters, digits and ._+=@,- (starting with a letter or digit, "
            "at most 100 characters, no '/' or '..'), so the folder stays inside its root"
        )
    return text


def check_inside(path: str | Path, root: str | Path, flag: str) -> Path:
    """``path`` resolved (symbolic links followed), checked to lie inside ``root`` (resolved too).

    Raises:
        PathRefused: ``path`` resolves outside ``root`` (names both resolved paths).
    """
    resolved, base = Path(path).resolve(), Path(root).resolve()
    if resolved != base and base not in resolved.parents:
        raise PathRefused(f"{flag} would write to '{resolved}', outside its root '{base}'")
    return resolved


def check_output_file(path: str | Path, flag: str, suffixes: Sequence[str] = ()) -> Path:
    """``path`` as a file a command will create or replace: with one of ``suffixes`` (if given), not a folder, not a
    symbolic link (a write through it lands where the link points), and under a parent that is a folder if it exists.

    Raises:
        PathRefused: The path breaks one of these rules (named).
    """
    path = Path(path)
    if suffixes and path.suffix not in suffixes:
        raise PathRefused(f"{flag} '{path}' must end in {' or '.join(suffixes)}")
    if path.is_symlink():
        raise PathRefused(f"{flag} '{path}' is a symbolic link (to '{path.readlink()}'): give the real path")
    if path.is_dir():
        raise PathRefused(f"{flag} '{path}' is an existing folder; give a file path")
    _check_parents(path, flag)
    return path


def check_output_dir(path: str | Path, flag: str) -> Path:
    """``path`` as a folder a command will create or fill: not an existing file, not a symbolic link.

    Raises:
        PathRefused: The path is a file or a symbolic link, or a parent is a file.
    """
    path = Path(path)
    if path.is_symlink():
        raise PathRefused(f"{flag} '{path}' is a symbolic link (to '{path.readlink()}'): give the real path")
    if path.exists() and not path.is_dir():
        raise PathRefused(f"{flag} '{path}' is an existing file; give a folder")
    _check_parents(path, flag)
    return path


def _check_parents(path: Path, flag: str) -> None:
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise PathRefused(f"{flag} '{path}': '{parent}' is a file, not a folder")
            return


def check_writable(folder: str | Path, flag: str) -> Path:
    """``folder`` (or, where it does not exist yet, its nearest existing parent) accepts a new file: probed with a
    temporary file that is removed at once, since permission bits do not tell (an immutable folder, a read-only
    mount, root's access() answers).

    Raises:
        PathRefused: The folder refuses a new file (names it and the system's reason).
    """
    folder = Path(folder)
    probe = next((p for p in (folder, *folder.parents) if p.exists()), Path("."))
    try:
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as err:
        raise PathRefused(
            f"{flag}: cannot write in '{probe}' ({err.strerror or err}): free space or fix its "
            "permissions (an immutable folder: chattr -i), then run again"
        ) from None
    return folder
