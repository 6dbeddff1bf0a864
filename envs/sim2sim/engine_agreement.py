"""Engine agreement: canonical scenes stepped by the training engine (Newton's MuJoCo-Warp solver on the CPU, as every
task builds it) and by MuJoCo C on the same MJCF with the same solver options and box–box flag, compared on contact
count, penetration, normal force and the body's trajectory.

Rule: a difference between the two columns is the engine's, because the scene and options are shared (the contact
parameters Newton hands MuJoCo-Warp are read back into each row). Why: the training engine is what every policy
learns on; MuJoCo C is the independent reference the deploy runtime and sim2sim use. The scenes:
:mod:`realgap.envs.sim2sim.engine_scenes`; figures and the open cases are on docs/results/engine_agreement.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from realgap.envs.contact.engines import TRAINING_SOLVER, mujoco_options
from realgap.envs.eval.bench.solver_work import offset_com_box
from realgap.envs.robots.panda import PANDA
from realgap.envs.sim2sim.engine_scenes import CANONICAL_SCENES, Scene, scene_xml, start_state

TOLERANCES: dict[str, float] = {
    "contacts": 0.05,
    "max_penetration_m": 2e-5,
    "normal_force_rel": 0.01,
    "position_m": 2e-4,
    "max_angular_speed": 1e-3,
}
"""Agreement bounds, fixed before the first comparison (the box rows; the G1 rows took the same bounds): late count of
touching contacts (distance < 0) within 0.05; penetration within 20 µm (the solver's tolerance effect at these loads);
total normal force within 1 % of the body's weight; the root position within 0.2 mm over the run; both engines' late
angular speed below 1e-3 rad/s (bodies at rest only: ``Scene.at_rest``)."""


def _mujoco_model(scene: Scene) -> Any:
    """The scene's MJCF in MuJoCo C with the training engine's solver options, step and box–box flag."""
    import mujoco

    from realgap.envs.sim.mjwarp import EXACT_BOX_BOX_FLAGS

    m = mujoco.MjModel.from_xml_string(scene_xml(scene))
    m.opt.timestep = scene.dt
    for key, value in mujoco_options().items():  # the training engine's options, as the contact lab sets them
        setattr(m.opt, key, value)
    m.opt.disableflags |= EXACT_BOX_BOX_FLAGS
    return m


@dataclass
class SceneLog:
    """Per physics step: contacts, deepest penetration (m, >= 0), total normal force (N), body position (m) and
    angular speed (rad/s)."""

    contacts: np.ndarray
    penetration_m: np.ndarray
    normal_force_n: np.ndarray
    position_m: np.ndarray
    angular_speed: np.ndarray

    def figures(self) -> dict[str, float]:
        """Means over the second half (the settled state), the deepest penetration and the late angular speed."""
        late = slice(len(self.contacts) // 2, None)
        return {
            "contacts": float(self.contacts[late].mean()),
            "max_penetration_m": float(self.penetration_m[late].max()),
            "normal_force_n": float(self.normal_force_n[late].mean()),
            "max_angular_speed": float(self.angular_speed[late].max()),
            "final_root_z_m": float(self.position_m[-1, 2]),
            "root_dz_m": float(self.position_m[-1, 2] - self.position_m[0, 2]),
        }


def _normal_forces(read: Any, n: int) -> float:
    return float(sum(read(i) for i in range(n)))


def run_training_engine(scene: Scene) -> tuple[SceneLog, dict[str, Any]]:
    """The scene in Newton + MuJoCo-Warp (exact box–box routine), and the contact parameters the engine holds."""
    import mujoco_warp
    import newton
    import warp as wp

    from realgap.envs.sim.mjwarp import ExactBoxBoxSolverMuJoCo

    builder = newton.ModelBuilder()
    builder.add_mjcf(scene_xml(scene))
    model = builder.finalize(device="cpu")
    solver = ExactBoxBoxSolverMuJoCo(model, solver="newton", njmax=300, nconmax=60, **TRAINING_SOLVER)
    s0, s1, control = model.state(), model.state(), model.control()
    m = _mujoco_model(scene)
    qpos, qvel, ctrl = start_state(scene, m)
    if ctrl is not None:  # the start pose (and push); the servos (Newton: joint targets) hold their targets
        q, a = qpos.copy(), _free_qposadr(m)
        q[a + 3 : a + 7] = qpos[[a + 4, a + 5, a + 6, a + 3]]  # MuJoCo's (w, x, y, z) -> Newton's (x, y, z, w)
        s0.joint_q.assign(q.astype(np.float32))
        s0.joint_qd.assign(qvel.astype(np.float32))
        newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
        target = q.copy()
        if scene.robot == "hold":
            target[:a] = 0.0  # the hand still, the fingers closing (the same targets as MuJoCo C's ctrl)
        control.joint_target_q.assign(target.astype(np.float32))
    objects = [i for i, label in enumerate(model.body_label) if label.split("/")[-1] == "object"]
    body = objects[0] if objects else 0  # the tracked body: the object, else the G1's pelvis
    steps = int(round(scene.seconds / scene.dt))
    log = _empty(steps)
    force = wp.zeros(1, dtype=wp.spatial_vector, device="cpu")
    d = solver.mjw_data
    for i in range(steps):
        solver.step(s0, s1, control, None, scene.dt)
        s0, s1 = s1, s0
        n = int(d.nacon.numpy()[0])
        dist = d.contact.dist.numpy()[:n]
        touching = int((dist < 0).sum())  # MuJoCo-Warp also lists force-free contacts within Newton's gap

        def normal(c: int) -> float:
            mujoco_warp.contact_force(solver.mjw_model, d, wp.array([c], dtype=wp.int32, device="cpu"), False, force)
            return float(force.numpy()[0][0])

        log.contacts[i], log.penetration_m[i] = touching, max(0.0, -float(dist.min())) if n else 0.0
        log.normal_force_n[i] = _normal_forces(normal, n)
        log.position_m[i] = s0.body_q.numpy()[body, :3]
        log.angular_speed[i] = float(np.linalg.norm(s0.body_qd.numpy()[body, 3:]))  # body_qd: (linear, angular)
    mw = solver.mjw_model
    held = {k: getattr(mw, f"geom_{k}").numpy()[0].tolist() for k in ("solref", "solimp", "friction", "margin", "gap")}
    return log, held


def run_mujoco_c(scene: Scene) -> SceneLog:
    """The scene in MuJoCo C: the same MJCF, the training engine's solver options and box–box flag."""
    import mujoco

    m = _mujoco_model(scene)
    d = mujoco.MjData(m)
    qpos, qvel, ctrl = start_state(scene, m)
    a, v = _free_qposadr(m), m.jnt_dofadr[_free_joint(m)]  # the tracked body's free joint
    d.qpos[:], d.qvel[:] = qpos, qvel
    if ctrl is not None:
        d.ctrl[:] = ctrl
    steps = int(round(scene.seconds / scene.dt))
    log = _empty(steps)
    f6 = np.zeros(6)

    def normal(c: int) -> float:
        mujoco.mj_contactForce(m, d, c, f6)
        return float(f6[0])

    for i in range(steps):
        mujoco.mj_step(m, d)
        n = d.ncon
        log.contacts[i] = int((d.contact.dist[:n] < 0).sum())
        log.penetration_m[i] = max(0.0, -float(min(d.contact.dist[:n]))) if n else 0.0
        log.normal_force_n[i] = _normal_forces(normal, n)
        log.position_m[i] = d.qpos[a : a + 3]
        log.angular_speed[i] = float(np.linalg.norm(d.qvel[v + 3 : v + 6]))
    return log


def _free_joint(m: Any) -> int:
    """The tracked body's free joint: the object's where there is one, else the first (the G1's pelvis)."""
    import mujoco

    body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "object")  # -1 where there is none
    free = [j for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
    return next((j for j in free if m.jnt_bodyid[j] == body), free[0])


def _free_qposadr(m: Any) -> int:
    return int(m.jnt_qposadr[_free_joint(m)])


def _empty(steps: int) -> SceneLog:
    return SceneLog(np.zeros(steps), np.zeros(steps), np.zeros(steps), np.zeros((steps, 3)), np.zeros(steps))


def compare_scene(scene: Scene) -> dict[str, Any]:
    """One scene in both engines: each engine's figures, the largest position difference over the run, and each
    :data:`TOLERANCES` check."""
    warp_log, held = run_training_engine(scene)
    c_log = run_mujoco_c(scene)
    w, c = warp_log.figures(), c_log.figures()
    apart = np.abs(warp_log.position_m - c_log.position_m).max(axis=1)
    dpos = float(apart.max())
    at = {f"{t:g}": float(apart[int(round(t / scene.dt)) - 1]) for t in (0.1, 0.2, 0.5, 1.0) if t <= scene.seconds}
    weight = float(_mujoco_model(scene).body_subtreemass[1]) * 9.81
    checks = {k: abs(w[k] - c[k]) <= TOLERANCES[k] for k in ("contacts", "max_penetration_m")}
    checks["normal_force_n"] = abs(w["normal_force_n"] - c["normal_force_n"]) <= TOLERANCES["normal_force_rel"] * weight
    checks["position_m"] = dpos <= TOLERANCES["position_m"]
    if scene.at_rest:
        slow = max(w["max_angular_speed"], c["max_angular_speed"])
        checks["max_angular_speed"] = slow <= TOLERANCES["max_angular_speed"]
    return {
        "scene": asdict(scene),
        "training_engine": w,
        "mujoco_c": c,
        "max_position_diff_m": dpos,
        "position_diff_at_s": at,
        "agree": checks,
        "training_engine_geoms": held,
    }


def upstream_repro(offsets_m: tuple[float, ...] = (0.0, 0.003, 0.005, 0.01)) -> list[dict[str, Any]]:
    """The upstream report's table: the offset-CoM box in MuJoCo C and MuJoCo-Warp, each engine's default box–box path
    first, then both with the exact routine (default models first: the other order leaks, :func:`leak_repro`)."""

    rows = []
    for exact in (False, True):
        for off in offsets_m:
            rows.append({"com_offset_m": off, "exact_box_box": exact, **offset_com_box(off, exact_box_box=exact)})
    return rows


def leak_repro() -> dict[str, Any]:
    """MuJoCo-Warp's process-wide state, shown: the centred box with the exact routine, then the same box with the
    default path, in this process. Returns each model's late contact count and whether
    :func:`realgap.envs.sim.mjwarp.check_box_box_routine` refused the second model. Run it in a fresh process."""
    import mujoco_warp as mjw
    import warp as wp

    from realgap.envs.sim.mjwarp import BoxBoxLeakError, check_box_box_routine

    exact = offset_com_box(0.0, steps=40, exact_box_box=True)["mujoco_warp"]["contacts"]
    default = offset_com_box(0.0, steps=40, exact_box_box=False, check_leak=False)["mujoco_warp"]["contacts"]
    import mujoco

    model = mujoco.MjModel.from_xml_string(
        '<mujoco><worldbody><geom type="box" size="1 1 1"/><body><freejoint/><geom type="box" size=".1 .1 .1"/>'
        "</body></worldbody></mujoco>"
    )
    with wp.ScopedDevice("cpu"):
        try:
            check_box_box_routine(mjw.put_model(model))
            refused = False
        except BoxBoxLeakError:
            refused = True
    return {"exact_first_contacts": exact, "default_after_contacts": default, "default_after_refused": refused}


def simple_body_invweights(armatures: tuple[float, ...] = (0.0, 0.1, 1.0)) -> list[dict[str, float]]:
    """The upstream report's second table: a 15 g body on one slide joint off the world (a "simple" body in MuJoCo C),
    its dof inverse weight (kg⁻¹) per joint armature from MuJoCo C's compiler and from MuJoCo-Warp's ``set_const_0``,
    which Newton runs on every model it hands the solver. Contact softness scales with these weights."""
    import mujoco
    import mujoco_warp as mjw
    import warp as wp

    rows = []
    for armature in armatures:
        m = mujoco.MjModel.from_xml_string(
            f'<mujoco><worldbody><body pos="0 0 1"><joint type="slide" axis="0 1 0" armature="{armature}"/>'
            '<geom type="box" size=".01 .01 .01" mass="0.015"/></body></worldbody></mujoco>'
        )
        with wp.ScopedDevice("cpu"):
            mw = mjw.put_model(m)
            mjw.set_const_0(mw, mjw.put_data(m, mujoco.MjData(m)))
        rows.append(
            {
                "armature": armature,
                "mujoco_c": float(m.dof_invweight0[0]),
                "mujoco_warp": float(mw.dof_invweight0.numpy()[0][0]),
            }
        )
    return rows


def arm_finger_invweights() -> dict[str, list[float]]:
    """The Panda's finger dofs' inverse weights (kg⁻¹) on the arm, as the tasks build them (Menagerie MJCF): from
    MuJoCo C's compiler and MuJoCo-Warp's ``set_const_0``. The fingers hang on the arm, so they are no "simple" body
    (:func:`simple_body_invweights`) and the engines should agree."""
    import mujoco
    import mujoco_warp as mjw
    import warp as wp

    m = mujoco.MjModel.from_xml_path(str(PANDA.mjcf_path()))
    fingers = [m.jnt_dofadr[j] for j in range(m.njnt) if "finger" in m.joint(j).name]
    with wp.ScopedDevice("cpu"):
        mw = mjw.put_model(m)
        mjw.set_const_0(mw, mjw.put_data(m, mujoco.MjData(m)))
    warp = mw.dof_invweight0.numpy()[0]
    return {"mujoco_c": [float(m.dof_invweight0[d]) for d in fingers], "mujoco_warp": [float(warp[d]) for d in fingers]}


def agreement_report(out: Path | None = None) -> dict[str, Any]:
    """The whole comparison (``scripts/engine_agreement.py``), printed as it is measured: the offset-CoM box table
    (each engine's default box–box path, then the exact routine), the process-wide leak (in a child process of its
    own), a simple body's inverse weights and each canonical scene's figures in both engines; written as JSON to
    ``out`` if given; returns what it wrote."""
    repro = upstream_repro()
    print("box on the table | engine | contacts | max penetration (mm) | max angular speed (rad/s) | solver iterations")
    for row in repro:
        path = "exact box-box" if row["exact_box_box"] else "default"
        for engine in ("mujoco_c", "mujoco_warp"):
            f = row[engine]
            print(
                f"CoM {row['com_offset_m'] * 100:.1f} cm, {path} | {engine} | {f['contacts']:.2f} | "
                f"{f['max_penetration_m'] * 1e3:.3f} | {f['max_angular_speed']:.2g} | {f['solver_iterations']:.2f}"
            )
    code = "import json; from realgap.envs.sim2sim.engine_agreement import leak_repro; print(json.dumps(leak_repro()))"
    leak = json.loads(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        .stdout.strip()
        .splitlines()[-1]
    )
    print(
        f"leak: exact-routine model {leak['exact_first_contacts']:.2f} contacts, then a default model in the same "
        f"process {leak['default_after_contacts']:.2f}; refused: {leak['default_after_refused']}"
    )
    invweights = simple_body_invweights()
    for row in invweights:
        print(
            f"simple body, armature {row['armature']:g} kg: dof inverse weight MuJoCo C {row['mujoco_c']:.4f}, "
            f"MuJoCo-Warp {row['mujoco_warp']:.4f} 1/kg"
        )
    fingers = arm_finger_invweights()
    print(
        f"Panda fingers on the arm: dof inverse weights MuJoCo C {fingers['mujoco_c']}, "
        f"MuJoCo-Warp {fingers['mujoco_warp']} 1/kg"
    )
    scenes = [compare_scene(s) for s in CANONICAL_SCENES]
    for r in scenes:
        w, c = r["training_engine"], r["mujoco_c"]
        print(
            f"{r['scene']['name']}: contacts {w['contacts']:.2f} / {c['contacts']:.2f}, penetration "
            f"{w['max_penetration_m'] * 1e6:.2f} / {c['max_penetration_m'] * 1e6:.2f} um, normal force "
            f"{w['normal_force_n']:.4f} / {c['normal_force_n']:.4f} N, position diff {r['max_position_diff_m']:.2g} m, "
            f"agree: {all(r['agree'].values())}"
        )
    report = {
        "upstream_repro": repro,
        "leak": leak,
        "simple_body_invweights": invweights,
        "arm_finger_invweights": fingers,
        "scenes": scenes,
    }
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=1) + "\n")
        print(f"wrote {out}")
    return report
