"""Sim2sim from its inputs to its report (``scripts/sim2sim.py``): Isaac Lab (Newton, MuJoCo-Warp) against plain
MuJoCo C, contact-free first (:func:`open_loop`), then the closed loop (:func:`closed_loop`), callable without the
command line.

:func:`resolve_policy` reads (and, for a checkpoint whose export is not current, first writes) the export;
:func:`sim2sim` checks the task, runs both stages, prints one line per stage and writes the JSON.
"""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from realgap.envs.eval.robustness.evaluation import ZERO_ACTION_TASK
from realgap.envs.rates import RateSpec


@dataclass(frozen=True)
class Sim2SimRequest:
    """A sim2sim comparison as scripts/sim2sim.py's flags give it (see its ``--help`` for each)."""

    task: str | None = None
    episodes: int = 8
    seed: int = 0
    checkpoint: str | None = None
    policy: str | None = None
    zero_action: bool = False
    duration_s: float | None = None
    push_mps: str | None = None
    push_interval_s: str | None = None
    open_loop_s: float = 0.5
    fine_dt: float = 0.001
    skip_closed_loop: bool = False
    out: str | None = None


def open_loop(robot: str, duration_s: float, dt: float, seed: int) -> dict:
    """Both engines on the same torques at step ``dt``: trajectory errors, energy balances, model checklist."""

    from realgap.envs.robots import ROBOTS
    from realgap.envs.sim2sim.align import isaac_open_loop, model_alignment, mujoco_open_loop, open_loop_torques
    from realgap.envs.sim2sim.align_math import energy_balance, trajectory_errors

    tau = open_loop_torques(robot, duration_s, dt, seed)
    mj, il = mujoco_open_loop(robot, tau, dt), isaac_open_loop(robot, tau, dt)
    return {
        "dt_s": dt,
        "steps": len(tau),
        "duration_s": duration_s,
        "trajectory": trajectory_errors(il.q, mj.q, list(ROBOTS[robot].joint_names)),
        "energy": {
            "isaac": asdict(energy_balance(il.energy, tau, il.q)),
            "mujoco": asdict(energy_balance(mj.energy, tau, mj.q)),
        },
        "constraint_rows": {"isaac": il.max_constraints, "mujoco": mj.max_constraints},
        "model": model_alignment(il.model, mj.model),
    }


def resolve_policy(req: Sim2SimRequest) -> tuple[Path | None, Path | None, Any, Any]:
    """The export folder, checkpoint, metadata and policy that ``checkpoint`` or ``policy`` name (a checkpoint is
    exported first unless its export is current); all None for the zero action.

    Raises:
        FileNotFoundError: No policy.onnx at ``policy``.
        CheckpointError: A run folder without a checkpoint.
    """
    from realgap.envs.export.writer import EXPORT_DIR
    from realgap.envs.run.runner import latest_checkpoint

    folder, checkpoint = None, None
    if req.checkpoint:
        path = Path(req.checkpoint)
        checkpoint = path if path.is_file() else latest_checkpoint(path)
        folder = checkpoint.parent / EXPORT_DIR
    elif req.policy:
        folder = Path(req.policy)
        if not (folder / "policy.onnx" if folder.is_dir() else folder).is_file():
            raise FileNotFoundError(f"no policy.onnx at {folder}")
    if checkpoint is not None:
        from realgap.envs.format.metadata import load_metadata
        from realgap.envs.format.provenance import repo_relative

        onnx = folder / "policy.onnx"
        if not onnx.is_file() or load_metadata(onnx).training.get("checkpoint") != repo_relative(checkpoint.resolve()):
            from realgap.envs.export.writer import export_checkpoint

            export_checkpoint(checkpoint, req.task, device="cpu")
    meta = policy = None
    if folder is not None:
        from realgap.envs.format import load_policy

        meta, policy = load_policy(folder)
    return folder, checkpoint, meta, policy


def closed_loop(
    req: Sim2SimRequest, task: str, env_cfg: Any, agent_cfg: Any, meta: Any, policy: Any, settings: dict
) -> dict:
    """The same scheduled pushes in Isaac Lab and on MuJoCo; ``settings`` and the comparison of both."""
    from realgap.envs.deploy import ZeroPolicy
    from realgap.envs.deploy.episode import schedules
    from realgap.envs.format.protocol import BalanceProtocol
    from realgap.envs.run.factory import make_env, simulation
    from realgap.envs.sim2sim.closed import compare, isaac_episodes, mujoco_episodes, prepare_isaac_cfg

    protocol = BalanceProtocol.from_dict(settings["protocol"])
    plan = schedules(req.episodes, protocol, req.seed)
    prepare_isaac_cfg(env_cfg, req.episodes, protocol.episode_s)
    with simulation(env_cfg):
        env = make_env(task, env_cfg)
        if meta is None:
            from realgap.envs.export.metadata import policy_metadata

            meta = policy_metadata(env, task, ["policy"], {"policy": "zero action"}, agent_cfg.clip_actions)
            policy = ZeroPolicy(meta.action_dim)
        isaac = isaac_episodes(env, meta, policy, plan)
        env.close()
    mujoco = mujoco_episodes(meta, policy, plan, protocol, req.seed)
    settings = settings | {"actuator_groups": [g.name for g in meta.actuator_groups]}
    return settings | compare(isaac, mujoco, plan)


def default_out(checkpoint: Path | None) -> Path:
    """``<run>/sim2sim.json`` for a checkpoint, else ``runs/sim2sim/<timestamp>.json``."""
    if checkpoint is not None:
        return checkpoint.parent / "sim2sim.json"
    return Path("runs") / "sim2sim" / f"{datetime.datetime.now():%Y-%m-%d_%H-%M-%S}.json"


def sim2sim(req: Sim2SimRequest, echo: Callable[[str], None] = print) -> tuple[dict[str, Any], Path]:
    """Open loop at the training physics step (and at ``fine_dt`` unless 0), then the closed loop unless skipped;
    ``echo`` one line per stage; write the report. Returns the report and its path.

    Raises:
        ValueError: Counts or durations out of range, push ranges not ``0 <= LO <= HI``, a task without pushes and
            fall terminations.
    """
    from realgap.envs.run.factory import load_cfgs
    from realgap.tasks import play_task

    if req.episodes < 1 or (req.duration_s is not None and not req.duration_s > 0) or not req.open_loop_s > 0:
        raise ValueError("--episodes must be >= 1, --duration_s and --open_loop_s > 0")
    t0 = time.perf_counter()
    folder, checkpoint, meta, policy = resolve_policy(req)
    task = play_task(req.task or (meta.task if meta else ZERO_ACTION_TASK))
    env_cfg, agent_cfg = load_cfgs(task, "cpu", req.episodes, req.seed)
    if meta is not None:  # the export's action terms (a policy trained around another nominal pose)
        from realgap.envs.eval.policies import export_actions

        export_actions(env_cfg, meta)
    from realgap.envs.deploy.flags import protocol_from_flags
    from realgap.envs.dr.push import find_push
    from realgap.envs.export.scene import balance_protocol

    task_protocol = balance_protocol(env_cfg)  # the task's pushes, fall terminations and episode length
    if task_protocol is None or find_push(env_cfg.events) is None:
        raise ValueError(f"closed-loop sim2sim needs a balance task (pushes and fall terminations); {task} has none")
    protocol = protocol_from_flags(req, task_protocol, req.duration_s)
    from realgap.envs.robots import robot_name

    rates = RateSpec.from_dict(env_cfg.rates)
    robot = robot_name(list(env_cfg.scene.robot.init_state.joint_pos))  # every joint named in the spawn pose
    report = {
        "task": task,
        "robot": robot,
        "rates": rates.to_dict(),
        "seed": req.seed,
        "policy": str(folder) if folder else "zero action",
        "open_loop": [],
    }
    for dt in [rates.sim_dt] + ([req.fine_dt] if req.fine_dt > 0 else []):
        report["open_loop"].append(open_loop(robot, req.open_loop_s, dt, req.seed))
        r = report["open_loop"][-1]
        echo(
            f"[realgap] open loop dt {dt * 1e3:g} ms: joint RMS {r['trajectory']['rms_rad']:.2e} rad, energy "
            f"residual isaac {r['energy']['isaac']['relative_residual']:.2%} mujoco "
            f"{r['energy']['mujoco']['relative_residual']:.2%}"
        )
    if not req.skip_closed_loop:
        settings = {"episodes": req.episodes, "protocol": protocol.to_dict()}
        report["closed_loop"] = closed_loop(req, task, env_cfg, agent_cfg, meta, policy, settings)
        c = report["closed_loop"]
        echo(
            f"[realgap] closed loop: survival isaac {c['isaac']['survival_rate']:.2f} mujoco "
            f"{c['mujoco']['survival_rate']:.2f}, same outcome {c['same_outcome_rate']:.2f}"
        )
    report["wall_s"] = round(time.perf_counter() - t0, 1)
    out = Path(req.out) if req.out else default_out(checkpoint)
    from realgap.envs.eval.robustness.sweep import finite_or_none

    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(finite_or_none(report), indent=2))
    return report, out
