"""The action terms of a live Isaac Lab env, described for the exported metadata (Isaac Lab glue).

Each term of ``env.action_manager`` describes itself: its class's ``export_description()`` returns the format type,
joints, resolved parameters, equation, units and feed-forward in the format's words
(:mod:`realgap.envs.format.terms`); this module adds the term's name and its slice of the action vector and checks the
terms together. A term whose class has no ``export_description`` is refused, naming the class: a new action term
describes itself where it is defined, and export does not change.
"""

from __future__ import annotations

import math
from typing import Any

from realgap.envs.format.actions import Actions, ActionTerm
from realgap.envs.format.terms import JOINT_UNITS, TermDescriptionError, f32, per_joint

__all__ = ["JOINT_UNITS", "ExportError", "action_terms", "check_actions", "describe_term", "f32", "per_joint"]


class ExportError(ValueError):
    """The env uses something the export format / deploy runtime cannot describe (names it)."""


def describe_term(name: str, term: Any, start: int) -> ActionTerm:
    """One live action term as an :class:`ActionTerm` starting at ``start`` in the action vector.

    Raises:
        ExportError: A term class without ``export_description()``, or a setting its description refuses (both name
            the term).
    """
    describe = getattr(term, "export_description", None)
    if describe is None:
        raise ExportError(
            f"action term '{name}' is a {type(term).__name__}, which the export format has no type "
            "for (its class has no export_description(); see realgap.envs.format.terms)"
        )
    try:
        fields = describe()
    except TermDescriptionError as err:
        raise ExportError(f"action term '{name}': {err}") from None
    return ActionTerm(name=name, start=start, stop=start + term.action_dim, **fields)


def action_terms(env: Any, raw_clip: float | None = None) -> tuple[Actions, Any]:
    """Every action term of ``env`` in action-vector order, and the articulation they drive.

    Args:
        raw_clip: The bound rsl-rl's wrapper applies to raw actions (``clip_actions`` of the agent cfg), if any.

    Raises:
        ExportError: A term of a class the format cannot describe, or terms driving different assets.
    """
    terms, pos, assets = [], 0, set()
    for name in env.action_manager.active_terms:
        term = env.action_manager.get_term(name)
        assets.add(term.cfg.asset_name)
        terms.append(describe_term(name, term, pos))
        pos = terms[-1].stop
    if len(assets) != 1:
        raise ExportError(f"the action terms drive the assets {sorted(assets)}; the export describes one robot")
    clip = None if raw_clip is None or not math.isfinite(raw_clip) else float(raw_clip)
    return Actions(tuple(terms), clip), env.scene[assets.pop()]


def check_actions(meta: Any, env: Any) -> None:
    """Refuse an env whose action terms are not the export's (as :func:`action_terms` describes them): the policy's
    raw actions would mean other joint targets. Build the env with :func:`realgap.envs.eval.policies.export_actions`
    applied to its cfg first.

    Raises:
        ExportError: Naming each term that differs, and how.
    """
    env_actions, _ = action_terms(env, meta.actions.raw_clip)
    if env_actions == meta.actions:
        return
    lines = []
    for x, e in zip(meta.actions.terms, env_actions.terms, strict=False):
        keys = sorted(k for k in set(x.params) | set(e.params) if x.params.get(k) != e.params.get(k))
        if (x.name, x.type, x.start, x.stop, x.joint_names) != (e.name, e.type, e.start, e.stop, e.joint_names):
            lines.append(
                f"term '{x.name}' ({x.type}, [{x.start}, {x.stop})) vs the env's '{e.name}' ({e.type}, "
                f"[{e.start}, {e.stop}))"
            )
        elif keys or x.feed_forward != e.feed_forward:
            lines.append(f"term '{x.name}': {', '.join(keys) or 'feed_forward'} differ")
    if len(meta.actions.terms) != len(env_actions.terms):
        lines.append(f"{len(meta.actions.terms)} terms vs the env's {len(env_actions.terms)}")
    raise ExportError("the env's action terms are not the export's:\n  - " + "\n  - ".join(lines or ["raw_clip"]))
