"""The contact parameters the engine simulated, read from the live MuJoCo-Warp model (Isaac Lab glue).

:func:`contact_geoms` is the one read-out: an export records it as ``simulator.contacts.geoms``
(:func:`realgap.envs.export.metadata.simulator_settings`) and a training run as ``params/contacts.json``
(:func:`write_contacts`, once at the start of a new run; a resumed run keeps the file it started with). Both are
checked on load by :func:`realgap.envs.format.contacts.recorded_contact_problems`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CONTACTS_FILE = "contacts.json"
"""The run folder's record of its contact parameters, in ``params/``."""


def contact_geoms(env: Any) -> list[dict[str, Any]]:
    """The collision geoms of env 0 (and the shared ground) in the live MuJoCo-Warp model, grouped by their contact
    parameters: what every contact of training was computed from.

    Each row: ``owner`` (the scene entity: Robot, ground, Object, ...), ``friction`` [sliding, torsional, rolling],
    ``priority``, ``condim``, ``solref``, ``solimp``, ``margin_m``, ``gap_m``, ``count`` (geoms in the group) and up to
    three ``examples`` (``body/geom``). ``[]`` when the solver exposes no MuJoCo model.
    """
    from isaaclab_newton.physics import NewtonManager

    m = getattr(NewtonManager._solver, "mj_model", None)
    if m is None:
        return []
    rows: dict[tuple, dict[str, Any]] = {}
    for g in range(m.ngeom):
        name = m.geom(g).name or f"geom {g}"
        if not (m.geom_contype[g] or m.geom_conaffinity[g]) or ("/envs/" in name and "/env_0/" not in name):
            continue
        values = {
            "friction": m.geom_friction[g].round(6).tolist(),
            "priority": int(m.geom_priority[g]),
            "condim": int(m.geom_condim[g]),
            "solref": m.geom_solref[g].round(6).tolist(),
            "solimp": m.geom_solimp[g].round(6).tolist(),
            "margin_m": round(float(m.geom_margin[g]), 6),
            "gap_m": round(float(m.geom_gap[g]), 6),
        }
        parts = [p for p in name.split("/") if p]  # /World/envs/env_0/Robot/..., /World/ground/...
        owner = parts[parts.index("env_0") + 1] if "env_0" in parts[:-1] else parts[min(1, len(parts) - 1)]
        key = (owner,) + tuple(str(v) for v in values.values())
        row = rows.setdefault(key, {"owner": key[0], **values, "count": 0, "examples": []})
        row["count"] += 1
        if len(row["examples"]) < 3:
            row["examples"].append("/".join(parts[-2:]))  # body / geom
    return list(rows.values())


def contact_record(env: Any) -> dict[str, Any]:
    """What ``params/contacts.json`` holds: the physics step and substeps the parameters were simulated at (the time
    constants are checked against them on load) and :func:`contact_geoms`.

    Raises:
        ValueError: A geom group breaks a rule of :func:`~realgap.envs.format.contacts.recorded_contact_problems`
            (a time constant the step cannot resolve is clamped by MuJoCo): refused before the run folder is made,
            since its record would be refused on every load.
    """
    from realgap.envs.format.contacts import recorded_contact_problems, solver_step

    sim = env.cfg.sim
    record = {
        "physics_dt": float(sim.dt),
        "num_substeps": int(sim.physics.num_substeps),
        "friction": "[sliding, torsional, rolling] coefficients",
        "geoms": contact_geoms(env),
    }
    step = solver_step({"solver": {"num_substeps": record["num_substeps"]}}, record["physics_dt"])
    problems = recorded_contact_problems(record["geoms"], step, "the engine's contact geoms")
    if problems:
        raise ValueError("the env's contact parameters are not simulated as set:\n  - " + "\n  - ".join(problems))
    return record


def write_contacts(run_dir: str | Path, record: dict[str, Any]) -> Path:
    """Write a :func:`contact_record` to ``run_dir/params/contacts.json`` atomically (a staging file renamed into
    place); returns its path."""
    path = Path(run_dir) / "params" / CONTACTS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_suffix(".json.tmp")
    staging.write_text(json.dumps(record, indent=2))
    staging.replace(path)
    return path
