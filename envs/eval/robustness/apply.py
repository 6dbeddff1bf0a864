"""Isaac Lab glue of the robustness sweeps: write a sweep point into every env, per env, and keep it across resets.

A sweep point sets physical quantities exactly (not drawn from a range): each env of a batch gets the values of its own
point (:mod:`realgap.envs.eval.robustness.sweep` packs the points into batches). :class:`pin_sweep_point` is an event
term appended to the env's reset events by :func:`~realgap.envs.eval.robustness.prepare.prepare_env_cfg`;
:meth:`pin_sweep_point.set_values` writes a batch's values into the simulator and the actuator chains, and every
reset re-pins what a reset would otherwise redraw (the command delay, the grasped object's mass). The balance task's
push term (:class:`~realgap.envs.dr.push.push_robot`) pushes each env with its own magnitude once a sweep sets it.

What each factor writes (per env; ``s`` = the factor's value):

- inertia (one consistent write per body: density scale, then inertia scale, then CoM shift, then payload, all with
  :mod:`realgap.envs.dr.inertia_sampling`, so every body keeps J ≻ 0): ``link_mass_scale``, ``inertia_scale`` (radii
  of gyration × √s, i.e. I_C × s), ``com_shift_m`` and ``payload_kg`` on the robot's payload body
  (:data:`realgap.envs.robots.TARGETS`);
- actuator chains: ``pd_gain_scale`` (kp, kd × s), ``torque_limit_scale`` (peak torque × s), ``command_delay_s``
  (a fixed delay of round(s / dt) physics steps), ``torque_filter_hz`` (every joint's current-loop cutoff) and
  ``speed_limit_scale`` (the speed-limit stage at s × each joint's datasheet velocity limit); a stage the chain was
  built without is switched on (:meth:`~realgap.actuators.chain.ActuatorChain.set_stages`) while a value is finite;
  ``backlash_rad`` (dead band b of every compliant joint) and ``transmission_stiffness_scale`` (k × s of every compliant
  joint), available where joints are built compliant
  (:func:`~realgap.envs.eval.robustness.prepare.prepare_compliant` builds the robot's stand-in);
- solver: ``joint_friction_scale`` (frictionloss and damping × s), ``contact_friction`` (μ of the contact bodies'
  colliders; MuJoCo uses it against the ground where those colliders have the higher priority, as the G1's foot
  spheres do), ``contact_timeconst_s`` / ``contact_dampratio`` (their solref, the pair's value:
  :class:`~realgap.envs.dr.contact.ColliderSolref`);
- events: ``push_mps`` (every push's magnitude), ``object_mass_scale`` (re-applied after the task's object reset).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

import torch
import warp as wp
from isaaclab.managers import EventTermCfg, ManagerTermBase
from newton import ModelFlags

from realgap.actuators.delay import CommandDelay, latency_range_to_steps, latency_to_steps_batch
from realgap.envs.dr.contact import ColliderSolref, _body_colliders
from realgap.envs.dr.events import realgap_actuators, solver_update, torch_stream_order
from realgap.envs.dr.inertia import BodyInertia
from realgap.envs.dr.inertia_sampling import (
    attach_payload,
    cast_consistent,
    perturb_log_cholesky,
    scale_density,
    shift_com,
)
from realgap.envs.dr.push import find_push, live_push
from realgap.envs.dr.sampling import body_from_flat, body_to_flat, resolve_names
from realgap.envs.dr.stages import check_stage_ranges
from realgap.envs.eval.robustness.sweep import FACTORS, TASK_DRAWN, get_factor
from realgap.envs.robots import TARGETS, robot_name

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv

PIN_TERM = "robustness_pin"
"""Name of the :class:`pin_sweep_point` event term in the env's event table."""


def pin_term(env: ManagerBasedRLEnv) -> pin_sweep_point:
    """The env's :class:`pin_sweep_point` term (the env must come from a
    :func:`~realgap.envs.eval.robustness.prepare.prepare_env_cfg` config)."""
    return env.event_manager.get_term_cfg(PIN_TERM).func


class pin_sweep_point(ManagerTermBase):
    """Holds each env's factor values, writes them (:meth:`set_values`) and re-pins them on reset (``__call__``).

    Nominal values (bodies, gains, friction, μ) are read once, when the event manager builds the term.
    """

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        self.robot = env.scene["robot"]
        self.targets = TARGETS[robot_name(self.robot.joint_names)]
        names = list(self.robot.body_names)
        self.payload_col = resolve_names([self.targets.payload_body], names, "robustness payload", "body")[0]
        data = self.robot.data
        self.nominal_body = body_from_flat(data.body_mass.torch, data.body_com_pos_b.torch, data.body_inertia.torch)
        self.body_ids = torch.arange(len(names), dtype=torch.int32, device=env.device)
        self.actuators = realgap_actuators(self.robot)
        keys = ("kp", "kd", "peak_torque", "torque_filter_hz", "velocity_limit", "backlash", "transmission_stiffness")
        self.nominal_params = [{k: getattr(act.chain.params, k).clone() for k in keys} for act, _ in self.actuators]
        self.nominal_stages = [act.chain.stages for act, _ in self.actuators]
        self.datasheet_velocity = [
            torch.tensor([s.velocity_limit for s in act.specs], device=env.device) for act, _ in self.actuators
        ]
        self.nominal_friction = (
            data.joint_friction_coeff.torch.clone(),
            data.joint_viscous_friction_coeff.torch.clone(),
        )
        contact = resolve_names(self.targets.contact_bodies, names, "robustness contact bodies", "body")
        self.contact_shapes = torch.tensor(
            [s for group in _body_colliders(self.robot, contact) for s in group], dtype=torch.long, device=env.device
        )
        self.solref = ColliderSolref(env, self.robot, self.contact_shapes, "robustness contact bodies")
        model = env.sim.physics_manager.get_model()
        self.mu = wp.to_torch(self.robot._root_view.get_attribute("shape_material_mu", model)[:, 0])  # (E, S) view
        self._task_mu: torch.Tensor | None = None  # read after the startup events (the task may randomize μ there)
        self.push = live_push(env)
        # the grasped object, when the task has one (a rigid object called "object": one body, per-env mass writes)
        self.object = getattr(env.scene, "rigid_objects", {}).get("object")
        self.physics_dt = float(env.physics_dt)
        latency = {tuple(s.latency_range_s) for act, _ in self.actuators for s in act.specs}
        self.task_delay_range_s = next(iter(latency)) if len(latency) == 1 else None
        self.task_delay_steps = latency_range_to_steps(self.task_delay_range_s or (0.0, 0.0), self.physics_dt)
        self.generator = torch.Generator(device=env.device)
        self.generator.manual_seed(int(env.cfg.seed or 0))
        self.values: dict[str, torch.Tensor] = {}
        self._delay_plan: tuple[torch.Tensor, torch.Tensor | None, int] | None = None
        self._object_scaled = False

    def task_mu(self) -> torch.Tensor:
        """μ of the contact colliders as the task left them after its startup events, ``(E, S_contact)``."""
        if self._task_mu is None:
            self._task_mu = self.mu[:, self.contact_shapes].clone()
        return self._task_mu

    # -- what this task can sweep ---------------------------------------------------------------------------------
    def nominal_values(self) -> dict[str, float]:
        """Nominal value of every factor this task supports (``push_mps`` only with a push term, ...)."""
        out = {name: f.nominal for name, f in FACTORS.items() if f.nominal is not None and not f.needs}
        out["contact_friction"] = round(float(self.task_mu().mean()), 3)
        out["contact_timeconst_s"], out["contact_dampratio"] = (round(x, 6) for x in self.solref.nominal_mean())
        if self.task_delay_range_s is not None:  # one command bus: its mean latency (rounded to physics steps)
            out["command_delay_s"] = round(sum(self.task_delay_range_s) / 2.0, 6)
        if self.push is not None:
            lo, hi = find_push(self._env.event_manager)[1].params["magnitude_mps"]
            out["push_mps"] = round((lo + hi) / 2.0, 6)
        if self.object is not None:
            out["object_mass_scale"] = 1.0
        return out | self._nominal_stages()

    def _nominal_stages(self) -> dict[str, float]:
        """``torque_filter_hz``: the cutoff every chain joint shares (inf: ideal); ``speed_limit_scale``: 1 where every
        joint enforces its datasheet limit, inf where none does. A factor is left out (not sweepable) without realgap
        actuators or where the joints differ: one value cannot reproduce their nominal."""
        if not self.actuators:
            return {}
        out = {}
        cutoffs = torch.cat([p["torque_filter_hz"].flatten() for p in self.nominal_params]).unique()
        if len(cutoffs) == 1:
            out["torque_filter_hz"] = round(float(cutoffs[0]), 6)
        limits = [p["velocity_limit"] for p in self.nominal_params]
        if all(bool(torch.isinf(v).all()) for v in limits):
            out["speed_limit_scale"] = math.inf
        elif all(bool((v == d).all()) for v, d in zip(limits, self.datasheet_velocity, strict=True)):
            out["speed_limit_scale"] = 1.0
        compliant = [p["transmission_stiffness"].isfinite() for p in self.nominal_params]
        if any(bool(c.any()) for c in compliant):  # backlash: the value the compliant joints share
            gaps = torch.cat([p["backlash"][c] for p, c in zip(self.nominal_params, compliant, strict=True)]).unique()
            if len(gaps) == 1:
                out["backlash_rad"] = round(float(gaps[0]), 9)
            out["transmission_stiffness_scale"] = 1.0
        return out

    def _check_transmission(self, values: dict[str, torch.Tensor]) -> None:
        """Each swept stiffness scale and backlash on every compliant joint's spec, as the chain checks its specs."""
        for name in ("transmission_stiffness_scale", "backlash_rad"):
            if name not in values:
                continue
            for act, _ in self.actuators:
                specs = [s for s in act.specs if s.transmission_stiffness is not None]
                for x in values[name].unique().tolist():
                    check_stage_ranges({name: (x, x)}, specs, self.physics_dt, "factor")

    # -- writing a batch ------------------------------------------------------------------------------------------
    def set_values(self, values: dict[str, torch.Tensor]) -> None:
        """Write every env's factor values now (held until the next call). ``values``: factor → ``(E,)`` tensor.

        Raises:
            ValueError: A factor this task does not support (or no sweep can vary), or a value outside its factor's
                range (a cutoff not below the Nyquist rate of the physics step); nothing is written then.
        """
        nominal = self.nominal_values()
        unknown = sorted(set(values) - set(nominal))
        for name in unknown:
            get_factor(name)  # unknown or not sweepable: says so
        if unknown:
            raise ValueError(f"factors {unknown} are not available for this task; available: {sorted(nominal)}")
        for name, v in values.items():  # every value in its range (a cutoff below Nyquist) before anything is written
            for x in v.unique().tolist():
                if not (name in TASK_DRAWN and math.isnan(x)):
                    FACTORS[name].check(x, self.physics_dt)
        self._check_transmission(values)
        n = self.num_envs
        self.values = {k: torch.full((n,), float(v), device=self.device) for k, v in nominal.items()}
        self.values |= {k: v.to(self.device, torch.float32) for k, v in values.items()}
        self._write_bodies()
        self._write_actuators()
        self._write_friction()
        if self.push is not None:
            self.push.env_magnitude = self.values["push_mps"].clone()
        self._plan_delay()
        scale = self.values.get("object_mass_scale")
        self._object_scaled = scale is not None and bool((scale != 1.0).any())
        self._pin_delay(None)

    def _write_bodies(self) -> None:
        v, nom, e = self.values, self.nominal_body, self.num_envs
        b = nom.mass.shape[1]
        body = scale_density(nom, v["link_mass_scale"].double()[:, None].expand(e, b))
        stretch = v["inertia_scale"].double().sqrt()[:, None, None].expand(e, b, 3)
        if bool((stretch != 1.0).any()):  # I_C × s: every axis of the mass distribution stretched by √s about the CoM
            zeros = torch.zeros_like(stretch)
            body = perturb_log_cholesky(body, torch.ones_like(body.mass), stretch.contiguous(), zeros, zeros)
        c = self.payload_col
        one = BodyInertia(body.mass[:, c], body.com_b[:, c], body.inertia_c[:, c])
        delta = torch.zeros(e, 3, dtype=one.mass.dtype, device=self.device)
        delta[:, 0] = v["com_shift_m"].double()
        one = shift_com(one, delta)
        offset = torch.tensor(self.targets.payload_offset_m, dtype=delta.dtype, device=self.device).expand(e, 3)
        size = torch.tensor(self.targets.payload_size_m, dtype=delta.dtype, device=self.device).expand(e, 3)
        one = attach_payload(one, v["payload_kg"].double(), offset, size)
        mass, com_b, inertia_c = body.mass.clone(), body.com_b.clone(), body.inertia_c.clone()
        mass[:, c], com_b[:, c], inertia_c[:, c] = one.mass, one.com_b, one.inertia_c
        flat = body_to_flat(cast_consistent(BodyInertia(mass, com_b, inertia_c), what="swept robot body"))
        ids = torch.arange(e, device=self.device)
        with solver_update(self._env, ModelFlags.BODY_INERTIAL_PROPERTIES, True, ids):
            self.robot.set_masses_index(masses=flat[0], body_ids=self.body_ids, env_ids=ids)
            self.robot.set_coms_index(coms=flat[1], body_ids=self.body_ids, env_ids=ids)
            self.robot.set_inertias_index(inertias=flat[2], body_ids=self.body_ids, env_ids=ids)

    def _write_actuators(self) -> None:
        v = self.values
        gain, torque = v["pd_gain_scale"][:, None], v["torque_limit_scale"][:, None]
        for i, (act, _) in enumerate(self.actuators):
            params = act.chain.params  # looked up per call: the chain may swap its params object
            nominal, stages = self.nominal_params[i], self.nominal_stages[i]
            params.kp[:] = nominal["kp"] * gain
            params.kd[:] = nominal["kd"] * gain
            params.peak_torque[:] = nominal["peak_torque"] * torque
            if "torque_filter_hz" in v:  # f_c = inf: β = 0, the stage is the identity
                params.torque_filter_hz[:] = v["torque_filter_hz"][:, None].expand_as(params.torque_filter_hz)
            if "speed_limit_scale" in v:  # s = inf: v_max = inf, no cut-off
                params.velocity_limit[:] = self.datasheet_velocity[i] * v["speed_limit_scale"][:, None]
            compliant = nominal["transmission_stiffness"].isfinite()  # (E, J): rigid joints keep k = inf, b = 0
            if "backlash_rad" in v:
                params.backlash[:] = torch.where(compliant, v["backlash_rad"][:, None], nominal["backlash"])
            if "transmission_stiffness_scale" in v:
                scale = v["transmission_stiffness_scale"][:, None]
                params.transmission_stiffness[:] = torch.where(
                    compliant, nominal["transmission_stiffness"] * scale, nominal["transmission_stiffness"]
                )
            finite = {k: bool(torch.isfinite(getattr(params, k)).any()) for k in ("torque_filter_hz", "velocity_limit")}
            on = replace(
                stages,
                torque_filter=stages.torque_filter or finite["torque_filter_hz"],
                velocity_limit=stages.velocity_limit or finite["velocity_limit"],
            )
            if on != act.chain.stages:
                act.chain.set_stages(on)

    def _write_friction(self) -> None:
        scale = self.values["joint_friction_scale"][:, None]
        with solver_update(self._env, ModelFlags.JOINT_DOF_PROPERTIES, True):
            self.robot.write_joint_friction_coefficient_to_sim_index(
                joint_friction_coeff=self.nominal_friction[0] * scale,
                joint_viscous_friction_coeff=self.nominal_friction[1] * scale,
            )
        # the nominal value keeps each env's μ as the task set it (e.g. the grasp task's per-env pad friction)
        value, task_mu = self.values["contact_friction"][:, None], self.task_mu()
        nominal = self.nominal_values()["contact_friction"]
        with torch_stream_order(self._env.device):  # a torch write into Newton's μ: ordered like every DR writer
            self.mu[:, self.contact_shapes] = torch.where(
                (value - nominal).abs() < 1e-9, task_mu, value.expand_as(task_mu)
            )
        self._env.sim.physics_manager.add_model_change(ModelFlags.SHAPE_PROPERTIES)
        ids, v = torch.arange(self.num_envs, device=self.device), self.values
        self.solref.write(ids, v["contact_timeconst_s"], v["contact_dampratio"])

    def _plan_delay(self) -> None:
        """What every reset of this batch needs, read on the host once per batch (not at each reset): each env's
        delay in steps, the envs whose delay is drawn at each reset, and the delay buffers' size."""
        self._delay_plan = None
        if not self.actuators or "command_delay_s" not in self.values:
            return
        latency = self.values["command_delay_s"]
        # latency_to_steps on the whole batch, on the device (a Python loop over a CUDA tensor syncs ~3 times per env)
        steps = latency_to_steps_batch(latency, self.physics_dt)
        drawn = latency.isnan().nonzero()[:, 0]  # the reference point: the datasheet range, redrawn at every reset
        need = max(int(steps.max()), self.task_delay_steps[1])  # a drawn delay is at most the task's maximum
        self._delay_plan = (steps, drawn if drawn.numel() else None, need)

    def _pin_delay(self, env_ids: torch.Tensor | None) -> None:
        """Give each env in ``env_ids`` (None: all) its fixed command delay, growing the delay buffers as needed."""
        if self._delay_plan is None:
            return
        steps, drawn, need = self._delay_plan
        steps = steps.clone()
        if drawn is not None:  # as the chain does at a reset, drawn for every such env of the batch
            lo, hi = self.task_delay_steps
            steps[drawn] = torch.randint(lo, hi + 1, (drawn.numel(),), generator=self.generator, device=self.device)
        ids = slice(None) if env_ids is None else env_ids
        for act, _ in self.actuators:
            if act.chain.delay.max_steps < need:
                act.chain.delay = CommandDelay(self.num_envs, 0, need, self.generator, self.device)
            buf = act.chain.delay.delay_steps
            buf[ids] = steps[ids].to(buf.device, buf.dtype)

    def _scale_object(self, env_ids: torch.Tensor) -> None:
        """Object density × s for ``env_ids``, on top of the body the task's object reset has just written."""
        scale = self.values.get("object_mass_scale")
        if scale is None or self.object is None or not self._object_scaled or bool((scale[env_ids] == 1.0).all()):
            return  # _object_scaled: read once per batch, so a batch without object scaling never syncs here
        data, rows = self.object.data, env_ids
        body = body_from_flat(
            data.body_mass.torch[rows], data.body_com_pos_b.torch[rows], data.body_inertia.torch[rows]
        )
        body = scale_density(body, scale[rows].double()[:, None].expand_as(body.mass))
        mass, com_b, inertia = body_to_flat(cast_consistent(body, what="swept object"))
        with solver_update(self._env, ModelFlags.BODY_INERTIAL_PROPERTIES, True):
            self.object.set_masses_index(masses=mass, env_ids=rows)
            self.object.set_coms_index(coms=com_b, env_ids=rows)
            self.object.set_inertias_index(inertias=inertia, env_ids=rows)

    def __call__(self, env: ManagerBasedRLEnv, env_ids: torch.Tensor | slice | None) -> None:
        if not self.values:
            return
        ids = (
            torch.arange(self.num_envs, device=self.device)
            if env_ids is None or isinstance(env_ids, slice)
            else (env_ids.to(self.device, torch.long))
        )
        self._pin_delay(ids)
        self._scale_object(ids)
