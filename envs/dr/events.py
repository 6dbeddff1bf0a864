"""Isaac Lab event term that applies realgap's domain randomization to body inertia (joint friction: ``friction``).

Also the helpers every DR term shares (env ids, seeded generators, solver sync, per-column draws). Glue only: every
distribution is drawn by the pure helpers of :mod:`realgap.envs.dr.sampling` and
:mod:`realgap.envs.dr.inertia_sampling` from a ``torch.Generator`` seeded with the env seed and the term's name; the
terms read the nominal values once, when the event manager builds them (before the first write), and always
resample *from the nominal*, so repeated resets never compound. Every term works in ``startup`` and ``reset`` mode
and writes each quantity with one batched call for all selected envs (no per-env Python loop).

Cost on MuJoCo-Warp. A body-inertia or joint-DOF write makes Newton's solver recompute ``set_const_0`` (a
forward pass, a mass-matrix factorisation and ``nv`` solves per world) for *all* worlds at the next step: ~0.5 s
at 256 G1s on this CPU, i.e. about +40 % per policy step when some env resets on most steps. ``sync="fast"``
(default) pushes the written values to MuJoCo-Warp at once instead (mass, CoM, inertia and ``body_subtreemass``;
friction loss and joint damping) and skips ``set_const_0``. That is exact for joint friction and damping (they
enter none of the constants) and leaves only the constraint-regularisation weights ``body_invweight0`` /
``dof_invweight0`` / ``stat.meaninertia`` at their values for the nominal bodies -- softness constants of contacts,
limits and friction loss, not terms of the rigid-body dynamics. ``sync="exact"`` keeps Isaac Lab's path.
tests/sim/test_inertia_propagation.py checks both on the Panda against pinocchio: holding torques equal g(q) and a
torque pulse's q̈ equals (M(q) + N²·I_m)⁻¹τ of the randomized bodies; contact-free trajectories of the two syncs agree
to float32 round-off without friction loss, and with it differ through ``dof_invweight0`` alone (0.15 % of the
friction's own effect; a joint-limit hit, measured once: 9e-3 of 2 rad/s after 0.25 s).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import torch
import warp as wp
from isaaclab.managers import ManagerTermBase, SceneEntityCfg
from newton import ModelFlags

from realgap.envs.dr.inertia import BodyInertia, check_consistency, default_rtol
from realgap.envs.dr.inertia_sampling import cast_consistent
from realgap.envs.dr.sampling import (
    body_from_flat,
    body_to_flat,
    check_disjoint,
    make_generator,
    randomization_from_params,
    resolve_names,
    sample_body_columns,
    term_seed,
    uniform,
)
from realgap.envs.dr.width import draw_unit_width, narrow_randomization
from realgap.envs.sim.actuator import RealgapActuator

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedEnv
    from isaaclab.managers import EventTermCfg

_FAST_UPDATES = {
    ModelFlags.BODY_INERTIAL_PROPERTIES: "_update_model_inertial_properties",
    ModelFlags.JOINT_DOF_PROPERTIES: "_update_joint_dof_properties",
}


def env_ids_tensor(env: ManagerBasedEnv, env_ids: torch.Tensor | slice | None) -> torch.Tensor:
    """The env indices of an event call as an int64 tensor on the env device (``None``/slice: those envs)."""
    if env_ids is None or isinstance(env_ids, slice):
        return torch.arange(env.num_envs, device=env.device)[env_ids if env_ids is not None else slice(None)]
    return env_ids.to(device=env.device, dtype=torch.long)


def term_generator(env: ManagerBasedEnv, seed_key: str) -> torch.Generator:
    """The term's generator on the env device, seeded from ``env.cfg.seed`` and ``seed_key`` (its table name)."""
    return make_generator(term_seed(env.cfg.seed, seed_key), env.device)


@contextlib.contextmanager
def torch_stream_order(device: str) -> Iterator[None]:
    """Run the warp launches inside on torch's current CUDA stream, in order with the torch ops around them.

    DR writes interleave torch ops (sampling, gathers, scatters into the solver's arrays through ``wp.to_torch``
    views) and warp kernels (Isaac Lab's setters, Newton's update kernels, MuJoCo-Warp's ``set_const_fixed``) on the
    same memory; on two streams nothing orders a kernel after the torch op that made its input. Here warp launches on
    the torch stream itself (program order), after it waited for all earlier warp work (``sync_enter``: the last step
    is done with the arrays); on exit the warp stream waits for it (``sync_exit``). Torch's caching allocator reuses a
    freed temporary only on its own stream, so no temporary handed to warp is recycled under a pending kernel.

    CUDA graphs on: Newton replays its captured step with ``wp.capture_launch`` on the warp stream. The writes are
    in place (the recorded pointers see the new values) and the replay is queued after the ``sync_exit`` wait, so it
    reads them complete. DR events run between steps, never in a capture (checked). CPU: synchronous, unchanged.
    """
    if not str(device).startswith("cuda"):
        yield
        return
    if wp.get_device(str(device)).is_capturing:
        raise RuntimeError("a DR write inside a CUDA graph capture: event terms must run between physics steps")
    stream = wp.stream_from_torch(torch.cuda.current_stream(torch.device(device)))
    with wp.ScopedStream(stream, sync_enter=True, sync_exit=True):
        yield


@contextlib.contextmanager
def solver_update(
    env: ManagerBasedEnv, flag: ModelFlags, fast: bool, worlds: torch.Tensor | None = None
) -> Iterator[None]:
    """Wrap asset writes that raise ``flag``; with ``fast``, push them to MuJoCo-Warp now without ``set_const_0``.

    Args:
        env: The env whose solver receives the writes.
        flag: ``BODY_INERTIAL_PROPERTIES`` or ``JOINT_DOF_PROPERTIES``.
        fast: Use the fast path; ``False`` leaves Isaac Lab's exact path (the pending model-change flag).
        worlds: The envs written; body inertia is then copied for these worlds only.

    Falls back to the exact path when the solver is not MuJoCo-Warp, the Newton version lacks the update method,
    or someone else already asked for an exact update of ``flag``. On CUDA in stream order (:func:`torch_stream_order`).
    """
    with torch_stream_order(env.device):
        yield from _solver_update(env, flag, fast, worlds)


def _solver_update(env: ManagerBasedEnv, flag: ModelFlags, fast: bool, worlds: torch.Tensor | None) -> Iterator[None]:
    manager = env.sim.physics_manager
    pending_before = flag in manager._model_changes
    yield
    solver = getattr(manager, "_solver", None)
    update = getattr(solver, _FAST_UPDATES[flag], None)
    if not fast or pending_before or update is None or getattr(solver, "use_mujoco_cpu", True):
        return
    manager._model_changes.discard(flag)
    with wp.ScopedDevice(solver.model.device), solver._scoped_mujoco_warp_execution():
        if flag != ModelFlags.BODY_INERTIAL_PROPERTIES:
            update()
        else:
            if worlds is None or not _update_inertial_worlds(solver, worlds):
                update()
            solver._mujoco_warp.set_const_fixed(solver.mjw_model, solver.mjw_data)  # body_subtreemass: cheap
        solver._invalidate_contact_fast_path()


_INERTIAL = {
    "body_ipos": wp.vec3f,
    "body_mass": wp.float32,
    "body_gravcomp": wp.float32,
    "body_inertia": wp.vec3f,
    "body_iquat": wp.quatf,
}


def _update_inertial_worlds(solver: Any, worlds: torch.Tensor) -> bool:
    """Newton's body mass, CoM and inertia → MuJoCo-Warp for ``worlds`` only, with Newton's own kernels.

    Newton's update visits every world (an eigen-decomposition per body per world: ~17 ms at 256 G1s on this CPU);
    this gathers the rows of the reset worlds, runs the same kernels on them and scatters the result back.

    Returns:
        ``False`` (nothing done) when the solver's arrays are not stored per world or Newton moved its kernels.
    """
    try:
        from newton._src.solvers.mujoco.kernels import update_body_inertia_kernel, update_body_mass_ipos_kernel
    except ImportError:
        return False
    mjw, model = solver.mjw_model, solver.model
    nworld = solver.mjc_body_to_newton.shape[0]
    if any(getattr(mjw, name).shape[0] != nworld for name in _INERTIAL):
        return False
    full = {name: wp.to_torch(getattr(mjw, name)) for name in _INERTIAL}
    rows = worlds.to(full["body_mass"].device)
    part = {name: value[rows].contiguous() for name, value in full.items()}
    out = {name: wp.from_torch(part[name], dtype=dtype) for name, dtype in _INERTIAL.items()}
    mapping = wp.from_torch(wp.to_torch(solver.mjc_body_to_newton)[rows].contiguous())
    gravcomp = getattr(getattr(model, "mujoco", None), "gravcomp", None)
    dim = tuple(mapping.shape)
    wp.launch(
        update_body_mass_ipos_kernel,
        dim=dim,
        inputs=[mapping, model.body_com, model.body_mass, gravcomp],
        outputs=[out["body_ipos"], out["body_mass"], out["body_gravcomp"]],
    )
    wp.launch(
        update_body_inertia_kernel,
        dim=dim,
        inputs=[mapping, model.body_inertia],
        outputs=[out["body_inertia"], out["body_iquat"]],
    )
    for name, value in full.items():
        value[rows] = part[name]
    return True


def group_bounds(
    groups: Sequence[tuple[list[int], tuple[float, float]]], device: Any
) -> tuple[list[int], torch.Tensor, torch.Tensor]:
    """Concatenate per-group ``(ids, (lo, hi))`` into columns and per-column lo / hi tensors. Shape: ``(C,)``."""
    cols = [i for ids, _ in groups for i in ids]
    lo = torch.tensor([rng[0] for ids, rng in groups for _ in ids], device=device)
    hi = torch.tensor([rng[1] for ids, rng in groups for _ in ids], device=device)
    return cols, lo, hi


def draw_columns(
    lo: torch.Tensor, hi: torch.Tensor, n: int, generator: torch.Generator, width: float = 1.0
) -> torch.Tensor:
    """U[lo_c, hi_c] per env and column, narrowed to ``width`` about each midpoint (:mod:`realgap.envs.dr.width`; the
    same generator draws at every width). Shape: lo/hi ``(C,)`` → ``(n, C)``."""
    unit = draw_unit_width(uniform((0.0, 1.0), (n, lo.shape[0]), generator), width)
    return lo + (hi - lo) * unit.to(lo.device)


class WidthTerm(ManagerTermBase):
    """A randomization event term whose draws narrow to ``width`` of each configured range about its midpoint
    (1: as configured). A width curriculum (:class:`realgap.envs.dr.curriculum.dr_width_curriculum`) sets it."""

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedEnv):
        super().__init__(cfg, env)
        self.width = 1.0  # an attribute of the instance: an exact resume's snapshot restores it


class randomize_body_inertia(WidthTerm):
    """Consistent mass, CoM and inertia per env for the selected bodies of an articulation or rigid object.

    Each group applies :func:`~realgap.envs.dr.inertia_sampling.sample_inertia` (log-Cholesky scale / stretch / shear,
    CoM shift, payload box) to its bodies; every result has J ≻ 0. Several error sources of one asset (link inertia
    error, then an attached payload) compose in physical order and reach the simulator in *one* write per quantity:
    the last term of the asset in the event table is the committer, lists the terms in ``stages`` (physical order,
    itself included) and draws all of them; the others are ``deferred`` and only hold their groups.

    Params:
        asset_cfg: The asset (``SceneEntityCfg(name)``; bodies come from ``groups``).
        groups: ``[{"bodies": [regex, ...], "randomization": randomization_to_params(...)}, ...]``.
        seed_key: Name of the term's random stream (the table name).
        stages: Committer only: term names to compose, in physical order (``None``: this term alone).
        deferred: Only hold the groups; the committer listing this term draws them.
        sync: ``"fast"`` or ``"exact"`` (module docstring).
    """

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedEnv):
        super().__init__(cfg, env)
        params = cfg.params
        self.asset_name = params["asset_cfg"].name
        self.asset = env.scene[self.asset_name]
        self.generator = term_generator(env, params.get("seed_key", ""))
        names = list(self.asset.body_names)
        where = f"{params.get('seed_key') or 'randomize_body_inertia'} ({self.asset_name})"
        self.layers = []
        for i, group in enumerate(params["groups"]):
            ids = resolve_names(group["bodies"], names, f"{where}.groups[{i}]", "body")
            self.layers.append((ids, randomization_from_params(group["randomization"])))
        check_disjoint([ids for ids, _ in self.layers], names, where)
        self.body_ids = sorted({i for ids, _ in self.layers for i in ids})
        data = self.asset.data
        stored = body_from_flat(data.body_mass.torch, data.body_com_pos_b.torch, data.body_inertia.torch)
        sel = BodyInertia(*(t[:, self.body_ids] for t in (stored.mass, stored.com_b, stored.inertia_c)))
        # The simulator stores float32: judge the nominal at float32 round-off, then sample from its symmetric part.
        check_consistency(sel, default_rtol(torch.float32), [names[i] for i in self.body_ids], f"nominal {where} body")
        inertia = 0.5 * (stored.inertia_c + stored.inertia_c.transpose(-1, -2))
        self.nominal = BodyInertia(stored.mass, stored.com_b, inertia)
        self._stages: list[randomize_body_inertia] | None = None
        self.last_env_ids: torch.Tensor | None = None
        """Envs of the latest write."""
        self.last_written: BodyInertia | None = None
        """Bodies written by the latest call (committer only, float32 as stored), batch ``(len(last_env_ids),
        len(written_ids))``."""
        self.written_ids: list[int] = []

    def sample(self, body: BodyInertia) -> BodyInertia:
        """Apply this term's groups to ``body`` (batch ``(n, num_bodies)``), drawing from its own generator."""
        for ids, randomization in self.layers:
            body = sample_body_columns(body, ids, narrow_randomization(randomization, self.width), self.generator)
        return body

    def _resolve_stages(self, env: ManagerBasedEnv, stages: Sequence[str] | None) -> list[randomize_body_inertia]:
        if stages is None:
            return [self]
        manager, found = env.event_manager, []
        for name in stages:
            term = manager.get_term_cfg(name).func
            if not isinstance(term, randomize_body_inertia) or term.asset_name != self.asset_name:
                raise ValueError(
                    f"stage {name!r} is not an initialised randomize_body_inertia term of asset "
                    f"{self.asset_name!r} (stages must precede their committer in the same mode)"
                )
            found.append(term)
        if self not in found:
            raise ValueError(f"the committer must list itself in stages {list(stages)}")
        for names in manager.active_terms.values():
            for name in names:
                cfg = manager.get_term_cfg(name)
                deferred = cfg.params.get("deferred", False) and cfg.params.get("asset_cfg") is not None
                if deferred and cfg.params["asset_cfg"].name == self.asset_name and name not in stages:
                    raise ValueError(f"deferred body-inertia term {name!r} of {self.asset_name!r} is in no stages list")
        return found

    def __call__(
        self,
        env: ManagerBasedEnv,
        env_ids: torch.Tensor | slice | None,
        asset_cfg: SceneEntityCfg,
        groups: list[dict],
        seed_key: str = "",
        stages: list[str] | None = None,
        deferred: bool = False,
        sync: str = "fast",
    ) -> None:
        if deferred:
            return
        if self._stages is None:
            self._stages = self._resolve_stages(env, stages)
            self.written_ids = sorted({i for term in self._stages for i in term.body_ids})
            self._written_ids_t = torch.tensor(self.written_ids, dtype=torch.int32, device=env.device)
        ids = env_ids_tensor(env, env_ids)
        nom = self.nominal
        body = BodyInertia(nom.mass[ids], nom.com_b[ids], nom.inertia_c[ids])
        for term in self._stages:
            body = term.sample(body)
        cols = self.written_ids
        out = BodyInertia(body.mass[:, cols], body.com_b[:, cols], body.inertia_c[:, cols])
        # sampled in float64, stored in float32: the float32 numbers are what the solver integrates, so they are checked
        out = cast_consistent(out, torch.float32, [self.asset.body_names[i] for i in cols], f"{self.asset_name} body")
        mass, com_b, inertia = body_to_flat(out)
        with solver_update(env, ModelFlags.BODY_INERTIAL_PROPERTIES, sync == "fast", ids):
            self.asset.set_masses_index(masses=mass, body_ids=self._written_ids_t, env_ids=ids)
            self.asset.set_coms_index(coms=com_b, body_ids=self._written_ids_t, env_ids=ids)
            self.asset.set_inertias_index(inertias=inertia, body_ids=self._written_ids_t, env_ids=ids)
        self.last_env_ids, self.last_written = ids, out


def realgap_actuators(asset: Any) -> list[tuple[RealgapActuator, list[int]]]:
    """The asset's :class:`RealgapActuator` groups with the asset joint index of each of their columns."""
    out = []
    for act in asset.actuators.values():
        if isinstance(act, RealgapActuator):
            idx = act.joint_indices
            ids = list(range(asset.num_joints))[idx] if isinstance(idx, slice) else [int(i) for i in idx]
            out.append((act, ids))
    return out


def actuator_columns(
    asset: Any, joint_ids: Sequence[int], where: str | None = None
) -> list[tuple[RealgapActuator, list[int]]]:
    """Per realgap actuator, its chain columns among ``joint_ids`` (asset joint indices).

    Raises:
        ValueError: with ``where`` given, a joint is not driven by any realgap actuator.
    """
    covered, out = set(), []
    for act, ids in realgap_actuators(asset):
        cols = [ids.index(j) for j in joint_ids if j in ids]
        covered.update(ids[c] for c in cols)
        if cols:
            out.append((act, cols))
    missing = [asset.joint_names[j] for j in joint_ids if j not in covered]
    if where is not None and missing:
        raise ValueError(f"{where}: joints {missing} are not driven by a realgap actuator (RealgapActuatorCfg)")
    return out
