"""The drop lab in the training engine beside MuJoCo C: the same MJCF stepped by Newton's MuJoCo-Warp solver (the
engine every task trains in) and by MuJoCo C, under the solver options the tasks use, with the same figures.

Both engines get one scene (:func:`realgap.envs.contact.drop.scene_xml`), one step and one set of solver options
(:data:`TRAINING_SOLVER`, those of :func:`realgap.envs.sim.physics.newton_physics`), so a difference is the engine's.
The contact parameters the training engine actually holds are read back from its MuJoCo model
(each row's ``newton_model``), not assumed from the MJCF. Newton's normal force is the body's momentum balance,
``F = m (Δv_n / dt + g cos θ)``: exact for a single free body whose only other force is gravity.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from realgap.envs.contact import drop
from realgap.envs.contact.params import ContactParams

TRAINING_SOLVER: dict[str, Any] = {
    "integrator": "implicitfast",
    "cone": "pyramidal",
    "impratio": 1.0,
    "iterations": 100,
    "ls_iterations": 50,
    "tolerance": 1e-6,
}
"""The MuJoCo-Warp options of the tasks' Newton physics (MJWarpSolverCfg defaults + newton_physics)."""

TOLERANCES: dict[str, tuple[float, float]] = {
    "max_penetration": (0.10, 2e-5),
    "steady_height": (0.10, 2e-5),
    "peak_force": (0.10, 0.0),
    "rebound": (0.10, 2e-4),
    "first_contact_s": (0.0, 0.0015),
}
"""Figure -> (relative, absolute) tolerance of the engines' agreement, fixed before the first comparison ran: 10 %
or the absolute floor (20 µm of penetration is below the solver's own tolerance effect; 0.2 mm of rebound; first
contact within a step and a half)."""


def mujoco_options() -> dict[str, Any]:
    import mujoco

    return {
        "integrator": mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
        "cone": mujoco.mjtCone.mjCONE_PYRAMIDAL,
        "solver": mujoco.mjtSolver.mjSOL_NEWTON,
        "impratio": TRAINING_SOLVER["impratio"],
        "iterations": TRAINING_SOLVER["iterations"],
        "ls_iterations": TRAINING_SOLVER["ls_iterations"],
        "tolerance": TRAINING_SOLVER["tolerance"],
    }


def run_mujoco(p: ContactParams, spec: drop.DropSpec) -> drop.DropLog:
    """The drop in MuJoCo C with the training engine's solver options."""
    return drop.run(p, spec, mujoco_options())


def _newton_solver(p: ContactParams, spec: drop.DropSpec) -> tuple[Any, Any]:
    import newton

    from realgap.envs.sim.mjwarp import ExactBoxBoxSolverMuJoCo

    builder = newton.ModelBuilder()
    builder.add_mjcf(drop.scene_xml(p, spec))
    model = builder.finalize(device="cpu")
    return model, ExactBoxBoxSolverMuJoCo(model, solver="newton", **TRAINING_SOLVER)


def contact_of(m: Any) -> dict[str, Any]:
    """What Newton hands MuJoCo-Warp for the plane and the body's geom (solref, solimp, friction, condim, margin, gap,
    priority) and the solver options, read from the engine's own model ``m``."""
    geoms = {}
    for g in range(m.ngeom):
        geoms["plane" if m.geom_type[g] == 0 else "body"] = {
            "solref": m.geom_solref[g].tolist(),
            "solimp": m.geom_solimp[g].tolist(),
            "friction": m.geom_friction[g].tolist(),
            "condim": int(m.geom_condim[g]),
            "margin": float(m.geom_margin[g]),
            "gap": float(m.geom_gap[g]),
            "priority": int(m.geom_priority[g]),
        }
    opt = {k: float(getattr(m.opt, k)) for k in ("impratio", "tolerance")}
    opt |= {k: int(getattr(m.opt, k)) for k in ("integrator", "cone", "solver", "iterations", "ls_iterations")}
    return {"geoms": geoms, "option": opt}


def run_newton(p: ContactParams, spec: drop.DropSpec) -> drop.DropLog:
    """The drop in Newton (MuJoCo-Warp on the CPU), logged as :func:`realgap.envs.contact.drop.run` logs MuJoCo C."""
    return _run_newton(p, spec)[0]


def _run_newton(p: ContactParams, spec: drop.DropSpec) -> tuple[drop.DropLog, dict[str, Any]]:
    """:func:`run_newton`'s log and the contact parameters of the same engine model (one build)."""
    model, solver = _newton_solver(p, spec)
    s0, s1, control = model.state(), model.state(), model.control()
    n = int(round(spec.duration / p.timestep))
    c, s = np.cos(spec.tilt), np.sin(spec.tilt)
    normal, down = np.array([s, 0.0, c]), np.array([c, 0.0, -s])
    t, z, vz, fz, it, x = (np.zeros(n) for _ in range(6))
    v_prev = 0.0
    for i in range(n):
        solver.step(s0, s1, control, None, p.timestep)
        s0, s1 = s1, s0
        pos, vel = s0.body_q.numpy()[0, :3], s0.body_qd.numpy()[0, :3]  # body_qd: (linear, angular)
        z[i], vz[i], x[i] = float(pos @ normal) - spec.size, float(vel @ normal), float(pos @ down)
        fz[i] = spec.mass * ((vz[i] - v_prev) / p.timestep + 9.81 * c)
        v_prev = vz[i]
        it[i], t[i] = int(solver.mjw_data.solver_niter.numpy()[0]), (i + 1) * p.timestep
    # free fall: float32 round-off of Δv/dt (~1e-4 N per kg at 1 ms), not contact
    fz[fz < 1e-3 * spec.mass * 9.81] = 0.0
    return drop.DropLog(t, z, vz, fz, it, x), contact_of(solver.mj_model)


def _figures(log: drop.DropLog, spec: drop.DropSpec) -> dict[str, float]:
    m = drop.measure(log, spec)
    m["first_contact_s"] = float(log.t[int(np.nonzero(log.force > 0)[0][0])])
    return m


def agree(a: float, b: float, rel: float, abs_: float) -> bool:
    """``a`` and ``b`` within ``rel`` of the larger magnitude or within ``abs_``."""
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_)


def compare(cases: list[tuple[str, ContactParams, drop.DropSpec]]) -> list[dict[str, Any]]:
    """Each case in both engines: the figures of each, their agreement per :data:`TOLERANCES`, and the engine's
    contact parameters read back."""
    rows = []
    for name, p, spec in cases:
        newton_log, newton_model = _run_newton(p, spec)
        mj, nw = _figures(run_mujoco(p, spec), spec), _figures(newton_log, spec)
        checks = {k: agree(mj[k], nw[k], *tol) for k, tol in TOLERANCES.items()}
        rows.append(
            {
                "case": name,
                "contact": p.to_dict(),
                "drop": spec.__dict__,
                "mujoco_c": mj,
                "newton": nw,
                "agree": checks,
                "newton_model": newton_model,
            }
        )
    return rows


def default_cases(base: ContactParams, spec: drop.DropSpec) -> list[tuple[str, ContactParams, drop.DropSpec]]:
    """The base drop and the class's time-constant and damping-ratio sweeps."""
    cases = [("base", base, spec)]
    cases += [(f"timeconst={v:g}", replace(base, timeconst=v), spec) for v in (0.03, 0.0075)]
    cases += [(f"dampratio={v:g}", replace(base, dampratio=v), spec) for v in (0.3, 2.0)]
    return cases


def side_by_side(box: ContactParams, box_drop: drop.DropSpec, foot: ContactParams) -> list[dict[str, Any]]:
    """The lab's comparison: the box's base drop and its time-constant and damping sweeps, then the G1's foot alone
    at its training contact (5 ms step) and at a 1 ms step."""
    cases = default_cases(box, box_drop)
    spec = drop.g1_foot_spec(0.05, 0.6)
    cases += [("g1_foot", foot, spec), ("g1_foot dt=1ms", replace(foot, timestep=0.001), spec)]
    return compare(cases)
