"""One held-out robot's parameters, drawn from its family's ranges and its seed (numpy only).

Robot ``k`` of a family has seed ``s = first_seed + k``. Its parameters come from ``numpy.random.default_rng([s, 0])``
in a fixed order (the drive fields per joint, then the task's fields in catalogue order), its episodes (push schedules,
object draws) from ``[s, 1]`` and its sensor noise from ``[s, 2]``: adding a field to a later version of the suite
does not move the episodes, and the same seed gives the same robot on every machine. Every range is drawn uniformly;
``int_range`` fields take the integers ``lo..hi`` inclusive; ``value`` fields are used as stated.

The drives reuse the hidden robot's parameters (:class:`~realgap.envs.deploy.hidden_robot.HiddenTruth`): realised
gains, Coulomb friction and armature as multiples of the export's datasheet, viscous friction in N·m·s/rad, the torque
limit as a multiple of the datasheet peak, one command delay per joint.

:func:`restore_groups` gives a robot one group of its errors back from another robot (robot ``k`` of the typical
family): which part of a family's gap a group of errors causes, with everything else and the episodes unchanged.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from realgap.envs.deploy.hidden_robot import HiddenTruth, SensorNoise
from realgap.envs.eval.suite.schema import Family, Suite
from realgap.envs.format.metadata import PolicyMetadata


@dataclass(frozen=True)
class RobotDraw:
    """One robot of the suite (SI units; per-joint arrays in ``meta.joint_names`` order).

    Attributes:
        family: Its family. index: Its index in the family. seed: Its seed.
        truth: The drives. hold_period_steps: Physics steps its bridge holds one PD torque for (1: none holds).
        noise: Its sensors' noise and bias.
        body: The task's other parameters: balance ``link_mass_scale`` ``(B,)``, ``link_com_shift_m`` ``(B, 3)``,
            ``payload_mass_kg``, ``payload_offset_m`` ``(3,)``, ``payload_size_m`` ``(3,)``, ``foot_friction``,
            ``foot_timeconst_s``; grasp ``pad_friction``, ``pad_timeconst_s``, ``table_height_error_m``,
            ``object_pos_bias_m`` ``(3,)``, ``object_pos_noise_m``, ``object_rot_noise_rad``.
        episode_seed: Seed of its episodes (push schedules, object draws).
    """

    family: str
    index: int
    seed: int
    truth: HiddenTruth
    hold_period_steps: int
    noise: SensorNoise
    body: dict[str, float | np.ndarray]
    episode_seed: int

    def to_dict(self) -> dict:
        """Plain numbers (JSON)."""
        body = {k: np.asarray(v).tolist() for k, v in self.body.items()}
        noise = {k: getattr(self.noise, k) for k in ("q_rad", "qd_rads", "gyro_rads", "gravity_rad")}
        noise |= {"gyro_bias_rads": list(self.noise.gyro_bias_rads), "tilt_bias_rad": list(self.noise.tilt_bias_rad)}
        return {
            "family": self.family,
            "index": self.index,
            "seed": self.seed,
            "hold_period_steps": self.hold_period_steps,
            "drives": self.truth.to_dict(),
            "sensors": noise,
            "body": body,
        }


def datasheet(meta: PolicyMetadata, key: str) -> np.ndarray:
    """A datasheet field of every joint in ``meta.joint_names`` order (e.g. ``armature``, ``peak_torque``)."""
    out = np.zeros(len(meta.joint_names))
    for group in meta.actuator_groups:
        for j, name in enumerate(group.joint_names):
            out[meta.joint_names.index(name)] = getattr(group, key)[j]
    return out


def _vec3(rng: np.random.Generator, ranges: tuple, count: int | None = None) -> np.ndarray:
    """Uniform per axis; ``count`` rows of three (``None``: one ``(3,)``)."""
    lo, hi = np.array([r[0] for r in ranges]), np.array([r[1] for r in ranges])
    return rng.uniform(lo, hi, (3,) if count is None else (count, 3))


def draw_robot(suite: Suite, family: Family, index: int, meta: PolicyMetadata, links: int = 0) -> RobotDraw:
    """Robot ``index`` of ``family`` (module docstring).

    Args:
        suite: The suite. family: One of its families. index: 0 .. ``family.robots - 1``.
        meta: The export the robot runs (its datasheet and joint order).
        links: Number of links the balance robot's inertia errors act on (ignored for the grasp).

    Raises:
        IndexError: ``index`` outside the family.
    """
    if not 0 <= index < family.robots:
        raise IndexError(f"family {family.name!r} has robots 0..{family.robots - 1}, not {index}")
    seed = family.first_seed + index
    v, n = family.values, len(meta.joint_names)
    rng = np.random.default_rng([seed, 0])
    lo, hi = v["delay_steps"]
    truth = HiddenTruth(
        delay_steps=rng.integers(lo, hi + 1, n),
        kp_scale=rng.uniform(*v["kp_scale"], n),
        kd_scale=rng.uniform(*v["kd_scale"], n),
        coulomb_nm=datasheet(meta, "coulomb_friction") * rng.uniform(*v["coulomb_scale"], n),
        viscous_nms=rng.uniform(*v["viscous_nms"], n),
        armature=datasheet(meta, "armature") * rng.uniform(*v["armature_scale"], n),
        peak_torque=datasheet(meta, "peak_torque") * rng.uniform(*v["peak_torque_scale"], n),
    )
    hold = bool(rng.uniform() < v["hold_probability"])
    period = int(rng.integers(v["hold_period_steps"][0], v["hold_period_steps"][1] + 1)) if hold else 1
    sensors = {"q_rad": v["encoder_q_noise_rad"], "qd_rads": v["encoder_qd_noise_rads"]}
    noise_seed = int(np.random.default_rng([seed, 2]).integers(2**31))
    if suite.task == "balance":
        body = {
            "link_mass_scale": rng.uniform(*v["link_mass_scale"], links),
            "link_com_shift_m": _vec3(rng, v["link_com_shift_m"], links),
            "payload_mass_kg": float(rng.uniform(*v["payload_mass_kg"])),
            "payload_offset_m": _vec3(rng, v["payload_offset_m"]),
            "payload_size_m": _vec3(rng, v["payload_size_m"]),
            "foot_friction": float(rng.uniform(*v["foot_friction"])),
            "foot_timeconst_s": float(rng.uniform(*v["foot_timeconst_s"])),
        }
        gyro_bias = tuple(_vec3(rng, v["gyro_bias_rads"]).tolist())
        tilt_bias = tuple(_vec3(rng, v["attitude_bias_rad"])[:2].tolist())
        sensors |= {
            "gyro_rads": v["gyro_noise_rads"],
            "gravity_rad": v["attitude_noise_rad"],
            "gyro_bias_rads": gyro_bias,
            "tilt_bias_rad": tilt_bias,
        }
    else:
        body = {
            "pad_friction": float(rng.uniform(*v["pad_friction"])),
            "pad_timeconst_s": float(rng.uniform(*v["pad_timeconst_s"])),
            "table_height_error_m": float(rng.uniform(*v["table_height_error_m"])),
            "object_pos_bias_m": _vec3(rng, v["object_pos_bias_m"]),
            "object_pos_noise_m": v["object_pos_noise_m"],
            "object_rot_noise_rad": v["object_rot_noise_rad"],
        }
    noise = SensorNoise(seed=noise_seed, **sensors)
    episode_seed = int(np.random.default_rng([seed, 1]).integers(2**31))
    return RobotDraw(family.name, index, seed, truth, period, noise, body, episode_seed)


GROUPS = ("drives", "delay", "hold", "body", "contact", "sensors")
"""Error groups :func:`restore_groups` can swap: the drives' gains, friction, armature and torque limit; the command
delay; the holding bridge; the body's mass, CoM and payload (balance) or the table and object-pose bias (grasp); the
contact's friction and softness; the sensors' noise and bias (and the grasp's object-pose noise)."""
_DRIVES = ("kp_scale", "kd_scale", "coulomb_nm", "viscous_nms", "armature", "peak_torque")
_SENSOR_BODY = ("object_pos_noise_m", "object_rot_noise_rad")


def _body_group(key: str) -> str:
    if key.endswith(("_friction", "_timeconst_s")):
        return "contact"
    return "sensors" if key in _SENSOR_BODY else "body"


def check_groups(groups: tuple[str, ...] | list[str], where: str = "error groups") -> None:
    """Raises ValueError naming any of ``groups`` that is not in :data:`GROUPS` (and the known ones)."""
    if unknown := sorted(set(groups) - set(GROUPS)):
        raise ValueError(f"{where}: unknown error group(s) {unknown}; known: {list(GROUPS)}")


def restore_groups(draw: RobotDraw, reference: RobotDraw, groups: tuple[str, ...] | list[str]) -> RobotDraw:
    """``draw`` with the error ``groups`` (:data:`GROUPS`) taken from ``reference``; its identity (family, index,
    seed) and its episodes (``episode_seed``: the same pushes or objects) stay ``draw``'s.

    Raises:
        ValueError: An unknown group (names the known ones).
    """
    check_groups(groups)
    truth = {}
    if "drives" in groups:
        truth |= {k: getattr(reference.truth, k) for k in _DRIVES}
    if "delay" in groups:
        truth["delay_steps"] = reference.truth.delay_steps
    noise = draw.noise
    if "sensors" in groups:  # the reference's noise levels and biases, the robot's own noise stream
        noise = dataclasses.replace(reference.noise, seed=draw.noise.seed)
    body = {k: reference.body[k] if _body_group(k) in groups else v for k, v in draw.body.items()}
    return dataclasses.replace(
        draw,
        truth=dataclasses.replace(draw.truth, **truth),
        hold_period_steps=reference.hold_period_steps if "hold" in groups else draw.hold_period_steps,
        noise=noise,
        body=body,
    )
