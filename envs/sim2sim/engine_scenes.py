"""The engine agreement tier's canonical scenes: each scene's MJCF (shared by both engines) and its start state.

The grasp task's object on its table (at rest with its centre of mass off centre, and dropped), the Panda hand holding
it lifted, the Menagerie G1 standing and pushed. :mod:`realgap.envs.sim2sim.engine_agreement` steps them in both
engines.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from realgap.envs.robots.g1 import G1
from realgap.envs.robots.panda import PANDA, PANDA_ACTUATORS, PANDA_TCP_OFFSET_HAND
from realgap.tasks.grasp.env_cfg import OBJECT_DENSITY, OBJECT_MAX_EDGE_M, TABLE_POS_M, TABLE_SIZE_M


@dataclass(frozen=True)
class Scene:
    """A canonical scene: the grasp task's table and a free box.

    Attributes:
        name: Row name.
        robot: ``"box"`` (the task's object on its table), ``"hold"`` (the Panda hand squeezing the object 10 cm above
            the table: :func:`hold_xml`) or ``"g1"`` (the Menagerie G1 on a floor plane, its MJCF position servos
            holding the ``stand`` keyframe in both engines).
        com_offset_m: The box's centre of mass along x from its geometric centre (m).
        drop_height_m: Gap between the box's underside and the table top at the start (m); 0 = resting.
        push_mps: Initial forward speed of the G1's pelvis (m/s): a push.
        seconds: Simulated time (s).
        dt: Physics step (s): the tasks' 5 ms.
    """

    name: str
    robot: str = "box"
    com_offset_m: float = 0.0
    drop_height_m: float = 0.0
    push_mps: float = 0.0
    seconds: float = 2.0
    dt: float = 0.005

    @property
    def at_rest(self) -> bool:
        """The scene ends at rest (its angular speed is checked): the object rows (the G1's servos still sway it by a
        few mrad/s after 1 s, in both engines alike)."""
        return self.robot in ("box", "hold")


CANONICAL_SCENES: tuple[Scene, ...] = (
    Scene("object at rest, CoM centred"),
    Scene("object at rest, CoM 5 mm off", com_offset_m=0.005),
    Scene("object at rest, CoM 10 mm off", com_offset_m=0.01),
    Scene("object dropped 2 cm", drop_height_m=0.02),
    Scene("object held by the Panda hand, lifted", robot="hold", seconds=1.0),
    Scene("G1 standing on its soles", robot="g1", seconds=1.0),
    Scene("G1 pushed at 0.2 m/s", robot="g1", push_mps=0.2, seconds=1.0),
)


def _table_and_object(gap_m: float, com_offset_m: float = 0.0) -> tuple[str, str]:
    """The task's table box and its largest object (5 cm, 800 kg/m³ solid box) ``gap_m`` above the table top, its
    centre of mass ``com_offset_m`` along x from its centre: two worldbody elements (a scene orders its bodies)."""
    half = OBJECT_MAX_EDGE_M / 2
    mass = OBJECT_DENSITY * OBJECT_MAX_EDGE_M**3
    inertia = mass * OBJECT_MAX_EDGE_M**2 / 6  # solid cube about its centre
    z = TABLE_POS_M[2] + TABLE_SIZE_M[2] / 2 + half + gap_m
    table = " ".join(f"{v / 2:g}" for v in TABLE_SIZE_M)
    pos = " ".join(f"{v:g}" for v in TABLE_POS_M)
    return (
        f'<geom name="table" type="box" size="{table}" pos="{pos}"/>',
        f"""
      <body name="object" pos="{TABLE_POS_M[0]} {TABLE_POS_M[1]} {z}"><freejoint/>
        <geom name="object" type="box" size="{half} {half} {half}" friction="0.6 0.005 0.0001"/>
        <inertial pos="{com_offset_m} 0 0" mass="{mass}" diaginertia="{inertia} {inertia} {inertia}"/></body>""",
    )


def scene_xml(scene: Scene) -> str:
    """The MJCF both engines load: the task's table and object (:func:`_table_and_object`), the hand holding it
    (:func:`hold_xml`) or the G1 (:func:`g1_xml`)."""
    if scene.robot == "g1":
        return g1_xml()
    if scene.robot == "hold":
        return hold_xml()
    return f"""<mujoco><option timestep="{scene.dt}"/><worldbody>
      {"".join(_table_and_object(scene.drop_height_m, scene.com_offset_m))}</worldbody></mujoco>"""


@cache
def _menagerie_panda() -> Any:
    """The Menagerie Panda MJCF, compiled once."""
    import mujoco

    return mujoco.MjModel.from_xml_path(str(PANDA.mjcf_path()))


def _menagerie_inertial(body: str) -> str:
    """``body``'s ``<inertial>`` as the Menagerie Panda MJCF compiles it (mass, CoM, principal moments and axes)."""
    m = _menagerie_panda()
    i = m.body(body).id
    pos, quat, moments = (
        " ".join(repr(float(v)) for v in a) for a in (m.body_ipos[i], m.body_iquat[i], m.body_inertia[i])
    )
    return f'<inertial mass="{float(m.body_mass[i])!r}" pos="{pos}" quat="{quat}" diaginertia="{moments}"/>'


HOLD_LIFT_M = 0.10
"""Height of the held object's underside above the table top, m."""
HOLD_START_FINGER_M = OBJECT_MAX_EDGE_M / 2 - 0.0015
"""Each finger's start opening, m: pad 1's face (1.5 mm proud of the other pads) touches the object."""


def hold_xml() -> str:
    """The Panda hand pointing down with the task's largest object between its pads, 10 cm above the table: the
    Menagerie hand's inertia, finger joints (armature, damping, range), collision geoms (hull mesh and five pads per
    finger) and finger equality; each finger under a position servo with the finger actuator's PD gains and force
    limit, target closed (it squeezes with kp·opening, ~11 N). The hand hangs on a stiff vertical slide servo standing
    in for the arm: a finger whose parent is welded to the world is a "simple" body, for which MuJoCo C's inverse
    weights leave out the armature and MuJoCo-Warp's do not (docs/results/engine_agreement.md), a case the task never
    has."""

    path = PANDA.mjcf_path()
    pd = PANDA_ACTUATORS["fingers"].pd_gains
    peak = PANDA_ACTUATORS["fingers"].peak_torque
    z_obj = TABLE_POS_M[2] + TABLE_SIZE_M[2] / 2 + OBJECT_MAX_EDGE_M / 2 + HOLD_LIFT_M
    table, held = _table_and_object(HOLD_LIFT_M)
    x, y = TABLE_POS_M[0], TABLE_POS_M[1]
    src = path.read_text()
    starts = [src.index(f'<default class="fingertip_pad_collision_{i}">') for i in range(1, 6)]
    pad_defaults = "".join(src[i : src.index("</default>", i)] + "</default>" for i in starts)  # the MJCF's pad boxes
    pads = "".join(f'<geom class="fingertip_pad_collision_{i}"/>' for i in range(1, 6))
    fingers = "".join(
        f'<body name="{side}_finger" pos="0 0 0.0584"{quat}>{_menagerie_inertial(f"{side}_finger")}'
        f'<joint name="finger_joint{k}" class="finger"/><geom mesh="finger_0" class="collision"/>{pads}</body>'
        for k, (side, quat) in enumerate((("left", ""), ("right", ' quat="0 0 0 1"')), start=1)
    )
    servo = f'kp="{pd.kp}" kv="{pd.kd}" forcerange="{-peak} {peak}"'
    return f"""<mujoco><compiler angle="radian" meshdir="{path.parent / "assets"}" autolimits="true"/>
      <default><default class="panda"><joint armature="0.1" damping="1" axis="0 0 1"/>
        <default class="finger"><joint axis="0 1 0" type="slide" range="0 0.04"/></default>
        <default class="collision"><geom type="mesh" group="3"/>{pad_defaults}</default></default></default>
      <asset><mesh file="finger_0.obj"/></asset>
      <worldbody>{table}
        <body name="hand" childclass="panda" pos="{x} {y} {z_obj + PANDA_TCP_OFFSET_HAND[2]}" quat="0 1 0 0">
          {_menagerie_inertial("hand")}
          <joint name="lift" type="slide" axis="0 0 1" range="-0.1 0.1"/>{fingers}</body>{held}</worldbody>
      <equality><joint joint1="finger_joint1" joint2="finger_joint2" solimp="0.95 0.99 0.001" solref="0.005 1"/>
      </equality>
      <actuator><position joint="lift" kp="20000" kv="300"/><position joint="finger_joint1" {servo}/>
        <position joint="finger_joint2" {servo}/></actuator></mujoco>"""


def g1_xml() -> str:
    """The Menagerie G1 with its position servos and ``stand`` keyframe, robot colliders touching only a floor plane
    (contype 2 / conaffinity 1, the tasks' no-self-collision setting)."""

    path = G1.mjcf_path()
    x = path.read_text().replace('meshdir="assets"', f'meshdir="{path.parent / "assets"}"')
    x = x.replace('<geom group="3" type="mesh"/>', '<geom group="3" type="mesh" contype="2" conaffinity="1"/>')
    return x.replace("<worldbody>", '<worldbody>\n    <geom name="floor" size="0 0 0.05" type="plane"/>', 1)


def start_state(scene: Scene, m: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """MuJoCo ``qpos``, ``qvel`` and ``ctrl`` at the start (the G1's keyframe, its pelvis pushed; the box as built)."""
    import mujoco

    d = mujoco.MjData(m)
    if scene.robot == "hold":  # the fingers at the object, every servo's target 0 (hand still, fingers closed)
        d.qpos[[m.joint("finger_joint1").qposadr[0], m.joint("finger_joint2").qposadr[0]]] = HOLD_START_FINGER_M
        return d.qpos.copy(), d.qvel.copy(), np.zeros(m.nu)
    if scene.robot != "g1":
        return d.qpos.copy(), d.qvel.copy(), None
    mujoco.mj_resetDataKeyframe(m, d, mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, "stand"))
    d.qvel[0] = scene.push_mps
    return d.qpos.copy(), d.qvel.copy(), d.ctrl.copy()
