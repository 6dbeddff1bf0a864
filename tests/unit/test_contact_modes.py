"""Unit tier: grasp contact modes and the lift-and-hold success metric on constructed states (hand-computed values in
comments), plus the layering rule for the pure module."""

import math

import pytest
import torch

from realgap.tasks.grasp.contact_modes import (
    CONTACT_MODE_NAMES,
    ContactMode,
    ContactModeThresholds,
    classify_contact_mode,
    contact_slip_speed,
    hold_steps_required,
    is_pinch,
    lift_success,
    mode_counts,
    point_velocity,
    tangential_speed,
    update_hold_steps,
)

pytestmark = pytest.mark.unit
TH = ContactModeThresholds(force_n=0.05, slip_speed_mps=0.01)


def test_point_velocity_adds_the_rotation_term():
    # v = v_com + ω × (p − c): ω = 2 rad/s about z, p − c = 0.1 m along x → ω × r = (0, 0.2, 0); plus v_com (1, 0, 0)
    v = point_velocity(torch.tensor([1.0, 0, 0]), torch.tensor([0, 0, 2.0]), torch.zeros(3), torch.tensor([0.1, 0, 0]))
    assert torch.allclose(v, torch.tensor([1.0, 0.2, 0.0]))


def test_tangential_speed_drops_the_normal_part_and_ignores_the_normal_length():
    # v = (3, 4, 12) m/s, normal along z (any length): tangential part (3, 4, 0) → 5 m/s
    v = torch.tensor([3.0, 4.0, 12.0])
    assert float(tangential_speed(v, torch.tensor([0, 0, 7.0]))) == pytest.approx(5.0)
    # no contact (zero normal): the full speed √(9 + 16 + 144) = 13
    assert float(tangential_speed(v, torch.zeros(3))) == pytest.approx(13.0)


def test_contact_slip_speed_is_zero_for_a_rigidly_carried_object():
    # finger and object move as one rigid body (one ω; the object's CoM velocity is the finger's velocity field at
    # the object's CoM): the contact point has no relative velocity
    lin, ang = torch.tensor([[0.1, -0.2, 0.3]]), torch.tensor([[0.5, 0.0, 1.0]])
    finger_com, obj_com = torch.tensor([[[0.0, 0.03, 0.0]]]), torch.tensor([[0.0, 0.0, 0.0]])
    obj_lin = point_velocity(lin, ang, finger_com[:, 0], obj_com)  # (0.1, -0.2, 0.3) + ω × (0, -0.03, 0)
    point, normal = torch.tensor([[[0.0, 0.02, 0.0]]]), torch.tensor([[[0.0, 1.0, 0.0]]])
    slip = contact_slip_speed(lin[:, None], ang[:, None], finger_com, obj_lin, ang, obj_com, point, normal)
    assert slip.shape == (1, 1) and float(slip) == pytest.approx(0.0, abs=1e-7)
    # the object slides down 5 cm/s past a static finger (normal along y): 0.05 m/s tangential
    slip = contact_slip_speed(
        torch.zeros(1, 1, 3),
        torch.zeros(1, 1, 3),
        finger_com,
        torch.tensor([[0.0, 0, -0.05]]),
        torch.zeros(1, 3),
        obj_com,
        point,
        normal,
    )
    assert float(slip) == pytest.approx(0.05)


def test_classification_of_the_four_modes():
    # env 0: no force, never pinched            → NO_CONTACT
    # env 1: both fingers press, no slip        → STICKING
    # env 2: one finger presses at 3 cm/s slip  → SLIDING
    # env 3: no force, pinched earlier          → SEPARATED
    # env 4: force 0.04 N < 0.05 N on both      → NO_CONTACT (below the contact threshold)
    # env 5: slip 0.5 m/s on a finger that does not press, the other sticks → STICKING
    force = torch.tensor([[0.0, 0.0], [2.0, 2.0], [1.0, 0.0], [0.0, 0.0], [0.04, 0.04], [0.0, 3.0]])
    slip = torch.tensor([[0.0, 0.0], [0.001, 0.002], [0.03, 0.0], [0.2, 0.2], [0.0, 0.0], [0.5, 0.0]])
    pinched = torch.tensor([False, True, False, True, False, False])
    mode = classify_contact_mode(force, slip, pinched, TH)
    expected = [
        ContactMode.NO_CONTACT,
        ContactMode.STICKING,
        ContactMode.SLIDING,
        ContactMode.SEPARATED,
        ContactMode.NO_CONTACT,
        ContactMode.STICKING,
    ]
    assert mode.tolist() == [int(m) for m in expected]
    assert mode.dtype == torch.int64
    # counts per mode, in ContactMode order: no_contact 2, sticking 2, sliding 1, separated 1
    assert mode_counts(mode).tolist() == [2, 2, 1, 1]
    assert CONTACT_MODE_NAMES == ("no_contact", "sticking", "sliding", "separated")


def test_a_pinch_needs_opposing_fingers_and_a_drop_after_it_reads_separated():
    # normal force on (left, right) finger, N: env 0 squeezed from both sides (antiparallel, cos = -1: a pinch);
    # env 1 one finger only; env 2 both fingertips pressing on the top face (parallel, cos = +1: not a pinch);
    # env 3 both press but at 90° (cos = 0 > -0.5: not a pinch)
    y, z, x = torch.tensor([0.0, 1.0, 0.0]), torch.tensor([0.0, 0.0, 1.0]), torch.tensor([1.0, 0.0, 0.0])
    normals = torch.stack(
        [torch.stack([2 * y, -2 * y]), torch.stack([y, 0 * y]), torch.stack([z, z]), torch.stack([y, x])]
    )
    pinched = is_pinch(normals, TH)
    assert pinched.tolist() == [True, False, False, False]
    # every finger lets go: env 0 dropped its object (SEPARATED), the others only lost a touch (NO_CONTACT)
    mode = classify_contact_mode(torch.zeros(4, 2), torch.zeros(4, 2), pinched, TH)
    assert mode.tolist() == [int(ContactMode.SEPARATED)] + [int(ContactMode.NO_CONTACT)] * 3


def test_thresholds_are_validated():
    with pytest.raises(ValueError, match="force_n"):
        ContactModeThresholds(force_n=0.0)
    with pytest.raises(ValueError, match="slip_speed_mps"):
        ContactModeThresholds(slip_speed_mps=math.nan)
    with pytest.raises(ValueError, match="pinch_cos"):
        ContactModeThresholds(pinch_cos=1.0)


def test_hold_steps_required_counts_whole_policy_steps():
    # 1 s at 20 ms: 1.0 / 0.02 = 50.000000000000004 in floats → still 50 (round-off tolerant ceil)
    assert hold_steps_required(1.0, 0.02) == 50
    # 0.25 s at 0.1 s: ceil(2.5) = 3; zero hold still needs one lifted step
    assert hold_steps_required(0.25, 0.1) == 3
    assert hold_steps_required(0.0, 0.02) == 1
    with pytest.raises(ValueError, match="step_dt"):
        hold_steps_required(1.0, 0.0)
    with pytest.raises(ValueError, match="hold_s"):
        hold_steps_required(-1.0, 0.02)


def test_success_needs_an_uninterrupted_hold_at_the_target_height():
    target, required = 0.10, 3
    steps = torch.zeros(2, dtype=torch.int64)
    # env 0 stays at 0.12 m; env 1 at 0.12, dips to 0.09 (interrupted: counter back to 0), then 0.12 again
    lifts = [(0.12, 0.12), (0.12, 0.09), (0.12, 0.12), (0.12, 0.12)]
    success = torch.zeros(2, dtype=torch.bool)
    history = []
    for lift in lifts:
        steps = update_hold_steps(steps, torch.tensor(lift), target)
        success |= lift_success(steps, required)
        history.append(steps.tolist())
    assert history == [[1, 1], [2, 0], [3, 1], [4, 2]]
    # env 0 reached 3 consecutive lifted steps; env 1 only 2 since the dip
    assert success.tolist() == [True, False]
    # exactly at the target height counts as lifted (>=)
    assert update_hold_steps(torch.zeros(1, dtype=torch.int64), torch.tensor([0.10]), 0.10).tolist() == [1]
