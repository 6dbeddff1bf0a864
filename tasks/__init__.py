"""realgap tasks. Importing this package registers every task id with gymnasium (cheap: no simulator import)."""

import gymnasium as gym

from realgap.tasks import (
    balance,  # noqa: F401  (registers Realgap-Balance-*)
    grasp,  # noqa: F401  (registers Realgap-Grasp-Franka-*)
)

TASK_PREFIX = "Realgap-"
DEFAULT_TASK = balance.CROUCH_TASK
"""The task ``scripts/train.py`` trains when no ``--task`` is given: the shipped balance recipe, the crouch
(``configs/policies/balance_g1``)."""
GRASP_TASK = grasp.RECOMMENDED_TASK
"""The recommended grasp task: end-effector pose increments (``configs/policies/grasp_franka``)."""


def registered_tasks() -> list[str]:
    """All realgap task ids, sorted."""
    return sorted(name for name in gym.registry if name.startswith(TASK_PREFIX))


class UnknownTaskError(KeyError):
    """A task id that is not registered; the message lists the registered ones."""

    def __str__(self) -> str:
        return str(self.args[0])


def check_task(task: str) -> str:
    """Return ``task`` if registered, else raise :class:`UnknownTaskError` listing the known ids."""
    if task not in registered_tasks():
        known = "\n  ".join(registered_tasks())
        raise UnknownTaskError(f"Unknown task '{task}'. Registered realgap tasks:\n  {known}")
    return task


def play_task(task: str) -> str:
    """The evaluation variant of ``task`` (``...-Play-v0``) when one is registered, else ``task`` itself."""
    check_task(task)
    if "-Play-" in task:
        return task
    head, _, version = task.rpartition("-")
    candidate = f"{head}-Play-{version}"
    return candidate if candidate in registered_tasks() else task
