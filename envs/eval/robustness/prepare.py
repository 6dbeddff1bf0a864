"""A task's env config made sweepable, before the env is built: which factors it supports, its joints built compliant
for the transmission factors, and the :class:`~realgap.envs.eval.robustness.apply.pin_sweep_point` reset term that
writes the sweep points (:mod:`realgap.envs.eval.robustness.apply`, the Isaac Lab side once the env exists).

Each factor's needs (``push_mps``: the balance push term; ``object_mass_scale``: a rigid object called ``object``;
``backlash_rad`` / ``transmission_stiffness_scale``: compliant joints, or the robot's compliant stand-in from
:data:`realgap.envs.robots.COMPLIANT_TRANSMISSION`) are read from the config alone, so a request the task cannot serve
is refused before Isaac Lab builds anything.
"""

from __future__ import annotations

from typing import Any

from isaaclab.managers import EventTermCfg

from realgap.envs.dr.apply import asset_names, build_compliant, realgap_actuator_cfgs
from realgap.envs.dr.push import find_push
from realgap.envs.eval.robustness.apply import PIN_TERM, pin_sweep_point
from realgap.envs.eval.robustness.sweep import FACTORS
from realgap.envs.robots import COMPLIANT_TRANSMISSION, robot_name


def prepare_env_cfg(env_cfg: Any, episode_s: float | None = None, single_push_at_s: float | None = None) -> None:
    """Make an env config sweepable: per-env pushes and the
    :class:`~realgap.envs.eval.robustness.apply.pin_sweep_point` reset term (call before build).

    Args:
        env_cfg: A realgap task's env config (usually its Play variant).
        episode_s: Episode length override, s (``None``: the task's).
        single_push_at_s: One push per episode, at this time after the reset (s), instead of the task's pushes every
            3-5 s: the single-push limit of a balance policy (``None``: the task's pushes).
    """
    found = find_push(env_cfg.events)
    push = None if found is None else found[1]
    if push is not None:
        if single_push_at_s is not None:
            if not single_push_at_s > 0:
                raise ValueError(f"the single push must come after the reset (> 0 s), got {single_push_at_s}")
            push.interval_range_s = (float(single_push_at_s), float(single_push_at_s))
            push.params["once"] = True
    elif single_push_at_s is not None:
        raise ValueError("a single push needs a task with a push term (the balance task)")
    setattr(env_cfg.events, PIN_TERM, EventTermCfg(func=pin_sweep_point, mode="reset", params={}))
    if episode_s is not None:
        if not episode_s > 0:
            raise ValueError(f"--episode_s must be > 0 s, got {episode_s}")
        env_cfg.episode_length_s = float(episode_s)


def _compliant_specs(env_cfg: Any) -> bool:
    return any(
        s.get("transmission_stiffness") is not None
        for c in realgap_actuator_cfgs(env_cfg, "robot").values()
        for s in c.specs.values()
    )


def _standin(env_cfg: Any) -> dict[str, tuple[float, float]]:
    """The robot's compliant stand-in (spec group → stiffness, damping), restricted to its realgap spec groups."""
    groups = {k for c in realgap_actuator_cfgs(env_cfg, "robot").values() for k in c.specs}
    if not groups:
        return {}
    joints = asset_names(env_cfg, "robot", "robustness sweep")[1]
    return {k: v for k, v in COMPLIANT_TRANSMISSION.get(robot_name(joints), {}).items() if k in groups}


def available_factors(env_cfg: Any) -> list[str]:
    """Factors a task's env config supports, known before the env is built (``push_mps`` needs the balance push
    term, ``object_mass_scale`` a rigid object called ``object``, the transmission factors compliant joints or a
    compliant stand-in of the robot)."""
    has = {
        "": True,
        "push": find_push(env_cfg.events) is not None,
        "object": getattr(env_cfg.scene, "object", None) is not None,
        "compliant": _compliant_specs(env_cfg) or bool(_standin(env_cfg)),
    }
    return [name for name, f in FACTORS.items() if has[f.needs]]


def prepare_compliant(env_cfg: Any) -> dict[str, tuple[float, float]]:
    """Build the robot's joints compliant for the transmission factors (call before the env is built).

    Returns:
        The stand-in applied (spec group → (stiffness N·m/rad, damping N·m·s/rad)); empty when the specs already have
        a compliant transmission (they are kept).

    Raises:
        ValueError: Rigid joints and no stand-in for this robot.
    """
    if _compliant_specs(env_cfg):
        return {}
    standin = _standin(env_cfg)
    if not standin:
        raise ValueError(
            "backlash_rad / transmission_stiffness_scale need joints built with a compliant transmission; "
            "this robot's specs are rigid and envs/robots has no compliant stand-in for it"
        )
    build_compliant(env_cfg, "robot", standin)
    return dict(standin)
