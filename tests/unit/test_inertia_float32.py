"""Bodies consistent where they are used: a verdict for any input, bounded profile ranges, the float32 body checked.

(a) :func:`consistency_verdict` answers for NaN, inf, entries at the float limit and denormals (never a raw
linear-algebra error); (b) inertial ranges of a DR profile are bounded at load; (c) :func:`cast_consistent` hands
the simulator float32 numbers that are themselves consistent, judged exactly (in float64).
"""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from realgap.envs.dr.inertia import BodyInertia, check_consistency, consistency_mask, consistency_verdict, default_rtol
from realgap.envs.dr.inertia_sampling import cast_consistent, random_rotation
from realgap.envs.dr.profile import INERTIA_BOUNDS, MAX_LUMP_TRAVEL_M, load_dr_profile, parse_dr_profile

pytestmark = pytest.mark.unit
F32, F64 = torch.float32, torch.float64
EPS32 = torch.finfo(F32).eps


def _eye(scale: float, dtype=F64) -> torch.Tensor:
    return torch.eye(3, dtype=dtype) * scale


def _body(inertia, mass=1.0, dtype=F64) -> BodyInertia:
    inertia = torch.as_tensor(inertia, dtype=dtype).reshape(-1, 3, 3)
    n = inertia.shape[0]
    return BodyInertia(torch.full((n,), mass, dtype=dtype), torch.zeros(n, 3, dtype=dtype), inertia)


# -- (a) a verdict for any input ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [F32, F64])
def test_entries_at_the_float_limit_get_a_verdict(dtype):
    big = torch.finfo(dtype).max
    # diag(max, max, max): a sphere of absurd size, but consistent (1 + 1 > 1); eigh on it raised LinAlgError before
    verdict = consistency_verdict(_body(_eye(big, dtype), dtype=dtype))
    assert verdict.consistent and verdict.reason == ""
    # [[max, max], [max, max]] block: moments (0, 2·max, max) in exact arithmetic → triangle 0 + max < 2·max violated
    bad = torch.tensor([[big, big, 0.0], [big, big, 0.0], [0.0, 0.0, big]], dtype=dtype)
    verdict = consistency_verdict(_body(bad, dtype=dtype))
    assert not verdict.consistent and "triangle inequality" in verdict.reason
    with pytest.raises(ValueError, match="triangle inequality"):
        check_consistency(_body(bad, dtype=dtype))
    tiny = torch.finfo(dtype).tiny / 8  # denormal
    assert consistency_verdict(_body(_eye(tiny, dtype), dtype=dtype)).consistent


def test_non_finite_inputs_get_a_verdict_naming_them():
    for value in (math.nan, math.inf, -math.inf):
        verdict = consistency_verdict(_body(_eye(value)))
        assert not verdict.consistent and "NaN or inf" in verdict.reason
    assert not consistency_verdict(_body(_eye(1.0), mass=math.nan)).consistent


FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=32)


@settings(max_examples=200, deadline=None)
@given(entries=st.lists(FLOATS, min_size=13, max_size=13), dtype=st.sampled_from([F32, F64]))
def test_any_float_input_gets_a_verdict_never_an_error(entries, dtype):
    values = torch.tensor(entries, dtype=dtype)
    body = BodyInertia(values[0:1], values[1:4][None], values[4:13].reshape(1, 3, 3))
    verdict = consistency_verdict(body)
    assert verdict.consistent == bool(consistency_mask(body).all())
    assert verdict.consistent or "is not physically consistent" in verdict.reason


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), exponent=st.integers(-1000, 1000))
def test_verdict_does_not_depend_on_the_unit(seed, exponent):
    # every condition is homogeneous in I_C: scaling by a power of two (exact in floating point) changes nothing
    g = torch.Generator().manual_seed(seed)
    inertia = torch.randn(16, 3, 3, generator=g, dtype=F64)
    inertia = inertia @ inertia.transpose(-1, -2) + torch.diag_embed(torch.randn(16, 3, generator=g, dtype=F64))
    body = _body(inertia)
    scaled = _body(inertia * 2.0**exponent)
    assert torch.equal(consistency_mask(body), consistency_mask(scaled))


# -- (b) profile ranges bounded at load ------------------------------------------------------------------------------
def _profile_with(**group):
    data = load_dr_profile("nominal").to_dict()
    data["link_inertia"] = [{"asset": "robot", "bodies": ".*", **group}]
    return parse_dr_profile(data, "test.yaml")


@pytest.mark.parametrize(
    ("group", "message"),
    [
        ({"mass_scale": [0.05, 1.0]}, r"link_inertia\[0\]: mass_scale: \[0.05, 1\] is outside the physical bound"),
        ({"stretch": [1.0, 5.0]}, r"stretch: \[1, 5\] is outside the physical bound \[0.25, 4\]"),
        ({"shear": [-1.5, 0.0]}, r"shear: \[-1.5, 0\] is outside the physical bound \[-1, 1\]"),
        ({"com_shift_m": {"y": [-0.6, 0.1]}}, r"com_shift_m.y: \[-0.6, 0.1\] m is outside the physical bound \[-0.5"),
        ({"payload_mass_kg": [0.0, 80.0]}, r"payload_mass_kg: \[0, 80\] kg is outside the physical bound \[0, 50\] kg"),
        ({"payload_size_m": {"z": [0.0, 1.5]}}, r"payload_size_m.z: \[0, 1.5\] m is outside"),
        # 1 cm along x by moving 0.3 % of the mass: the lump travels 0.01 / 0.003 = 3.33 m
        ({"com_shift_m": {"x": [-0.01, 0.01]}, "com_moved_fraction": 0.003}, r"the moved lump travels up to 3.33 m"),
    ],
)
def test_out_of_bound_inertial_ranges_fail_at_load_naming_the_range(group, message):
    with pytest.raises(ValueError, match=message):
        _profile_with(**group)


def test_ranges_at_the_bounds_load():
    lo, hi = INERTIA_BOUNDS["com_shift_m"]
    profile = _profile_with(
        mass_scale=list(INERTIA_BOUNDS["mass_scale"]),
        stretch=list(INERTIA_BOUNDS["stretch"]),
        com_shift_m={"x": [lo, hi]},
        com_moved_fraction=hi / MAX_LUMP_TRAVEL_M,
    )
    assert profile.link_inertia[0].com_shift_m[0] == (lo, hi)


# -- (c) the float32 body actually written ---------------------------------------------------------------------------
def _rods(n: int, seed: int, thinness: float) -> BodyInertia:
    """Rod-like bodies in random orientations: principal moments (thinness·X, X, X), X = 0.01 kg·m² (float64)."""
    g = torch.Generator().manual_seed(seed)
    rot = random_rotation((n,), g, torch.empty(0, dtype=F64))
    moments = torch.tensor([thinness, 1.0, 1.0], dtype=F64) * 0.01
    inertia = rot @ torch.diag(moments) @ rot.transpose(-1, -2)
    return _body(0.5 * (inertia + inertia.transpose(-1, -2)), mass=0.1)


def _strictly_consistent_as_stored(body: BodyInertia) -> torch.Tensor:
    exact = BodyInertia(*(t.to(F64) for t in (body.mass, body.com_b, body.inertia_c)))
    return consistency_mask(exact, default_rtol(F64))


def test_the_cast_can_break_a_body_and_cast_consistent_repairs_it_by_round_off():
    rods = _rods(64, seed=1, thinness=1e-12)
    assert bool(consistency_mask(rods).all())  # consistent in float64
    plain = BodyInertia(rods.mass.float(), rods.com_b.float(), rods.inertia_c.float())
    assert not bool(_strictly_consistent_as_stored(plain).all())  # the float32 numbers are not, for some
    written = cast_consistent(rods)
    assert written.inertia_c.dtype == F32 and bool(_strictly_consistent_as_stored(written).all())
    change = (written.inertia_c.double() - plain.inertia_c.double()).abs().flatten(-2).amax(-1)
    trace = plain.inertia_c.double().diagonal(dim1=-2, dim2=-1).sum(-1)
    assert bool((change <= 64 * EPS32 * trace).all())  # the repair is float32 round-off, not a new body
    assert torch.equal(written.mass, plain.mass) and torch.equal(written.com_b, plain.com_b)


def test_bodies_that_survive_the_cast_are_written_unchanged():
    boxes = _rods(32, seed=2, thinness=0.5)
    written = cast_consistent(boxes)
    assert torch.equal(written.inertia_c, boxes.inertia_c.float())


def test_inconsistent_or_unrepresentable_bodies_are_refused():
    with pytest.raises(ValueError, match="triangle inequality"):
        cast_consistent(_body(torch.diag(torch.tensor([1.0, 1.0, 3.0]))))
    with pytest.raises(ValueError, match=r"as written in torch.float32.*mass 0 kg is not > 0"):
        cast_consistent(_body(_eye(1e-60), mass=1e-50))  # fine in float64, zero in float32
    with pytest.raises(ValueError, match=r"as written in torch.float32.*NaN or inf"):
        cast_consistent(_body(_eye(1e39)))  # overflows float32


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), log_thinness=st.floats(-16.0, 0.0))
def test_every_written_float32_body_is_consistent(seed, log_thinness):
    rods = _rods(32, seed, 10.0**log_thinness)
    written = cast_consistent(rods)
    assert bool(_strictly_consistent_as_stored(written).all())
