"""The push: a horizontal velocity change of the robot's root (an impulse of m·Δv), the one implementation used by
the balance task's event term, the robustness sweeps and the single-push limit (per-env magnitudes), and the
sim2sim closed loop (scheduled pushes).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import torch
from isaaclab.managers import ManagerTermBase, SceneEntityCfg

if TYPE_CHECKING:
    from isaaclab.assets import Articulation
    from isaaclab.envs import ManagerBasedRLEnv
    from isaaclab.managers import EventTermCfg


def add_root_velocity_xy(asset: Articulation, env_ids: torch.Tensor, dv_x: torch.Tensor, dv_y: torch.Tensor) -> None:
    """Push: add ``(dv_x, dv_y)`` (m/s, world frame) to the root's linear velocity of the envs ``env_ids``.

    Shape:
        env_ids, dv_x, dv_y: ``(N,)``.
    """
    vel_w = asset.data.root_vel_w.torch[env_ids].clone()
    vel_w[:, 0] += dv_x
    vel_w[:, 1] += dv_y
    asset.write_root_velocity_to_sim_index(root_velocity=vel_w, env_ids=env_ids)


class push_robot(ManagerTermBase):
    """Push event term: a horizontal velocity change of random heading and magnitude ``U(min, max)`` m/s.

    The largest push each env received in its current episode is kept in :attr:`max_push` for the metrics, the number
    of pushes in it in :attr:`count` and the last one's velocity change (world frame, m/s) in :attr:`last_dv`. A sweep
    sets :attr:`env_magnitude` (``(num_envs,)`` m/s) to push each env with its own magnitude; its NaN entries, and
    every env while it is ``None``, draw from the range. With ``once`` an env is pushed at most once per episode.

    Params:
        magnitude_mps: (min, max) horizontal velocity change, m/s.
        asset_cfg: The pushed articulation.
        once: Push each env at most once per episode (the single-push limit).
    """

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        lo, hi = cfg.params["magnitude_mps"]
        if not 0.0 <= lo <= hi:
            raise ValueError(f"push magnitude_mps must satisfy 0 <= min <= max, got ({lo}, {hi}) m/s")
        self.max_push = torch.zeros(env.num_envs, device=env.device)
        self.count = torch.zeros(env.num_envs, dtype=torch.long, device=env.device)
        self.last_dv = torch.zeros(env.num_envs, 2, device=env.device)
        self.env_magnitude: torch.Tensor | None = None

    def reset(self, env_ids: torch.Tensor | None = None) -> None:
        if env_ids is None:
            self.max_push.zero_()
            self.count.zero_()
        else:
            self.max_push[env_ids] = 0.0
            self.count[env_ids] = 0

    def __call__(
        self,
        env: ManagerBasedRLEnv,
        env_ids: torch.Tensor,
        magnitude_mps: tuple[float, float],
        asset_cfg: SceneEntityCfg = SceneEntityCfg("robot"),
        once: bool = False,
    ) -> None:
        if once:  # an env whose episode already had its push is left alone
            env_ids = env_ids[self.max_push[env_ids] == 0.0]
            if len(env_ids) == 0:
                return
        lo, hi = magnitude_mps
        if self.env_magnitude is None:
            magnitude = lo + (hi - lo) * torch.rand(len(env_ids), device=env.device)
        else:
            magnitude = self.env_magnitude[env_ids]
            magnitude = torch.where(magnitude.isnan(), lo + (hi - lo) * torch.rand_like(magnitude), magnitude)
        heading = 2.0 * math.pi * torch.rand(len(env_ids), device=env.device)
        dv = torch.stack((magnitude * torch.cos(heading), magnitude * torch.sin(heading)), dim=-1)
        add_root_velocity_xy(env.scene[asset_cfg.name], env_ids, dv[:, 0], dv[:, 1])
        self.max_push[env_ids] = torch.maximum(self.max_push[env_ids], magnitude)
        self.count[env_ids] += 1
        self.last_dv[env_ids] = dv


def is_push_term(term_cfg: Any) -> bool:
    """True for an event term config whose function is :class:`push_robot` (the class, or the instance an event
    manager puts in its place), a subclass included: the push is found by its type, whatever the term is named."""
    func = getattr(term_cfg, "func", None)
    return isinstance(func, push_robot) or (isinstance(func, type) and issubclass(func, push_robot))


def find_push(events: Any) -> tuple[str, EventTermCfg] | None:
    """The push term of ``events`` as ``(name, cfg)``, or None: an env config's ``events`` (terms set to None are
    off) or a live ``EventManager`` (its active terms; the cfg's ``func`` is then the :class:`push_robot` instance).

    Raises:
        ValueError: More than one push term (which one a tool should change or read would be a guess).
    """
    if hasattr(events, "active_terms") and hasattr(events, "get_term_cfg"):
        names = [n for terms in events.active_terms.values() for n in terms]
        items = [(n, events.get_term_cfg(n)) for n in names]
    else:
        items = list(vars(events).items()) if events is not None else []
    found = [(name, cfg) for name, cfg in items if is_push_term(cfg)]
    if len(found) > 1:
        raise ValueError(f"more than one push term ({[n for n, _ in found]}): keep one push_robot event term")
    return found[0] if found else None


def live_push(env: ManagerBasedRLEnv) -> push_robot | None:
    """The live :class:`push_robot` term of ``env`` (its per-env push records), or None for an env without pushes."""
    found = find_push(env.event_manager)
    return None if found is None else found[1].func


def set_push_mps(env_cfg: Any, push_mps: Any, task: str) -> None:
    """Set the push range of ``env_cfg``'s push term (found by type) to ``push_mps`` (``"LO,HI"`` or a pair, m/s;
    the ``--push_mps`` flag of the evaluation commands).

    Raises:
        ValueError: A malformed range, or a task without a push term (both naming ``--push_mps``).
    """
    from realgap.envs.format.protocol import parse_range

    found = find_push(env_cfg.events)
    if found is None:
        raise ValueError(f"--push_mps: task {task} has no push event")
    found[1].params["magnitude_mps"] = parse_range(push_mps, "--push_mps")
