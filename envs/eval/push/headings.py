"""Which of the task's pushes knock a balance policy over, by heading in the robot's frame and by magnitude
(``scripts/push_headings.py``).

The task's Play variant runs as evaluated (its pushes of random heading every 3-5 s); every push is logged with its
magnitude, its heading relative to the robot's yaw at that moment (0 = a push forward, 90° = to the robot's left) and
its outcome: *fell* if the episode ended in a fall before the env's next push, *held* if the next push or the
time-out came first. Pushes whose outcome is still open when the rollout stops are not counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from realgap.envs.eval.robustness.sweep import wilson_interval
from realgap.envs.robots.g1 import G1_ACTION_SCALE, G1_FOOT_BODIES

DIRECTIONS = ("forward", "left", "backward", "right")
"""Quadrants of the push heading in the robot's frame, centred on 0°, 90°, 180° and −90°."""


@dataclass(frozen=True)
class PushRecord:
    """One push: its magnitude (m/s), heading in the robot's frame (rad, in (−π, π]), whether a fall followed it, and
    the robot's yaw in the world when it came (rad)."""

    magnitude: float
    heading: float
    fell: bool
    yaw: float = 0.0


def direction(heading: float) -> str:
    """The quadrant of a heading in the robot's frame (rad): forward |h| < 45°, left 45°-135°, right −135°-−45°,
    backward beyond."""
    h = math.degrees(math.atan2(math.sin(heading), math.cos(heading)))
    if -45.0 <= h < 45.0:
        return "forward"
    if 45.0 <= h < 135.0:
        return "left"
    if -135.0 <= h < -45.0:
        return "right"
    return "backward"


def heading_table(records: Sequence[PushRecord], edges: Sequence[float]) -> list[dict]:
    """Falls per direction and magnitude bin ``[edges[i], edges[i+1])`` (the last bin closed), with the 95 % Wilson
    interval of the fall rate; bins without a push are left out."""

    if len(edges) < 2 or any(b <= a for a, b in zip(edges[:-1], edges[1:], strict=True)):
        raise ValueError(f"magnitude bin edges must be at least two increasing values, got {list(edges)}")
    rows = []
    for name in DIRECTIONS:
        for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:], strict=True)):
            last = i == len(edges) - 2
            inside = [
                r
                for r in records
                if direction(r.heading) == name
                and lo <= r.magnitude
                and (r.magnitude <= hi if last else r.magnitude < hi)
            ]
            if not inside:
                continue
            falls = sum(r.fell for r in inside)
            rows.append(
                {
                    "direction": name,
                    "push_mps": [lo, hi],
                    "pushes": len(inside),
                    "falls": falls,
                    "fall_rate": falls / len(inside),
                    "ci95": wilson_interval(falls, len(inside)),
                }
            )
    return rows


def _push(env):
    """The env's live push term, found by its type (:func:`realgap.envs.dr.push.live_push`).

    Raises:
        ValueError: The env has no push term.
    """
    from realgap.envs.dr.push import live_push

    push = live_push(env)
    if push is None:
        raise ValueError("push headings need a balance env with a push term (realgap.envs.dr.push.push_robot)")
    return push


def log_pushes(env, policy, steps: int, clip_actions: float | None = None) -> list[PushRecord]:
    """Run ``policy`` for ``steps`` policy steps on the (unwrapped) balance env and log every push's outcome."""
    import torch
    from isaaclab.utils.math import euler_xyz_from_quat

    push = _push(env)
    asset = env.scene["robot"]
    open_push: dict[int, tuple[float, float, float]] = {}  # env -> (magnitude, heading, yaw) of its open push
    records: list[PushRecord] = []
    with torch.inference_mode():
        obs, _ = env.reset()
        count = push.count.clone()
        for _ in range(steps):
            actions = policy(obs["policy"])
            if clip_actions is not None:
                actions = actions.clamp(-clip_actions, clip_actions)
            obs, _, terminated, truncated, _ = env.step(actions)
            # an episode that ended in this step settles its open push (the reset came before this step's pushes)
            for i in (terminated | truncated).nonzero().flatten().tolist():
                if i in open_push:
                    m, h, y = open_push.pop(i)
                    records.append(PushRecord(m, h, fell=bool(terminated[i]) and not bool(truncated[i]), yaw=y))
                count[i] = 0
            pushed = (push.count != count).nonzero().flatten()
            if len(pushed):
                _, _, yaw = euler_xyz_from_quat(asset.data.root_quat_w.torch[pushed])
                dv = push.last_dv[pushed]
                heading = torch.atan2(dv[:, 1], dv[:, 0]) - yaw
                for i, m, h, y in zip(
                    pushed.tolist(), dv.norm(dim=-1).tolist(), heading.tolist(), yaw.tolist(), strict=True
                ):
                    if i in open_push:  # held until the next push
                        m0, h0, y0 = open_push.pop(i)
                        records.append(PushRecord(m0, h0, fell=False, yaw=y0))
                    open_push[i] = (m, math.atan2(math.sin(h), math.cos(h)), y)
            count = push.count.clone()
    return records


def _joint_ids(env, suffix: str, what: str) -> list[int]:
    """The indices of the G1's two ``*<suffix>`` joints in the robot's (and the action's) joint order."""
    ids = [i for i, name in enumerate(env.scene["robot"].joint_names) if name.endswith(suffix)]
    if len(ids) != 2:
        raise ValueError(f"{what} needs the G1's two {suffix.strip('_')}s, found {len(ids)}")
    return ids


def _with_offset(policy, offset, clip_actions: float):
    """``policy`` with ``offset(actions)`` (action units, a tensor that broadcasts to the actions) added after its
    clip: the one mechanism under every what-if below."""

    def offset_policy(obs):
        actions = policy(obs).clamp(-clip_actions, clip_actions)
        return actions + offset(actions)

    return offset_policy


def _constant_offset(env, units: dict[str, float]):
    """A constant offset of ``units`` action units on the joints ending in each key. Shape: (A,)."""
    import torch

    offset = torch.zeros(len(env.scene["robot"].joint_names), device=env.device)
    for suffix, value in units.items():
        offset[_joint_ids(env, suffix, "this what-if")] = value
    return lambda actions: offset


def with_ankle_pitch_bias(env, policy, bias: float, clip_actions: float = 4.0):
    """``policy`` with ``bias`` action units added to every ankle-pitch action after its clip (a what-if for the stance:
    a constant target offset of ``bias`` times the ankles' action scale)."""
    return _with_offset(policy, _constant_offset(env, {"_ankle_pitch_joint": bias}), clip_actions)


def with_crouch(env, policy, knee_rad: float, clip_actions: float = 4.0):
    """``policy`` in a deeper crouch (a what-if for the stance height): ``knee_rad`` more knee flexion and half of it
    on the hip and ankle pitch each (``−knee_rad / 2``, so that thigh and shank turn alike and the trunk and the soles
    keep their angles), as constant action offsets after the clip (radians over the task's ``G1_ACTION_SCALE``).
    A lower centre of mass raises ω = sqrt(g / c_z), so a push moves the capture point less: Δv / ω. The pelvis also
    moves back: at 0.6 rad on the zero action ξ sat 3.6 cm behind the ankles and the robot fell without a push
    (``docs/results/push_headings/balance_g1_zero_action_crouch0.6.json``); a crouch that keeps ξ needs IK."""
    from isaaclab.utils.string import resolve_matching_names_values

    rad = {"_knee_joint": knee_rad, "_hip_pitch_joint": -knee_rad / 2, "_ankle_pitch_joint": -knee_rad / 2}
    joints = env.scene["robot"].joint_names
    _, names, scales = resolve_matching_names_values(G1_ACTION_SCALE, joints)
    scale = dict(zip(names, scales, strict=True))
    units = {suffix: value / scale[joints[_joint_ids(env, suffix, "a crouch")[0]]] for suffix, value in rad.items()}
    return _with_offset(policy, _constant_offset(env, units), clip_actions)


def with_hip_reflex(env, policy, bias: float, steps: int, min_mps: float = 0.25, clip_actions: float = 4.0):
    """``policy`` with a scripted hip strategy (a what-if, not a policy: it reads the push term's velocity change, which
    a policy must infer): for ``steps`` policy steps after every sagittal push of at least ``min_mps`` m/s (forward or
    backward quadrant in the robot's frame), ``bias`` action units are added to both hip-pitch actions after the clip,
    with the sign of the push (+ after a forward push, − after a backward one; on the G1 a negative hip pitch flexes
    the hip, i.e. bends the trunk forward, which drives the ground force forward against a backward push)."""
    import torch

    from realgap.tasks.balance.mdp import heading_w

    hips = _joint_ids(env, "_hip_pitch_joint", "a hip reflex")
    if steps < 1:
        raise ValueError(f"a hip reflex needs steps >= 1, got {steps}")
    push = _push(env)
    robot = env.scene["robot"]
    count = push.count.clone()
    left = torch.zeros(env.num_envs, dtype=torch.long, device=env.device)  # reflex steps still to run
    sign = torch.zeros(env.num_envs, device=env.device)

    def reflex(actions):
        nonlocal count
        pushed = push.count > count  # a reset sets the count back to 0: not a push
        count = push.count.clone()
        along = (push.last_dv * heading_w(robot)).sum(dim=1)  # the push's component along the heading, m/s
        magnitude = push.last_dv.norm(dim=1)
        start = pushed & (along.abs() >= magnitude * math.cos(math.pi / 4)) & (magnitude >= min_mps)
        left[start], sign[start] = steps, torch.sign(along[start])
        offset = torch.zeros_like(actions)
        offset[:, hips] = (bias * sign * (left > 0))[:, None]
        left.sub_(1).clamp_(min=0)
        return offset

    return _with_offset(policy, reflex, clip_actions)


def stance_offset(env, policy, steps: int = 150, clip_actions: float | None = None) -> tuple[float, float]:
    """Where the standing policy holds its capture point: ξ's offset ahead of the ankles' middle along the pelvis'
    heading after ``steps`` policy steps without pushes from a reset, mean and standard deviation over the envs, m.
    The task's pushes are switched off for it and back on after."""
    import torch

    from realgap.envs.dr.push import find_push
    from realgap.tasks.balance.mdp import capture_point_w, heading_w

    _push(env)  # refused by name without one
    params = find_push(env.event_manager)[1].params
    task_pushes, params["magnitude_mps"] = params["magnitude_mps"], (0.0, 0.0)
    robot = env.scene["robot"]
    try:
        with torch.inference_mode():
            obs, _ = env.reset()
            for _ in range(steps):
                actions = policy(obs["policy"])
                obs, *_ = env.step(actions if clip_actions is None else actions.clamp(-clip_actions, clip_actions))
            ids = [robot.body_names.index(name) for name in G1_FOOT_BODIES]
            ankles = robot.data.body_link_pos_w.torch[:, ids, :2].mean(dim=1)
            ahead = ((capture_point_w(env, robot) - ankles) * heading_w(robot)).sum(dim=1)
    finally:
        params["magnitude_mps"] = task_pushes
    return float(ahead.mean()), float(ahead.std())


def summary(records: Sequence[PushRecord]) -> dict:
    """Pushes and falls in all, and the share of falls that followed a sagittal push (forward or backward)."""
    falls = [r for r in records if r.fell]
    sagittal = sum(direction(r.heading) in ("forward", "backward") for r in falls)
    held = [r.magnitude for r in records if not r.fell]
    return {
        "pushes": len(records),
        "falls": len(falls),
        "sagittal_share_of_falls": sagittal / len(falls) if falls else float("nan"),
        "largest_push_held_mps": float(np.max(held, initial=0.0)),
    }
