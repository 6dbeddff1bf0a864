"""Config overrides from the command line: ``--set agent.algorithm.num_learning_epochs=8 env.rewards.fall.weight=-50``.

Isaac Lab's own scripts take the same dotted keys through Hydra (``env.`` for the env config, ``agent.`` for the
rsl-rl runner config); realgap parses them itself so a lever is one command line, recorded with the run
(``params/run.json`` under ``overrides``; the resolved configs in ``params/env.yaml`` / ``params/agent.yaml``) and
re-applied when the run is resumed. A key that does not exist, or a value of another type than the field's, is
refused with the fields that do exist: a typo never trains the default silently.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import yaml

ROOTS = ("env", "agent")


def _fields(node: Any) -> list[str]:
    if isinstance(node, dict):
        return sorted(map(str, node))
    return sorted(k for k in vars(node) if not k.startswith("_")) if hasattr(node, "__dict__") else []


def parse_override(item: str) -> tuple[str, list[str], Any]:
    """``"agent.algorithm.gamma=0.98"`` → ``("agent", ["algorithm", "gamma"], 0.98)`` (the value read as YAML).

    Raises:
        ValueError: Not ``ROOT.PATH=VALUE`` with ROOT ``env`` or ``agent``.
    """
    key, sep, text = item.partition("=")
    parts = key.strip().split(".")
    if not sep or len(parts) < 2 or parts[0] not in ROOTS or not all(parts):
        raise ValueError(f"--set {item!r}: expected env.PATH=VALUE or agent.PATH=VALUE (e.g. agent.seed=1)")
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"--set {item!r}: the value is not valid YAML ({exc})") from None
    if isinstance(value, str):  # YAML 1.1 reads "3e-4" as a string; a number is meant
        try:
            value = float(value)
        except ValueError:
            pass
    if isinstance(value, float) and not math.isfinite(value) or isinstance(value, str) and _nonfinite(value):
        raise ValueError(f"--set {item!r}: the value is not a finite number")
    return parts[0], parts[1:], value


def _nonfinite(text: str) -> bool:
    """Whether ``text`` spells NaN or an infinity (``float()`` reads "nan", "inf", "-Infinity")."""
    try:
        return not math.isfinite(float(text))
    except ValueError:
        return False


def _annotation_allows_dict(node: Any, leaf: str) -> bool:
    """Whether the dataclass field ``leaf`` of ``node`` is annotated to hold a dict as well as its current value (e.g.
    Isaac Lab's ``JointPositionActionCfg.offset: float | dict[str, float]``, a per-joint table by name pattern)."""
    field = getattr(node, "__dataclass_fields__", {}).get(leaf)
    return field is not None and "dict[" in str(field.type)


def _coerce(item: str, old: Any, value: Any, dict_ok: bool = False) -> Any:
    """``value`` in the type of the field's current value (an int where a float is, a float where a list is ...); a
    dict also where the field's annotation allows one (``dict_ok``)."""
    if dict_ok and isinstance(value, dict):
        return value
    if old is None or value is None or isinstance(old, bool) and isinstance(value, bool):
        return value
    if isinstance(old, bool) or isinstance(value, bool):
        pass  # a bool only replaces a bool
    elif isinstance(old, float) and isinstance(value, int | float):
        return float(value)
    elif isinstance(old, int) and isinstance(value, int):
        return value
    elif isinstance(old, list | tuple) and isinstance(value, list | tuple):
        return type(old)(value)
    elif isinstance(old, str) and isinstance(value, str) or isinstance(old, dict) and isinstance(value, dict):
        return value
    raise ValueError(f"--set {item!r}: the field holds {type(old).__name__} {old!r}, got {type(value).__name__}")


def apply_overrides(env_cfg: Any, agent_cfg: Any, items: Sequence[str]) -> None:
    """Set every ``ROOT.PATH=VALUE`` of ``items`` on ``env_cfg`` / ``agent_cfg`` (in order).

    Raises:
        ValueError: A malformed item, a path that does not exist (the message lists the fields at the point where it
            failed) or a value of another type than the field's.
    """
    for item in items:
        root, path, value = parse_override(item)
        node = env_cfg if root == "env" else agent_cfg
        walked = root
        for name in path[:-1]:
            child = node.get(name) if isinstance(node, dict) else getattr(node, name, None)
            if child is None:
                raise ValueError(f"--set {item!r}: {walked} has no field {name!r} (fields: {', '.join(_fields(node))})")
            node, walked = child, f"{walked}.{name}"
        leaf = path[-1]
        has = leaf in node if isinstance(node, dict) else leaf in _fields(node)
        if not has:
            raise ValueError(f"--set {item!r}: {walked} has no field {leaf!r} (fields: {', '.join(_fields(node))})")
        old = node[leaf] if isinstance(node, dict) else getattr(node, leaf)
        new = _coerce(item, old, value, dict_ok=not isinstance(node, dict) and _annotation_allows_dict(node, leaf))
        if isinstance(node, dict):
            node[leaf] = new
        else:
            setattr(node, leaf, new)
