"""The drop lab's sweeps: one factor at a time around a base drop, each figure beside its closed form where one exists.

Factors (the contact class's list): time constant (0.03, 0.015, 0.0075 s at damping ratio 1), damping ratio (0.3, 1,
2), impedance d0 / dwidth, drop height, time step, mass; plus the passive G1 on its soles. Results are JSON-ready
dicts; :func:`plot` draws force and penetration against time for the time-constant and damping sweeps.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from realgap.envs.contact import drop, theory
from realgap.envs.contact.params import ContactParams

BASE = ContactParams(timestep=0.001)
"""MuJoCo's default contact at a 1 ms step: the point every sweep varies one factor from."""
BASE_DROP = drop.DropSpec(shape="box", size=0.05, mass=1.0, height=0.1, duration=1.0)

SWEEPS: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {
    "timeconst": [({"timeconst": v}, {}) for v in (0.03, 0.015, 0.0075)],
    "dampratio": [({"dampratio": v}, {}) for v in (0.3, 1.0, 2.0)],
    "d0": [({"d0": v, "dwidth": max(v, 0.95)}, {}) for v in (0.5, 0.9, 0.95)],
    "dwidth": [({"dwidth": v}, {}) for v in (0.9, 0.95, 0.99)],
    "height": [({}, {"height": v}) for v in (0.02, 0.1, 0.3)],
    "timestep": [({"timestep": v}, {}) for v in (0.004, 0.002, 0.001, 0.0005)],
    "mass": [({}, {"mass": v}) for v in (0.2, 1.0, 5.0)],
}
"""Factor -> list of (contact overrides, drop overrides)."""


def _row(p: ContactParams, spec: drop.DropSpec, log: drop.DropLog) -> dict[str, Any]:
    m = drop.measure(log, spec)
    # the single-contact closed form (sphere, condim 1) of the same parameters, for the steady penetration column
    sph = replace(p, condim=1)
    s_spec = replace(spec, shape="sphere", height=0.0, duration=1.5)
    m["sphere_steady_penetration"] = float(-drop.measure(drop.run(sph, s_spec), s_spec)["steady_height"])
    m["theory_steady_penetration"] = theory.steady_penetration(p.timeconst, p.dampratio, p.solimp)
    return {"contact": p.to_dict(), "drop": spec.__dict__, "figures": m}


def sweep(factor: str) -> list[dict[str, Any]]:
    """Run one factor's sweep on the base box drop; each row: parameters, drop, figures and closed forms."""
    if factor not in SWEEPS:
        raise ValueError(f"unknown factor {factor!r}; choose from {sorted(SWEEPS)}")
    rows = []
    for c_over, d_over in SWEEPS[factor]:
        p, spec = replace(BASE, **c_over), replace(BASE_DROP, **d_over)
        rows.append(_row(p, spec, drop.run(p, spec)))
    return rows


def g1_drop(p: ContactParams, heights: tuple[float, ...] = (0.02, 0.05)) -> list[dict[str, Any]]:
    """The passive G1 (no actuators: :func:`realgap.envs.contact.engines_g1.passive_xml`) dropped on its soles from
    each height with ``p`` at the feet."""
    from realgap.envs.contact.engines_g1 import passive_xml

    out = []
    for h in heights:
        log = drop.run_g1(p, h, 1.0, xml=passive_xml(p))
        out.append({"contact": p.to_dict(), "height": h, "figures": drop.measure(log, drop.DropSpec(mass=0.0))})
    return out


def plot(path: Path, factor: str) -> None:
    """Normal force and penetration against time for each value of ``factor`` (base box drop)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a_f, a_p) = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
    for c_over, d_over in SWEEPS[factor]:
        p, spec = replace(BASE, **c_over), replace(BASE_DROP, **d_over, duration=0.4)
        log = drop.run(p, spec)
        i0 = int(np.nonzero(log.force > 0)[0][0])
        t = (log.t - log.t[i0]) * 1e3
        label = ", ".join(f"{k}={v:g}" for k, v in {**c_over, **d_over}.items())
        a_f.plot(t, log.force, label=label)
        a_p.plot(t, np.maximum(-log.z, 0) * 1e3, label=label)
    a_f.set_ylabel("normal force [N]")
    a_p.set_ylabel("penetration [mm]")
    a_p.set_xlabel("time from first contact [ms]")
    a_p.set_xlim(-5, 150)
    a_f.legend(fontsize=8)
    a_f.set_title(f"1 kg box, 10 cm drop: sweep of {factor}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
