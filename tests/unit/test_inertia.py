"""Unit tests of the pure inertia math (realgap.envs.dr.inertia): hand-computed values, round trips, validity."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from realgap.envs.dr.inertia import (
    BodyInertia,
    body_from_log_cholesky,
    body_from_pseudo_inertia,
    box_inertia_c,
    check_consistency,
    combine_bodies,
    consistency_mask,
    inertia_c_to_o,
    inertia_from_second_moment,
    inertia_o_to_c,
    log_cholesky_from_body,
    pseudo_inertia,
    pseudo_inertia_from_log_cholesky,
)
from realgap.envs.dr.inertia_sampling import random_rotation

F64 = torch.float64
SEEDS = st.integers(min_value=0, max_value=2**31 - 1)


def t(values) -> torch.Tensor:
    return torch.tensor(values, dtype=F64)


def random_bodies(seed: int, n: int = 64, dtype: torch.dtype = F64) -> BodyInertia:
    """Valid bodies: mass 0.05-20 kg, radii of gyration 1-30 cm per principal axis, random axes, |c| <= 0.3 m."""
    g = torch.Generator().manual_seed(seed)
    like = torch.empty(0, dtype=dtype)
    mass = torch.exp(math.log(0.05) + math.log(400.0) * torch.rand(n, generator=g, dtype=dtype))
    radii = torch.exp(math.log(0.01) + math.log(30.0) * torch.rand(n, 3, generator=g, dtype=dtype))
    rot = random_rotation((n,), g, like)
    sigma_c = rot @ torch.diag_embed(mass[:, None] * radii**2) @ rot.transpose(-1, -2)
    inertia_c = inertia_from_second_moment(0.5 * (sigma_c + sigma_c.transpose(-1, -2)))
    com_b = 0.6 * torch.rand(n, 3, generator=g, dtype=dtype) - 0.3
    return BodyInertia(mass, com_b, inertia_c)


def box_body(mass=2.0, size=(0.1, 0.2, 0.3), com=(0.0, 0.0, 0.0)) -> BodyInertia:
    m = t([mass])
    return BodyInertia(m, t([com]), box_inertia_c(m, t([size])))


@pytest.mark.unit
def test_box_inertia_and_parallel_axis_by_hand():
    # 2 kg box 0.1 x 0.2 x 0.3 m: I_C = m/12 diag(b²+c², a²+c², a²+b²)
    #   = 2/12 * (0.04+0.09, 0.01+0.09, 0.01+0.04) = (0.0216667, 0.0166667, 0.0083333) kg·m²
    body = box_body(com=(0.1, 0.0, 0.0))
    expected_c = t([2 / 12 * 0.13, 2 / 12 * 0.10, 2 / 12 * 0.05])
    torch.testing.assert_close(body.inertia_c[0], torch.diag(expected_c))
    # CoM at c = (0.1, 0, 0): m(|c|²·1 − c cᵀ) = 2 * diag(0, 0.01, 0.01) = diag(0, 0.02, 0.02)
    # I_O = diag(0.0216667, 0.0366667, 0.0283333)
    inertia_o = body.inertia_o()
    torch.testing.assert_close(inertia_o[0], torch.diag(expected_c + t([0.0, 0.02, 0.02])))
    torch.testing.assert_close(inertia_o_to_c(body.mass, body.com_b, inertia_o), body.inertia_c)


@pytest.mark.unit
def test_pseudo_inertia_by_hand():
    # Same box at c = (0.1, 0, 0): Σ_O = Σ_C + m c cᵀ, Σ_C = m/12 diag(a², b², c²) = (0.0016667, 0.0066667, 0.015)
    # → Σ_O = diag(0.0216667, 0.0066667, 0.015); equivalently ½ tr(I_O) − I_O with tr(I_O) = 0.0866667.
    pseudo = box_body(com=(0.1, 0.0, 0.0)).pseudo_inertia()[0]
    expected = torch.zeros(4, 4, dtype=F64)
    expected[:3, :3] = torch.diag(t([2 / 12 * 0.01 + 0.02, 2 / 12 * 0.04, 2 / 12 * 0.09]))
    expected[0, 3] = expected[3, 0] = 0.2  # m c_x = 2 * 0.1 kg·m
    expected[3, 3] = 2.0
    torch.testing.assert_close(pseudo, expected)


@pytest.mark.unit
@settings(max_examples=15, deadline=None)
@given(seed=SEEDS)
def test_round_trips_exact_in_float64(seed):
    body = random_bodies(seed)
    back = body_from_pseudo_inertia(pseudo_inertia(body))
    for a, b in ((back.mass, body.mass), (back.com_b, body.com_b), (back.inertia_c, body.inertia_c)):
        assert (a - b).abs().max().item() < 1e-10
    io = inertia_c_to_o(body.mass, body.com_b, body.inertia_c)
    assert (inertia_o_to_c(body.mass, body.com_b, io) - body.inertia_c).abs().max().item() < 1e-10
    lc = body_from_log_cholesky(log_cholesky_from_body(body))
    for a, b in ((lc.mass, body.mass), (lc.com_b, body.com_b), (lc.inertia_c, body.inertia_c)):
        assert (a - b).abs().max().item() < 1e-10


@pytest.mark.unit
@settings(max_examples=15, deadline=None)
@given(seed=SEEDS, spread=st.floats(0.1, 4.0))
def test_every_log_cholesky_vector_is_a_physical_body(seed, spread):
    # Rucker & Wensing: any θ ∈ R¹⁰ is a body with J = U Uᵀ ≻ 0; the paper's U Uᵀ matches our (m, c, I_C) → J.
    g = torch.Generator().manual_seed(seed)
    theta = spread * (2 * torch.rand(64, 10, generator=g, dtype=F64) - 1)
    theta[:, 1:4] -= 2.0  # lengths around e^-2 ≈ 0.14 m
    body = body_from_log_cholesky(theta)
    # Exact arithmetic: J ≻ 0 always. In float64, beyond spread ≈ 2.5 the smallest principal second moment falls
    # below eps·tr(I_C) (Σ_C spans > 12 decades), where only the round-off-tolerant test is meaningful.
    assert bool(consistency_mask(body).all())
    if spread <= 2.5:
        assert bool(consistency_mask(body, rtol=0.0).all())
    paper = pseudo_inertia_from_log_cholesky(theta)
    torch.testing.assert_close(paper, pseudo_inertia(body), rtol=1e-9, atol=1e-12)
    if spread <= 1.0:  # the inverse map loses digits with conditioning (worst 1.7e-9 over 19k samples at 1.0)
        torch.testing.assert_close(log_cholesky_from_body(body), theta, rtol=1e-8, atol=1e-8)


@pytest.mark.unit
@settings(max_examples=20, deadline=None)
@given(seed=SEEDS)
def test_mask_is_positive_definiteness_of_pseudo_inertia(seed):
    # Random symmetric I_C whose principal moments may break the triangle inequality (margin kept away from 0).
    g = torch.Generator().manual_seed(seed)
    moments = torch.rand(256, 3, generator=g, dtype=F64) * 2.0 - 0.2
    margin = moments.sum(-1) - 2 * moments.max(-1).values
    keep = (margin.abs() > 1e-3) & (moments.min(-1).values.abs() > 1e-3)
    rot = random_rotation((256,), g, moments)
    inertia = rot @ torch.diag_embed(moments) @ rot.transpose(-1, -2)
    inertia = 0.5 * (inertia + inertia.transpose(-1, -2))
    body = BodyInertia(torch.ones(256, dtype=F64), 0.1 * torch.rand(256, 3, generator=g, dtype=F64), inertia)
    pd = torch.linalg.eigvalsh(pseudo_inertia(body)).min(-1).values > 0
    assert bool((consistency_mask(body)[keep] == pd[keep]).all())
    assert bool((consistency_mask(body)[keep] == (margin[keep] > 0)).all())


def _raises(body: BodyInertia, *fragments: str, **kwargs) -> None:
    with pytest.raises(ValueError) as info:
        check_consistency(body, **kwargs)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


@pytest.mark.unit
def test_invalid_bodies_are_rejected_with_reason():
    eye = torch.eye(3, dtype=F64)[None]
    zero = torch.zeros(1, 3, dtype=F64)
    _raises(BodyInertia(t([-1.0]), zero, 0.01 * eye), "mass -1 kg is not > 0", "index (0,)")
    # diag(1, 1, 3): 1 + 1 < 3 by 1 → no density can have these moments.
    _raises(BodyInertia(t([1.0]), zero, torch.diag(t([1.0, 1.0, 3.0]))[None]), "triangle inequality", "by 1 ")
    asym = t([[[1.0, 0.1, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]])
    _raises(BodyInertia(t([1.0]), zero, asym), "not symmetric", "0.1 kg·m²")
    _raises(BodyInertia(t([1.0]), zero, torch.diag(t([-1.0, 2.0, 2.0]))[None]), "principal moment -1", "not > 0")
    _raises(BodyInertia(t([float("nan")]), zero, eye), "NaN or inf")
    # Index and name of the offender in a (num_envs, num_bodies) batch.
    batch = box_body().expand(2, 3)
    mass = batch.mass.clone()
    mass[1, 2] = 0.0
    _raises(
        BodyInertia(mass, batch.com_b, batch.inertia_c), "index (1, 2) ('foot')", "1 of 6", names=["a", "b", "foot"]
    )


@pytest.mark.unit
def test_tolerance_semantics_on_a_flat_plate():
    # A thin plate: moments (1, 2, 3) meet the triangle inequality with equality → J ⪰ 0 but not ≻ 0.
    plate = BodyInertia(t([1.0]), torch.zeros(1, 3, dtype=F64), torch.diag(t([1.0, 2.0, 3.0]))[None])
    assert bool(consistency_mask(plate).all())  # accepted within the default round-off tolerance
    assert not bool(consistency_mask(plate, rtol=0.0).any())  # the strict test J ≻ 0 rejects it
    with pytest.raises(ValueError, match="J ≻ 0 strictly"):
        log_cholesky_from_body(plate)
    with pytest.raises(ValueError, match="rtol must be >= 0"):
        consistency_mask(plate, rtol=-1.0)


@pytest.mark.unit
def test_shape_and_pseudo_inertia_errors():
    with pytest.raises(ValueError, match="shapes disagree"):
        BodyInertia(t([1.0, 2.0]), torch.zeros(2, 3, dtype=F64), torch.zeros(3, 3, 3, dtype=F64))
    with pytest.raises(ValueError, match="must match"):
        BodyInertia(t([1.0]), torch.zeros(1, 3), torch.zeros(1, 3, 3, dtype=F64))
    pseudo = box_body().pseudo_inertia()
    pseudo[0, 3, 3] = 0.0
    with pytest.raises(ValueError, match=r"mass J\[3,3\] = 0 kg"):
        body_from_pseudo_inertia(pseudo)
    with pytest.raises(ValueError, match="sizes >= 0"):
        box_inertia_c(t([1.0]), t([[0.1, -0.1, 0.1]]))


@pytest.mark.unit
@settings(max_examples=10, deadline=None)
@given(seed=SEEDS)
def test_combined_body_adds_pseudo_inertias(seed):
    first, second = random_bodies(seed), random_bodies(seed + 1)
    both = combine_bodies(first, second)
    torch.testing.assert_close(pseudo_inertia(both), pseudo_inertia(first) + pseudo_inertia(second))
    assert bool(consistency_mask(both, rtol=0.0).all())
