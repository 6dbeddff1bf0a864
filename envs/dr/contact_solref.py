"""Isaac Lab event term that randomizes the contact solref ``(timeconst, dampratio)`` of chosen colliders per env.

Glue only, like :mod:`realgap.envs.dr.contact` (explicit generator, nominal read once, batched writes); the write goes
through :class:`~realgap.envs.dr.contact.ColliderSolref`, the one writer of per-world solref the robustness sweeps
use too. MuJoCo's solref is the contact's reference response: a mass-spring-damper of the penetration with time
constant ``timeconst`` [s] (stiffness) and damping ratio ``dampratio``; a real foot sole or finger pad is softer or
stiffer than the model's rigid default, and how it rebounds depends on the material.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from isaaclab.managers import SceneEntityCfg

from realgap.envs.dr.contact import ColliderSolref, _shape_plan
from realgap.envs.dr.events import WidthTerm, draw_columns, env_ids_tensor, term_generator
from realgap.envs.dr.inertia_sampling import validate_range
from realgap.envs.dr.profile_bounds import check_timeconst_range
from realgap.envs.dr.sampling import check_disjoint, resolve_names

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedEnv
    from isaaclab.managers import EventTermCfg

SOLREF_KEYS = ("timeconst_s", "dampratio")
"""A group's range keys, in the order of MuJoCo's solref and of the draws from the term's stream."""


class randomize_contact_solref(WidthTerm):
    """Contact solref per env and body: one ``(timeconst, dampratio)`` for all colliders of a body (one surface
    material), each drawn uniformly in its group's range; a key a group leaves out keeps each collider's own value.

    Every written collider gets the dominant solmix (:class:`~realgap.envs.dr.contact.ColliderSolref`), so its
    solref is the pair's against partners of equal or lower priority. The time-constant ranges are checked against
    the env's physics step (>= 2·dt, :func:`~realgap.envs.dr.profile_schema.check_timeconst_range`) and the colliders
    against the model (raw solref, no geom of higher priority) before anything is written.

    Params:
        asset_cfg: The articulation or rigid object.
        groups: ``[{"bodies": [regex, ...], "timeconst_s": [lo, hi] | None, "dampratio": [lo, hi] | None}, ...]``
            (time constant in s, damping ratio unit-less; both > 0).
        seed_key: Name of the term's random stream.
    """

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedEnv):
        super().__init__(cfg, env)
        params = cfg.params
        self.asset = env.scene[params["asset_cfg"].name]
        self.where = f"{params.get('seed_key') or type(self).__name__} ({params['asset_cfg'].name})"
        groups: list[dict[str, Any]] = params["groups"]
        names = list(self.asset.body_names)
        wheres = [f"{self.where}.groups[{i}]" for i in range(len(groups))]
        selections = [resolve_names(g["bodies"], names, w, "body") for w, g in zip(wheres, groups, strict=True)]
        check_disjoint(selections, names, self.where)
        plans = []
        for key in SOLREF_KEYS:
            ranges = []
            for where, g in zip(wheres, groups, strict=True):
                w = f"{where}.{key}"
                rng = validate_range(w, g[key], "positive") if g.get(key) is not None else (1.0, 1.0)
                if key == "timeconst_s" and g.get(key) is not None:
                    check_timeconst_range(w, rng, float(env.physics_dt))
                ranges.append(rng)
            plans.append(_shape_plan(self.asset, selections, ranges, self.where, env.device))
        self.cols, self.slot = plans[0][:2]
        self.lo = torch.stack([p[2] for p in plans], dim=-1)  # (K, 2): per body slot, per solref key
        self.hi = torch.stack([p[3] for p in plans], dim=-1)
        drawn = [[g.get(k) is not None for k in SOLREF_KEYS] for g, ids in zip(groups, selections, strict=True)]
        counts = torch.tensor([len(ids) for ids in selections])
        self.drawn = torch.tensor(drawn, dtype=torch.bool).repeat_interleave(counts, dim=0).to(env.device)  # (K, 2)
        self.writer = ColliderSolref(env, self.asset, self.cols, self.where)
        self.generator = term_generator(env, params.get("seed_key", ""))
        self.last: tuple[torch.Tensor, torch.Tensor] | None = None
        """(env_ids, drawn ``(timeconst, dampratio)`` per body slot ``(n, K, 2)``) of the latest call; a key a group
        leaves out is drawn too (a point range) but not written."""

    def __call__(
        self,
        env: ManagerBasedEnv,
        env_ids: torch.Tensor | slice | None,
        asset_cfg: SceneEntityCfg,
        groups: list[dict],
        seed_key: str = "",
    ) -> None:
        ids = env_ids_tensor(env, env_ids)
        n = len(ids)
        value = torch.stack(
            [draw_columns(self.lo[:, k], self.hi[:, k], n, self.generator, self.width) for k in (0, 1)], dim=-1
        )
        per_collider = torch.where(self.drawn[self.slot], value[:, self.slot], self.writer.nominal[ids])  # (n, C, 2)
        self.writer.write(ids, per_collider[..., 0], per_collider[..., 1])
        self.last = (ids, value)
