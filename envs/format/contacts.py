"""The contact parameters MuJoCo accepts and a physics step resolves: one set of rules for every place they are read.

Used by :class:`realgap.envs.contact.params.ContactParams` (a robot's or scene's contact config), by the verifying
loader of an export (``simulator.contacts.geoms``, :mod:`realgap.envs.format.verify`) and by the read-back of a run
folder's ``params/contacts.json`` (:mod:`realgap.envs.run.contacts`). Pure Python: the format imports no simulator.

A recorded geom row is what :func:`realgap.envs.run.contacts.contact_geoms` writes: the collision geoms of one env in
the live MuJoCo-Warp model grouped by their parameters, ``{"owner", "friction", "priority", "condim", "solref",
"solimp", "margin_m", "gap_m", "count", "examples"}``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

CONDIMS = (1, 3, 4, 6)
"""Contact-force dimensions MuJoCo defines: frictionless, sliding, + torsional, + rolling."""
ROW_KEYS = ("friction", "priority", "condim", "solref", "solimp", "margin_m", "gap_m")
"""The contact parameters a recorded geom row must carry (``owner``, ``count`` and ``examples`` only describe it)."""


def _finite(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def contact_problems(
    solref: Sequence[float],
    solimp: Sequence[float],
    friction: Sequence[float],
    condim: Any,
    margin: float,
    gap: float,
    timestep: float,
    *,
    stiffness_form: bool = True,
) -> list[str]:
    """Every rule the parameters break, one message each (empty: valid).

    Rules: ``solref`` is (timeconst s, dampratio) with timeconst > 0 and >= 2 * ``timestep`` (below it MuJoCo silently
    clamps the time constant, so the recorded value would not be the one simulated) and dampratio > 0, or, where
    ``stiffness_form``, MuJoCo's direct form (-stiffness N/m, -damping N·s/m) with both < 0; ``solimp`` is (d0, dwidth,
    width m, midpoint, power) with d0, dwidth, midpoint in (0, 1), width > 0 and power >= 1; ``friction`` is (sliding,
    torsional m, rolling m), each >= 0; ``condim`` in {1, 3, 4, 6}; ``margin`` and ``gap`` in m, each >= 0. Every value
    must be finite.

    ``gap`` is not bounded by ``margin``: since MuJoCo 3.9 it widens the detection envelope beyond the margin and those
    contacts exert no force (MuJoCo-Warp's ``includemargin`` is the margin alone), and Newton zeroes the margins while
    MuJoCo-Warp runs the collisions, so ``gap > margin`` is what training ran with.

    Args:
        timestep: s; the step the solver integrates (physics step / substeps).
        stiffness_form: Accept the negative (stiffness, damping) form of ``solref``.
    """
    out: list[str] = []
    values = {"solref": solref, "solimp": solimp, "friction": friction}
    for name, want in (("solref", 2), ("solimp", 5), ("friction", 3)):
        v = values[name]
        if not (isinstance(v, Sequence) and not isinstance(v, str) and len(v) == want and all(map(_finite, v))):
            out.append(f"{name} must be {want} finite numbers, got {v!r}")
            values[name] = None
    if not (_finite(timestep) and timestep > 0):
        out.append(f"the physics step must be > 0 s, got {timestep!r}")
        timestep = 0.0
    if values["solref"] is not None:
        timeconst, dampratio = solref
        if timeconst <= 0 and not stiffness_form:
            out.append(f"timeconst must be > 0 s (only the positive solref form is supported), got {timeconst}")
        elif timeconst <= 0 and not (timeconst < 0 and dampratio < 0):
            out.append(
                f"solref {list(solref)}: (timeconst s, dampratio) must both be > 0 or (-stiffness, -damping) both < 0"
            )
        elif timeconst > 0:
            if not dampratio > 0:
                form = " (or both < 0: the stiffness form)" if stiffness_form else ""
                out.append(f"dampratio must be > 0{form}, got {dampratio}")
            if timestep > 0 and timeconst < 2 * timestep - 1e-12:
                out.append(
                    f"timeconst {timeconst} s < 2 * timestep ({2 * timestep:g} s): the physics step cannot "
                    "resolve it (MuJoCo would clamp it)"
                )
    if values["solimp"] is not None:
        d0, dwidth, width, midpoint, power = solimp
        for name, v in (("d0", d0), ("dwidth", dwidth), ("midpoint", midpoint)):
            if not 0.0 < v < 1.0:
                out.append(f"solimp {name} must be in (0, 1), got {v}")
        if not width > 0:
            out.append(f"solimp width must be > 0 m, got {width}")
        if not power >= 1:
            out.append(f"solimp power must be >= 1, got {power}")
    if values["friction"] is not None and any(f < 0 for f in friction):
        out.append(f"friction must be 3 values >= 0 (sliding, torsional, rolling), got {list(friction)}")
    if isinstance(condim, bool) or condim not in CONDIMS:
        out.append(f"condim must be 1, 3, 4 or 6, got {condim!r}")
    for name, v in (("margin", margin), ("gap", gap)):
        if not (_finite(v) and v >= 0):
            out.append(f"{name} must be >= 0 m, got {v!r}")
    return out


def geom_row_problems(row: Mapping[str, Any], timestep: float) -> list[str]:
    """The rules (:func:`contact_problems`) a recorded geom row breaks, and any contact parameter it lacks."""
    if not isinstance(row, Mapping):
        return [f"a geom row must be an object, got {type(row).__name__}"]
    missing = [k for k in ROW_KEYS if k not in row]
    if missing:
        return [f"missing {missing}"]
    problems = contact_problems(
        row["solref"], row["solimp"], row["friction"], row["condim"], row["margin_m"], row["gap_m"], timestep
    )
    if isinstance(row["priority"], bool) or not isinstance(row["priority"], int):
        problems.append(f"priority must be an integer, got {row['priority']!r}")
    return problems


def recorded_contact_problems(geoms: Any, timestep: float, where: str) -> list[str]:
    """Every rule a recorded list of geom rows breaks, each message naming ``where``, the row's index, its owner and
    an example geom, so the group to fix is found without a simulator; ``[]`` for a valid list.

    ``geoms`` of ``None`` (a run folder or export recorded before contacts were) is valid: nothing to check.
    """
    if geoms is None:
        return []
    if not isinstance(geoms, list):
        return [f"{where}: must be a list of geom rows, got {type(geoms).__name__}"]
    out = []
    for i, row in enumerate(geoms):
        owner = row.get("owner", "?") if isinstance(row, Mapping) else "?"
        examples = row.get("examples") if isinstance(row, Mapping) else None
        first = f", e.g. {examples[0]}" if isinstance(examples, list) and examples else ""
        out += [f"{where}[{i}] (owner {owner}{first}): {p}" for p in geom_row_problems(row, timestep)]
    return out


def solver_step(simulator: Mapping[str, Any] | None, sim_dt: float) -> float:
    """s; the step the contact solver integrates: ``sim_dt`` / ``simulator.solver.num_substeps`` (1 if not recorded)."""
    solver = (simulator or {}).get("solver") or {}
    substeps = solver.get("num_substeps") or 1
    return sim_dt / substeps if _finite(substeps) and substeps >= 1 else sim_dt
