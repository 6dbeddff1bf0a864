"""Grasp contact modes and the lift-and-hold success metric, on plain tensors (pure torch, no simulator import).

Four contact modes of a grasp, classified per env from the finger–object contacts:

======================  =======================================================================================
``NO_CONTACT`` (0)      no finger presses on the object and it has not been pinched yet this episode
``STICKING`` (1)        at least one finger presses on the object and every pressing finger's contact point moves
                        with the object (relative tangential speed below ``slip_speed_mps``)
``SLIDING`` (2)         at least one pressing finger's contact point moves tangentially against the object
``SEPARATED`` (3)       no finger presses on the object any more although the fingers pinched it earlier in the
                        episode: the object was dropped, released or knocked out of the hand
======================  =======================================================================================

"Presses" means a normal contact force above ``force_n``; a pinch is two fingers pressing from opposite sides (the
cosine between their normal forces below ``pinch_cos``), not two fingertips resting on the same face. The relative
tangential speed at a contact point ``p`` with unit normal ``n`` is ``‖v_rel − (v_rel·n)·n‖`` with
``v_rel = v_finger(p) − v_object(p)`` and the velocity of a rigid-body point ``v(p) = v_com + ω × (p − x_com)``
(world frame).

Success (lift-and-hold): the object's height above its resting height stays at or above ``lift_m`` for ``hold_s``
without interruption; counted in whole policy steps so float round-off cannot move the threshold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum

import torch
from torch import Tensor


class ContactMode(IntEnum):
    """Grasp contact mode of one env."""

    NO_CONTACT = 0
    STICKING = 1
    SLIDING = 2
    SEPARATED = 3


CONTACT_MODE_NAMES: tuple[str, ...] = tuple(m.name.lower() for m in ContactMode)
"""``("no_contact", "sticking", "sliding", "separated")``, indexed by :class:`ContactMode`."""


@dataclass(frozen=True)
class ContactModeThresholds:
    """Where contact starts and where sticking ends.

    Attributes:
        force_n: Normal force above which a finger presses on the object, N, > 0. 0.05 N is 5 % of the weight of a
            0.1 kg object: well above the solver's numerical contact noise at rest (resting contacts of a cube
            carry ~1 N), well below the ~0.5 N per finger a two-finger pinch needs to hold such an object.
        slip_speed_mps: Relative tangential speed of a contact point beyond which the contact slides, m/s, > 0.
            1 cm/s: a sticking pinch under MuJoCo's soft contacts creeps at well under 1 mm/s, while an object
            sliding out of the fingers or a finger dragged across it moves at centimetres per second.
        pinch_cos: Cosine of the angle between the two fingers' normal forces below which they squeeze the object
            from opposite sides, in [-1, 1). -0.5: within 60° of antiparallel (a parallel gripper on a box: -1;
            both fingertips pressing on its top face: +1).
    """

    force_n: float = 0.05
    slip_speed_mps: float = 0.01
    pinch_cos: float = -0.5

    def __post_init__(self) -> None:
        for name in ("force_n", "slip_speed_mps"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ValueError(f"ContactModeThresholds.{name} must be a finite number > 0, got {value!r}")
        if not (isinstance(self.pinch_cos, int | float) and -1.0 <= self.pinch_cos < 1.0):
            raise ValueError(f"ContactModeThresholds.pinch_cos must be in [-1, 1), got {self.pinch_cos!r}")


def point_velocity(lin_vel_w: Tensor, ang_vel_w: Tensor, com_pos_w: Tensor, point_w: Tensor) -> Tensor:
    """Velocity of a point rigidly attached to a body: ``v_com + ω × (p − x_com)``, m/s, world frame.

    Shape:
        lin_vel_w, ang_vel_w, com_pos_w, point_w: ``(..., 3)`` (broadcast) → ``(..., 3)``.
    """
    return lin_vel_w + torch.linalg.cross(ang_vel_w, point_w - com_pos_w, dim=-1)


def tangential_speed(rel_vel_w: Tensor, normal_w: Tensor) -> Tensor:
    """Speed of ``rel_vel_w`` in the tangent plane of ``normal_w``, m/s (``normal_w`` need not be unit length).

    A zero normal (no contact) gives the full speed ``‖rel_vel_w‖``.

    Shape:
        rel_vel_w, normal_w: ``(..., 3)`` → ``(...,)``.
    """
    norm = torch.linalg.vector_norm(normal_w, dim=-1, keepdim=True)
    unit = torch.where(norm > 0, normal_w / norm.clamp_min(1e-12), torch.zeros_like(normal_w))
    tangential = rel_vel_w - (rel_vel_w * unit).sum(-1, keepdim=True) * unit
    return torch.linalg.vector_norm(tangential, dim=-1)


def contact_slip_speed(
    finger_lin_vel_w: Tensor,
    finger_ang_vel_w: Tensor,
    finger_com_w: Tensor,
    object_lin_vel_w: Tensor,
    object_ang_vel_w: Tensor,
    object_com_w: Tensor,
    contact_pos_w: Tensor,
    normal_w: Tensor,
) -> Tensor:
    """Relative tangential speed of each finger's contact point against the object, m/s.

    Shape:
        finger_*: ``(E, F, 3)``; object_*: ``(E, 3)``; contact_pos_w, normal_w: ``(E, F, 3)`` → ``(E, F)``.
    """
    v_finger = point_velocity(finger_lin_vel_w, finger_ang_vel_w, finger_com_w, contact_pos_w)
    v_object = point_velocity(
        object_lin_vel_w[:, None], object_ang_vel_w[:, None], object_com_w[:, None], contact_pos_w
    )
    return tangential_speed(v_finger - v_object, normal_w)


def is_pinch(normal_force_w: Tensor, thresholds: ContactModeThresholds) -> Tensor:
    """Whether two fingers squeeze the object from opposite sides: both press (force > ``force_n``) and the cosine
    between their normal forces is below ``pinch_cos``.

    Shape:
        normal_force_w: ``(E, 2, 3)`` normal force on each finger, N, world frame → ``(E,)`` bool.
    """
    magnitude = torch.linalg.vector_norm(normal_force_w, dim=-1)
    pressing = (magnitude > thresholds.force_n).all(dim=-1)
    cos = (normal_force_w[:, 0] * normal_force_w[:, 1]).sum(-1) / (magnitude[:, 0] * magnitude[:, 1]).clamp_min(1e-12)
    return pressing & (cos < thresholds.pinch_cos)


def classify_contact_mode(
    normal_force_n: Tensor, slip_speed_mps: Tensor, pinched: Tensor, thresholds: ContactModeThresholds
) -> Tensor:
    """Contact mode of each env (values of :class:`ContactMode`), see the module docstring.

    Args:
        normal_force_n: Normal contact force of each finger on the object, N, >= 0.
        slip_speed_mps: Relative tangential speed at each finger's contact point, m/s (ignored where the finger does
            not press).
        pinched: Whether the fingers pinched the object (:func:`is_pinch`) at some step of the episode so far.
        thresholds: Contact and slip thresholds.

    Shape:
        normal_force_n, slip_speed_mps: ``(E, F)``; pinched: ``(E,)`` bool → ``(E,)`` int64.
    """
    pressing = normal_force_n > thresholds.force_n
    touching = pressing.any(dim=-1)
    sliding = (pressing & (slip_speed_mps > thresholds.slip_speed_mps)).any(dim=-1)
    in_contact = torch.where(sliding, int(ContactMode.SLIDING), int(ContactMode.STICKING))
    apart = torch.where(pinched, int(ContactMode.SEPARATED), int(ContactMode.NO_CONTACT))
    return torch.where(touching, in_contact, apart).to(torch.int64)


def mode_counts(mode: Tensor) -> Tensor:
    """How many envs are in each contact mode. Shape: ``(E,)`` int → ``(len(ContactMode),)`` int64.

    A comparison with every mode and a sum, not ``torch.bincount``: bincount sizes its output by the largest value, a
    host sync on CUDA every step."""
    modes = torch.arange(len(ContactMode), device=mode.device)
    return (mode.reshape(-1, 1).to(torch.int64) == modes).sum(dim=0)


def hold_steps_required(hold_s: float, step_dt: float) -> int:
    """Policy steps the object must stay lifted: ``ceil(hold_s / step_dt)``, at least 1 (round-off tolerant).

    Raises:
        ValueError: ``hold_s`` < 0 or ``step_dt`` <= 0.
    """
    if not (math.isfinite(hold_s) and hold_s >= 0):
        raise ValueError(f"hold_s must be a finite time >= 0 s, got {hold_s!r}")
    if not (math.isfinite(step_dt) and step_dt > 0):
        raise ValueError(f"step_dt must be a finite time > 0 s, got {step_dt!r}")
    return max(1, math.ceil(hold_s / step_dt - 1e-9))


def update_hold_steps(hold_steps: Tensor, lift_m: Tensor, lift_target_m: float) -> Tensor:
    """Consecutive policy steps with the object lifted at least ``lift_target_m``: +1 where lifted, else 0.

    Shape:
        hold_steps: ``(E,)`` int; lift_m: ``(E,)`` height above the resting height, m → ``(E,)`` int64.
    """
    return torch.where(lift_m >= lift_target_m, hold_steps.to(torch.int64) + 1, torch.zeros_like(hold_steps))


def lift_success(hold_steps: Tensor, required_steps: int) -> Tensor:
    """Whether the object has been held lifted long enough. Shape: ``(E,)`` int → ``(E,)`` bool."""
    return hold_steps >= required_steps
