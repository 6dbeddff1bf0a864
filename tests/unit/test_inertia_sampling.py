"""Unit tests of the consistent inertia samplers (realgap.envs.dr.inertia_sampling)."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from realgap.envs.dr.inertia import (
    BodyInertia,
    box_inertia_c,
    consistency_mask,
    inertia_from_second_moment,
    parallel_axis_term,
    pseudo_inertia,
)
from realgap.envs.dr.inertia_sampling import (
    InertiaRandomization,
    attach_payload,
    perturb_log_cholesky,
    random_rotation,
    sample_com_shift,
    sample_density_scale,
    sample_inertia,
    sample_log_cholesky,
    sample_payload,
    scale_density,
    shift_com,
)

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
    return BodyInertia(mass, 0.6 * torch.rand(n, 3, generator=g, dtype=dtype) - 0.3, inertia_c)


def box_body(mass=2.0, size=(0.1, 0.2, 0.3), com=(0.0, 0.0, 0.0)) -> BodyInertia:
    m = t([mass])
    return BodyInertia(m, t([com]), box_inertia_c(m, t([size])))


def span(lo: float, hi: float) -> st.SearchStrategy:
    """Ordered range [lo', hi'] inside [lo, hi]."""
    return st.tuples(st.floats(lo, hi), st.floats(lo, hi)).map(lambda r: (min(r), max(r)))


VEC3 = st.tuples(span(-0.5, 0.5), span(-0.5, 0.5), span(-0.5, 0.5))
RANDOMIZATIONS = st.builds(
    InertiaRandomization,
    mass_scale=span(0.05, 5.0),
    stretch=span(0.2, 5.0),
    shear=span(-2.0, 2.0),
    com_shift_m=VEC3,
    com_moved_fraction=st.floats(0.01, 1.0),
    payload_mass_kg=span(0.0, 30.0),
    payload_offset_m=VEC3,
    payload_size_m=st.tuples(span(0.0, 0.5), span(0.0, 0.5), span(0.0, 0.5)),
    payload_random_rotation=st.booleans(),
)


@pytest.mark.unit
@settings(max_examples=25, deadline=None)
@given(seed=SEEDS, rnd=RANDOMIZATIONS)
def test_every_sample_of_every_sampler_is_consistent(seed, rnd):
    body, g = random_bodies(seed), torch.Generator().manual_seed(seed)
    samples = [
        sample_inertia(body, rnd, g),
        sample_density_scale(body, rnd.mass_scale, g),
        sample_log_cholesky(body, g, rnd.mass_scale, rnd.stretch, rnd.shear, rnd.com_shift_m),
        sample_com_shift(body, rnd.com_shift_m, g, rnd.com_moved_fraction),
        sample_payload(body, rnd.payload_mass_kg, rnd.payload_offset_m, g, rnd.payload_size_m, True),
    ]
    for sample in samples:
        assert bool(consistency_mask(sample, rtol=0.0).all())  # strict: J ≻ 0, triangle inequality, m > 0


@pytest.mark.unit
def test_nominal_range_samples_are_consistent_in_float32():
    body = random_bodies(7, n=512, dtype=torch.float32)
    rnd = InertiaRandomization(
        mass_scale=(0.9, 1.1), stretch=(0.95, 1.05), shear=(-0.03, 0.03), com_shift_m=((-0.01, 0.01),) * 3
    )
    sample = sample_inertia(body, rnd, torch.Generator().manual_seed(0))
    assert sample.mass.dtype == torch.float32 and bool(consistency_mask(sample).all())


@pytest.mark.unit
@settings(max_examples=10, deadline=None)
@given(seed=SEEDS, scale=span(0.1, 10.0))
def test_density_scaling_keeps_radii_of_gyration(seed, scale):
    body = random_bodies(seed)
    scaled = sample_density_scale(body, scale, torch.Generator().manual_seed(seed))
    radii = torch.sqrt(torch.linalg.eigvalsh(body.inertia_c) / body.mass[:, None])  # sqrt(I_i / m) [m]
    radii_scaled = torch.sqrt(torch.linalg.eigvalsh(scaled.inertia_c) / scaled.mass[:, None])
    torch.testing.assert_close(radii_scaled, radii)
    torch.testing.assert_close(scaled.com_b, body.com_b)
    # The log-Cholesky α step alone is the same map.
    k = scaled.mass / body.mass
    ones, zeros = torch.ones_like(body.com_b), torch.zeros_like(body.com_b)
    via_alpha = perturb_log_cholesky(body, k, ones, zeros, zeros)
    torch.testing.assert_close(via_alpha.inertia_c, scaled.inertia_c)


@pytest.mark.unit
def test_com_shift_follows_parallel_axis_by_hand():
    # 2 kg box 0.1 x 0.2 x 0.3 m, CoM at the origin; Δ = (0.01, 0.02, 0) m: |Δ|² = 5e-4 m²,
    # m(|Δ|²·1 − ΔΔᵀ) = 2·[[4e-4, -2e-4, 0], [-2e-4, 1e-4, 0], [0, 0, 5e-4]] = [[8e-4, -4e-4, 0], [-4e-4, 2e-4, 0],
    # [0, 0, 1e-3]] kg·m².
    body, delta = box_body(), t([[0.01, 0.02, 0.0]])
    steiner = t([[[8e-4, -4e-4, 0.0], [-4e-4, 2e-4, 0.0], [0.0, 0.0, 1e-3]]])
    rigid = shift_com(body, delta)  # f = 1: the whole distribution moves, I_C unchanged
    torch.testing.assert_close(rigid.com_b, delta)
    torch.testing.assert_close(rigid.inertia_c, body.inertia_c)
    torch.testing.assert_close(rigid.inertia_o(), body.inertia_c + steiner)  # I_O' = I_C + m(|c'|²·1 − c'c'ᵀ)
    # Same rigid shift through the log-Cholesky t parameters.
    ones, zeros = torch.ones_like(delta), torch.zeros_like(delta)
    via_t = perturb_log_cholesky(body, t([1.0]), ones, zeros, delta)
    torch.testing.assert_close(via_t.inertia_c, rigid.inertia_c)
    torch.testing.assert_close(via_t.com_b, rigid.com_b)
    # f = 0.5: a 1 kg lump moves 2Δ; I_C' = I_C + m(1 − f)/f·(|Δ|²·1 − ΔΔᵀ) = I_C + steiner (m(1−f)/f = 2 kg).
    half = shift_com(body, delta, moved_fraction=0.5)
    torch.testing.assert_close(half.inertia_c, body.inertia_c + steiner)
    torch.testing.assert_close(half.mass, body.mass)
    # Cross-check as an explicit composite: remainder 1 kg (same I_C) + 1 kg point at 2Δ, about the new CoM Δ.
    composite = body.inertia_c + parallel_axis_term(t([1.0]), -delta) + parallel_axis_term(t([1.0]), delta)
    torch.testing.assert_close(half.inertia_c, composite)


@pytest.mark.unit
def test_payload_box_composite_by_hand():
    # Body A: 2 kg box 0.1 x 0.2 x 0.3 at c = 0. Payload B: 1 kg cube, 0.1 m edges, centred at (0, 0, 0.3).
    # Composite: m = 3 kg, c = (0, 0, 0.3·1/3) = (0, 0, 0.1) m.
    # A about c: I_CA + 2·diag(0.01, 0.01, 0) = (0.0416667, 0.0366667, 0.0083333)
    # B about c: 1/12·0.02·(1, 1, 1) + 1·diag(0.04, 0.04, 0) = (0.0416667, 0.0416667, 0.0016667)
    # Sum: diag(0.0833333, 0.0783333, 0.01) kg·m².
    body = box_body()
    out = attach_payload(body, t([1.0]), t([[0.0, 0.0, 0.3]]), t([[0.1, 0.1, 0.1]]))
    torch.testing.assert_close(out.mass, t([3.0]))
    torch.testing.assert_close(out.com_b, t([[0.0, 0.0, 0.1]]))
    torch.testing.assert_close(out.inertia_c, torch.diag(t([0.25 / 3, 0.235 / 3, 0.01]))[None])
    # A 0.1 x 0.3 x 0.1 payload turned 90° about z is a 0.3 x 0.1 x 0.1 box: same composite either way.
    rot_z = t([[[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]])
    turned = attach_payload(body, t([1.0]), t([[0.05, 0.0, 0.3]]), t([[0.1, 0.3, 0.1]]), rot_z)
    aligned = attach_payload(body, t([1.0]), t([[0.05, 0.0, 0.3]]), t([[0.3, 0.1, 0.1]]))
    torch.testing.assert_close(turned.inertia_c, aligned.inertia_c)
    # Degenerate ranges make the sampler reproduce the deterministic composite; J adds up.
    g = torch.Generator().manual_seed(0)
    zero_width = ((0.0, 0.0), (0.0, 0.0), (0.3, 0.3))
    sampled = sample_payload(body, (1.0, 1.0), zero_width, g, ((0.1, 0.1),) * 3)
    torch.testing.assert_close(sampled.inertia_c, out.inertia_c)
    payload_j = 1.0 * torch.outer(t([0.0, 0.0, 0.3, 1.0]), t([0.0, 0.0, 0.3, 1.0]))
    payload_j[:3, :3] += torch.diag(t([1 / 12 * 0.01] * 3))  # Σ_C of the cube: m a²/12 per axis
    torch.testing.assert_close(pseudo_inertia(out)[0], pseudo_inertia(body)[0] + payload_j)


@pytest.mark.unit
def test_stretch_is_a_longer_box():
    # Stretching a 2 kg 0.1 x 0.2 x 0.3 box by 2 along x (same mass) gives the 0.2 x 0.2 x 0.3 box.
    body, zeros = box_body(), torch.zeros(1, 3, dtype=F64)
    out = perturb_log_cholesky(body, t([1.0]), t([[2.0, 1.0, 1.0]]), zeros, zeros)
    torch.testing.assert_close(out.inertia_c, box_inertia_c(t([2.0]), t([[0.2, 0.2, 0.3]])))
    same = perturb_log_cholesky(body, t([1.0]), torch.ones(1, 3, dtype=F64), zeros, zeros)
    torch.testing.assert_close(same.inertia_c, body.inertia_c)


@pytest.mark.unit
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mass_scale": (0.0, 1.2)}, "mass_scale: lo 0 must be > 0"),
        ({"mass_scale": (-0.2, 1.2)}, "mass_scale: lo -0.2 must be > 0"),
        ({"mass_scale": (1.2, 0.8)}, "mass_scale: lo 1.2 > hi 0.8"),
        ({"stretch": (0.0, 1.0)}, "stretch: lo 0 must be > 0"),
        ({"payload_mass_kg": (-0.5, 1.0)}, "payload_mass_kg: lo -0.5 kg must be >= 0"),
        ({"payload_size_m": ((0.0, 0.1), (-0.1, 0.1), (0.0, 0.1))}, "payload_size_m.y: lo -0.1 m must be >= 0"),
        ({"com_shift_m": ((-0.02, 0.02),) * 2}, "expected three ranges"),
        ({"com_shift_m": ((-0.02, float("inf")),) * 3}, "must be finite"),
        ({"com_moved_fraction": 0.0}, "com_moved_fraction: must be a number in (0, 1]"),
        ({"com_moved_fraction": 1.5}, "in (0, 1]"),
        ({"shear": (True, 1.0)}, "must be numbers"),
    ],
)
def test_impossible_ranges_rejected_before_sampling(kwargs, message):
    with pytest.raises(ValueError) as info:
        InertiaRandomization(**kwargs)
    assert message in str(info.value), str(info.value)


@pytest.mark.unit
def test_samplers_validate_before_drawing_and_use_only_their_generator():
    body, g = box_body().expand(4, 2), torch.Generator().manual_seed(3)
    state, global_state = g.get_state(), torch.random.get_rng_state()
    with pytest.raises(ValueError, match="must be > 0"):
        sample_density_scale(body, (-0.1, 1.0), g)
    with pytest.raises(ValueError, match=">= 0"):
        sample_payload(body, (-1.0, 1.0), ((0.0, 0.0),) * 3, g)
    bad = BodyInertia(body.mass, body.com_b, torch.diag(t([1.0, 1.0, 3.0])).expand(4, 2, 3, 3))
    with pytest.raises(ValueError, match="nominal body at index"):
        sample_inertia(bad, InertiaRandomization(), g)
    with pytest.raises(ValueError, match="density scale must be > 0"):
        scale_density(body, torch.zeros(4, 2, dtype=F64))
    assert torch.equal(g.get_state(), state)  # nothing drawn before the errors
    rnd = InertiaRandomization(mass_scale=(0.8, 1.2), com_shift_m=((-0.02, 0.02),) * 3, payload_mass_kg=(0, 1))
    first = sample_inertia(body, rnd, torch.Generator().manual_seed(11))
    second = sample_inertia(body, rnd, torch.Generator().manual_seed(11))
    assert torch.equal(first.inertia_c, second.inertia_c) and first.mass.shape == (4, 2)
    assert not torch.equal(first.mass[0], first.mass[1])  # independent draws per env
    assert torch.equal(torch.random.get_rng_state(), global_state)  # global RNG untouched


@pytest.mark.unit
def test_boundary_nominal_plate_density_only_vs_stretch():
    # A thin plate (moments 1, 2, 3 kg·m²: J ⪰ 0, not ≻ 0) is a legal nominal for density scaling, CoM shift and
    # payload (no Cholesky factor needed); stretch/shear need J ≻ 0 and say so.
    plate = BodyInertia(t([1.0]), torch.zeros(1, 3, dtype=F64), torch.diag(t([1.0, 2.0, 3.0]))[None])
    rnd = InertiaRandomization(mass_scale=(0.5, 2.0), com_shift_m=((-0.1, 0.1),) * 3, payload_mass_kg=(0.0, 1.0))
    sample = sample_inertia(plate.expand(16), rnd, torch.Generator().manual_seed(0))
    assert bool(consistency_mask(sample).all())
    with pytest.raises(ValueError, match="J ≻ 0 strictly"):
        sample_inertia(plate, InertiaRandomization(stretch=(0.9, 1.1)), torch.Generator().manual_seed(0))
