"""MDP terms of the balance task that Isaac Lab does not ship: the horizontal base-velocity penalty, the deviation from
the action's nominal pose, three capture-point rewards (offset from the feet; distance outside the support polygon;
margin inside it) and a reward for the step when the ankles cannot hold the capture point. The push curriculum and the
task metrics live in :mod:`realgap.tasks.balance.curriculum` and are re-exported here, so the task's MDP table names
every term of its own through this one module.

The push is :class:`realgap.envs.dr.push.push_robot`; everything else in the task's MDP table comes from
``isaaclab.envs.mdp``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from isaaclab.managers import SceneEntityCfg
from isaaclab.utils.math import quat_apply

from realgap.envs.robots.g1 import G1_FOOT_BODIES, G1_SOLE_POINTS_B, G1_SOLE_RADIUS
from realgap.envs.sim.constants import device_constant
from realgap.tasks.balance.curriculum import balance_metrics as balance_metrics
from realgap.tasks.balance.curriculum import push_curriculum as push_curriculum

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv


def base_lin_vel_xy_l2(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg = SceneEntityCfg("robot")) -> torch.Tensor:
    """Squared horizontal velocity of the root in the world frame, (m/s)².

    A push is a horizontal velocity change of the root, and standing balance is the work of bringing it back to zero
    before the capture point leaves the feet: this term pays that work at every step after the push, where the fall
    it prevents is paid only a second or more later.
    """
    asset = env.scene[asset_cfg.name]
    return torch.sum(torch.square(asset.data.root_lin_vel_w.torch[:, :2]), dim=1)


def nominal_pose_deviation_l1(
    env: ManagerBasedRLEnv, action_name: str = "joint_pos", asset_cfg: SceneEntityCfg = SceneEntityCfg("robot")
) -> torch.Tensor:
    """Sum of |q - q_nominal| over the joints of the joint-position action ``action_name``, rad, where q_nominal is
    that action's offset: the pose the servos hold at a zero action.

    With the task's default offset (the robot's stance) this is Isaac Lab's ``joint_deviation_l1``; with another
    nominal pose (``env.actions.joint_pos.offset``, e.g. the crouch lever) it keeps pointing at the pose the policy
    acts around instead of the pose the robot spawns in.
    """
    term = env.action_manager.get_term(action_name)
    q = env.scene[asset_cfg.name].data.joint_pos.torch[:, term._joint_ids]
    return torch.sum(torch.abs(q - term._offset), dim=1)


def capture_point_w(env: ManagerBasedRLEnv, asset) -> torch.Tensor:
    """Horizontal capture point ``ξ = c + ċ / ω`` of the whole body in the world frame, m; ``c`` the centre of mass,
    ``ω = sqrt(g / c_z)`` (the linear inverted pendulum, the simulation's own g).

    Shape: (E, 2).
    """
    mass = asset.data.body_mass.torch  # (E, B)
    weights = (mass / mass.sum(dim=1, keepdim=True)).unsqueeze(-1)
    com = torch.sum(asset.data.body_com_pos_w.torch * weights, dim=1)
    com_vel = torch.sum(asset.data.body_com_lin_vel_w.torch * weights, dim=1)
    gravity = -float(env.cfg.sim.gravity[2])
    omega = torch.sqrt(gravity / com[:, 2].clamp(min=0.1))
    return com[:, :2] + com_vel[:, :2] / omega[:, None]


def heading_w(asset) -> torch.Tensor:
    """The pelvis' heading: its x axis projected on the ground, unit length, world frame. Shape: (E, 2)."""
    quat = asset.data.root_quat_w.torch
    x_axis = device_constant((1.0, 0.0, 0.0), quat.dtype, quat.device).expand(quat.shape[0], 3)
    heading = quat_apply(quat, x_axis)[:, :2]
    return heading / heading.norm(dim=1, keepdim=True).clamp(min=1e-6)


def capture_point_offset_l2(
    env: ManagerBasedRLEnv,
    asset_cfg: SceneEntityCfg = SceneEntityCfg("robot"),
    feet_cfg: SceneEntityCfg = SceneEntityCfg("robot", body_names=[".*_ankle_roll_link"]),
    forward_offset: float = 0.0,
) -> torch.Tensor:
    """Squared horizontal distance from the capture point to the middle of the feet, or to ``forward_offset`` m ahead of
    it along the pelvis' heading, m².

    The capture point ``ξ = c + ċ / ω`` (``c`` the whole-body centre of mass, ``ω = sqrt(g / c_z)``, the linear
    inverted pendulum) is where the robot must put its centre of pressure to come to rest. A push moves it by
    ``Δv / ω`` at once; it must come back over the feet before it leaves them, either by the CoM's own motion (ankle
    and hip strategies) or by moving the feet under it (a step). This term pays both from the step of the push on,
    where the fall it prevents is paid a second later.

    The G1's sole reaches 5 cm behind the ankle and 12 cm ahead of it, so with ξ over the ankles a backward push has the
    smaller margin; a positive ``forward_offset`` asks for a stance leaning that far forward (the ankle strategy's
    capture region shifts with it, from the backward side's ~0.05 / ω m/s toward the forward side's). The heading is the
    pelvis x axis projected on the ground.
    """
    asset = env.scene[asset_cfg.name]
    feet = asset.data.body_link_pos_w.torch[:, feet_cfg.body_ids, :2].mean(dim=1)
    if forward_offset:
        feet = feet + forward_offset * heading_w(asset)
    return torch.sum(torch.square(capture_point_w(env, asset) - feet), dim=1)


def signed_distance_to_hull(point: torch.Tensor, vertices: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Signed distance from each env's point to the convex hull of its valid vertices in the plane, m: the distance to
    the hull outside it, minus the distance to the nearest hull edge inside it (the margin).

    Exact, without building the hull: ``s(p) = max over unit u of (u·p − h(u))`` with the support function
    ``h(u) = max over valid v of u·v``. Outside, the maximum is the distance, attained at ``u = (p − q) / |p − q|``
    (q the nearest hull point): the outward normal of the hull edge nearest p, or the direction from the nearest vertex
    to p; every other unit vector gives a lower bound, since ``u·p − h(u) ≤ u·(p − q) ≤ |p − q|``. Inside, a disc of
    radius m (the margin) around p lies in the hull, so ``u·p − h(u) ≤ −m`` for every u, with equality at the outward
    normal of the nearest edge. Both maximisers are among the candidates {±normal of every vertex pair} ∪
    {(p − v) / |p − v|}. An env with no valid vertex (both feet off the ground) is measured against all its vertices.

    Shape: point (E, 2), vertices (E, V, 2), valid (E, V) bool → (E,).
    """
    i, j = torch.triu_indices(vertices.shape[1], vertices.shape[1], 1, device=vertices.device)
    edge = vertices[:, j] - vertices[:, i]
    normal = torch.stack((edge[..., 1], -edge[..., 0]), dim=-1)
    to_point = point[:, None, :] - vertices
    u = torch.cat((normal, -normal, to_point), dim=1)
    u = u / u.norm(dim=-1, keepdim=True).clamp(min=1e-12)  # a zero candidate (coincident points) gives <= 0: harmless
    valid = valid | ~valid.any(dim=1, keepdim=True)
    support = torch.einsum("ekd,evd->ekv", u, vertices).masked_fill(~valid[:, None, :], -torch.inf).amax(dim=-1)
    gap = torch.einsum("ekd,ed->ek", u, point) - support
    return gap.amax(dim=1)


def distance_outside_hull(point: torch.Tensor, vertices: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Distance from each env's point to the convex hull of its valid vertices in the plane, 0 inside, m
    (:func:`signed_distance_to_hull` clamped at 0). Shape: point (E, 2), vertices (E, V, 2), valid (E, V) → (E,)."""
    return signed_distance_to_hull(point, vertices, valid).clamp(min=0.0)


def _sole_points_3d(
    asset, feet_cfg: SceneEntityCfg, sole_points_b: tuple[tuple[float, float, float], ...]
) -> torch.Tensor:
    """The centres of the sole points of every foot in the world, feet first. Shape: (E, F·S, 3)."""
    pos_w = asset.data.body_link_pos_w.torch[:, feet_cfg.body_ids]  # (E, F, 3)
    quat_w = asset.data.body_link_quat_w.torch[:, feet_cfg.body_ids]  # (E, F, 4)
    sole_b = device_constant(sole_points_b, pos_w.dtype, pos_w.device)  # (S, 3)
    shape = (pos_w.shape[0], pos_w.shape[1], sole_b.shape[0])
    sole_w = pos_w[:, :, None, :] + quat_apply(quat_w[:, :, None, :].expand(*shape, 4), sole_b.expand(*shape, 3))
    return sole_w.reshape(shape[0], shape[1] * shape[2], 3)


def _sole_points_w(
    asset,
    feet_cfg: SceneEntityCfg,
    sole_points_b: tuple[tuple[float, float, float], ...],
    sole_radius: float,
    contact_tolerance: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The sole points in the world plane and whether each is on the ground (its sphere's centre within
    ``contact_tolerance`` of touching z = 0, the task's flat ground). Shape: (E, F·S, 2), (E, F·S)."""
    sole_w = _sole_points_3d(asset, feet_cfg, sole_points_b)
    return sole_w[..., :2], sole_w[..., 2] < sole_radius + contact_tolerance


def capture_point_outside_support(
    env: ManagerBasedRLEnv,
    asset_cfg: SceneEntityCfg = SceneEntityCfg("robot"),
    feet_cfg: SceneEntityCfg = SceneEntityCfg("robot", body_names=list(G1_FOOT_BODIES)),
    sole_points_b: tuple[tuple[float, float, float], ...] = G1_SOLE_POINTS_B,
    sole_radius: float = G1_SOLE_RADIUS,
    contact_tolerance: float = 0.01,
) -> torch.Tensor:
    """Horizontal distance of the capture point outside the support polygon, m (0 while it lies inside).

    The robot can come to rest without a step as long as its capture point ξ (see :func:`capture_point_offset_l2`)
    lies in the support polygon, the convex hull of the sole points on the ground; outside, only a step that moves
    the polygon under ξ saves it. Unlike the offset from the middle of the feet, this term is zero for any ξ the
    ankles can hold, and a step toward ξ is what takes it back to zero: it pays the step strategy, not only the ankle
    and hip ones. A sole point (``sole_points_b`` in each foot's frame, spheres of ``sole_radius``) is on the ground
    when its centre lies within ``contact_tolerance`` of touching z = 0 (the task's flat ground). A swing foot leaves
    the polygon, so the step itself costs while the foot is in the air.
    """
    asset = env.scene[asset_cfg.name]
    soles, on_ground = _sole_points_w(asset, feet_cfg, sole_points_b, sole_radius, contact_tolerance)
    return distance_outside_hull(capture_point_w(env, asset), soles, on_ground)


def capture_point_margin(
    env: ManagerBasedRLEnv,
    asset_cfg: SceneEntityCfg = SceneEntityCfg("robot"),
    feet_cfg: SceneEntityCfg = SceneEntityCfg("robot", body_names=list(G1_FOOT_BODIES)),
    sole_points_b: tuple[tuple[float, float, float], ...] = G1_SOLE_POINTS_B,
    sole_radius: float = G1_SOLE_RADIUS,
    contact_tolerance: float = 0.01,
    cap: float = 0.15,
) -> torch.Tensor:
    """Margin of the capture point inside the support polygon, m: its distance to the nearest polygon edge while
    inside (at most ``cap``), minus its distance outside (a reward, positive weight).

    A push of Δv in any heading moves ξ by Δv / ω; the robot survives it with its ankles alone while the margin in
    that heading exceeds Δv / ω, so the smallest margin is the largest push it can take from its worst side. Standing
    on the G1's parallel feet that is the heel or toe line, at most 8.5 cm (half the 17 cm sole; 0.33 m/s at
    ω ≈ 3.8 s⁻¹): every push above it, forward or backward, needs hip motion or a step. This term pays for a larger
    one wherever it comes from: ξ kept in the middle of the feet, and feet placed so that the polygon is deep in every
    direction (a step, or a staggered stance taken before the push comes). ``cap`` bounds what a wide stance can
    earn. Sole points and contact as in :func:`capture_point_outside_support`.
    """
    asset = env.scene[asset_cfg.name]
    soles, on_ground = _sole_points_w(asset, feet_cfg, sole_points_b, sole_radius, contact_tolerance)
    return (-signed_distance_to_hull(capture_point_w(env, asset), soles, on_ground)).clamp(max=cap)


def single_support_while_outside(
    xi: torch.Tensor, soles: torch.Tensor, on_ground: torch.Tensor, num_feet: int, threshold: float
) -> torch.Tensor:
    """1 where exactly one foot has a sole point on the ground while the capture point lies more than ``threshold``
    outside the hull of all sole points of both feet (on the ground or not), else 0.

    The hull of all sole points does not shrink when a foot lifts, so lifting a foot does not itself switch the
    condition on; a swing foot carried toward ξ extends it, so the condition ends while the foot is still in the
    air. Shape: xi (E, 2), soles (E, F·S, 2), on_ground (E, F·S) bool → (E,).
    """
    outside = distance_outside_hull(xi, soles, torch.ones_like(on_ground)) > threshold
    feet_down = on_ground.reshape(on_ground.shape[0], num_feet, -1).any(dim=-1).sum(dim=-1)
    return (outside & (feet_down == 1)).to(xi.dtype)


def one_foot_lift_while_outside(
    xi: torch.Tensor, soles: torch.Tensor, heights: torch.Tensor, num_feet: int, threshold: float, cap: float
) -> torch.Tensor:
    """How far one foot is lifted above the other while the capture point lies more than ``threshold`` outside the
    hull of all sole points of both feet: ``min(|c_left − c_right|, cap) / cap`` with ``c`` a foot's mean sole-point
    height above the ground, else 0.

    Dense where :func:`single_support_while_outside` is not: a heel raised (the toe-off that starts a step) earns part
    of it, a foot off the ground all of it, and rocking back on both heels (the fall itself) nothing, since both feet
    rise alike. Shape: xi (E, 2), soles (E, F·S, 2), heights (E, F·S) → (E,); two feet.
    """
    outside = distance_outside_hull(xi, soles, torch.ones_like(heights, dtype=torch.bool)) > threshold
    per_foot = heights.reshape(heights.shape[0], num_feet, -1).clamp(min=0.0).mean(dim=-1)
    lift = (per_foot[:, 0] - per_foot[:, 1]).abs().clamp(max=cap) / cap
    return torch.where(outside, lift, torch.zeros_like(lift))


def step_when_needed(
    env: ManagerBasedRLEnv,
    asset_cfg: SceneEntityCfg = SceneEntityCfg("robot"),
    feet_cfg: SceneEntityCfg = SceneEntityCfg("robot", body_names=list(G1_FOOT_BODIES)),
    sole_points_b: tuple[tuple[float, float, float], ...] = G1_SOLE_POINTS_B,
    sole_radius: float = G1_SOLE_RADIUS,
    contact_tolerance: float = 0.01,
    threshold: float = 0.02,
) -> torch.Tensor:
    """Single support while a step is needed (a reward, positive weight): 1 while one foot is in the air and the capture
    point lies more than ``threshold`` outside the feet (:func:`single_support_while_outside`), else 0.

    The step strategy has a valley in front of it: lifting a foot shrinks the support polygon to the other sole, so
    every term that pays ξ inside the polygon (:func:`capture_point_outside_support`) costs more while the foot swings,
    and the fall the step prevents is paid only a second later. This term pays the swing itself, and only when the
    ankles cannot hold ξ: after the pushes that knock the policy over (in Play, sagittal pushes above ~0.3 m/s, with a
    heel 5 cm behind the ankle). Sole points and contact as in :func:`capture_point_outside_support`.
    """
    asset = env.scene[asset_cfg.name]
    soles, on_ground = _sole_points_w(asset, feet_cfg, sole_points_b, sole_radius, contact_tolerance)
    return single_support_while_outside(
        capture_point_w(env, asset), soles, on_ground, len(feet_cfg.body_ids), threshold
    )


def lift_when_needed(
    env: ManagerBasedRLEnv,
    asset_cfg: SceneEntityCfg = SceneEntityCfg("robot"),
    feet_cfg: SceneEntityCfg = SceneEntityCfg("robot", body_names=list(G1_FOOT_BODIES)),
    sole_points_b: tuple[tuple[float, float, float], ...] = G1_SOLE_POINTS_B,
    sole_radius: float = G1_SOLE_RADIUS,
    threshold: float = 0.02,
    cap: float = 0.04,
) -> torch.Tensor:
    """One foot lifted above the other while a step is needed (a reward, positive weight), in [0, 1]
    (:func:`one_foot_lift_while_outside`): the dense form of :func:`step_when_needed`, which paid nothing in a run
    where no foot ever left the ground (B20). A sole point's height is its sphere's lowest point above z = 0."""
    asset = env.scene[asset_cfg.name]
    soles = _sole_points_3d(asset, feet_cfg, sole_points_b)
    return one_foot_lift_while_outside(
        capture_point_w(env, asset), soles[..., :2], soles[..., 2] - sole_radius, len(feet_cfg.body_ids), threshold, cap
    )
