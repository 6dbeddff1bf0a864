"""Everything a training run's env holds, saved and restored, so a resumed run continues exactly.

rsl-rl's checkpoint holds the networks and the optimizer; continuing a run *exactly* (the same losses and episode
statistics an uninterrupted run with the same seed would produce) also needs the state the simulation and the env's
managers carry from one iteration to the next: every env's bodies and joints mid-episode, the solver's warm start,
episode counters, the actuator chain's delay buffers and held targets, event timers (when the next push comes), each
randomization term's generator, the reward and metric terms' running state, the logger's episode buffers.

Rather than listing those (a list goes stale the first time a term gains a field), :func:`capture` walks the object
graph below the env and the runner and keeps every tensor, warp array, generator state and number it finds in the
objects of the libraries that hold simulation state (Isaac Lab, Newton, MuJoCo-Warp, rsl-rl, realgap); configs,
callables and modules are skipped, except a manager term config's class-based term (``cfg.func``: the only place Isaac
Lab keeps a stateful curriculum, event or reward term). :func:`restore` walks the same graph in a freshly built env
and writes the values back in place, refusing a snapshot whose simulator arrays do not fit (another task, env count or
robot). Known: with link or payload inertia randomized, a resumed run drifts from the uninterrupted one by about 1e-5
relative in its mean reward (something below the randomized inertia is not restored bit for bit;
``tests/slow/test_reliability.py``).

The snapshot of the newest checkpoint is written beside it (``model_<it>.env.pt``, older ones removed: only the newest
checkpoint resumes exactly); a resume from a checkpoint without one continues from freshly reset envs, as rsl-rl does.
"""

from __future__ import annotations

import dataclasses
import enum
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch
import warp as wp

STATEFUL_MODULES = ("isaaclab", "realgap", "newton", "mujoco_warp", "rsl_rl")
"""Objects of these packages are walked into; anything else is a leaf or skipped."""
SKIP_ATTRS = frozenset(
    {
        "cfg",
        "_cfg",
        "writer",
        "stage",
        "_stage",
        "_sim",
        "sim",
        "_physics_sim_view",
        "unwrapped",
        "git_status_repos",
        "log_dir",
    }
)
"""Attributes never walked: configs (immutable), the TensorBoard writer, the USD stage, back-references."""
MAX_DEPTH = 12
LEAVES = (torch.Tensor, wp.array, np.ndarray, torch.Generator, bool, int, float, deque)


class SnapshotError(RuntimeError):
    """A snapshot that does not fit the env it is restored into."""


def _walked(value: Any) -> bool:
    """An object of a stateful package (not a class, function or config) whose attributes are walked."""
    cls = type(value)
    if isinstance(value, type) or cls.__name__.endswith(("Cfg", "Config")):  # configclasses: set once, never stepped
        return False
    if dataclasses.is_dataclass(value):
        return True
    return cls.__module__.startswith(STATEFUL_MODULES) and hasattr(value, "__dict__")  # isaaclab_newton too


def _term_instance(value: Any) -> Any:
    """A manager term config's class-based term (a curriculum's level, a randomization term's generator): Isaac Lab
    keeps the instance only in the config's ``func``, so it is walked although the config is not. None otherwise."""
    if not type(value).__name__.endswith("Cfg"):
        return None
    func = getattr(value, "func", None)
    return func if func is not None and _walked(func) else None


def _children(obj: Any) -> Iterator[tuple[Any, Any]]:
    if isinstance(obj, dict):
        yield from ((k, v) for k, v in list(obj.items()) if isinstance(k, str | int))
    elif isinstance(obj, list | tuple):
        yield from enumerate(obj)
    else:
        yield from ((k, v) for k, v in list(vars(obj).items()) if k not in SKIP_ATTRS)


def walk(roots: dict[str, Any], visit: Callable[[Any, Any, Any, str], None]) -> None:
    """Call ``visit(container, key, value, path)`` for every leaf below ``roots``, in a fixed order (the order in
    which the objects were built); an object reached twice is visited once."""
    seen: set[int] = set()

    def go(obj: Any, path: str, depth: int) -> None:
        if id(obj) in seen or depth > MAX_DEPTH:
            return
        seen.add(id(obj))
        for key, value in _children(obj):
            sub = f"{path}.{key}"
            if isinstance(value, LEAVES) and not isinstance(value, enum.Enum):
                visit(obj, key, value, sub)
            elif isinstance(value, dict | list | tuple) or _walked(value):
                go(value, sub, depth + 1)
            elif (term := _term_instance(value)) is not None:
                go(term, f"{sub}.func", depth + 1)

    for name, root in roots.items():
        if root is not None:
            go(root, name, 0)


def _copy(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", copy=True)
    if isinstance(value, wp.array):
        return value.numpy().copy() if value.size else None
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, torch.Generator):
        return {"generator_state": value.get_state()}
    if isinstance(value, deque):
        return {"deque": list(value)}
    return value


def capture(roots: dict[str, Any]) -> dict[str, Any]:
    """Every leaf value below ``roots``, by path (tensors and arrays copied to the host)."""
    out: dict[str, Any] = {}
    walk(roots, lambda container, key, value, path: out.__setitem__(path, _copy(value)))
    return out


def restore(roots: dict[str, Any], saved: dict[str, Any]) -> int:
    """Write ``saved`` (from :func:`capture`) back into the objects below ``roots``; the number of values written.

    Raises:
        SnapshotError: A simulator array's shape differs from the env's (another task, robot or env count), naming
            the path.
    """
    written: set[str] = set()

    def visit(container: Any, key: Any, value: Any, path: str) -> None:
        if path not in saved:
            return
        new = saved[path]
        if isinstance(value, wp.array):  # simulator buffers: allocated once, never reshaped
            shape = tuple(getattr(new, "shape", ()))[: len(value.shape)]  # a vector array: trailing dims in numpy
            if new is not None and shape != tuple(value.shape):
                raise SnapshotError(f"snapshot value {path}: {_describe(new)} does not fit {_describe(value)}")
            if new is not None:
                value.assign(new)
        elif isinstance(value, torch.Tensor | np.ndarray):
            new = new.to(value.device) if isinstance(value, torch.Tensor) else new
            if tuple(new.shape) == tuple(value.shape):
                value[...] = new
            elif isinstance(container, dict | list):  # a buffer the code re-assigns (not in place) as it runs
                container[key] = new
            elif not isinstance(container, tuple):
                object.__setattr__(container, key, new)
        elif isinstance(value, torch.Generator):
            value.set_state(new["generator_state"])
        elif isinstance(value, deque):
            value.clear()
            value.extend(new["deque"])
        elif value == new or isinstance(container, tuple):  # unchanged (sizes, counts), or immutable
            pass
        elif isinstance(container, dict | list):
            container[key] = new
        else:
            object.__setattr__(container, key, new)  # frozen dataclasses too (a counter they keep)
        written.add(path)

    with torch.inference_mode():  # the env's buffers are inference tensors (made during rollouts)
        walk(roots, visit)
    # entries a running env adds to its dicts (per-step logs in extras) have no place in a fresh one: transient
    return len(written)


def _describe(value: Any) -> str:
    return f"{type(value).__name__}{tuple(value.shape)}" if hasattr(value, "shape") else type(value).__name__


def _roots(env: Any, runner: Any | None) -> dict[str, Any]:
    from isaaclab_newton.physics import NewtonManager

    roots = {
        "env": getattr(env, "unwrapped", env),
        "backend": NewtonManager.backend,
        "solver": NewtonManager._solver,
        "contacts": NewtonManager._contacts,
    }
    if runner is not None:
        roots["logger"] = runner.logger  # rsl-rl's episode reward / length buffers
    return roots


def capture_env(env: Any, runner: Any | None = None) -> dict[str, Any]:
    """The state of ``env`` (Isaac Lab env, Newton backend and solver, the physics clock) and of ``runner``'s logger."""
    from isaaclab.physics.physics_manager import PhysicsManager

    return {"values": capture(_roots(env, runner)), "sim_time": PhysicsManager._sim_time}


def restore_env(env: Any, snapshot: dict[str, Any], runner: Any | None = None) -> int:
    """Write a :func:`capture_env` snapshot back into ``env`` (and ``runner``'s logger); the number of values."""
    from isaaclab.physics.physics_manager import PhysicsManager

    count = restore(_roots(env, runner), snapshot["values"])
    PhysicsManager._sim_time = snapshot["sim_time"]
    return count
