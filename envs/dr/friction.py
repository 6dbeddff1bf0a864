"""Isaac Lab event term that randomizes joint friction: Coulomb and viscous, per env and joint, written to the solver
(the sync and the shared helpers: :mod:`realgap.envs.dr.events`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from isaaclab.managers import SceneEntityCfg
from newton import ModelFlags

from realgap.envs.dr.events import (
    WidthTerm,
    actuator_columns,
    draw_columns,
    env_ids_tensor,
    group_bounds,
    solver_update,
    term_generator,
)
from realgap.envs.dr.inertia_sampling import validate_range
from realgap.envs.dr.sampling import check_disjoint, resolve_names

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedEnv
    from isaaclab.managers import EventTermCfg


class randomize_joint_friction(WidthTerm):
    """Joint Coulomb friction [N·m] and viscous friction [N·m·s/rad] per env and joint, written to the solver.

    The solver applies them implicitly (MuJoCo ``frictionloss`` / ``damping``), replacing the datasheet values;
    a joint whose realgap chain adds friction explicitly (``apply_friction=True``) is rejected (it would count twice).

    Params:
        asset_cfg: The articulation.
        groups: ``[{"joints": [regex, ...], "coulomb_nm": [lo, hi], "viscous_nms_per_rad": [lo, hi]}, ...]``.
        seed_key: Name of the term's random stream.
        sync: ``"fast"`` or ``"exact"`` (see :mod:`realgap.envs.dr.events`; exact either way for friction).
    """

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedEnv):
        super().__init__(cfg, env)
        params = cfg.params
        self.asset = env.scene[params["asset_cfg"].name]
        self.generator = term_generator(env, params.get("seed_key", ""))
        where = f"{params.get('seed_key') or 'randomize_joint_friction'} ({params['asset_cfg'].name})"
        coulomb, viscous = [], []
        for i, group in enumerate(params["groups"]):
            gw = f"{where}.groups[{i}]"
            ids = resolve_names(group["joints"], self.asset.joint_names, gw, "joint")
            coulomb.append((ids, validate_range(f"{gw}.coulomb_nm", group.get("coulomb_nm", (0.0, 0.0)), "nonneg")))
            viscous.append(
                (
                    ids,
                    validate_range(f"{gw}.viscous_nms_per_rad", group.get("viscous_nms_per_rad", (0.0, 0.0)), "nonneg"),
                )
            )
        check_disjoint([ids for ids, _ in coulomb], self.asset.joint_names, where)
        for act, cols in actuator_columns(self.asset, [i for ids, _ in coulomb for i in ids]):
            if act.chain.apply_friction:
                names = [act.joint_names[c] for c in cols]
                raise ValueError(
                    f"{where}: joints {names} get friction from their actuator chain (apply_friction): "
                    "solver friction would count it twice"
                )
        cols, *self.coulomb = group_bounds(coulomb, env.device)
        _, *self.viscous = group_bounds(viscous, env.device)
        self.joint_ids = torch.tensor(cols, dtype=torch.int32, device=env.device)
        self.last: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None
        """(env_ids, coulomb (n, C), viscous (n, C)) of the latest call."""

    def __call__(
        self,
        env: ManagerBasedEnv,
        env_ids: torch.Tensor | slice | None,
        asset_cfg: SceneEntityCfg,
        groups: list[dict],
        seed_key: str = "",
        sync: str = "fast",
    ) -> None:
        ids = env_ids_tensor(env, env_ids)
        coulomb = draw_columns(*self.coulomb, len(ids), self.generator, self.width)
        viscous = draw_columns(*self.viscous, len(ids), self.generator, self.width)
        with solver_update(env, ModelFlags.JOINT_DOF_PROPERTIES, sync == "fast"):
            self.asset.write_joint_friction_coefficient_to_sim_index(
                joint_friction_coeff=coulomb,
                joint_viscous_friction_coeff=viscous,
                joint_ids=self.joint_ids,
                env_ids=ids,
            )
        self.last = (ids, coulomb, viscous)
