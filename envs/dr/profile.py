"""Domain-randomization profile files: ``configs/dr/<name>.yaml`` or a YAML path → a validated :class:`DRProfile`.

YAML is read with duplicate keys refused (PyYAML would keep the last silently); a shipped profile's ``name`` must equal
its file name. The schema and its checks are :mod:`realgap.envs.dr.profile_schema` (re-exported here, so
``realgap.envs.dr.profile`` stays the one place profiles are imported from). Pure Python + PyYAML: no simulator import.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from realgap.envs.dr.profile_schema import (  # noqa: F401  (the schema, re-exported)
    ACTUATOR_MODELS,
    INERTIA_BOUNDS,
    MAX_LUMP_TRAVEL_M,
    MIN_TIMECONST_STEPS,
    PROFILE_DIR,
    PROFILE_PACKAGE,
    TASKS,
    ActuatorGroup,
    ActuatorStagesGroup,
    ContactFrictionGroup,
    ContactGeometryGroup,
    ContactSolrefGroup,
    DRProfile,
    InertiaGroup,
    InitialPoseGroup,
    JointFrictionGroup,
    PushSpec,
    WidthCurriculumSpec,
    check_inertia_bounds,
    check_timeconst_range,
    parse_dr_profile,
)


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate keys (PyYAML silently keeps the last one)."""


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    keys = [loader.construct_object(k, deep=deep) for k, _ in node.value]
    duplicates = sorted({str(k) for k in keys if keys.count(k) > 1})
    if duplicates:
        raise ValueError(f"duplicate key(s) {duplicates} in a mapping at line {node.start_mark.line + 1}")
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


def _shipped() -> dict[str, Any]:
    folder = resources.files(PROFILE_PACKAGE) / PROFILE_DIR
    return {p.name[: -len(".yaml")]: p for p in folder.iterdir() if p.name.endswith(".yaml")}


def list_dr_profiles() -> list[str]:
    """Names of the profiles shipped in ``realgap.configs/dr`` (sorted)."""
    return sorted(_shipped())


def load_dr_profile(name_or_path: str | os.PathLike[str]) -> DRProfile:
    """Load and validate a profile by shipped name (``"nominal"``) or by path to a YAML file.

    A string ending in ``.yaml``/``.yml`` or containing a path separator, or any ``PathLike``, is a path; a shipped
    profile's ``name`` field must equal its file name.

    Raises:
        ValueError: unknown name (listing the available ones), unreadable YAML, or any validation error.
    """
    text_arg = os.fspath(name_or_path)
    is_path = not isinstance(name_or_path, str) or text_arg.endswith((".yaml", ".yml")) or os.sep in text_arg
    if is_path:
        path = Path(text_arg)
        if not path.is_file():
            raise ValueError(f"DR profile file {path} does not exist")
        text, source = path.read_text(encoding="utf-8"), path.name
    else:
        shipped = _shipped()
        if text_arg not in shipped:
            raise ValueError(f"unknown DR profile {text_arg!r}; available: {sorted(shipped)} (or pass a YAML path)")
        text, source = shipped[text_arg].read_text(encoding="utf-8"), f"{text_arg}.yaml"
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass
    except (yaml.YAMLError, ValueError) as err:
        raise ValueError(f"{source}: cannot read YAML: {err}") from None
    profile = parse_dr_profile(data, source)
    if not is_path and profile.name != text_arg:
        raise ValueError(f"{source}: field name {profile.name!r} must equal the file name {text_arg!r}")
    return profile
