"""The balance task's support-polygon reward kernel (tasks/balance/mdp.py) on plain tensors, and the G1's sole points
(robot facts) against the MJCF's foot colliders."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from realgap.envs.robots.g1 import G1, G1_FOOT_BODIES, G1_SOLE_POINTS_B, G1_SOLE_RADIUS
from realgap.tasks.balance.mdp import (
    distance_outside_hull,
    one_foot_lift_while_outside,
    signed_distance_to_hull,
    single_support_while_outside,
)

pytestmark = pytest.mark.unit


def _reference(point: np.ndarray, vertices: np.ndarray, signed: bool = False) -> float:
    """Distance from ``point`` to conv(vertices) by scipy's hull: the nearest hull edge's distance outside; inside 0,
    or with ``signed`` minus the distance to the nearest edge line."""
    from scipy.spatial import ConvexHull

    hull = ConvexHull(vertices)
    # hull.equations: n·x + b <= 0 inside, n outward unit normals
    if np.all(hull.equations[:, :2] @ point + hull.equations[:, 2] <= 1e-12):
        return float(np.max(hull.equations[:, :2] @ point + hull.equations[:, 2])) if signed else 0.0
    best = np.inf
    for a, b in hull.simplices:
        p, q = vertices[a], vertices[b]
        t = np.clip(np.dot(point - p, q - p) / np.dot(q - p, q - p), 0.0, 1.0)
        best = min(best, float(np.linalg.norm(point - (p + t * (q - p)))))
    return best


def test_unit_square_by_hand():
    square = torch.tensor([[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]]).repeat(4, 1, 1)
    points = torch.tensor([[0.5, 0.5], [2.0, 0.5], [2.0, 2.0], [-0.25, 1.0]])
    d = distance_outside_hull(points, square, torch.ones(4, 4, dtype=torch.bool))
    # inside: 0; beside the right edge: 1; beyond the corner (1, 1): sqrt(2); left of the edge x = 0: 0.25
    torch.testing.assert_close(d, torch.tensor([0.0, 1.0, 2.0**0.5, 0.25]))


def test_matches_scipy_hull_on_random_feet():
    gen = np.random.default_rng(0)
    num = 200
    vertices = gen.normal(size=(num, 8, 2)) * [0.1, 0.15]
    points = gen.normal(size=(num, 2)) * 0.2
    d = distance_outside_hull(torch.tensor(points), torch.tensor(vertices), torch.ones(num, 8, dtype=torch.bool))
    expected = np.array([_reference(points[e], vertices[e]) for e in range(num)])
    assert (expected == 0).sum() > 10 and (expected > 0).sum() > 100  # both cases drawn
    np.testing.assert_allclose(d.numpy(), expected, atol=1e-12)


def test_signed_distance_is_minus_the_margin_inside_and_the_distance_outside():
    square = torch.tensor([[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]]).repeat(4, 1, 1)
    points = torch.tensor([[0.5, 0.5], [0.9, 0.3], [2.0, 2.0], [0.0, 0.5]])
    s = signed_distance_to_hull(points, square, torch.ones(4, 4, dtype=torch.bool))
    # centre: 0.5 to every edge; near the right edge: 0.1; beyond the corner (1, 1): sqrt(2); on the edge x = 0: 0
    torch.testing.assert_close(s, torch.tensor([-0.5, -0.1, 2.0**0.5, 0.0]))
    gen = np.random.default_rng(1)
    num = 200
    vertices = gen.normal(size=(num, 8, 2)) * [0.1, 0.15]
    points = gen.normal(size=(num, 2)) * 0.1
    s = signed_distance_to_hull(torch.tensor(points), torch.tensor(vertices), torch.ones(num, 8, dtype=torch.bool))
    expected = np.array([_reference(points[e], vertices[e], signed=True) for e in range(num)])
    assert (expected < 0).sum() > 50 and (expected > 0).sum() > 50  # both cases drawn
    np.testing.assert_allclose(s.numpy(), expected, atol=1e-12)


def test_only_valid_vertices_support_and_none_means_all():
    # two feet: left square around y = +0.1, right around y = -0.1; the point sits between them at the origin
    left = [[-0.05, 0.07], [0.12, 0.07], [0.12, 0.13], [-0.05, 0.13]]
    right = [[x, -y] for x, y in left]
    vertices = torch.tensor([left + right] * 3)
    valid = torch.tensor([[True] * 8, [True] * 4 + [False] * 4, [False] * 8])
    d = distance_outside_hull(torch.zeros(3, 2), vertices, valid)
    # both feet down: the origin is inside their hull; the right foot lifted: 0.07 m to the left sole's edge y = 0.07;
    # no sole on the ground: measured against all of them (inside again) rather than returning inf
    torch.testing.assert_close(d, torch.tensor([0.0, 0.07, 0.0]))


def test_coincident_and_collinear_vertices_give_a_finite_exact_answer():
    vertices = torch.tensor([[[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [1.0, 0.0]]])  # a segment, points doubled
    d = distance_outside_hull(torch.tensor([[0.5, 0.3]]), vertices, torch.ones(1, 4, dtype=torch.bool))
    torch.testing.assert_close(d, torch.tensor([0.3]))


def test_sole_points_are_the_mjcf_foot_spheres():
    import mujoco

    model = mujoco.MjModel.from_xml_path(str(G1.mjcf_path()))
    for foot in G1_FOOT_BODIES:
        body = model.body(foot).id
        spheres = [
            g
            for g in range(model.ngeom)
            if model.geom_bodyid[g] == body and model.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE
        ]
        assert len(spheres) == len(G1_SOLE_POINTS_B), foot
        np.testing.assert_allclose(sorted(map(tuple, model.geom_pos[spheres])), sorted(G1_SOLE_POINTS_B), atol=1e-9)
        np.testing.assert_allclose(model.geom_size[spheres, 0], G1_SOLE_RADIUS)


def test_single_support_while_outside_pays_only_a_swing_when_the_capture_point_left_both_feet():
    # two feet of two sole points each, 0.2 m apart along y; the second foot's points are lifted in some envs
    foot = [[-0.05, 0.1], [0.12, 0.1], [-0.05, -0.1], [0.12, -0.1]]
    soles = torch.tensor([foot] * 5, dtype=torch.float64)
    down, lifted = [True, True, True, True], [True, True, False, False]
    on_ground = torch.tensor([down, lifted, lifted, [False] * 4, lifted])
    # inside both feet / behind the heels by 3 cm / behind by 3 cm / behind by 3 cm / behind by 1 cm (below threshold)
    xi = torch.tensor([[0.0, 0.0], [-0.08, 0.0], [-0.08, 0.0], [-0.08, 0.0], [-0.06, 0.0]], dtype=torch.float64)
    on_ground[1] = torch.tensor(down)  # env 1: both feet down, ξ outside: no swing, nothing paid
    r = single_support_while_outside(xi, soles, on_ground, num_feet=2, threshold=0.02)
    # env 2: one foot up, ξ 3 cm outside: paid; env 3: both feet up (a jump), env 4: ξ only 1 cm out: not paid
    torch.testing.assert_close(r, torch.tensor([0.0, 0.0, 1.0, 0.0, 0.0], dtype=torch.float64))
    # lifting the foot does not move the condition: the hull is that of all sole points, on the ground or not
    xi_inside_one_foot_hull_only = torch.tensor([[0.0, -0.05]], dtype=torch.float64)
    assert single_support_while_outside(xi_inside_one_foot_hull_only, soles[:1], on_ground[2:3], 2, 0.02) == 0.0


def test_one_foot_lift_pays_a_raised_foot_not_both_heels_when_the_capture_point_left_both_feet():
    foot = [[-0.05, 0.1], [0.12, 0.1], [-0.05, -0.1], [0.12, -0.1]]  # two points per foot, left then right
    soles = torch.tensor([foot] * 5, dtype=torch.float64)
    heights = torch.tensor(
        [
            [0.0, 0.0, 0.0, 0.0],  # both flat
            [0.02, 0.0, 0.0, 0.0],  # left heel raised 2 cm: left mean 1 cm
            [0.06, 0.06, 0.0, 0.0],  # left foot 6 cm up: capped at 4 cm
            [0.0, 0.03, 0.0, 0.03],  # rocked back on both heels: toes up alike
            [0.06, 0.06, 0.0, 0.0],
        ],
        dtype=torch.float64,
    )
    xi = torch.tensor([[-0.08, 0.0]] * 4 + [[0.0, 0.0]], dtype=torch.float64)  # 3 cm behind the heels; last inside
    r = one_foot_lift_while_outside(xi, soles, heights, num_feet=2, threshold=0.02, cap=0.04)
    torch.testing.assert_close(r, torch.tensor([0.0, 0.25, 1.0, 0.0, 0.0], dtype=torch.float64))
