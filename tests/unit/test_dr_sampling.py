"""Unit tier: the pure helpers behind the DR event terms (seeds, draws, selectors, inertia columns, push box)."""

import pytest
import torch

from realgap.envs.dr.inertia import BodyInertia, box_inertia_c, consistency_mask
from realgap.envs.dr.inertia_sampling import InertiaRandomization
from realgap.envs.dr.sampling import (
    body_from_flat,
    body_to_flat,
    check_disjoint,
    make_generator,
    push_magnitude,
    randomization_from_params,
    randomization_to_params,
    resolve_names,
    sample_body_columns,
    term_seed,
    uniform,
    uniform_int,
)

pytestmark = pytest.mark.unit

JOINTS = ["left_hip_pitch_joint", "left_knee_joint", "right_hip_pitch_joint", "right_knee_joint", "waist_yaw_joint"]


def test_term_seeds_are_stable_and_independent():
    assert term_seed(None, "dr_payload") == term_seed(0, "dr_payload")
    assert term_seed(0, "dr_payload") == term_seed(0, "dr_payload")
    assert term_seed(0, "dr_payload") != term_seed(0, "dr_actuator")
    assert term_seed(0, "dr_payload") != term_seed(1, "dr_payload")


def test_uniform_is_reproducible_bounded_and_exact_for_a_point_range():
    a = uniform((0.9, 1.1), (1000,), make_generator(7))
    b = uniform((0.9, 1.1), (1000,), make_generator(7))
    assert torch.equal(a, b)
    assert a.min() >= 0.9 and a.max() <= 1.1
    assert a.max() - a.min() > 0.19  # 1000 draws cover the range
    assert torch.equal(uniform((0.3, 0.3), (5,), make_generator(0)), torch.full((5,), 0.3))


def test_uniform_int_is_inclusive():
    draws = uniform_int(0, 3, 2000, make_generator(1))
    assert draws.dtype == torch.int64
    assert set(draws.tolist()) == {0, 1, 2, 3}  # both ends reached (each has p = 1/4 per draw)
    with pytest.raises(ValueError, match="lo <= hi"):
        uniform_int(3, 2, 1, make_generator(1))


def test_resolve_names_full_match_union_and_clear_error():
    assert resolve_names([".*_knee_joint"], JOINTS, "x") == [1, 3]
    assert resolve_names(["waist_.*", "left_.*"], JOINTS, "x") == [0, 1, 4]  # sorted in names order
    with pytest.raises(ValueError, match=r"actuator\[0\]: joint pattern 'knee' matches no joint.*waist_yaw_joint"):
        resolve_names(["knee"], JOINTS, "actuator[0]", "joint")  # full match: 'knee' is not 'left_knee_joint'


def test_check_disjoint_names_the_shared_entry():
    check_disjoint([[0, 1], [2]], JOINTS, "x")
    with pytest.raises(ValueError, match="'left_knee_joint' is selected by group 0 and group 1"):
        check_disjoint([[0, 1], [1, 2]], JOINTS, "joint_friction")


def test_randomization_params_round_trip_and_are_plain():
    rnd = InertiaRandomization(
        mass_scale=(0.9, 1.1), com_shift_m=((-0.01, 0.01), (0.0, 0.0), (0.0, 0.02)), payload_mass_kg=(0.0, 1.5)
    )
    params = randomization_to_params(rnd)
    assert params["com_shift_m"] == [[-0.01, 0.01], [0.0, 0.0], [0.0, 0.02]]  # lists: YAML-safe
    assert randomization_from_params(params) == rnd


def test_flat_layout_round_trip():
    inertia = torch.tensor([[1.0, 0.1, 0.0], [0.1, 2.0, 0.0], [0.0, 0.0, 3.0]]).reshape(1, 9)
    body = body_from_flat(torch.tensor([2.0]), torch.tensor([[0.0, 0.1, 0.0]]), inertia)
    assert body.inertia_c.dtype == torch.float64 and body.inertia_c[0, 0, 1] == pytest.approx(0.1)
    mass, com_b, flat = body_to_flat(body)
    assert flat.dtype == torch.float32 and torch.equal(flat, inertia)


def _boxes(num_envs: int, num_bodies: int) -> BodyInertia:
    mass = torch.full((num_envs, num_bodies), 2.0, dtype=torch.float64)
    size = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64).expand(num_envs, num_bodies, 3)
    return BodyInertia(mass, torch.zeros(num_envs, num_bodies, 3, dtype=torch.float64), box_inertia_c(mass, size))


def test_sample_body_columns_touches_only_its_columns_and_stays_consistent():
    body = _boxes(64, 3)
    rnd = InertiaRandomization(mass_scale=(0.8, 1.2), stretch=(0.9, 1.1), shear=(-0.1, 0.1))
    out = sample_body_columns(body, [0, 2], rnd, make_generator(3))
    assert torch.equal(out.mass[:, 1], body.mass[:, 1]) and torch.equal(out.inertia_c[:, 1], body.inertia_c[:, 1])
    assert bool(consistency_mask(out).all())
    assert out.mass[:, 0].min() >= 1.6 - 1e-12 and out.mass[:, 0].max() <= 2.4 + 1e-12  # 2 kg × [0.8, 1.2]
    assert out.mass[:, 0].unique().numel() == 64  # one draw per env


def test_sample_body_columns_point_payload_is_the_exact_composite():
    body = _boxes(4, 1)
    # 1 kg point mass 0.3 m along x: m = 3 kg, c_x = (2·0 + 1·0.3)/3 = 0.1 m, and I_C gains the Steiner terms
    # 2·0.1² + 1·0.2² = 0.06 kg·m² about y and z (nothing about x).
    rnd = InertiaRandomization(payload_mass_kg=(1.0, 1.0), payload_offset_m=((0.3, 0.3), (0.0, 0.0), (0.0, 0.0)))
    out = sample_body_columns(body, [0], rnd, make_generator(0))
    assert out.mass[:, 0].tolist() == pytest.approx([3.0] * 4)
    assert out.com_b[0, 0].tolist() == pytest.approx([0.1, 0.0, 0.0])
    added = (out.inertia_c - body.inertia_c)[0, 0].diagonal().tolist()
    assert added == pytest.approx([0.0, 0.06, 0.06])


def test_push_magnitude_accepts_only_an_isotropic_horizontal_box():
    box = ((-0.5, 0.5), (-0.5, 0.5), (0.0, 0.0))
    assert push_magnitude(box) == (0.0, 0.5)
    with pytest.raises(ValueError, match="random heading"):
        push_magnitude(((-0.5, 0.5), (-0.3, 0.3), (0.0, 0.0)))
    with pytest.raises(ValueError, match="random heading"):
        push_magnitude(((-0.5, 0.5), (-0.5, 0.5), (0.0, 0.2)))
