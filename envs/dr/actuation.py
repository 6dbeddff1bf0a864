"""Isaac Lab event terms that randomize realgap's actuator chains: PD gains, torque limit, command delay and the
optional stages (current loop, command filter, speed limit, backlash, transmission stiffness).

Glue only, like :mod:`realgap.envs.dr.events`: the chains' parameters are per-env ``(E, J)`` tensors
(:class:`~realgap.actuators.params.JointParams` after ``expand``), so a term draws one scale per env and joint from its
own generator and writes the rows of the reset envs in place -- no solver involvement, no host sync.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

import torch
from isaaclab.managers import SceneEntityCfg

from realgap.actuators.delay import CommandDelay, latency_range_to_steps
from realgap.actuators.models import explicit_pd_stability_margin
from realgap.envs.dr.events import (
    WidthTerm,
    actuator_columns,
    draw_columns,
    env_ids_tensor,
    realgap_actuators,
    term_generator,
)
from realgap.envs.dr.inertia_sampling import validate_range
from realgap.envs.dr.sampling import check_disjoint, resolve_names, uniform_int
from realgap.envs.dr.stages import STAGE_FIELDS, check_stage_ranges, sample_stages, stage_param_value
from realgap.envs.dr.width import narrow_steps

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedEnv
    from isaaclab.managers import EventTermCfg

logger = logging.getLogger(__name__)


class randomize_actuator_gains(WidthTerm):
    """kp, kd and torque-limit scale per env and joint, written in place into the actuator chains' params rows.

    ``kp' = kp·s_p``, ``kd' = kd·s_d``, ``τ_peak' = τ_peak·s_τ`` (the torque–speed line scales with its stall
    torque), each scale ~ U per env and joint from the group's range, always applied to the nominal values.

    Params:
        asset_cfg: The articulation.
        groups: ``[{"joints": [regex, ...], "kp_scale": [lo, hi], "kd_scale": [...], "torque_limit_scale": [...]}]``.
        seed_key: Name of the term's random stream.
    """

    QUANTITIES = (("kp", "kp_scale"), ("kd", "kd_scale"), ("peak_torque", "torque_limit_scale"))

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedEnv):
        super().__init__(cfg, env)
        params = cfg.params
        asset = env.scene[params["asset_cfg"].name]
        self.generator = term_generator(env, params.get("seed_key", ""))
        where = f"{params.get('seed_key') or 'randomize_actuator_gains'} ({params['asset_cfg'].name})"
        selections, ranges = [], []
        for i, group in enumerate(params["groups"]):
            gw = f"{where}.groups[{i}]"
            selections.append(resolve_names(group["joints"], asset.joint_names, gw, "joint"))
            ranges.append(
                {key: validate_range(f"{gw}.{key}", group.get(key, (1.0, 1.0)), "scale") for _, key in self.QUANTITIES}
            )
            if ranges[-1]["torque_limit_scale"][1] > 1.0:
                raise ValueError(
                    f"{gw}.torque_limit_scale: hi {ranges[-1]['torque_limit_scale'][1]:g} > 1 would "
                    "exceed the solver's effort limit (the datasheet peak torque), which stays the backstop"
                )
        check_disjoint(selections, asset.joint_names, where)
        # Per actuator: chain columns, per-column (lo, hi) of each scale, nominal (E, C) values read once.
        plans: dict[int, dict] = {}
        for ids, rng in zip(selections, ranges, strict=True):
            for act, cols in actuator_columns(asset, ids, where):
                plan = plans.setdefault(
                    id(act), {"act": act, "cols": [], "bounds": {k: [] for _, k in self.QUANTITIES}}
                )
                plan["cols"] += cols
                for _, key in self.QUANTITIES:
                    plan["bounds"][key] += [rng[key]] * len(cols)
        self.plans = []
        for plan in plans.values():
            cols = torch.tensor(plan["cols"], dtype=torch.long, device=env.device)
            bounds = {k: torch.tensor(v, device=env.device).T for k, v in plan["bounds"].items()}  # (2, C)
            nominal = {attr: getattr(plan["act"].chain.params, attr)[:, cols].clone() for attr, _ in self.QUANTITIES}
            self.plans.append((plan["act"], cols, bounds, nominal))
        self._warn_unstable(where)

    def _warn_unstable(self, where: str) -> None:
        """Warn when the largest kp/kd scales break the explicit-PD bound (kp·dt² + 2·kd·dt)/(4·J) < 1 of a joint."""
        unstable = []
        for act, cols, bounds, nominal in self.plans:
            dt = act.chain.timing.physics_dt * act.chain.timing.servo_period_steps
            for k, col in enumerate(cols.tolist()):
                spec = act.specs[col]
                kp = float(nominal["kp"][0, k] * bounds["kp_scale"][1, k])
                kd = float(nominal["kd"][0, k] * bounds["kd_scale"][1, k])
                kd += spec.friction_slope() if act.chain.apply_friction else 0.0
                margin = float(explicit_pd_stability_margin(kp, kd, spec.total_inertia, dt))
                if margin >= 1.0:
                    unstable.append(f"{act.joint_names[col]} ({margin:.2f})")
        if unstable:
            logger.warning(
                f"{where}: at the largest sampled kp/kd the explicit-PD margin (kp·dt² + 2·kd·dt)/(4·J) on the free "
                f"link inertia reaches >= 1 for {unstable}: those joints may oscillate while their link is unloaded"
            )

    def __call__(
        self,
        env: ManagerBasedEnv,
        env_ids: torch.Tensor | slice | None,
        asset_cfg: SceneEntityCfg,
        groups: list[dict],
        seed_key: str = "",
    ) -> None:
        ids = env_ids_tensor(env, env_ids)
        rows = ids[:, None]
        for act, cols, bounds, nominal in self.plans:
            params = act.chain.params  # looked up per call: the chain may swap its params object (device/dtype)
            for attr, key in self.QUANTITIES:
                scale = draw_columns(bounds[key][0], bounds[key][1], len(ids), self.generator, self.width)
                getattr(params, attr)[rows, cols] = nominal[attr][ids] * scale


class randomize_command_delay(WidthTerm):
    """Per-env command delay of the asset's actuator chains, U{k_lo, ..., k_hi} physics steps from a latency range.

    At construction the chains get a :class:`~realgap.actuators.delay.CommandDelay` covering the range (so their own
    reset draws stay inside it); each call draws one delay per env -- one command bus, so the same for every
    actuator group of the asset -- and writes it into ``chain.delay.delay_steps`` after the chain's reset.

    Params:
        asset_cfg: The articulation.
        latency_range_s: ``(lo, hi)`` latency [s], rounded to physics steps (:func:`latency_range_to_steps`).
        seed_key: Name of the term's random stream.
    """

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedEnv):
        super().__init__(cfg, env)
        params = cfg.params
        asset = env.scene[params["asset_cfg"].name]
        latency = validate_range("command_delay_s", params["latency_range_s"], "nonneg", "s")
        self.generator = term_generator(env, params.get("seed_key", ""))
        self.actuators = [act for act, _ in realgap_actuators(asset)]
        if not self.actuators:
            raise ValueError(f"command delay: asset {params['asset_cfg'].name!r} has no realgap actuator to delay")
        steps = {latency_range_to_steps(latency, act.chain.timing.physics_dt) for act in self.actuators}
        if len(steps) != 1:
            raise ValueError(f"command delay: the asset's actuator chains run different physics steps: {steps}")
        self.steps = next(iter(steps))
        for act in self.actuators:
            act.chain.delay = CommandDelay(env.num_envs, *self.steps, generator=self.generator, device=env.device)

    def __call__(
        self,
        env: ManagerBasedEnv,
        env_ids: torch.Tensor | slice | None,
        asset_cfg: SceneEntityCfg,
        latency_range_s: tuple[float, float],
        seed_key: str = "",
    ) -> None:
        ids = env_ids_tensor(env, env_ids)
        delay = uniform_int(*narrow_steps(*self.steps, self.width), len(ids), self.generator).to(env.device)
        for act in self.actuators:
            buf = act.chain.delay.delay_steps
            # In [0, max_steps] by construction: written directly (set_delay_steps' range check syncs on GPU).
            buf[ids] = delay.to(buf.device, buf.dtype)


class randomize_actuator_stages(WidthTerm):
    """Per-env values of the chains' optional stages (:data:`~realgap.envs.dr.stages.STAGE_FIELDS`), written in place
    into the params rows of the reset envs; a field a group leaves out keeps the chain's own value.

    At construction the ranges are checked against the physics step as the chain checks its specs
    (:func:`~realgap.envs.dr.stages.check_stage_ranges`) and every stage a group randomizes is switched on
    (:meth:`~realgap.actuators.chain.ActuatorChain.set_stages`; the transmission cannot be: its joints must be built
    compliant). Scales multiply the spec's value (datasheet velocity limit, transmission stiffness), read once.

    Params:
        asset_cfg: The articulation.
        groups: ``[{"joints": [regex, ...], "<field>": [lo, hi], ...}]`` (fields of ``STAGE_FIELDS``).
        seed_key: Name of the term's random stream.
    """

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedEnv):
        super().__init__(cfg, env)
        params = cfg.params
        asset = env.scene[params["asset_cfg"].name]
        self.generator = term_generator(env, params.get("seed_key", ""))
        where = f"{params.get('seed_key') or 'randomize_actuator_stages'} ({params['asset_cfg'].name})"
        selections = []
        self.plans: list[tuple] = []  # (actuator, columns (C,), {field: (lo (C,), hi (C,))}, {field: reference (C,)})
        for i, group in enumerate(params["groups"]):
            gw = f"{where}.groups[{i}]"
            ids = resolve_names(group["joints"], asset.joint_names, gw, "joint")
            selections.append(ids)
            ranges = {
                k: validate_range(f"{gw}.{k}", v, "nonneg" if k == "backlash_rad" else "positive")
                for k, v in group.items()
                if k in STAGE_FIELDS
            }
            for act, cols in actuator_columns(asset, ids, gw):
                specs = [act.specs[c] for c in cols]
                check_stage_ranges(ranges, specs, act.chain.timing.physics_dt, gw)
                col_t = torch.tensor(cols, dtype=torch.long, device=env.device)
                n = len(cols)
                bounds = {
                    k: (torch.full((n,), lo, device=env.device), torch.full((n,), hi, device=env.device))
                    for k, (lo, hi) in ranges.items()
                }
                refs = {}
                for k in ranges:
                    ref = STAGE_FIELDS[k].reference
                    if ref is not None:
                        refs[k] = torch.tensor([float(getattr(s, ref)) for s in specs], device=env.device)
                self.plans.append((act, col_t, bounds, refs))
                on = {STAGE_FIELDS[k].stage: True for k in ranges}
                if on.get("transmission") and not act.chain.stages.transmission:
                    raise ValueError(
                        f"{gw}: {sorted(k for k in ranges if STAGE_FIELDS[k].stage == 'transmission')} "
                        "need joints built with a compliant transmission"
                    )
                stages = replace(act.chain.stages, **on)
                if stages != act.chain.stages:
                    act.chain.set_stages(stages)
        check_disjoint(selections, asset.joint_names, where)

    def __call__(
        self,
        env: ManagerBasedEnv,
        env_ids: torch.Tensor | slice | None,
        asset_cfg: SceneEntityCfg,
        groups: list[dict],
        seed_key: str = "",
    ) -> None:
        ids = env_ids_tensor(env, env_ids)
        rows = ids[:, None]
        for act, cols, bounds, refs in self.plans:
            params = act.chain.params  # looked up per call: the chain may swap its params object (device/dtype)
            for name, drawn in sample_stages(bounds, len(ids), self.generator, self.width).items():
                value = stage_param_value(name, drawn, refs.get(name))
                buf = getattr(params, STAGE_FIELDS[name].param)
                buf[rows, cols] = value.to(buf.device, buf.dtype)


class randomize_holding_drive(WidthTerm):
    """A fraction of the envs drive the asset's joints through a bridge that computes each command's PD torque once
    and holds it for the whole policy period (the servo period of those envs becomes the decimation); the others keep
    their chain's servo period. Drawn per env at every reset, one bridge per robot (every actuator group of the
    asset). A disturbance like a push: a width curriculum scales the fraction toward none.

    Params:
        asset_cfg: The articulation.
        fraction: Probability that an env's robot sits behind the holding bridge, in (0, 1].
        seed_key: Name of the term's random stream.
    """

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedEnv):
        super().__init__(cfg, env)
        params = cfg.params
        fraction = float(params["fraction"])
        if not 0.0 < fraction <= 1.0:
            raise ValueError(f"holding drive: fraction must be in (0, 1], got {fraction}")
        self.generator = term_generator(env, params.get("seed_key", ""))
        self.actuators = [act for act, _ in realgap_actuators(env.scene[params["asset_cfg"].name])]
        if not self.actuators:
            raise ValueError(f"holding drive: asset {params['asset_cfg'].name!r} has no realgap actuator to hold")
        decimations = {act.chain.timing.decimation for act in self.actuators}
        if len(decimations) != 1:
            raise ValueError(f"holding drive: the asset's actuator chains run different decimations: {decimations}")

    def __call__(
        self,
        env: ManagerBasedEnv,
        env_ids: torch.Tensor | slice | None,
        asset_cfg: SceneEntityCfg,
        fraction: float,
        seed_key: str = "",
    ) -> None:
        ids = env_ids_tensor(env, env_ids)
        unit = torch.rand(len(ids), generator=self.generator, device=self.generator.device).to(env.device)
        held = unit < fraction * self.width
        for act in self.actuators:
            timing = act.chain.timing
            periods = torch.where(held, timing.decimation, timing.servo_period_steps)
            act.chain.servo.set_periods(periods, ids)
