"""The robot description a policy was trained on: which files it is made of, their hash, and where to find it.

A policy names its robot description by an importable package and a path inside it (``robot.description`` of the
metadata), and pins it by one SHA-256 over the MJCF *and every file it references* (meshes, textures, height fields,
skins, included MJCF files): a changed mesh changes the contacts and the inertias as surely as a changed joint.

The rule, :data:`HASH_RULE` (``realgap.description_hash/1``), is what ``sha256sum`` gives in the MJCF's folder::

    cd <folder of the MJCF> && sha256sum <the MJCF and every referenced file, paths sorted> | sha256sum

i.e. the SHA-256 of the text made of one line ``"<sha256 of the file, hex>  <path>\\n"`` per file, with ``<path>``
relative to the MJCF's folder (``/``-separated) and the lines sorted by path (byte order). References are resolved as
MuJoCo resolves them: ``<include file>`` relative to the top-level MJCF's folder (recursively, includes of includes
too); ``<mesh|hfield|skin file>`` under ``<compiler meshdir>``; ``<texture file|fileright|...>`` under
``<compiler texturedir>``; ``assetdir`` sets both; a directory is relative to the MJCF's folder; absolute paths stay.

Pure Python (``xml.etree``, ``hashlib``): the deploy runtime, the exporter and the training asset pipeline
(:func:`realgap.envs.sim.assets.description_hash`) compute the same value without MuJoCo.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HASH_RULE_ID = "realgap.description_hash/1"
HASH_RULE = (
    f"{HASH_RULE_ID}: sha256 of the text made of one line '<sha256 hex of the file>  <path>\\n' per file, for the "
    "MJCF and every file it references (<include file> relative to the MJCF's folder, recursively; "
    "<mesh|hfield|skin file> under <compiler meshdir>; <texture file|fileright|fileleft|fileup|filedown|filefront|"
    "fileback> under <compiler texturedir>; assetdir sets both), <path> relative to the MJCF's folder with '/' "
    "separators, lines sorted by path: `sha256sum <files, sorted> | sha256sum` run in the MJCF's folder"
)
"""The hash rule as written into every exported policy (``robot.description.hash_rule``)."""

_MESH_TAGS = ("mesh", "hfield", "skin")
_TEXTURE_ATTRS = ("file", "fileright", "fileleft", "fileup", "filedown", "filefront", "fileback")


class DescriptionError(ValueError):
    """The robot description cannot be found or read (names the file and what to install)."""


@dataclass(frozen=True)
class DescriptionFile:
    """One file of a robot description.

    Attributes:
        path: Path relative to the MJCF's folder, ``/``-separated (as hashed).
        sha256: SHA-256 of its bytes, hex.
    """

    path: str
    sha256: str


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _parse(path: Path, root_dir: Path, seen: set[Path]) -> tuple[list[ET.Element], list[Path]]:
    """Every element of ``path`` and of the files it includes (document order), and the included files."""
    try:
        tree = ET.parse(path)
    except (OSError, ET.ParseError) as err:
        raise DescriptionError(f"cannot read the MJCF file {path}: {err}") from err
    elements, included = [], []
    for element in tree.getroot().iter():
        elements.append(element)
        if element.tag == "include" and element.get("file"):
            child = (root_dir / element.get("file")).resolve()
            if child in seen:
                continue
            seen.add(child)
            included.append(child)
            sub_elements, sub_included = _parse(child, root_dir, seen)
            elements += sub_elements
            included += sub_included
    return elements, included


def referenced_files(mjcf: str | Path) -> list[Path]:
    """The MJCF and every file it references (absolute paths, MJCF first, then in document order, no duplicates).

    Raises:
        DescriptionError: The MJCF or an included file cannot be read or parsed.
    """
    mjcf = Path(mjcf).resolve()
    root_dir = mjcf.parent
    elements, included = _parse(mjcf, root_dir, {mjcf})
    dirs = {"mesh": "", "texture": ""}
    for element in elements:  # the last <compiler> setting wins, as later attributes override earlier ones
        if element.tag == "compiler":
            if element.get("assetdir") is not None:
                dirs["mesh"] = dirs["texture"] = element.get("assetdir")
            if element.get("meshdir") is not None:
                dirs["mesh"] = element.get("meshdir")
            if element.get("texturedir") is not None:
                dirs["texture"] = element.get("texturedir")
    files = [mjcf, *included]
    for element in elements:
        if element.tag in _MESH_TAGS:
            names, base = [element.get("file")], dirs["mesh"]
        elif element.tag == "texture":
            names, base = [element.get(a) for a in _TEXTURE_ATTRS], dirs["texture"]
        else:
            continue
        for name in names:
            if name:
                files.append((root_dir / base / name).resolve())
    return list(dict.fromkeys(files))


def description_files(mjcf: str | Path) -> list[DescriptionFile]:
    """Every file of the description with its SHA-256, sorted by path (the hash's lines).

    Raises:
        DescriptionError: A referenced file is missing (named) or the MJCF cannot be parsed.
    """
    mjcf = Path(mjcf).resolve()
    out = []
    for path in referenced_files(mjcf):
        if not path.is_file():
            raise DescriptionError(f"{mjcf.name} references {path}, which does not exist")
        rel = Path(os.path.relpath(path, mjcf.parent)).as_posix()
        out.append(DescriptionFile(rel, _sha256_file(path)))
    return sorted(out, key=lambda f: f.path.encode())


def manifest(files: list[DescriptionFile]) -> str:
    """The hashed text: ``"<sha256>  <path>\\n"`` per file, sorted by path (``sha256sum``'s output format)."""
    return "".join(f"{f.sha256}  {f.path}\n" for f in sorted(files, key=lambda f: f.path.encode()))


def description_sha256(mjcf: str | Path) -> str:
    """SHA-256 of the MJCF and every file it references, by :data:`HASH_RULE`."""
    return hashlib.sha256(manifest(description_files(mjcf)).encode()).hexdigest()


def locate_description(description: Mapping[str, Any]) -> Path:
    """The MJCF a policy names: ``importlib.import_module(import_package).asset_path() / path``.

    Args:
        description: ``robot.description`` of the metadata (``import_package``, ``path``, ``distribution``).

    Raises:
        DescriptionError: The package is not installed (the message names the distribution and version to install)
            or has no such file.
    """
    package, dist = description["import_package"], description["distribution"]
    pin = f"{dist}=={description['version']}" if description.get("version") else dist
    try:
        module = importlib.import_module(package)
    except ModuleNotFoundError as err:
        raise DescriptionError(
            f"the robot description comes from the Python package '{package}' (PyPI distribution "
            f"'{dist}'), which is not installed: pip install '{pin}'"
        ) from err
    root = Path(module.asset_path()) if hasattr(module, "asset_path") else Path(module.__file__).parent
    path = root / description["path"]
    if not path.is_file():
        raise DescriptionError(
            f"'{package}' (from {dist}) has no file {description['path']} (looked at {path}); "
            f"install the version the policy names: pip install '{pin}'"
        )
    return path
