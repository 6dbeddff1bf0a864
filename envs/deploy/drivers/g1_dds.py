"""Unitree G1 (29 DoF) facts on unitree_sdk2's ``unitree_hg`` DDS messages, shared by the driver and the simulator.

Motor slots follow the SDK's documented G1 29-DoF order (35 slots, 0–28 used: left leg 0–5, right leg 6–11, waist
12–14, left arm 15–21, right arm 22–28); an export's joints are mapped to slots by *name*, never by position, so an
export in another joint order drives the right motors. numpy only (the SDK is imported where messages are built,
and by :class:`LowStateCrc`, lazily).
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Sequence

import numpy as np

NUM_MOTOR_SLOTS = 35
LOWCMD_TOPIC = "rt/lowcmd"
LOWSTATE_TOPIC = "rt/lowstate"
MOTOR_ENABLE = 1  # MotorCmd_.mode: 1 = enabled (servo), 0 = off
G1_MOTOR_ORDER: tuple[str, ...] = (
    tuple(
        f"{side}_{j}_joint"
        for side in ("left", "right")
        for j in ("hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch", "ankle_roll")
    )
    + ("waist_yaw_joint", "waist_roll_joint", "waist_pitch_joint")
    + tuple(
        f"{side}_{j}_joint"
        for side in ("left", "right")
        for j in ("shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_roll", "wrist_pitch", "wrist_yaw")
    )
)


# unitree_hg LowState_ as the C struct unitree_sdk2 computes its CRC over (little-endian, 4-byte aligned; the SDK's
# own packing): version, mode_pr, mode_machine, tick | IMU quaternion, gyro, accelerometer, rpy, temperature | 35 ×
# motor (mode, q, dq, ddq, tau_est, temperature ×2, vol, sensor ×2, motorstate, reserve ×4) | wireless_remote,
# reserve ×4, crc
_HG_LOWSTATE = struct.Struct("<2I2B2xI13fh2x" + "B3x4f2hf7I" * 35 + "40B5I")


class LowStateCrc:
    """The CRC-32 of a unitree_hg ``LowState_``, equal to unitree_sdk2py's ``CRC().Crc(state)`` (a unit test says
    so) at a third of its cost: the SDK's C routine over the packed struct's 32-bit words (the CRC word excluded),
    without its per-word Python loop. Why: at 500 Hz the SDK's 0.4 ms per state took a fifth of a core from the
    driver and the simulator, slowing both on a loaded host."""

    def __init__(self) -> None:
        from unitree_sdk2py.utils.crc import CRC

        self._sdk = CRC()
        self._core = getattr(self._sdk, "crc_lib", None)  # Linux only; elsewhere the SDK's own path

    def __call__(self, state) -> int:
        if self._core is None:
            return int(self._sdk.Crc(state))
        imu, fields = state.imu_state, [*state.version, state.mode_pr, state.mode_machine, state.tick]
        fields += [*imu.quaternion, *imu.gyroscope, *imu.accelerometer, *imu.rpy, imu.temperature]
        for m in state.motor_state:
            fields += [m.mode, m.q, m.dq, m.ddq, m.tau_est, *m.temperature, m.vol, *m.sensor, m.motorstate, *m.reserve]
        fields += [*state.wireless_remote, *state.reserve, state.crc]
        words = np.frombuffer(_HG_LOWSTATE.pack(*fields), dtype="<u4")[:-1]  # the CRC word is not covered
        return int(self._core.crc32_core(words.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)), len(words)))


def motor_indices(joint_names: Sequence[str]) -> np.ndarray:
    """Motor slot of each joint, by name (the SDK's order, :data:`G1_MOTOR_ORDER`).

    Raises:
        ValueError: A joint is not a G1 motor (named), or a joint appears twice.
    """
    slot = {n: i for i, n in enumerate(G1_MOTOR_ORDER)}
    unknown = [n for n in joint_names if n not in slot]
    if unknown:
        raise ValueError(f"joints {unknown} are not G1 29-DoF motors (unitree_sdk2 order: {G1_MOTOR_ORDER})")
    if len(set(joint_names)) != len(joint_names):
        raise ValueError("a joint appears twice in the joint order")
    return np.array([slot[n] for n in joint_names], dtype=int)


def quat_to_gravity_b(q_wxyz: np.ndarray) -> np.ndarray:
    """Unit gravity direction in the body frame from the IMU quaternion (w, x, y, z; body → world)."""
    w, x, y, z = (float(v) for v in q_wxyz)
    # third row of R(q)^T times (0, 0, -1): -(R^T e_z)
    return -np.array([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)])


def tilt_of(q_wxyz: np.ndarray) -> float:
    """Angle between the body z axis and the world vertical, rad."""
    g = quat_to_gravity_b(q_wxyz)
    return float(np.arccos(np.clip(-g[2], -1.0, 1.0)))
