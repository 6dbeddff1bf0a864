"""Build a task's env and agent configs from the gymnasium registry and make the env: the one path scripts and sim
tests share, so the CLI flags mean the same everywhere.

Bad input is rejected here, before anything is built or written: an unknown task id lists the registered ones, a CUDA
device on a CPU-only machine says so, a missing robot package names what to install.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from realgap.envs.physics import apply_device, resolve_device
from realgap.tasks import check_task


def load_cfgs(
    task: str, device: str | None = None, num_envs: int | None = None, seed: int | None = None
) -> tuple[Any, Any]:
    """Env and agent configs of ``task`` with the CLI overrides applied.

    Args:
        task: A registered realgap task id.
        device: ``cpu``, ``cuda`` or ``cuda:N``; None picks CUDA when present, else the CPU.
        num_envs: Parallel environments; None keeps the task default.
        seed: Seed for the env and the agent; None keeps the agent config's seed.

    Raises:
        UnknownTaskError: ``task`` is not registered (the message lists the registered ids).
        DeviceUnavailableError: CUDA requested without CUDA.
        MissingRobotSourceError: The robot's PyPI package is not installed.
    """
    check_task(task)
    device = resolve_device(device)
    from isaaclab_tasks.utils.parse_cfg import load_cfg_from_registry

    env_cfg = load_cfg_from_registry(task, "env_cfg_entry_point")
    agent_cfg = load_cfg_from_registry(task, "rsl_rl_cfg_entry_point")
    apply_device(env_cfg, device)
    agent_cfg.device = device
    if num_envs is not None:
        if num_envs < 1:
            raise ValueError(f"--num_envs must be >= 1, got {num_envs}")
        env_cfg.scene.num_envs = num_envs
    if seed is not None:
        agent_cfg.seed = seed
    env_cfg.seed = agent_cfg.seed
    return env_cfg, agent_cfg


@contextlib.contextmanager
def simulation(env_cfg: Any) -> Iterator[None]:
    """Isaac Lab's launcher context for ``env_cfg`` (kitless: starts nothing for Newton, but validates the config)."""
    from isaaclab.app import launch_simulation

    with launch_simulation(env_cfg, {"headless": True, "device": env_cfg.sim.device}):
        yield


def make_env(task: str, env_cfg: Any) -> Any:
    """Create the env of ``task`` from ``env_cfg`` (call inside :func:`simulation`)."""
    import gymnasium as gym

    return gym.make(task, cfg=env_cfg).unwrapped
