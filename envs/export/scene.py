"""Scene facts of a manipulation export, read from the live env config (:class:`realgap.envs.format.scene.SceneFacts`).

Every value comes from the env the policy was trained on: the table collider's spawn size and pose, the
``reset_object`` event's size, density, inertia and placement params, the friction events, the arm reset noise, the
``hold`` success term, the drop termination, the episode length and the tool centre point the observations use. A task
without an ``object`` (the balance task) has no scene facts; it has a balance protocol instead
(:func:`balance_protocol`: its push term, found by type, its fall terminations and its episode length).
"""

from __future__ import annotations

import math
from typing import Any

from realgap.envs.export.actions import ExportError
from realgap.envs.format.protocol import BALANCE_PROTOCOL, BalanceProtocol
from realgap.envs.format.scene import SceneFacts
from realgap.envs.robots.panda import PANDA_HAND_BODY, PANDA_TCP_OFFSET_HAND


def _f(v: Any) -> float:
    """A config float written to the precision it was typed with (``0.15000000000000002`` → ``0.15``)."""
    return float(f"{float(v):.12g}")


def _pairs(ranges: Any) -> tuple[tuple[float, float], ...]:
    return tuple((_f(lo), _f(hi)) for lo, hi in ranges)


def scene_facts(cfg: Any) -> SceneFacts | None:
    """The :class:`SceneFacts` of a grasp env config (the ``ManagerBasedRLEnvCfg`` the env is or would be built from;
    no simulator needed); None for a task without an object.

    Raises:
        ExportError: The scene holds what the facts cannot describe (an object randomization beyond mass scale and
            CoM shift, a reset event whose table height is not the table's), naming it.
    """
    if getattr(cfg.scene, "object", None) is None or getattr(cfg.scene, "table", None) is None:
        return None

    table = cfg.scene.table
    center, size = tuple(_f(v) for v in table.init_state.pos), tuple(_f(v) for v in table.spawn.size)
    top = center[2] + size[2] / 2
    obj = cfg.events.reset_object.params
    if not math.isclose(float(obj["table_top_z"]), top, abs_tol=1e-9):
        raise ExportError(f"reset_object places objects on z = {obj['table_top_z']} m, the table's top is {top} m")
    inertia = obj["inertia"]
    trivial = {"stretch": (1.0, 1.0), "shear": (0.0, 0.0), "payload_mass_kg": (0.0, 0.0)}
    extra = [k for k, v in trivial.items() if tuple(inertia.get(k, v)) != v]
    if extra:
        raise ExportError(f"the object's inertia randomization uses {extra}, which the scene facts do not describe")
    sizes = _pairs(obj["size_range_m"])
    s_lo, s_hi = obj.get("size_scale_range", (1.0, 1.0))
    spawned = tuple(float(v) for v in obj["spawned_size_m"])
    sizes = tuple((_f(lo * s_lo), _f(min(hi * s_hi, cap))) for (lo, hi), cap in zip(sizes, spawned, strict=True))
    init = cfg.scene.object.init_state.pos
    hold = cfg.rewards.hold.params
    policy_hz = 1.0 / (cfg.sim.dt * cfg.decimation)

    def steps(seconds: float) -> int:
        return max(1, math.ceil(seconds * policy_hz - 1e-9))

    return SceneFacts(
        tcp_body=PANDA_HAND_BODY,
        tcp_offset_m=tuple(_f(v) for v in PANDA_TCP_OFFSET_HAND),
        table_center_m=center,
        table_size_m=size,
        object_size_range_m=sizes,
        object_density_kg_m3=_f(obj["density_kg_m3"]),
        object_mass_scale=tuple(_f(v) for v in inertia["mass_scale"]),
        object_com_shift_m=_pairs(inertia["com_shift_m"]),
        object_com_moved_fraction=_f(inertia["com_moved_fraction"]),
        object_friction=tuple(_f(v) for v in cfg.events.object_friction.params["static_friction_range"]),
        pad_friction=tuple(_f(v) for v in cfg.events.pad_friction.params["static_friction_range"]),
        object_nominal_xy_m=(_f(init[0]), _f(init[1])),
        object_position_range_m=_pairs(obj["position_range_m"]),
        object_yaw_range_rad=tuple(_f(v) for v in obj["yaw_range_rad"]),
        # the spawn pose's height above the table (reset_object places every drawn box with the same clearance)
        object_clearance_m=_f(init[2] - top - spawned[2] / 2),
        arm_joint_noise_rad=tuple(_f(v) for v in cfg.events.reset_arm.params["position_range"]),
        episode_s=_f(cfg.episode_length_s),
        episode_steps=steps(float(cfg.episode_length_s)),
        lift_target_m=_f(hold["lift_target_m"]),
        hold_s=_f(hold["hold_s"]),
        hold_steps=steps(float(hold["hold_s"])),
        drop_below_z_m=_f(cfg.terminations.object_dropped.params["minimum_height"]),
    )


def balance_protocol(cfg: Any) -> BalanceProtocol | None:
    """The :class:`BalanceProtocol` of a balance env config (its push term, its fall terminations and its episode
    length; no simulator needed); None for a fixed-base or manipulation task (one without the fall terminations).

    Raises:
        ExportError: A balance config whose pushes the protocol cannot describe (a push term whose function is not
            :class:`realgap.envs.dr.push.push_robot`), naming it.
    """
    from realgap.envs.dr.push import find_push

    terms = cfg.terminations
    height, tilt = getattr(terms, "fall_height", None), getattr(terms, "fall_tilt", None)
    if height is None or tilt is None:
        return None
    push = find_push(cfg.events)
    push_mps, interval = (
        ((0.0, 0.0), None) if push is None else (push[1].params["magnitude_mps"], push[1].interval_range_s)
    )
    if push is not None and push[1].params.get("once", False):
        raise ExportError(
            f"the push term '{push[0]}' pushes once per episode, which the balance protocol cannot describe"
        )
    return BalanceProtocol(
        push_mps=tuple(_f(v) for v in push_mps),
        push_interval_s=tuple(_f(v) for v in interval) if interval is not None else BALANCE_PROTOCOL.push_interval_s,
        fall_height_m=_f(height.params["minimum_height"]),
        fall_tilt_rad=_f(tilt.params["limit_angle"]),
        episode_s=_f(cfg.episode_length_s),
    )
