"""The balance task's question asked of three controllers under the same pushes: the shipped policy, the zero action
and the SRBD controller, in both engines.

- MuJoCo (:func:`evaluate`, :func:`single_push`): the deploy runtime and :mod:`realgap.envs.srbd.controller`; episodes
  and pushes are the deploy CLI's (:mod:`realgap.envs.deploy.episode`), one schedule per episode drawn from the seed,
  identical for every arm; the zero action is the export's own terms holding its crouch.
- Isaac Lab (:func:`lab_evaluate`): the balance task's own robustness protocol (``scripts/evaluate.py``: its Play
  variant, the task's pushes, one factor at a time, :func:`realgap.envs.eval.robustness.run.run_plan` with the same
  torch seed per batch for every arm) with :class:`realgap.envs.eval.srbd.lab.SRBDLabPolicy` as a third policy; the
  zero action holds the task's stance, as in the published robustness report.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from realgap.envs.deploy import DeployRuntime, ZeroPolicy
from realgap.envs.eval.push.limit import single_push_counts, survival_table
from realgap.envs.eval.robustness.evaluation import write_report
from realgap.envs.eval.robustness.sweep import build_report, get_factor, make_plan, wilson_interval
from realgap.envs.format import load_policy
from realgap.envs.srbd.controller import SRBDController

if TYPE_CHECKING:
    from realgap.envs.eval.srbd.lab import SRBDLabPolicy


def evaluate(
    policy_dir: str | Path,
    episodes: int = 32,
    duration_s: float = 20.0,
    seed: int = 0,
    push_mps: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """Survival (share of episodes without a fall, Wilson 95 %) and mean time up of each arm, under the export's
    balance protocol with ``duration_s`` episodes and ``push_mps`` (None: the protocol's)."""
    from realgap.envs.deploy.episode import run_episode, schedules
    from realgap.envs.deploy.mujoco_robot import MujocoRobot

    meta, policy = load_policy(policy_dir)
    protocol = meta.balance_protocol.with_changes(episode_s=duration_s, push_mps=push_mps)
    plan = schedules(episodes, protocol, seed)
    robot = MujocoRobot.for_policy(meta)
    arms = {
        "policy": DeployRuntime(meta, robot, policy, seed=seed),
        "zero_action": DeployRuntime(meta, robot, ZeroPolicy(meta.action_dim), seed=seed),
        "srbd_controller": SRBDController(DeployRuntime(meta, robot, None, seed=seed), robot),
    }
    out: dict[str, Any] = {
        "episodes": episodes,
        "duration_s": duration_s,
        "push_mps": list(protocol.push_mps),
        "seed": seed,
        "arms": {},
    }
    for name, runner in arms.items():
        results = [run_episode(runner, robot, s, protocol) for s in plan]
        up = sum(not r.fell for r in results)
        lo, hi = wilson_interval(up, episodes)
        out["arms"][name] = {
            "survival": up / episodes,
            "survival_ci95": [lo, hi],
            "time_up_mean_s": float(np.mean([r.time_up_s for r in results])),
            "falls": episodes - up,
        }
    return out


def evaluation_lines(result: Mapping[str, Any]) -> list[str]:
    """One line per arm of :func:`evaluate`'s result: survival with its Wilson interval and the mean time up."""
    return [
        f"[realgap] {name}: survival {arm['survival']:.3f} (95 % {arm['survival_ci95'][0]:.3f}-"
        f"{arm['survival_ci95'][1]:.3f}), time up {arm['time_up_mean_s']:.2f} s"
        for name, arm in result["arms"].items()
    ]


PUSH_LIMIT_MPS = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7)
"""Push magnitudes of the SRBD controller's MuJoCo single-push sweep, m/s."""


def single_push(
    policy_dir: str | Path,
    values: tuple[float, ...],
    episodes: int = 16,
    push_at_s: float = 1.0,
    duration_s: float = 4.0,
    seed: int = 0,
) -> dict[str, Any]:
    """Single-push survival of the SRBD controller per magnitude (m/s) on the export's MuJoCo robot, measured as
    ``scripts/push_limit.py`` measures a policy (:func:`~realgap.envs.eval.push.limit.single_push_counts`: one push at
    ``push_at_s`` of a heading drawn from ``seed``, the same headings for every magnitude, stay up until
    ``duration_s``), with its limit (:func:`~realgap.envs.eval.push.limit.survival_table`: the largest swept magnitude
    survived in at least half the episodes)."""
    meta, _ = load_policy(policy_dir)
    runners = {"srbd": lambda robot: SRBDController(DeployRuntime(meta, robot, None, seed=seed), robot)}
    counts = single_push_counts(meta, runners, values, episodes, push_at_s, duration_s, seed)
    table = survival_table(values, counts)["srbd"]
    return {
        "episodes": episodes,
        "push_at_s": push_at_s,
        "recover_s": duration_s - push_at_s,
        "seed": seed,
        "rows": table["rows"],
        "limit_mps": table["limit_mps"],
    }


LAB_FACTORS: dict[str, tuple[float, ...]] = {
    "payload_kg": (0.0, 10.0),
    "command_delay_s": (0.005, 0.02),
    "pd_gain_scale": (0.75, 1.0),
    "torque_limit_scale": (0.25, 1.0),
    "contact_friction": (0.2, 0.6),
}
"""The model-error factors of the published balance robustness report (docs/results/robustness_balance/report.json),
each at its nominal value and one harder one: the report's hardest (10 kg, 20 ms, torque × 0.25, μ 0.2; gains
× 0.75, the weakest where either of its arms still stood); the nominal point (the task's pushes pinned at 0.3 m/s,
delay 5 ms) is part of every sweep. Seven points × 16 episodes fill one batch of 112 envs per arm, sized to a shared
2-core CPU; the report's push sweep is left out (the single-push limits measure push strength)."""

ARMS = ("SRBD controller", "learned policy", "zero action")
"""The three arms' labels in the Isaac Lab report."""


def _lab_factors(
    factors: Mapping[str, Sequence[float]] | None, episodes: int, num_envs: int
) -> dict[str, Sequence[float]]:
    """The factors :func:`lab_evaluate` sweeps (:data:`LAB_FACTORS` if None), checked with its counts before an env
    is built.

    Raises:
        ValueError: Unknown factors or values out of range, counts below 1.
    """
    if episodes < 1 or num_envs < 1:
        raise ValueError(f"episodes and num_envs must be >= 1, got {episodes} and {num_envs}")
    factors = dict(LAB_FACTORS if factors is None else factors)
    for name, values in factors.items():
        factor = get_factor(name)
        for v in values:
            factor.check(v)
    return factors


def _arm_descriptions(policy_dir: str | Path) -> dict[str, str]:
    """What each arm of the Isaac Lab report is, by its label (:data:`ARMS`)."""
    return {
        ARMS[0]: "envs/eval/srbd/lab.py (the SRBD law of envs/srbd/law.py at the policy rate)",
        ARMS[1]: f"export {Path(policy_dir)}",
        ARMS[2]: "zero action (the task's stance)",
    }


def _controller_settings(controller: SRBDLabPolicy, step_dt: float) -> dict[str, Any]:
    """The SRBD controller's settings in the report: its law's gains, μ and ramp, its rate (1 / ``step_dt``, the
    env's policy step in s) and the state it reads."""
    return {
        "gains": controller.law.gains,
        "mu": controller.law.mu,
        "ramp_s": controller.law.ramp_s,
        "rate_hz": round(1.0 / step_dt),
        "state": "perfect (the simulator's root and joint state)",
    }


def lab_evaluate(
    policy_dir: str | Path,
    out: str | Path,
    factors: Mapping[str, Sequence[float]] | None = None,
    episodes: int = 16,
    num_envs: int = 64,
    seed: int = 0,
    device: str = "cpu",
    command: str = "",
) -> dict[str, Any]:
    """The three arms in the balance task's robustness protocol on Isaac Lab; writes ``out/report.json`` and one plot
    per factor (the format of ``scripts/evaluate.py``'s report, plus the controller's settings and ``command``).

    Args:
        policy_dir: The shipped export (its task's Play variant and action terms are used; the env is built with the
            export's offset, scale and ramp, as ``scripts/evaluate.py --policy`` does).
        out: Output folder.
        factors: Factor → values (:data:`LAB_FACTORS` if None).
        episodes: Episodes per point and arm.
        num_envs: Envs per batch (points are packed into batches; spare envs are not counted).
        seed: Torch seed of the first batch (``seed`` + batch index after it), the same for every arm.
        device: Simulation device.
        command: The command line, recorded in the report.

    Raises:
        ValueError: Unknown factors or values out of range, counts below 1 (before an env is built).
    """
    from realgap.envs.eval.policies import export_actions, read_export
    from realgap.envs.eval.robustness.prepare import available_factors, prepare_env_cfg
    from realgap.envs.run.factory import load_cfgs, make_env, simulation
    from realgap.tasks import play_task

    factors = _lab_factors(factors, episodes, num_envs)
    meta, onnx_path = read_export(policy_dir)
    task = play_task(meta.task)
    env_cfg, _ = load_cfgs(task, device, num_envs, seed)
    export_actions(env_cfg, meta)
    if missing := sorted(set(factors) - set(available_factors(env_cfg))):
        raise ValueError(f"factors {missing} are not available for {task}")
    prepare_env_cfg(env_cfg)
    t0 = time.perf_counter()
    with simulation(env_cfg):
        from realgap.envs.eval.policies import exported_policy, zero_policy
        from realgap.envs.eval.robustness import run as robustness_run
        from realgap.envs.eval.robustness.apply import pin_term
        from realgap.envs.eval.srbd.lab import SRBDLabPolicy

        env = make_env(task, env_cfg)
        controller = SRBDLabPolicy(env)
        policies = dict(zip(ARMS, (controller, exported_policy(env, meta, onnx_path), zero_policy(env)), strict=True))
        plan = make_plan(factors, pin_term(env).nominal_values())
        print(
            f"[realgap] {task}: {len(plan.points)} points x {episodes} episodes x {len(policies)} arms in batches "
            f"of {env.num_envs} envs"
        )
        results = robustness_run.run_plan(env, policies, plan, episodes, seed=seed)
        env.close()
    report = {
        "command": command,
        "task": task,
        "robot": "g1",
        "success": "survival to the time-out",
        "rates": env_cfg.rates,
        "policies": _arm_descriptions(policy_dir),
        "controller": _controller_settings(controller, env.step_dt),
        "episodes_per_point": episodes,
        "episode_s": env_cfg.episode_length_s,
        "num_envs": env_cfg.scene.num_envs,
        "seed": seed,
        "wall_s": round(time.perf_counter() - t0, 1),
    } | build_report(plan, results)
    write_report(report, Path(out))
    return report
