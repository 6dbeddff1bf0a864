"""The contact drop lab from its inputs to its files (``scripts/contact_lab.py``), callable without the command line:
sweeps of MuJoCo contact parameters on a box drop and the passive G1 (:mod:`realgap.envs.contact.lab`: drop_lab.json
and plots), or MuJoCo C beside the training engine (:mod:`realgap.envs.contact.engines`,
:mod:`realgap.envs.contact.engines_g1`: engines.json).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from realgap.envs.contact import engines, engines_g1, lab
from realgap.envs.contact.params import ContactParams, load
from realgap.envs.run.paths import check_output_dir

ENGINE_STEPS = (0.005, 0.001)
"""Physics steps of the passive-G1 engine comparison, s."""


@dataclass(frozen=True)
class ContactLabRequest:
    """A contact lab run as scripts/contact_lab.py's flags give it (see its ``--help`` for each)."""

    factors: list[str] = field(default_factory=lambda: sorted(lab.SWEEPS))
    g1: str = "g1_ground"
    out: Path = Path("docs/results/contact")
    engines: bool = False


def contact_lab(req: ContactLabRequest) -> list[str]:
    """Run the lab ``req`` asks for into ``req.out``; returns the lines to print (a row per engine case, or the sweeps'
    summary).

    Raises:
        ValueError: A G1 contact config that is invalid, or (``engines``) whose time constant is under two of the
            compared physics steps; an output folder refused. Every input is checked before the folder exists.
    """
    feet = next(iter(load(req.g1).values()))  # every input checked before the output folder exists
    if req.engines:
        for dt in ENGINE_STEPS:  # the feet at each compared step: a time constant under two steps is refused here
            try:
                replace(feet, timestep=dt)
            except ValueError as err:
                raise ValueError(
                    f"--g1 {req.g1} at the {dt * 1e3:g} ms step the engine comparison runs: {err}"
                ) from None
    check_output_dir(req.out, "--out")
    req.out.mkdir(parents=True, exist_ok=True)
    return engine_rows(feet, req.out) if req.engines else drop_sweeps(feet, req.factors, req.out)


def engine_rows(feet: ContactParams, out: Path) -> list[str]:
    """MuJoCo C beside Newton: the box drop, the G1 foot and the passive G1 at each of :data:`ENGINE_STEPS`; written to
    ``out/engines.json``; a line per case."""
    box = replace(lab.BASE_DROP, duration=0.6)
    rows = engines.side_by_side(lab.BASE, box, feet)
    g1 = [engines_g1.compare_g1(replace(feet, timestep=dt)) for dt in ENGINE_STEPS]
    report: dict[str, Any] = {"tolerances": engines.TOLERANCES, "rows": rows}
    report["g1_passive"] = {"tolerances": engines_g1.G1_TOLERANCES, "early_s": engines_g1.EARLY_S, "rows": g1}
    (out / "engines.json").write_text(json.dumps(report, indent=1))
    lines = []
    for r in rows + g1:
        mj, nw = r["mujoco_c"], r["newton"]
        lines.append(
            f"{r['case']:>16}: pen_max {mj['max_penetration'] * 1e3:.4f} / {nw['max_penetration'] * 1e3:.4f} mm, "
            f"F_peak {mj['peak_force']:.2f} / {nw['peak_force']:.2f} N, "
            f"disagree: {[k for k, ok in r['agree'].items() if not ok]}"
        )
    return lines


def drop_sweeps(feet: ContactParams, factors: list[str], out: Path) -> list[str]:
    """The sweeps of ``factors``, the passive and standing G1, the cone and the ringing; written to
    ``out/drop_lab.json`` with a plot per swept time constant and damping ratio; the summary lines."""
    result: dict[str, Any] = {f: lab.sweep(f) for f in factors}
    result["g1_passive"] = lab.g1_drop(feet)
    result["g1_standing"] = lab.g1_standing(feet)
    result["cone"], result["ringing"] = lab.cone_sweep(), lab.ringing()
    (out / "drop_lab.json").write_text(json.dumps(result, indent=1) + "\n")
    for f in ("timeconst", "dampratio"):
        if f in factors:
            lab.plot(out / f"drop_{f}.png", f)
    return lab.summary_lines(result)
