"""The passive whole G1 dropped in the training engine beside MuJoCo C (the drop lab's third body, after the box and
the foot of :mod:`realgap.envs.contact.engines`).

Both engines load one MJCF string (:func:`passive_xml`): the Menagerie ``g1.xml`` with its position servos removed
(with their ``ctrl`` of the keyframe they would hold the standing pose at kp 500: not passive), the sole contact
written to its ``foot`` class, a floor plane, and no self-collision (the tasks' setting, and the one both engines
express the same way: robot colliders contype 2 / conaffinity 1, which both read from the MJCF; Newton's own
``enable_self_collisions=False`` would zero every contype, the floor's included). The joints keep
their MJCF armature and friction loss. Both start from the "stand" keyframe lifted ``height`` above the floor, step
with :data:`~realgap.envs.contact.engines.TRAINING_SOLVER`, and log the same quantities after each step: the lowest
sole point, the pelvis, the summed normal force of the sole contacts (Newton: MuJoCo-Warp's ``contact_force`` of its
``efc_force``) and the solver iterations.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from realgap.envs.contact import drop, engines
from realgap.envs.contact.params import ContactParams
from realgap.envs.robots.g1 import G1

EARLY_S = 0.15
"""Impact phase compared tightly: from first contact to this many seconds after it (s)."""

G1_TOLERANCES: dict[str, tuple[float, float]] = {
    # impact phase: the robot still moves as one falling body, so the engines should agree as for the foot
    "first_contact_s": (0.0, 0.0015),  # the same step (both integrate the same free fall)
    "early_max_penetration": (0.10, 2e-5),  # as the foot: 10 % or 20 µm
    "early_peak_force": (0.10, 0.0),  # as the foot: 10 %
    "early_root_z": (0.0, 0.005),  # pelvis height EARLY_S after contact within 5 mm: the same start of the collapse
    # after the collapse: 29 passive joints make the path chaotic (float32 against float64), so only the outcome
    "root_z_rest": (0.0, 0.05),  # pelvis height at rest within 5 cm: the same final posture (sitting vs lying > 10 cm)
    "steady_height": (0.0, 0.001),  # a sole sphere resting on the floor in both (a lifted foot is centimetres up)
    "time_to_rest": (0.5, 0.2),  # the collapse lasts as long within 50 % or 0.2 s
}
"""Figure -> (relative, absolute) tolerance of the whole-G1 comparison, fixed before its first run (reasons inline)."""


NCONMAX, NJMAX = 200, 800
"""Contacts and constraint rows per world: the collapsed robot lies on its mesh colliders (the tasks' 40 / 100 are
for a standing robot); a step that reaches either raises instead of dropping contacts silently."""


def passive_xml(p: ContactParams, mjcf: Path | None = None) -> str:
    """The G1 MJCF (``mjcf``, default the Menagerie ``g1.xml``) for the passive drop: no actuators (nor keyframe
    ctrl), ``p`` on the sole spheres (priority kept at 1 so the spheres set the foot-ground pair), robot colliders
    contype 2 / conaffinity 1 (floor only), a plane.

    Raises:
        ValueError: ``mjcf`` lacks the Menagerie foot / collision classes or the actuators this edits.
    """

    path = mjcf or G1.mjcf_path()
    x = path.read_text()
    foot = '<geom type="sphere" size="0.005" priority="1" friction="0.6" condim="3"/>'
    collision = '<geom group="3" type="mesh"/>'
    if foot not in x or collision not in x or "<actuator>" not in x:
        raise ValueError(f"{path}: not the Menagerie G1 this scene edits (foot / collision class or actuators missing)")
    x = x.replace('meshdir="assets"', f'meshdir="{path.parent / "assets"}"')
    x = re.sub(r"\s*<actuator>.*?</actuator>", "", x, flags=re.S)
    x = re.sub(r'\s*ctrl="[^"]*"', "", x)
    x = x.replace(foot, f'<geom type="sphere" size="0.005" {replace(p, priority=1).geom_attrs()}/>')
    x = x.replace(collision, '<geom group="3" type="mesh" contype="2" conaffinity="1"/>')
    return x.replace("<worldbody>", '<worldbody>\n    <geom name="floor" size="0 0 0.05" type="plane"/>', 1)


def run_mujoco_g1(p: ContactParams, height: float, duration: float) -> drop.DropLog:
    """The passive drop in MuJoCo C under the training solver options."""
    return drop.run_g1(p, height, duration, xml=passive_xml(p), options=engines.mujoco_options())


def _start_qpos(xml: str, height: float) -> np.ndarray:
    """MuJoCo's qpos of the keyframe lifted as :func:`realgap.envs.contact.drop.run_g1` lifts it."""
    import mujoco

    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, "stand"))
    mujoco.mj_forward(m, d)
    feet = [g for g in range(m.ngeom) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE and m.geom_priority[g] == 1]
    d.qpos[2] += height - min(d.geom_xpos[g][2] - m.geom_size[g][0] for g in feet)
    return d.qpos.copy()


def run_newton_g1(p: ContactParams, height: float, duration: float) -> tuple[drop.DropLog, dict[str, Any]]:
    """The passive drop in Newton (MuJoCo-Warp on the CPU), logged as MuJoCo C's, and what the engine holds."""
    import mujoco_warp
    import newton
    import warp as wp

    from realgap.envs.sim.mjwarp import ExactBoxBoxSolverMuJoCo

    xml = passive_xml(p)
    builder = newton.ModelBuilder()
    builder.add_mjcf(xml)  # self-collision off by contype/conaffinity, read back below
    model = builder.finalize(device="cpu")
    kw = {"njmax": NJMAX, "nconmax": NCONMAX, **engines.TRAINING_SOLVER}
    solver = ExactBoxBoxSolverMuJoCo(model, solver="newton", **kw)
    q = _start_qpos(xml, height)
    q[3:7] = q[[4, 5, 6, 3]]  # MuJoCo's (w, x, y, z) -> Newton's (x, y, z, w)
    s0, s1, control = model.state(), model.state(), model.control()
    s0.joint_q.assign(q.astype(np.float32))
    s0.joint_qd.zero_()
    newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
    mm, mw, dw = solver.mj_model, solver.mjw_model, solver.mjw_data
    feet = [g for g in range(mm.ngeom) if mm.geom_type[g] == 2 and mm.geom_priority[g] == 1]
    radius = float(mm.geom_size[feet[0]][0])
    n = int(round(duration / p.timestep))
    t, z, vz, fz, it, x, root_z = (np.zeros(n) for _ in range(7))
    self_contacts, peak = 0, (0, 0)
    for i in range(n):
        solver.step(s0, s1, control, None, p.timestep)
        s0, s1 = s1, s0
        z[i] = float(dw.geom_xpos.numpy()[0][feet, 2].min()) - radius
        qpos, qvel = dw.qpos.numpy()[0], dw.qvel.numpy()[0]
        vz[i], x[i], root_z[i] = qvel[2], qpos[0], qpos[2]
        nacon, nefc = int(dw.nacon.numpy()[0]), int(dw.nefc.numpy()[0])
        if nacon >= NCONMAX or nefc >= NJMAX:
            raise RuntimeError(f"step {i}: {nacon} contacts / {nefc} rows reach the buffers: contacts were dropped")
        peak = (max(peak[0], nacon), max(peak[1], nefc))
        if nacon:
            force = wp.zeros(nacon, dtype=wp.spatial_vector, device="cpu")
            mujoco_warp.contact_force(mw, dw, wp.array(np.arange(nacon, dtype=np.int32), device="cpu"), False, force)
            geom = dw.contact.geom.numpy()[:nacon]
            on_sole = np.isin(geom, feet).any(axis=1)
            fz[i] = float(force.numpy()[on_sole, 0].sum())
            self_contacts += int((geom != 0).all(axis=1).sum())
        it[i], t[i] = int(dw.solver_niter.numpy()[0]), (i + 1) * p.timestep
    held = {
        "sole_geom": {
            "solref": mm.geom_solref[feet[0]].tolist(),
            "solimp": mm.geom_solimp[feet[0]].tolist(),
            "friction": mm.geom_friction[feet[0]].tolist(),
            "condim": int(mm.geom_condim[feet[0]]),
            "margin": float(mm.geom_margin[feet[0]]),
            "gap": float(mm.geom_gap[feet[0]]),
            "priority": int(mm.geom_priority[feet[0]]),
        },
        "n_sole_geoms": len(feet),
        "nu": int(mm.nu),
        "mass": float(mm.body_mass.sum()),
        "frictionloss": sorted({round(float(v), 6) for v in mm.dof_frictionloss[6:]}),
        "armature": sorted({round(float(v), 6) for v in mm.dof_armature[6:]}),
        "self_contacts": self_contacts,
        "floor_excluded": [int(sig) for sig in mm.exclude_signature if 0 in (int(sig) >> 16, int(sig) & 0xFFFF)],
        "peak_contacts_rows": list(peak),
        "option": engines.contact_of(mm)["option"],
    }
    return drop.DropLog(t, z, vz, fz, it, x, root_z), held


def figures(log: drop.DropLog, dt: float) -> dict[str, float]:
    """The whole-robot figures: the impact phase (``early_*``, first contact to :data:`EARLY_S` after it) and the
    outcome of the collapse (the lab's figures of :func:`realgap.envs.contact.drop.measure`, pelvis height at rest)."""
    m = drop.measure(log, drop.DropSpec(mass=0.0))
    i0 = int(np.nonzero(log.force > 0)[0][0])
    early = slice(i0, i0 + int(round(EARLY_S / dt)) + 1)
    if log.root_z is None:
        raise ValueError("a whole-robot log carries the pelvis height (root_z): log it with run_g1 or run_newton_g1")
    m |= {
        "first_contact_s": float(log.t[i0]),
        "early_max_penetration": float(max(0.0, -log.z[early].min())),
        "early_peak_force": float(log.force[early].max()),
        "early_root_z": float(log.root_z[early][-1]),
        "root_z_rest": float(log.root_z[int(0.9 * len(log.t)) :].mean()),
        # descriptive, chosen after the first run (no tolerance): the sitting posture the collapse reaches first
        "root_z_1s": float(log.root_z[min(i0 + int(round(1.0 / dt)), len(log.t) - 1)]),
    }
    del m["weight"]
    return m


def compare_g1(p: ContactParams, height: float = 0.05, duration: float = 3.0) -> dict[str, Any]:
    """The passive G1 in both engines: figures, agreement per :data:`G1_TOLERANCES`, what Newton holds."""
    newton_log, held = run_newton_g1(p, height, duration)
    mj, nw = figures(run_mujoco_g1(p, height, duration), p.timestep), figures(newton_log, p.timestep)
    checks = {k: engines.agree(mj[k], nw[k], *tol) for k, tol in G1_TOLERANCES.items()}
    return {
        "case": f"g1_passive dt={p.timestep * 1e3:g}ms",
        "contact": p.to_dict(),
        "height": height,
        "duration": duration,
        "mujoco_c": mj,
        "newton": nw,
        "agree": checks,
        "newton_model": held,
    }
