"""The drop lab in MuJoCo C: a body dropped centred onto a plane, measured as the contact class prescribes.

A free body (sphere with condim 1 for the closed-form checks, or a box) falls from a height onto a plane carrying
:class:`ContactParams`; the run records height, penetration, normal force and solver iterations per step and reduces
them to the class's figures (max penetration, peak force, time to rest, rebound, steady height, residual velocity).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from realgap.envs.contact.params import ContactParams
from realgap.envs.robots.g1 import G1, G1_FOOT_BODIES, G1_SOLE_POINTS_B, G1_SOLE_RADIUS


@dataclass(frozen=True)
class DropSpec:
    """One drop: shape ("sphere" | "box"), size (m; radius or half-edge), mass (kg), drop height of the lowest point
    above the plane (m), duration (s), and the plane's tilt (rad, about y; 0 for a drop, > 0 for a slide)."""

    shape: str = "sphere"
    size: float = 0.05
    mass: float = 1.0
    height: float = 0.1
    duration: float = 1.0
    tilt: float = 0.0


@dataclass(frozen=True)
class DropLog:
    """Per-step arrays of one run. Shape: (T,) each; z is the lowest point's height (m), force the summed normal
    contact force (N), x the down-slope position (m)."""

    t: np.ndarray
    z: np.ndarray
    vz: np.ndarray
    force: np.ndarray
    niter: np.ndarray
    x: np.ndarray
    root_z: np.ndarray | None = None
    """Pelvis height (m), for the whole-robot drop (:func:`run_g1`); None for a single body."""


def scene_xml(p: ContactParams, spec: DropSpec) -> str:
    """MJCF of the drop: the plane carries ``p``; the body's own contact parameters are given priority -1 so the
    plane's win the mixing rule, i.e. the pair's parameters are exactly ``p``."""
    if spec.shape == "sphere":
        body_geom = f'type="sphere" size="{spec.size:g}"'
    elif spec.shape == "box":
        body_geom = f'type="box" size="{spec.size:g} {spec.size:g} {spec.size:g}"'
    elif spec.shape == "g1_foot":
        return _foot_xml(p, spec)
    else:
        raise ValueError(f"shape must be 'sphere', 'box' or 'g1_foot', got {spec.shape!r}")
    # start on the plane's normal, the body's axes aligned with the plane (a face lands flat on a slope)
    c0 = (spec.size + spec.height) * np.array([np.sin(spec.tilt), 0.0, np.cos(spec.tilt)])
    return f"""<mujoco><option timestep="{p.timestep:g}" gravity="0 0 -9.81"/>
<worldbody>
  <geom name="floor" type="plane" size="5 5 0.1" euler="0 {np.degrees(spec.tilt):g} 0" {p.geom_attrs()}/>
  <body name="b" pos="{c0[0]:g} 0 {c0[2]:g}" euler="0 {np.degrees(spec.tilt):g} 0"><freejoint/>
    <geom name="g" {body_geom} mass="{spec.mass:g}" priority="-1" condim="{p.condim}"/></body>
</worldbody></mujoco>"""


def g1_foot_spec(height: float = 0.05, duration: float = 1.0) -> DropSpec:
    """A drop of the G1's left foot alone (its ankle-roll link, the MJCF's mass): ``size`` is the depth of the lowest
    sole point below the link's frame, so heights and penetrations read as for the box."""
    import mujoco

    m = mujoco.MjModel.from_xml_path(str(G1.mjcf_path()))
    mass = float(m.body_mass[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, G1_FOOT_BODIES[0])])
    depth = -min(z for _, _, z in G1_SOLE_POINTS_B) + G1_SOLE_RADIUS
    return DropSpec(shape="g1_foot", size=depth, mass=mass, height=height, duration=duration)


def _foot_xml(p: ContactParams, spec: DropSpec) -> str:
    """The G1's left ankle-roll link as a free body: its four sole spheres and its MJCF inertia (scaled to
    ``spec.mass``), landing flat on the plane, which carries ``p``."""
    import mujoco

    if spec.tilt != 0.0:
        raise ValueError("the foot drop is flat (tilt 0)")
    m = mujoco.MjModel.from_xml_path(str(G1.mjcf_path()))
    b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, G1_FOOT_BODIES[0])
    scale = spec.mass / float(m.body_mass[b])
    ipos, iquat, inertia = m.body_ipos[b], m.body_iquat[b], scale * m.body_inertia[b]
    spheres = "\n".join(
        f'    <geom type="sphere" size="{G1_SOLE_RADIUS:g}" pos="{x:g} {y:g} {z:g}" mass="0" priority="-1" '
        f'condim="{p.condim}"/>'
        for x, y, z in G1_SOLE_POINTS_B
    )
    return f"""<mujoco><option timestep="{p.timestep:g}" gravity="0 0 -9.81"/>
<worldbody>
  <geom name="floor" type="plane" size="5 5 0.1" {p.geom_attrs()}/>
  <body name="b" pos="0 0 {spec.size + spec.height:g}"><freejoint/>
    <inertial pos="{ipos[0]:g} {ipos[1]:g} {ipos[2]:g}" quat="{iquat[0]:g} {iquat[1]:g} {iquat[2]:g} {iquat[3]:g}"
      mass="{spec.mass:g}" diaginertia="{inertia[0]:g} {inertia[1]:g} {inertia[2]:g}"/>
{spheres}
  </body>
</worldbody></mujoco>"""


def run(p: ContactParams, spec: DropSpec, options: Mapping[str, Any] | None = None) -> DropLog:
    """Simulate the drop for ``spec.duration`` seconds and log every step; ``options`` set ``mjModel.opt`` fields
    (e.g. ``{"integrator": mujoco.mjtIntegrator.mjINT_IMPLICITFAST}``) over the MJCF's defaults."""
    import mujoco

    m = mujoco.MjModel.from_xml_string(scene_xml(p, spec))
    for name, value in (options or {}).items():
        setattr(m.opt, name, value)
    d = mujoco.MjData(m)
    n = int(round(spec.duration / p.timestep))
    t, z, vz, fz, it, x = (np.zeros(n) for _ in range(6))
    f6 = np.zeros(6)
    c, s = np.cos(spec.tilt), np.sin(spec.tilt)
    for i in range(n):
        mujoco.mj_step(m, d)
        pos = d.qpos[:3]
        # height of the body centre above the (tilted) plane, minus its half-extent = lowest point's height
        normal = np.array([s, 0.0, c])
        z[i] = float(pos @ normal) - spec.size
        vz[i] = float(d.qvel[:3] @ normal)
        x[i] = float(pos @ np.array([c, 0.0, -s]))
        tot = 0.0
        for j in range(d.ncon):
            mujoco.mj_contactForce(m, d, j, f6)
            tot += f6[0]
        fz[i], it[i], t[i] = tot, int(d.solver_niter[0]), d.time
    return DropLog(t, z, vz, fz, it, x)


REST_SPEED = 1e-3
"""|vz| below which the body counts as settled for ``time_to_rest``, m/s (the contact class's 1 mm/s)."""
STEADY_SPEED = 1e-8
"""|vz| the whole last 10 % of a run must stay below for its mean height to count as the resting depth, m/s: at
10 nm/s an over-damped creep whose slow pole is above 1 /s has under 10 nm to go, where the 1 mm/s settling rule
lets the damping-ratio-2 box still sink 21 µm (388 µm over its first second's last 0.1 s, 367.18 µm at rest)."""


def measure(log: DropLog, spec: DropSpec, rest_speed: float = REST_SPEED) -> dict[str, float]:
    """The class's figures from one drop log.

    max_penetration (m), peak_force (N), time_to_rest (s from first contact until |vz| stays < rest_speed m/s),
    rebound (m, highest lowest-point height after first contact), steady_height (m, mean of the last 10 %; negative =
    penetration), residual_vz (m/s, max |vz| over the last 10 %), at_rest (1.0 where residual_vz < STEADY_SPEED, the
    rule for steady_height to be a resting depth, else 0.0), mean / max solver iterations after contact.
    """
    contact = np.nonzero(log.force > 0)[0]
    if contact.size == 0:
        raise ValueError("the body never touched the plane: raise duration or lower height")
    i0 = int(contact[0])
    moving = np.nonzero(np.abs(log.vz[i0:]) >= rest_speed)[0]
    i_rest = i0 + (int(moving[-1]) + 1 if moving.size else 0)
    tail = slice(int(0.9 * len(log.t)), None)
    residual = float(np.abs(log.vz[tail]).max())
    return {
        "max_penetration": float(max(0.0, -log.z[i0:].min())),
        "peak_force": float(log.force.max()),
        "time_to_rest": float(log.t[min(i_rest, len(log.t) - 1)] - log.t[i0]) if i_rest < len(log.t) else float("nan"),
        "rebound": float(max(0.0, log.z[i0:].max())),
        "steady_height": float(log.z[tail].mean()),
        "residual_vz": residual,
        "at_rest": float(residual < STEADY_SPEED),
        "solver_iter_mean": float(log.niter[i0:].mean()),
        "solver_iter_max": float(log.niter[i0:].max()),
        "weight": float(spec.mass * 9.81),
    }


def ringing_period(log: DropLog, from_first_contact: bool = False) -> float:
    """Mean period (s) of the penetration's oscillation about its final value, from successive upward zero crossings.

    Counted from the first step after the last one without contact force: a body that lifts off (or whose unilateral
    force clips at zero) in its first swings restarts its phase there, which shortens the first period (by 37 % at
    tc 0.0075 s, zeta 0.1, where the sphere leaves the plane for one 0.5 ms step) and would bias the mean.
    ``from_first_contact`` counts from first contact instead (the biased mean, kept to show the bias).
    """
    e = log.z - log.z[-1]
    i0 = int(np.nonzero(log.force > 0)[0][0])
    free = np.nonzero(log.force[i0:] <= 0)[0]
    i0 += int(free[-1]) + 1 if free.size and not from_first_contact else 0
    e = e[i0:]
    # crossings while the ringing is above 0.1 % of its first swing (later ones are round-off)
    last = int(np.nonzero(np.abs(e) > 1e-3 * np.abs(e).max())[0][-1])
    up = np.nonzero((e[:-1] < 0) & (e[1:] >= 0))[0]
    up = up[up < last]
    if up.size < 2:
        raise ValueError("fewer than two oscillations: not an under-damped response")
    # linear interpolation of each crossing
    tc = log.t[i0:][up] + (0 - e[up]) / (e[up + 1] - e[up]) * (log.t[1] - log.t[0])
    return float(np.diff(tc).mean())


def run_g1(
    p: ContactParams,
    height: float,
    duration: float,
    scene: str | None = None,
    *,
    xml: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> DropLog:
    """Drop the G1 from ``height`` m above its "stand" keyframe, on its soles.

    ``p`` is written to the foot spheres (priority 1 in the Menagerie model, so they set the foot-ground pair) and its
    step to the model. z is the lowest sole sphere's lowest point (m), vz the pelvis's vertical velocity, root_z its
    height. The Menagerie scene keeps its position servos at the keyframe's ctrl (they hold the standing pose); pass an
    MJCF string as ``xml`` (e.g. :func:`realgap.envs.contact.engines_g1.passive_xml`, without actuators) instead of the
    ``scene`` file for a passive robot. ``options`` set ``mjModel.opt`` fields over the MJCF's, as in :func:`run`.
    """
    import mujoco

    if xml is not None:
        m = mujoco.MjModel.from_xml_string(xml)
    else:
        if scene is None:
            scene = str(G1.mjcf_path().with_name("scene.xml"))
        m = mujoco.MjModel.from_xml_path(scene)
    for name, value in (options or {}).items():
        setattr(m.opt, name, value)
    m.opt.timestep = p.timestep
    feet = [g for g in range(m.ngeom) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE and m.geom_priority[g] == 1]
    if not feet:
        raise ValueError(f"{scene}: no priority-1 sole spheres (not the Menagerie G1?)")
    for g in feet:
        m.geom_solref[g], m.geom_solimp[g], m.geom_friction[g] = p.solref, p.solimp, p.friction
        m.geom_condim[g], m.geom_margin[g], m.geom_gap[g] = p.condim, p.margin, p.gap
    d = mujoco.MjData(m)
    key = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, "stand")
    if key >= 0:
        mujoco.mj_resetDataKeyframe(m, d, key)
    mujoco.mj_forward(m, d)
    lowest = min(d.geom_xpos[g][2] - m.geom_size[g][0] for g in feet)
    d.qpos[2] += height - lowest
    n = int(round(duration / p.timestep))
    t, z, vz, fz, it, x, root_z = (np.zeros(n) for _ in range(7))
    f6 = np.zeros(6)
    for i in range(n):
        mujoco.mj_step(m, d)
        z[i] = min(d.geom_xpos[g][2] - m.geom_size[g][0] for g in feet)
        vz[i], x[i], root_z[i] = d.qvel[2], d.qpos[0], d.qpos[2]
        tot = 0.0
        for j in range(d.ncon):
            if d.contact.geom1[j] in feet or d.contact.geom2[j] in feet:
                mujoco.mj_contactForce(m, d, j, f6)
                tot += f6[0]
        fz[i], it[i], t[i] = tot, int(d.solver_niter[0]), d.time
    return DropLog(t, z, vz, fz, it, x, root_z)
