"""Shared pytest fixtures.

Sim-tier tests build kitless Isaac Lab envs on the CPU with few envs. Only one env may be alive at a time in a process
(Isaac Lab's SimulationContext is a singleton): use :func:`build_env` as a context manager, which closes the env and
clears the simulation on exit, so the next test module can build its own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest


@contextlib.contextmanager
def build_env(task: str, num_envs: int = 4, seed: int = 0, prepare: Callable[[Any], None] | None = None,
              **overrides: Any) -> Iterator[Any]:  # fmt: skip
    """Build ``task`` on the CPU with ``num_envs`` envs; ``prepare(env_cfg)`` and ``overrides`` (``a__b=value``)
    edit the env cfg first."""
    from realgap.envs.factory import load_cfgs, make_env, simulation

    env_cfg, _ = load_cfgs(task, "cpu", num_envs, seed)
    if prepare is not None:
        prepare(env_cfg)
    for dotted, value in overrides.items():
        *parents, leaf = dotted.split("__")
        target = env_cfg
        for name in parents:
            target = getattr(target, name)
        setattr(target, leaf, value)
    with simulation(env_cfg):
        env = make_env(task, env_cfg)
        try:
            yield env
        finally:
            env.close()


@pytest.fixture
def env_builder():
    """The :func:`build_env` context manager, for sim tests."""
    return build_env
