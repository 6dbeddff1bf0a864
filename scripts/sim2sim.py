"""Sim2sim: Isaac Lab (Newton, MuJoCo-Warp) against plain MuJoCo C — contact-free first, then the closed loop.

    python scripts/sim2sim.py --checkpoint runs/balance_g1/<run>           # exports the policy if needed
    python scripts/sim2sim.py --policy runs/balance_g1/<run>/exported --episodes 16
    python scripts/sim2sim.py --zero_action --task Realgap-Balance-G1-v0 --duration_s 4

1. Open loop, no contact: the robot's root welded in the air, no friction or damping, the same
   torque sequence (gravity torque of the start pose + per-joint sinusoids) in both engines at the training physics
   step and at ``--fine_dt``: joint trajectory RMS error, each engine's energy change against the work of its torques
   (with no friction or contact they are equal; the residual is the integrator's and shrinks with the step), and a
   model checklist by name (masses, CoMs, inertias, armature, friction, gravity, step, integrator).
2. Closed loop: the exported policy (or the zero action) balancing under the same push schedule in both engines, with
   the same datasheet actuator chain and rates: survival, time up, time to fall, per-episode outcomes.

Writes one JSON (default: <run>/sim2sim.json, or runs/sim2sim/<timestamp>.json).
"""

from __future__ import annotations

import argparse
import datetime
import json
import time
from pathlib import Path
from typing import Any


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from realgap.envs.run.cli import nonnegative_float, parser, positive_float, shared_flags

    p = parser(__doc__, shared_flags("task", "episodes", "seed", task=None, episodes=8))
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--checkpoint", help="run folder or model_<it>.pt (exported to <run>/exported if needed)")
    src.add_argument("--policy", help="export folder or policy.onnx")
    src.add_argument("--zero_action", action="store_true", help="the zero action (hold the default pose)")
    p.add_argument("--duration_s", type=positive_float, default=10.0, help="closed-loop episode length, s")
    p.add_argument("--push_mps", default=None, help="LO,HI push magnitude, m/s (default: the task's)")
    p.add_argument("--push_interval_s", default=None, help="LO,HI time between pushes, s (default: the task's)")
    p.add_argument("--open_loop_s", type=positive_float, default=0.5, help="open-loop duration, s")
    p.add_argument("--fine_dt", type=nonnegative_float, default=0.001, help="second open-loop step, s (0: skip)")
    p.add_argument("--skip_closed_loop", action="store_true")
    p.add_argument("--out", default=None, help="output JSON")
    return p.parse_args(argv)


def _pair(text: str | None, default: tuple[float, float], name: str) -> tuple[float, float]:
    if text is None:
        return tuple(float(v) for v in default)
    parts = text.split(",")
    if len(parts) != 2 or float(parts[0]) > float(parts[1]) or float(parts[0]) < 0:
        raise ValueError(f"--{name} expects LO,HI with 0 <= LO <= HI, got {text!r}")
    return float(parts[0]), float(parts[1])


def open_loop(robot: str, duration_s: float, dt: float, seed: int) -> dict:
    """Both engines on the same torques at step ``dt``: trajectory errors, energy balances, model checklist."""
    from dataclasses import asdict

    from realgap.envs.robots import ROBOTS
    from realgap.envs.sim2sim.align import isaac_open_loop, model_alignment, mujoco_open_loop, open_loop_torques
    from realgap.envs.sim2sim.align_math import energy_balance, trajectory_errors

    tau = open_loop_torques(robot, duration_s, dt, seed)
    mj, il = mujoco_open_loop(robot, tau, dt), isaac_open_loop(robot, tau, dt)
    return {"dt_s": dt, "steps": len(tau), "duration_s": duration_s,
            "trajectory": trajectory_errors(il.q, mj.q, list(ROBOTS[robot].joint_names)),
            "energy": {"isaac": asdict(energy_balance(il.energy, tau, il.q)),
                       "mujoco": asdict(energy_balance(mj.energy, tau, mj.q))},
            "constraint_rows": {"isaac": il.max_constraints, "mujoco": mj.max_constraints},
            "model": model_alignment(il.model, mj.model)}  # fmt: skip


def resolve_policy(args: argparse.Namespace) -> tuple[Path | None, Path | None, Any, Any]:
    """The export folder, checkpoint, metadata and policy that ``--checkpoint`` or ``--policy`` name (a checkpoint is
    exported first unless its export is current); all None for the zero action."""
    from realgap.envs.run.runner import latest_checkpoint

    folder, checkpoint = None, None
    if args.checkpoint:
        path = Path(args.checkpoint)
        checkpoint = path if path.is_file() else latest_checkpoint(path)
        folder = checkpoint.parent / "exported"
    elif args.policy:
        folder = Path(args.policy)
        if not (folder / "policy.onnx" if folder.is_dir() else folder).is_file():
            raise FileNotFoundError(f"no policy.onnx at {folder}")
    if checkpoint is not None:
        from realgap.envs.format.metadata import load_metadata
        from realgap.envs.format.provenance import repo_relative

        onnx = folder / "policy.onnx"
        if not onnx.is_file() or load_metadata(onnx).training.get("checkpoint") != repo_relative(checkpoint.resolve()):
            from realgap.envs.export.writer import export_checkpoint

            export_checkpoint(checkpoint, args.task, device="cpu")
    meta = policy = None
    if folder is not None:
        from realgap.envs.format import load_policy

        meta, policy = load_policy(folder)
    return folder, checkpoint, meta, policy


def closed_loop(args: argparse.Namespace, task: str, env_cfg: Any, agent_cfg: Any, meta: Any, policy: Any,
                settings: dict) -> dict:  # fmt: skip
    """The same scheduled pushes in Isaac Lab and on MuJoCo; ``settings`` and the comparison of both."""
    from realgap.envs.deploy import ZeroPolicy
    from realgap.envs.deploy.sim2sim import schedules
    from realgap.envs.run.factory import make_env, simulation
    from realgap.envs.sim2sim.closed import compare, isaac_episodes, mujoco_episodes, prepare_isaac_cfg

    plan = schedules(args.episodes, args.duration_s, settings["push_mps"], settings["push_interval_s"], args.seed)
    prepare_isaac_cfg(env_cfg, args.episodes, args.duration_s)
    with simulation(env_cfg):
        env = make_env(task, env_cfg)
        if meta is None:
            from realgap.envs.export.metadata import policy_metadata

            meta = policy_metadata(env, task, ["policy"], {"policy": "zero action"}, agent_cfg.clip_actions)
            policy = ZeroPolicy(meta.action_dim)
        isaac = isaac_episodes(env, meta, policy, plan)
        env.close()
    mujoco = mujoco_episodes(meta, policy, plan, args.duration_s, settings["fall_height_m"],
                             settings["fall_tilt_rad"], args.seed)  # fmt: skip
    settings = settings | {"actuator_groups": [g.name for g in meta.actuator_groups]}
    return settings | compare(isaac, mujoco, plan)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from realgap.envs.run.factory import load_cfgs
    from realgap.tasks import play_task

    if args.episodes < 1 or args.duration_s <= 0 or args.open_loop_s <= 0:
        raise ValueError("--episodes must be >= 1, --duration_s and --open_loop_s > 0")
    t0 = time.perf_counter()
    folder, checkpoint, meta, policy = resolve_policy(args)
    task = play_task(args.task or (meta.task if meta else "Realgap-Balance-G1-v0"))
    env_cfg, agent_cfg = load_cfgs(task, "cpu", args.episodes, args.seed)
    if meta is not None:  # the export's action terms (a policy trained around another nominal pose)
        from realgap.envs.eval.policies import export_actions

        export_actions(env_cfg, meta)
    push = getattr(env_cfg.events, "push", None)
    if push is None or not hasattr(env_cfg.terminations, "fall_height"):
        raise ValueError(f"closed-loop sim2sim needs a balance task (pushes and fall terminations); {task} has none")
    push_mps = _pair(args.push_mps, push.params["magnitude_mps"], "push_mps")
    interval = _pair(args.push_interval_s, push.interval_range_s, "push_interval_s")
    fall_height = env_cfg.terminations.fall_height.params["minimum_height"]
    fall_tilt = env_cfg.terminations.fall_tilt.params["limit_angle"]
    from realgap.envs.rates import RateSpec
    from realgap.envs.robots import robot_name

    rates = RateSpec.from_dict(env_cfg.rates)
    robot = robot_name(list(env_cfg.scene.robot.init_state.joint_pos))  # every joint named in the spawn pose
    report = {"task": task, "robot": robot, "rates": rates.to_dict(), "seed": args.seed,
              "policy": str(folder) if folder else "zero action", "open_loop": []}  # fmt: skip
    for dt in [rates.sim_dt] + ([args.fine_dt] if args.fine_dt > 0 else []):
        report["open_loop"].append(open_loop(robot, args.open_loop_s, dt, args.seed))
        r = report["open_loop"][-1]
        print(f"[realgap] open loop dt {dt * 1e3:g} ms: joint RMS {r['trajectory']['rms_rad']:.2e} rad, energy "
              f"residual isaac {r['energy']['isaac']['relative_residual']:.2%} mujoco "
              f"{r['energy']['mujoco']['relative_residual']:.2%}")  # fmt: skip
    if not args.skip_closed_loop:
        settings = {"episodes": args.episodes, "duration_s": args.duration_s, "push_mps": push_mps,
                    "push_interval_s": interval, "fall_height_m": fall_height, "fall_tilt_rad": fall_tilt}  # fmt: skip
        report["closed_loop"] = closed_loop(args, task, env_cfg, agent_cfg, meta, policy, settings)
        c = report["closed_loop"]
        print(f"[realgap] closed loop: survival isaac {c['isaac']['survival_rate']:.2f} mujoco "
              f"{c['mujoco']['survival_rate']:.2f}, same outcome {c['same_outcome_rate']:.2f}")  # fmt: skip
    report["wall_s"] = round(time.perf_counter() - t0, 1)
    if args.out:
        out = Path(args.out)
    elif checkpoint is not None:
        out = checkpoint.parent / "sim2sim.json"
    else:
        out = Path("runs") / "sim2sim" / f"{datetime.datetime.now():%Y-%m-%d_%H-%M-%S}.json"
    from realgap.envs.eval.sweep import finite_or_none

    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(finite_or_none(report), indent=2))
    print(f"[realgap] wrote {out} in {report['wall_s']} s")
    return 0


if __name__ == "__main__":
    from realgap.envs.format import MetadataError
    from realgap.envs.run.cli import run_cli
    from realgap.envs.run.runner import CheckpointError

    run_cli(main, extra_errors=(CheckpointError, MetadataError))
