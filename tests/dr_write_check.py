"""A DR write changes the dynamics that follow it, also when the physics step is a replayed CUDA graph.

Shared by the sim tier (CPU, no graph) and the gpu tier (CUDA, graph captured before the write): the graph records
pointers to Newton's model arrays, so a DR writer must change them in place and in stream order
(:func:`realgap.envs.dr.events.solver_update`) or the replay keeps simulating the old robot.
"""

from __future__ import annotations

from typing import Any

import torch


def _rollout(env: Any, steps: int) -> torch.Tensor:
    """Base height and joint positions of every env after each of ``steps`` zero-action steps. Shape ``(T, E, 1+J)``."""
    robot = env.scene["robot"]
    act = torch.zeros(env.num_envs, env.action_manager.total_action_dim, device=env.device)
    out = []
    for _ in range(steps):
        env.step(act)
        out.append(torch.cat([robot.data.root_pos_w.torch[:, 2:3], robot.data.joint_pos.torch], dim=-1).clone())
    return torch.stack(out)


def dr_write_effect(env: Any, body: str = "torso_link", scale: float = 2.0, steps: int = 25) -> tuple[float, float]:
    """Run the same ``steps`` from one saved state three times: twice as built, then after scaling ``body``'s mass by
    ``scale`` in every env through the DR writers' path. Returns (largest change the write made, largest difference
    between the two unwritten runs: the engine's run-to-run noise, 0 on the CPU).

    The env must be stepped at least once before (on CUDA the graph is captured then).
    """
    from newton import ModelFlags

    from realgap.envs.dr.events import solver_update
    from realgap.envs.run.snapshot import capture_env, restore_env

    saved = capture_env(env)
    first = _rollout(env, steps)
    restore_env(env, saved)
    again = _rollout(env, steps)
    restore_env(env, saved)
    robot = env.scene["robot"]
    col = robot.body_names.index(body)
    ids = torch.arange(env.num_envs, device=env.device)
    mass = robot.data.body_mass.torch[:, col : col + 1].clone() * scale
    body_ids = torch.tensor([col], dtype=torch.int32, device=env.device)
    with solver_update(env, ModelFlags.BODY_INERTIAL_PROPERTIES, True, ids):
        robot.set_masses_index(masses=mass, body_ids=body_ids, env_ids=ids)
    written = _rollout(env, steps)
    return float((written - first).abs().max()), float((again - first).abs().max())
