"""Throughput measurements used by ``scripts/benchmark.py``: each returns plain numbers, never asserts on them.

All figures are steps per second of wall-clock time on whatever machine runs them; compare figures measured in the
same run (the ratios), not across machines or runs.
"""

from __future__ import annotations

import time
from typing import Any

import torch


def env_policy_steps(
    task: str, num_envs: int, steps: int, warmup: int = 20, seed: int = 0, actuators: str = "realgap"
) -> dict[str, Any]:
    """Policy steps/s of the full Isaac Lab env (managers, MDP terms, actuators, physics) under random actions.

    Args:
        actuators: ``"realgap"`` (the task's explicit datasheet chain) or ``"implicit"`` (Isaac Lab's implicit PD with
            the same gains, armature, friction and limits: :func:`realgap.actuators.lab.implicit_actuator_cfg`).

    Returns:
        ``num_envs``, ``policy_steps`` (per env), ``physics_steps`` (per env), ``seconds``, ``policy_steps_per_s``
        (env-steps: num_envs × steps / s) and ``physics_steps_per_s``.
    """
    from realgap.envs.factory import load_cfgs, make_env, simulation

    env_cfg, _ = load_cfgs(task, num_envs=num_envs, seed=seed)
    if actuators == "implicit":
        _use_implicit_actuators(env_cfg)
    elif actuators != "realgap":
        raise ValueError(f"actuators must be 'realgap' or 'implicit', got {actuators!r}")
    with simulation(env_cfg):
        env = make_env(task, env_cfg)
        env.reset()
        gen = torch.Generator(device=env.device).manual_seed(seed)
        dim = env.action_manager.total_action_dim

        def act() -> torch.Tensor:
            # policy-like actions: N(0, 0.3) in action units (0.075 rad of joint-target offset for the balance task)
            return 0.3 * torch.randn(num_envs, dim, generator=gen, device=env.device)

        for _ in range(warmup):
            env.step(act())
        t0 = time.perf_counter()
        for _ in range(steps):
            env.step(act())
        seconds = time.perf_counter() - t0
        decimation = env.cfg.decimation
        env.close()
    return {
        "actuators": actuators,
        "num_envs": num_envs,
        "policy_steps": steps,
        "physics_steps": steps * decimation,
        "seconds": seconds,
        "policy_steps_per_s": num_envs * steps / seconds,
        "physics_steps_per_s": num_envs * steps * decimation / seconds,
    }


def _use_implicit_actuators(env_cfg: Any) -> None:
    """Swap every realgap actuator of the scene for Isaac Lab's implicit PD with the same datasheet numbers."""
    from realgap.actuators.lab import implicit_actuator_cfg
    from realgap.actuators.spec import ActuatorSpec

    for name in dir(env_cfg.scene):
        asset = getattr(env_cfg.scene, name, None)
        acts = getattr(asset, "actuators", None) or {}
        for key, act in list(acts.items()):
            if hasattr(act, "specs"):
                acts[key] = implicit_actuator_cfg({k: ActuatorSpec.from_dict(v) for k, v in act.specs.items()})


def bare_physics_steps(task: str, num_envs: int, physics_steps: int, warmup: int = 80, seed: int = 0) -> dict[str, Any]:
    """Physics steps/s of the same scene (same articulation, actuators, ground) stepped with no env around it.

    The robot's actuators hold the default pose; every step writes the actuator torques and steps the solver, which is
    the least any env must do. The difference to :func:`env_policy_steps` is the env's own overhead (managers,
    observations, rewards, resets).
    """
    from isaaclab.scene import InteractiveScene
    from isaaclab.sim import SimulationContext

    from realgap.envs.factory import load_cfgs, simulation

    env_cfg, _ = load_cfgs(task, num_envs=num_envs, seed=seed)
    with simulation(env_cfg):
        sim = SimulationContext(env_cfg.sim)
        env_cfg.scene.num_envs = num_envs
        scene = InteractiveScene(env_cfg.scene)
        sim.reset()
        robot = scene["robot"]
        robot.write_joint_state_to_sim_index(
            position=robot.data.default_joint_pos.torch.clone(), velocity=robot.data.default_joint_vel.torch.clone()
        )
        target = robot.data.default_joint_pos.torch.clone()
        dt = sim.get_physics_dt()

        def step() -> None:
            robot.actuators.target_command.set_position_index(value=target)
            scene.write_data_to_sim()
            sim.step(render=False)
            scene.update(dt)

        for _ in range(warmup):
            step()
        t0 = time.perf_counter()
        for _ in range(physics_steps):
            step()
        seconds = time.perf_counter() - t0
        sim.clear_instance()
    return {
        "num_envs": num_envs,
        "physics_steps": physics_steps,
        "seconds": seconds,
        "physics_steps_per_s": num_envs * physics_steps / seconds,
    }
