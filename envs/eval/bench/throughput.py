"""Throughput measurements used by ``scripts/benchmark.py``: each returns plain numbers, never asserts on them.

All figures are steps per second of wall-clock time on whatever machine runs them; compare figures measured in the
same run (the ratios), not across machines or runs.
"""

from __future__ import annotations

import csv
import subprocess
import tempfile
import time
from typing import Any

import torch


def _synchronize(device: str) -> None:
    """Wait for the queued GPU work (CUDA runs asynchronously: a wall-clock reading needs it done); CPU: nothing."""
    if str(device).startswith("cuda"):
        torch.cuda.synchronize(device)


class _SolverClock:
    """Wall-clock time spent inside ``sim.step`` (the physics solver): warp runs CPU kernels synchronously, so the
    time a call takes is the solver's work; on a GPU the call returns before the kernels finish and the split is not
    meaningful (``physics_seconds`` is then a lower bound)."""

    def __init__(self, sim: Any) -> None:
        self.seconds = 0.0
        self._step = sim.step

        def timed_step(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            out = self._step(*args, **kwargs)
            self.seconds += time.perf_counter() - t0
            return out

        sim.step = timed_step


def env_policy_steps(
    task: str,
    num_envs: int,
    steps: int,
    warmup: int = 20,
    seed: int = 0,
    actuators: str = "realgap",
    action_std: float = 0.0,
    device: str | None = None,
) -> dict[str, Any]:
    """Policy steps/s of the full Isaac Lab env (managers, MDP terms, actuators, physics).

    Args:
        device: ``cpu`` | ``cuda`` | ``cuda:N`` (default: CUDA when torch sees one, else the CPU).
        actuators: ``"realgap"`` (the task's explicit datasheet chain) or ``"implicit"`` (Isaac Lab's implicit PD with
            the same gains, armature, friction and limits: :func:`realgap.envs.sim.actuator.implicit_actuator_cfg`).
        action_std: Actions ``N(0, action_std)`` in action units. The default 0 (hold the default pose) keeps the
            robots in the state :func:`bare_physics_steps` steps, so the two differ by the env's own work only;
            random actions knock robots over, and falling bodies with many contacts cost the solver more.

    Returns:
        ``num_envs``, ``policy_steps`` (per env), ``physics_steps`` (per env), ``seconds``, ``policy_steps_per_s``
        (env-steps: num_envs × steps / s), ``physics_steps_per_s``, ``physics_seconds`` (inside the solver step) and
        ``overhead_over_physics`` ((seconds − physics_seconds) / physics_seconds: the env's own work for the physics it
        ran, whatever state the robots are in).
    """
    from realgap.envs.dr.targets import use_actuator_model
    from realgap.envs.run.factory import load_cfgs, make_env, simulation

    env_cfg, _ = load_cfgs(task, device, num_envs=num_envs, seed=seed)
    if actuators == "implicit":
        use_actuator_model(env_cfg, "implicit_pd")
    elif actuators != "realgap":
        raise ValueError(f"actuators must be 'realgap' or 'implicit', got {actuators!r}")
    with simulation(env_cfg):
        env = make_env(task, env_cfg)
        env.reset()
        gen = torch.Generator(device=env.device).manual_seed(seed)
        dim = env.action_manager.total_action_dim

        def act() -> torch.Tensor:
            return action_std * torch.randn(num_envs, dim, generator=gen, device=env.device)

        for _ in range(warmup):
            env.step(act())
        clock = _SolverClock(env.sim)
        t0 = time.perf_counter()
        for _ in range(steps):
            env.step(act())
        _synchronize(env.device)
        seconds = time.perf_counter() - t0
        decimation = env.cfg.decimation
        env.close()
    return {
        "actuators": actuators,
        "action_std": action_std,
        "num_envs": num_envs,
        "policy_steps": steps,
        "physics_steps": steps * decimation,
        "seconds": seconds,
        "policy_steps_per_s": num_envs * steps / seconds,
        "physics_steps_per_s": num_envs * steps * decimation / seconds,
        "physics_seconds": clock.seconds,
        "overhead_over_physics": (seconds - clock.seconds) / clock.seconds,
    }


def bare_physics_steps(
    task: str, num_envs: int, physics_steps: int, warmup: int = 80, seed: int = 0, device: str | None = None
) -> dict[str, Any]:
    """Physics steps/s of the same scene (same articulation, actuators, ground) stepped with no env around it.

    The robot's actuators hold the default pose; every step writes the actuator torques and steps the solver, which is
    the least any env must do. The difference to :func:`env_policy_steps` is the env's own overhead (managers,
    observations, rewards, resets). ``device`` as in :func:`env_policy_steps`.
    """
    from isaaclab.scene import InteractiveScene
    from isaaclab.sim import SimulationContext

    from realgap.envs.run.factory import load_cfgs, simulation

    env_cfg, _ = load_cfgs(task, device, num_envs=num_envs, seed=seed)
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
        clock = _SolverClock(sim)
        t0 = time.perf_counter()
        for _ in range(physics_steps):
            step()
        _synchronize(env_cfg.sim.device)
        seconds = time.perf_counter() - t0
        sim.clear_instance()
    return {
        "num_envs": num_envs,
        "physics_steps": physics_steps,
        "seconds": seconds,
        "physics_steps_per_s": num_envs * physics_steps / seconds,
        "physics_seconds": clock.seconds,
        "overhead_over_physics": (seconds - clock.seconds) / clock.seconds,
    }


def ppo_steps(
    task: str, num_envs: int, iterations: int, num_procs: int = 1, seed: int = 0, device: str | None = None
) -> dict[str, Any]:
    """PPO end to end (``scripts/train.py`` in a subprocess, as a user runs it): env-steps/s, collection and learning.

    The first iteration (kernel warm-up, episode-length randomization) is left out of the means. ``device`` is
    train.py's ``--device`` (``None``: its default); on CUDA each of ``num_procs`` processes needs a GPU of its own.
    """
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[3]
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            sys.executable,
            str(repo / "scripts" / "train.py"),
            "--task",
            task,
            "--num_envs",
            str(num_envs),
            "--max_iterations",
            str(iterations),
            "--seed",
            str(seed),
            "--log_root",
            tmp,
            "--num_procs",
            str(num_procs),
            "--save_interval",
            str(10 * iterations),
        ]
        cmd += ["--device", device] if device else []
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        if out.returncode != 0:
            raise RuntimeError(f"training failed: {out.stderr[-2000:]}")
        (progress,) = Path(tmp).glob("*/*/progress.csv")
        rows = list(csv.DictReader(open(progress)))[1:]
    collect = sum(float(r["collect_s"]) for r in rows) / len(rows)
    learn = sum(float(r["learn_s"]) for r in rows) / len(rows)
    steps = num_envs * 24  # num_steps_per_env of the realgap PPO configs
    return {
        "num_envs": num_envs,
        "num_procs": num_procs,
        "iterations_timed": len(rows),
        "collect_s": collect,
        "learn_s": learn,
        "env_steps_per_s": steps / (collect + learn),
        "collect_share": collect / (collect + learn),
    }


def mujoco_steps(meta: Any, seconds: float = 5.0) -> dict[str, Any]:
    """Plain MuJoCo C on the same robot description, single thread: the CPU limit, and the deploy runtime on it.

    ``raw`` (the reference): the G1 from its default pose holding it under PD, τ = Kp·(q0 − q) − Kd·q̇ with the G1
    datasheet gains (``G1_ACTUATORS``; torque limits as trained), computed in the same loop, restarted if the pelvis
    drops below 0.3 m: standing contact, as in training. ``raw_zero_torque``: the same model with τ = 0; it
    collapses and lies on the ground, where many more contacts make each step dearer (measured 12k vs 28-37k steps/s):
    reported, labelled, never the reference. ``runtime``: the torch-free deploy runtime with a zero policy
    (observations, actuator chain every physics step, MuJoCo step): what sim2sim and a robot pay.
    """
    import mujoco
    import numpy as np

    from realgap.actuators.spec import resolve_joint_specs
    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.deploy.runtime import DeployRuntime, ZeroPolicy
    from realgap.envs.robots.g1 import G1_ACTUATORS

    robot = MujocoRobot.for_policy(meta)
    n = max(1, int(seconds / meta.rates.sim_dt))
    specs = resolve_joint_specs(robot.joint_names, G1_ACTUATORS)
    kp, kd = np.array([s.kp for s in specs]), np.array([s.kd for s in specs])  # N·m/rad, N·m·s/rad (datasheet)
    q0 = np.array([dict(zip(meta.joint_names, meta.default_joint_pos, strict=True))[j] for j in robot.joint_names])
    falls = 0
    t0 = time.perf_counter()
    for k in range(n):
        joints = robot.read_joints()
        # realgap.actuators.models.pd_torque with q̇* = 0, written out: the reference is the CPU limit, so it pays no
        # function dispatch per step
        robot.send_torques(kp * (q0 - joints.pos) - kd * joints.vel)
        robot.step()
        if k % 50 == 49 and robot.root_height() < 0.3:
            robot.reset()
            falls += 1
    raw = n / (time.perf_counter() - t0)
    robot.reset()
    t0 = time.perf_counter()
    for _ in range(n):
        mujoco.mj_step(robot.model, robot.data)  # ctrl = 0 after reset
    zero_torque = n / (time.perf_counter() - t0)
    robot.reset()
    runtime = DeployRuntime(meta, robot, ZeroPolicy(meta.action_dim))
    policy_steps = max(1, n // runtime.steps_per_policy)
    t0 = time.perf_counter()
    for _ in range(policy_steps):
        runtime.step()
        if robot.root_height() < 0.3:  # fallen: restart so the timing covers standing contact, as in training
            robot.reset()
            runtime.reset()
    elapsed = time.perf_counter() - t0
    physics = policy_steps * runtime.steps_per_policy
    return {
        "raw_reference": "G1 standing from its default pose under datasheet PD (restarted if it falls)",
        "raw_mj_steps_per_s": raw,
        "raw_restarts": falls,
        "raw_zero_torque_mj_steps_per_s": zero_torque,
        "raw_zero_torque": "G1 with zero torque: collapses and lies on the ground (not a reference)",
        "runtime_physics_steps_per_s": physics / elapsed,
        "runtime_policy_steps_per_s": policy_steps / elapsed,
        "runtime_over_raw": physics / elapsed / raw,
    }


def policy_metadata_of(task: str) -> Any:
    """Export metadata of ``task`` (an untrained policy's: joint order, actuators, rates) from a 1-env build."""
    from realgap.envs.export.metadata import policy_metadata
    from realgap.envs.run.factory import load_cfgs, make_env, simulation

    env_cfg, agent_cfg = load_cfgs(task, num_envs=1)
    with simulation(env_cfg):
        env = make_env(task, env_cfg)
        meta = policy_metadata(env, task, ["policy"], {}, raw_action_clip=agent_cfg.clip_actions)
        env.close()
    return meta
