"""Reading a manager's class-based term, where Isaac Lab gives no public getter.

The event, reward and termination managers have ``get_term_cfg(name)``; the curriculum manager has none, so the one
place that reads its private term list is here, with an error that names the terms it does have.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv


def curriculum_term(env: ManagerBasedRLEnv, name: str) -> Any:
    """The callable (a class-based term's instance) of the curriculum term ``name`` of ``env``.

    Raises:
        KeyError: ``env`` has no active curriculum term ``name`` (names the active ones).
    """
    manager = env.curriculum_manager
    names = list(manager.active_terms)
    if name not in names:
        raise KeyError(f"no curriculum term {name!r}; the env's curriculum terms: {', '.join(names) or 'none'}")
    return manager._term_cfgs[names.index(name)].func
