"""Build a task's env and agent configs from the gymnasium registry and make the env: the one path scripts and sim
tests share, so the CLI flags mean the same everywhere.

Bad input is rejected here, before anything is built or written: an unknown task id lists the registered ones, a CUDA
device on a CPU-only machine says so, a missing robot package names what to install.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
from collections.abc import Iterator
from typing import Any

import gymnasium as gym

from realgap.envs.rates import RateSpec, load_rate_profile
from realgap.envs.sim.physics import apply_device, resolve_device
from realgap.tasks import check_task


def _realgap_actuator_cfgs(env_cfg: Any) -> list[Any]:
    """Every realgap actuator config in the scene (they carry the rates their chains are built for)."""
    found = []
    for name in dir(env_cfg.scene):
        asset = getattr(env_cfg.scene, name, None)
        for act in (getattr(asset, "actuators", None) or {}).values():
            if hasattr(act, "rates") and hasattr(act, "specs"):
                found.append(act)
    return found


def apply_rates(env_cfg: Any, rates: RateSpec) -> None:
    """Set ``env_cfg.rates`` to ``rates`` and derive from it the physics step, the decimation and every actuator
    chain's rates.

    ``env_cfg.rates`` is the one source of a run's rates: :func:`load_cfgs` calls this on every config it resolves
    (the task's own rates or a profile), so the simulator, the env and the actuators cannot disagree; anything that
    changes one of them afterwards is refused by :func:`check_rates`.
    """
    env_cfg.rates = rates.to_dict()
    env_cfg.sim.dt = rates.sim_dt
    env_cfg.decimation = rates.decimation
    env_cfg.sim.render_interval = rates.decimation
    for act in _realgap_actuator_cfgs(env_cfg):
        act.rates = rates.to_dict()
    info = getattr(env_cfg, "action_space_info", None)
    if isinstance(info, dict) and "rates" in info:  # the grasp variants describe their rates for comparisons
        info["rates"] = rates.to_dict()


def check_rates(env_cfg: Any) -> RateSpec:
    """The env's :class:`RateSpec`, after checking the simulator, the env and the actuators all follow it.

    Raises:
        ValueError: A setting disagrees with the rate spec (names both values and how to change rates).
    """
    rates = RateSpec.from_dict(env_cfg.rates)
    how = "change rates with --rates (a profile in configs/rates/), which sets all of them"
    if abs(env_cfg.sim.dt - rates.sim_dt) > 1e-12:
        raise ValueError(
            f"sim.dt = {env_cfg.sim.dt} s but the rate spec says physics {rates.physics_hz} Hz "
            f"(dt {rates.sim_dt} s); {how}"
        )
    if env_cfg.decimation != rates.decimation:
        raise ValueError(
            f"decimation = {env_cfg.decimation} but the rate spec says {rates.decimation} "
            f"(physics {rates.physics_hz} Hz / policy {rates.policy_hz} Hz); {how}"
        )
    for act in _realgap_actuator_cfgs(env_cfg):
        if RateSpec.from_dict(act.rates) != rates:
            raise ValueError(f"an actuator chain was built for rates {act.rates}, the env runs {rates.to_dict()}")
    return rates


def _registered_cfg(task: str, key: str) -> Any:
    """A fresh config from the entry point that realgap's own registration names: a ``"module:attribute"`` string
    (``tasks/*/__init__.py``), the attribute a function or class returning the config, as Isaac Lab's loader reads it.
    Resolved here rather than through ``isaaclab_tasks``' loader: importing that package registers every Isaac Lab
    task, ~1 s of every script's start, for a lookup of one callable."""

    entry = gym.spec(task).kwargs[key]
    if isinstance(entry, str) and entry.count(":") == 1:
        module, _, name = entry.partition(":")
        entry = getattr(importlib.import_module(module), name)
    if not callable(entry):
        raise TypeError(f"{task}: the {key} registered is {entry!r}, not 'module:function' returning the config")
    return entry()


def load_cfgs(
    task: str,
    device: str | None = None,
    num_envs: int | None = None,
    seed: int | None = None,
    rates: str | RateSpec | None = None,
    dr_profile: Any = None,
) -> tuple[Any, Any]:
    """Env and agent configs of ``task`` with the CLI overrides applied.

    Args:
        task: A registered realgap task id.
        device: ``cpu``, ``cuda`` or ``cuda:N``; None picks CUDA when present, else the CPU.
        num_envs: Parallel environments; None keeps the task default.
        seed: Seed for the env and the agent; None keeps the agent config's seed.
        rates: A rate profile name (``configs/rates/<name>.yaml``), YAML path or RateSpec; None keeps the task's.
        dr_profile: A domain-randomization profile (``configs/dr/<name>.yaml`` name, YAML path or ``DRProfile``)
            added to the env's events by :func:`realgap.envs.dr.apply.apply_dr_profile`; None adds nothing.

    Raises:
        UnknownTaskError: ``task`` is not registered (the message lists the registered ids).
        DeviceUnavailableError: CUDA requested without CUDA.
        MissingRobotSourceError: The robot's PyPI package is not installed.
        ValueError: The DR profile names an asset, body or joint the task lacks, or asks what it cannot do.
    """
    check_task(task)
    device = resolve_device(device)
    env_cfg = _registered_cfg(task, "env_cfg_entry_point")
    agent_cfg = _registered_cfg(task, "rsl_rl_cfg_entry_point")
    apply_device(env_cfg, device)
    agent_cfg.device = device
    if num_envs is not None:
        if num_envs < 1:
            raise ValueError(f"--num_envs must be >= 1, got {num_envs}")
        env_cfg.scene.num_envs = num_envs
    set_seed(env_cfg, agent_cfg, agent_cfg.seed if seed is None else seed)
    if rates is None:
        rates = RateSpec.from_dict(env_cfg.rates)  # the task's own: env_cfg.rates is the one source
    elif not isinstance(rates, RateSpec):
        rates = load_rate_profile(rates)
    apply_rates(env_cfg, rates)  # physics step, decimation and every chain derived from it
    if dr_profile is not None:
        from realgap.envs.dr.apply import apply_dr_profile

        apply_dr_profile(env_cfg, dr_profile, task=task)
    return env_cfg, agent_cfg


def set_seed(env_cfg: Any, agent_cfg: Any, seed: int) -> None:
    """Seed the agent (policy init, PPO), the env (resets, events, DR) and the per-env command delays with ``seed``."""
    agent_cfg.seed = seed
    env_cfg.seed = seed
    for act in _realgap_actuator_cfgs(env_cfg):
        act.seed = seed  # per-env command delays drawn from the run's seed


@contextlib.contextmanager
def simulation(env_cfg: Any) -> Iterator[None]:
    """Isaac Lab's launcher context for ``env_cfg`` (kitless: starts nothing for Newton, but validates the config).

    A refusal (``ValueError``) or a checkpoint that cannot be written (``CheckpointError``, a ``RuntimeError``: a
    full disk) raised inside is re-raised after the launcher has closed: the launcher prints a full traceback of any
    exception that passes through it, which put 17 lines of traceback before the one line that says what to do."""
    from isaaclab.app import launch_simulation

    refused: BaseException | None = None
    with launch_simulation(env_cfg, {"headless": True, "device": env_cfg.sim.device}):
        try:
            yield
        except (ValueError, RuntimeError) as err:  # the launcher prints a traceback of whatever passes through it
            refused = err
    if refused is not None:  # a refusal or a failed checkpoint write: its message alone (scripts' run_cli prints it)
        raise refused


class _ExpectedForFixedBase(logging.Filter):
    """Drops Isaac Lab's warning that a fixed-base articulation has no root velocity: the message itself says it is
    expected for one (the Panda is welded to its table), and on a first run it reads like an error."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Failed to get root com velocity. If the articulation is fixed")


def make_env(task: str, env_cfg: Any) -> Any:
    """Create the env of ``task`` from ``env_cfg`` (call inside :func:`simulation`)."""

    logger = logging.getLogger("isaaclab_newton.assets.articulation.articulation_data")
    if not any(isinstance(f, _ExpectedForFixedBase) for f in logger.filters):
        logger.addFilter(_ExpectedForFixedBase())
    return gym.make(task, cfg=env_cfg).unwrapped
