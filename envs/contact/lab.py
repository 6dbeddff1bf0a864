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
from realgap.envs.contact.engines_g1 import passive_xml
from realgap.envs.contact.params import ContactParams
from realgap.envs.robots.g1 import G1

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


MAX_DURATION = 8.0
"""Longest run (s) :func:`settled` extends a drop to before it gives up on a resting depth."""


STEADY_KEYS = ("steady_height", "residual_vz", "at_rest")
"""The figures :func:`settled` takes from an extended run; the others stay those of the requested duration."""


def settled(p: ContactParams, spec: drop.DropSpec) -> tuple[drop.DropSpec, drop.DropLog, dict[str, Any]]:
    """Run the drop, doubling its duration until it is at rest by :data:`realgap.envs.contact.drop.STEADY_SPEED`.

    Returns the spec and log of the last run and the figures: the steady ones (:data:`STEADY_KEYS`) of the last run,
    the others of the requested duration (solver iterations are averaged over it). A run still creeping at
    :data:`MAX_DURATION` keeps ``at_rest`` 0 so no page reads it as rest.
    """
    first = None
    while True:
        log = drop.run(p, spec)
        m = drop.measure(log, spec)
        first = first or m
        if m["at_rest"] or 2 * spec.duration > MAX_DURATION:
            return spec, log, first | {k: m[k] for k in STEADY_KEYS}
        spec = replace(spec, duration=2 * spec.duration)


def _row(p: ContactParams, spec: drop.DropSpec) -> dict[str, Any]:
    spec, _, m = settled(p, spec)
    # the single-contact closed form (sphere, condim 1) of the same parameters, for the steady penetration column
    sph = replace(p, condim=1)
    s_spec = replace(spec, shape="sphere", height=0.0, duration=1.5)
    m["sphere_steady_penetration"] = float(-settled(sph, s_spec)[2]["steady_height"])
    m["theory_steady_penetration"] = theory.steady_penetration(p.timeconst, p.dampratio, p.solimp)
    # the box on its four corners: each carries g / 4 per unit mass; the MJCF's default cone is pyramidal
    cone = theory.cone_factor("pyramidal", p.friction[0], p.condim)
    m["box_theory_steady_penetration"] = theory.steady_penetration(
        p.timeconst, p.dampratio, p.solimp, n_contacts=4, cone=cone
    )
    return {"contact": p.to_dict(), "drop": spec.__dict__, "figures": m}


def sweep(factor: str) -> list[dict[str, Any]]:
    """Run one factor's sweep on the base box drop; each row: parameters, drop, figures and closed forms."""
    if factor not in SWEEPS:
        raise ValueError(f"unknown factor {factor!r}; choose from {sorted(SWEEPS)}")
    rows = []
    for c_over, d_over in SWEEPS[factor]:
        rows.append(_row(replace(BASE, **c_over), replace(BASE_DROP, **d_over)))
    return rows


def g1_drop(p: ContactParams, heights: tuple[float, ...] = (0.02, 0.05)) -> list[dict[str, Any]]:
    """The passive G1 (no actuators: :func:`realgap.envs.contact.engines_g1.passive_xml`) dropped on its soles from
    each height with ``p`` at the feet."""

    out = []
    for h in heights:
        log = drop.run_g1(p, h, 1.0, xml=passive_xml(p))
        out.append({"contact": p.to_dict(), "height": h, "figures": drop.measure(log, drop.DropSpec(mass=0.0))})
    return out


CONE_MUS = (0.3, 0.6, 1.0, 1.5)
"""Sliding friction coefficients of the cone sweep."""


def cone_sweep(mus: tuple[float, ...] = CONE_MUS) -> list[dict[str, Any]]:
    """Resting depth of the base contact (condim 3) under a sphere and the box, pyramidal and elliptic cone, per mu.

    Each row: measured depths (m) and the closed form with :func:`realgap.envs.contact.theory.cone_factor`. The
    pyramidal cone's four edge rows carry the normal load with friction in them, so its depth moves with mu; the
    elliptic cone's normal row alone does, so its depth does not.
    """
    import mujoco

    rows = []
    for mu in mus:
        p = replace(BASE, friction=(mu, *BASE.friction[1:]))
        row: dict[str, Any] = {"mu": mu}
        for cone, flag in (
            ("pyramidal", mujoco.mjtCone.mjCONE_PYRAMIDAL),
            ("elliptic", mujoco.mjtCone.mjCONE_ELLIPTIC),
        ):
            factor = theory.cone_factor(cone, mu, p.condim)
            for shape, n in (("sphere", 1), ("box", 4)):
                spec = replace(BASE_DROP, shape=shape, height=0.0, duration=2.0)
                m = drop.measure(drop.run(p, spec, {"cone": flag}), spec)
                row[f"{shape}_{cone}_m"] = -m["steady_height"]
                row[f"{shape}_{cone}_at_rest"] = m["at_rest"]
                row[f"{shape}_{cone}_theory_m"] = theory.steady_penetration(
                    p.timeconst, p.dampratio, p.solimp, n_contacts=n, cone=factor
                )
        rows.append(row)
    return rows


RINGING_CASES = ((0.03, 0.3), (0.0075, 0.3), (0.015, 0.1), (0.0075, 0.1))
"""(time constant s, damping ratio) of the ringing check, at a 0.5 ms step and constant impedance 0.9."""


def ringing(cases: tuple[tuple[float, float], ...] = RINGING_CASES, timestep: float = 0.0005) -> list[dict[str, Any]]:
    """The sphere's ringing period (condim 1, d0 = dwidth = 0.9, dropped from contact) against the continuous damped
    period and the semi-implicit Euler step's exact one (:func:`realgap.envs.contact.theory.discrete_period`).

    Also the mean counted from first contact, which a one-step lift-off in the first swing biases short.
    """
    rows = []
    for tc, zeta in cases:
        p = ContactParams(timeconst=tc, dampratio=zeta, condim=1, d0=0.9, dwidth=0.9, timestep=timestep)
        log = drop.run(p, drop.DropSpec(height=0.0, duration=0.6))
        i0 = int(np.nonzero(log.force > 0)[0][0])
        wn, _ = theory.natural_frequency(tc, zeta, 0.9, 0.9)
        rows.append(
            {
                "timeconst": tc,
                "dampratio": zeta,
                "timestep": timestep,
                "wn_dt": wn * timestep,
                "period_s": drop.ringing_period(log),
                "period_from_first_contact_s": drop.ringing_period(log, from_first_contact=True),
                "theory_period_s": theory.damped_period(tc, zeta, 0.9, 0.9),
                "discrete_period_s": theory.discrete_period(tc, zeta, 0.9, 0.9, timestep),
                "steps_without_force_after_contact": int((log.force[i0:] <= 0).sum()),
            }
        )
    return rows


def g1_standing(p: ContactParams, duration: float = 3.0) -> dict[str, Any]:
    """The Menagerie G1 standing on its soles (its scene, its 29 position servos holding the "stand" keyframe, its own
    options: implicitfast, pyramidal cone) with ``p`` at the sole spheres, after ``duration`` s: each sole contact's
    depth and normal force beside the closed form of :func:`realgap.envs.contact.theory.depth_under_load`.

    Each sphere's rows weigh its ankle link's translational ``body_invweight0`` (not 1 / the robot's mass), and the
    pyramidal cone's edge rows share the load (:func:`realgap.envs.contact.theory.cone_factor`), so the eight contacts
    sink by their own forces, none by the single-contact figure.
    """
    import mujoco

    m = mujoco.MjModel.from_xml_path(str(G1.mjcf_path().with_name("scene.xml")))
    m.opt.timestep = p.timestep
    feet = [g for g in range(m.ngeom) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE and m.geom_priority[g] == 1]
    for g in feet:
        m.geom_solref[g], m.geom_solimp[g], m.geom_friction[g] = p.solref, p.solimp, p.friction
        m.geom_condim[g], m.geom_margin[g], m.geom_gap[g] = p.condim, p.margin, p.gap
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, "stand"))
    for _ in range(int(round(duration / p.timestep))):
        mujoco.mj_step(m, d)
    cone_name = "pyramidal" if m.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL else "elliptic"
    cone = theory.cone_factor(cone_name, p.friction[0], p.condim, float(m.opt.impratio))
    f6, rows = np.zeros(6), []
    for j in range(d.ncon):
        c = d.contact[j]
        if c.geom1 not in feet and c.geom2 not in feet:
            continue
        mujoco.mj_contactForce(m, d, j, f6)
        # the row weight: both sides' translational invweight0 (the floor's body, the world, adds 0)
        w = float(m.body_invweight0[m.geom_bodyid[c.geom1], 0] + m.body_invweight0[m.geom_bodyid[c.geom2], 0])
        theory_depth = theory.depth_under_load(float(f6[0]) * w, p.timeconst, p.dampratio, p.solimp, cone)
        rows.append(
            {"depth_m": float(-c.dist), "force_n": float(f6[0]), "invweight": w, "theory_depth_m": theory_depth}
        )
    depth = np.array([r["depth_m"] for r in rows])
    return {
        "contact": p.to_dict(),
        "duration_s": duration,
        "cone": cone_name,
        "cone_factor": cone,
        "max_speed": float(np.abs(d.qvel).max()),
        "depth_min_m": float(depth.min()),
        "depth_mean_m": float(depth.mean()),
        "depth_max_m": float(depth.max()),
        "single_contact_theory_m": theory.steady_penetration(p.timeconst, p.dampratio, p.solimp),
        "contacts": rows,
    }


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


def summary_lines(result: dict[str, Any]) -> list[str]:
    """One line per figure of a lab run (the dict ``scripts/contact_lab.py`` writes to drop_lab.json)."""
    lines = []
    for f in (k for k in SWEEPS if k in result):
        lines.append(f"--- {f}")
        for r in result[f]:
            m = r["figures"]
            lines.append(
                f"  pen_max {m['max_penetration'] * 1e3:7.3f} mm  F_peak {m['peak_force']:8.1f} N  "
                f"rest {m['time_to_rest'] * 1e3:7.1f} ms  rebound {m['rebound'] * 1e3:6.2f} mm  "
                f"steady {m['steady_height'] * 1e6:9.4f} um (at {r['drop']['duration']:g} s)  "
                f"iters {m['solver_iter_mean']:.2f}  [box theory {m['box_theory_steady_penetration'] * 1e6:.4f} um; "
                f"sphere {m['sphere_steady_penetration'] * 1e6:.1f} um, "
                f"theory {m['theory_steady_penetration'] * 1e6:.1f} um]"
            )
    for r in result.get("g1_passive", []):
        m = r["figures"]
        lines.append(
            f"G1 passive, {r['height'] * 100:.0f} cm: pen_max {m['max_penetration'] * 1e3:.2f} mm, "
            f"F_peak {m['peak_force']:.0f} N"
        )
    if "g1_standing" in result:
        g = result["g1_standing"]
        lines.append(
            f"G1 standing: sole depth min / mean / max {g['depth_min_m'] * 1e3:.3f} / {g['depth_mean_m'] * 1e3:.3f} / "
            f"{g['depth_max_m'] * 1e3:.3f} mm (single-contact theory {g['single_contact_theory_m'] * 1e3:.3f} mm)"
        )
    for r in result.get("cone", []):
        lines.append(
            f"mu {r['mu']:g}: sphere pyramidal / elliptic {r['sphere_pyramidal_m'] * 1e6:.1f} / "
            f"{r['sphere_elliptic_m'] * 1e6:.1f} um; box {r['box_pyramidal_m'] * 1e6:.1f} / "
            f"{r['box_elliptic_m'] * 1e6:.1f} um"
        )
    for r in result.get("ringing", []):
        lines.append(
            f"ringing tc {r['timeconst']:g} s, zeta {r['dampratio']:g}: {r['period_s'] * 1e3:.3f} ms (from first "
            f"contact {r['period_from_first_contact_s'] * 1e3:.3f}); the step's {r['discrete_period_s'] * 1e3:.3f}, "
            f"continuous {r['theory_period_s'] * 1e3:.3f}"
        )
    return lines
