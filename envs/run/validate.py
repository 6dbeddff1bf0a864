"""Range checks on the resolved training settings, before the env is built or a run folder exists.

Flags are checked while the command line is parsed (:mod:`realgap.envs.run.cli`); ``--set`` values and the task's
own configs meet here, after every override is applied: one place that refuses a setting which would train nothing
(``num_learning_epochs=-2`` runs no update and exits 0), crash late (``num_steps_per_env=0``, ``sim.dt < 0``) or
poison the weights (``learning_rate=nan``). The message names the setting, its value and the range, with the
``--set`` key that changes it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

COUNTS: tuple[str, ...] = (
    "agent.max_iterations",
    "agent.save_interval",
    "agent.num_steps_per_env",
    "agent.algorithm.num_learning_epochs",
    "agent.algorithm.num_mini_batches",
    "env.decimation",
    "env.scene.num_envs",
)
"""Settings that count something: integers ≥ 1."""

POSITIVE: tuple[str, ...] = (
    "agent.algorithm.learning_rate",
    "agent.algorithm.clip_param",
    "agent.algorithm.max_grad_norm",
    "env.sim.dt",
    "env.episode_length_s",
)
"""Settings that are a size, a step or a duration: finite numbers > 0."""

UNIT_INTERVAL: tuple[str, ...] = ("agent.algorithm.gamma", "agent.algorithm.lam")
"""Discount and GAE factors: in [0, 1]."""

NONNEGATIVE: tuple[str, ...] = ("agent.algorithm.entropy_coef", "agent.algorithm.value_loss_coef")
"""Loss weights: finite numbers ≥ 0."""


def _get(roots: Mapping[str, Any], dotted: str) -> Any:
    """The value at ``dotted`` (``agent.algorithm.gamma``), or ``None`` where a part is absent."""
    root, *path = dotted.split(".")
    node = roots[root]
    for name in path:
        node = node.get(name) if isinstance(node, dict) else getattr(node, name, None)
        if node is None:
            return None
    return node


def _numbers(node: Any, path: str, depth: int = 0) -> Iterator[tuple[str, float]]:
    """Every float under ``node`` (configclasses, dicts, lists) with its dotted path."""
    if depth > 12 or isinstance(node, bool | str | int | type) or callable(node) and not hasattr(node, "__dict__"):
        return
    if isinstance(node, float):
        yield path, node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _numbers(value, f"{path}.{key}", depth + 1)
    elif isinstance(node, list | tuple):
        for i, value in enumerate(node):
            yield from _numbers(value, f"{path}[{i}]", depth + 1)
    elif hasattr(node, "__dataclass_fields__"):
        for key in node.__dataclass_fields__:
            yield from _numbers(getattr(node, key, None), f"{path}.{key}", depth + 1)


def training_cfg_errors(env_cfg: Any, agent_cfg: Any) -> list[str]:
    """Every out-of-range setting of the resolved configs, one line each (empty: all in range)."""
    roots = {"env": env_cfg, "agent": agent_cfg}
    errors: list[str] = []

    def bad(key: str, value: Any, rule: str) -> None:
        errors.append(f"{key} = {value!r} must be {rule} (change it with --set {key}=VALUE)")

    for key in COUNTS:
        value = _get(roots, key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            bad(key, value, "an integer >= 1")
    for key, rule, ok in (
        *((k, "a finite number > 0", lambda v: v > 0) for k in POSITIVE),
        *((k, "a number in [0, 1]", lambda v: 0 <= v <= 1) for k in UNIT_INTERVAL),
        *((k, "a finite number >= 0", lambda v: v >= 0) for k in NONNEGATIVE),
    ):
        value = _get(roots, key)
        if value is not None and (not isinstance(value, int | float) or not math.isfinite(value) or not ok(value)):
            bad(key, value, rule)
    named = set(COUNTS + POSITIVE + UNIT_INTERVAL + NONNEGATIVE)
    for key, value in _numbers(agent_cfg, "agent"):
        if key not in named and not math.isfinite(value):
            bad(key, value, "a finite number")
    return errors


def check_training_cfg(env_cfg: Any, agent_cfg: Any) -> None:
    """Refuse the resolved configs if any setting is out of range.

    Raises:
        ValueError: Every out-of-range setting, named with its value, its range and the ``--set`` key.
    """
    errors = training_cfg_errors(env_cfg, agent_cfg)
    if errors:
        raise ValueError("training settings out of range:\n  " + "\n  ".join(errors))
