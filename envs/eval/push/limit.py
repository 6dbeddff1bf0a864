"""Single-push survival of a balance policy, in Isaac Lab and in MuJoCo (``scripts/push_limit.py``).

One push per episode at ``push_at_s`` after the reset, of a fixed magnitude and a random heading, then stay up until
``duration_s``. Isaac Lab: the task's Play variant with its push term made a single per-env push
(:func:`realgap.envs.eval.robustness.prepare.prepare_env_cfg`), every magnitude in one batch of envs
(:func:`realgap.envs.eval.robustness.run.run_plan`). MuJoCo: the deploy runtime (or a controller around it) on
the MJCF robot with a push schedule of one push (:func:`single_push_counts`). :func:`survival_table` turns the counts
into survival rates and the limit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from realgap.envs.deploy import DeployRuntime, ZeroPolicy
from realgap.envs.eval.robustness.sweep import REFERENCE, make_plan
from realgap.envs.format import OnnxPolicy
from realgap.envs.format.stats import wilson_interval

DEFAULT_VALUES = "0.2,0.25,0.3,0.35,0.4,0.45,0.5,0.55,0.6,0.65,0.7,0.8"
"""The swept push magnitudes, m/s (``--values``), comma-separated as the flag takes them."""
Counts = list[tuple[int, int]]
"""Per swept magnitude: (episodes survived, episodes)."""


def isaac_single_push(
    meta: Any,
    onnx_path: Path,
    labels: Sequence[str],
    values: Sequence[float],
    episodes: int,
    push_at_s: float,
    duration_s: float,
    num_envs: int,
    seed: int,
) -> dict[str, Counts]:
    """Survival counts per label (``"policy"``: the export; ``"zero action"``) and magnitude in Isaac Lab."""
    from realgap.envs.eval.policies import export_actions, exported_policy, zero_policy
    from realgap.envs.eval.robustness.apply import pin_term
    from realgap.envs.eval.robustness.prepare import prepare_env_cfg
    from realgap.envs.eval.robustness.run import run_plan
    from realgap.envs.run.factory import load_cfgs, make_env, simulation
    from realgap.tasks import play_task

    task = play_task(meta.task)
    env_cfg, _ = load_cfgs(task, None, num_envs, seed)
    export_actions(env_cfg, meta)  # the policy's action terms; the zero action still holds the task's stance
    prepare_env_cfg(env_cfg, duration_s, single_push_at_s=push_at_s)
    with simulation(env_cfg):
        env = make_env(task, env_cfg)
        plan = make_plan({"push_mps": tuple(values)}, pin_term(env).nominal_values())
        makers = {"policy": lambda: exported_policy(env, meta, onnx_path), "zero action": lambda: zero_policy(env)}
        results = run_plan(env, {label: makers[label]() for label in labels}, plan, episodes, seed=seed)
        env.close()
    out = {}
    for label in labels:
        # plan points hold the swept values as stored (float32 round trip): match them to the request by rounding
        # a swept value equal to the nominal push is the plan's nominal point (); the task-draw reference is not swept
        values_at = {p: (dict(plan.nominal) | dict(p))["push_mps"] for p in results[label] if p != REFERENCE}
        by_value = {round(float(v), 6): results[label][p] for p, v in values_at.items()}
        out[label] = [(sum(e.survived for e in by_value[round(v, 6)]), len(by_value[round(v, 6)])) for v in values]
    return out


def mujoco_single_push(
    meta: Any,
    onnx_path: Path,
    labels: Sequence[str],
    values: Sequence[float],
    episodes: int,
    push_at_s: float,
    duration_s: float,
    seed: int,
) -> dict[str, Counts]:
    """Survival counts per label (``"policy"``: the export; ``"zero action"``) and magnitude on the MuJoCo robot through
    the deploy runtime (:func:`single_push_counts`)."""
    from realgap.envs.deploy.episode import stance_metadata

    policies = {"policy": OnnxPolicy(onnx_path), "zero action": ZeroPolicy(meta.action_dim)}

    def runtime(label: str) -> Callable[[Any], DeployRuntime]:
        # the zero action holds the task's stance, whatever nominal pose the policy was trained around
        label_meta = stance_metadata(meta) if label == "zero action" else meta
        return lambda robot: DeployRuntime(label_meta, robot, policies[label], seed=seed)

    runners = {label: runtime(label) for label in labels}
    return single_push_counts(meta, runners, values, episodes, push_at_s, duration_s, seed)


def single_push_counts(
    meta: Any,
    runners: Mapping[str, Callable[[Any], Any]],
    values: Sequence[float],
    episodes: int,
    push_at_s: float,
    duration_s: float,
    seed: int,
) -> dict[str, Counts]:
    """Single-push survival counts per label and magnitude on the MuJoCo robot of ``meta``.

    Each label's runner is built once, ``runners[label](robot)`` (a deploy runtime, or a controller around one), and
    runs ``episodes`` episodes per magnitude, in order: one push of that magnitude at ``push_at_s`` on each heading
    drawn from ``seed`` (the same headings for every label and magnitude), up until ``duration_s`` or the export's
    fall rule (:attr:`PolicyMetadata.balance_protocol`).
    """
    import numpy as np

    from realgap.envs.deploy.episode import Push, run_episode
    from realgap.envs.deploy.mujoco_robot import MujocoRobot

    headings = np.random.default_rng(seed).uniform(0.0, 2.0 * math.pi, episodes)
    robot = MujocoRobot.for_policy(meta)
    protocol = meta.balance_protocol.with_changes(episode_s=duration_s)
    out: dict[str, Counts] = {}
    for label, make in runners.items():
        runner = make(robot)
        out[label] = []
        for v in values:
            survived = 0
            for h in headings:
                push = Push(push_at_s, (v * math.cos(h), v * math.sin(h)))
                survived += not run_episode(runner, robot, [push], protocol).fell
            out[label].append((survived, episodes))
    return out


def survival_table(values: Sequence[float], by_label: Mapping[str, Counts]) -> dict[str, Any]:
    """Per label: a row per magnitude (survived of episodes, the rate, its 95 % Wilson interval) and the limit, m/s
    (the largest magnitude survived in >= 50 % of the episodes; None if none)."""
    table = {}
    for label, counts in by_label.items():
        rows = [
            {"push_mps": v, "survived": k, "episodes": n, "survival": k / n, "ci95": wilson_interval(k, n)}
            for v, (k, n) in zip(values, counts, strict=True)
        ]
        held = [r["push_mps"] for r in rows if r["survival"] >= 0.5]
        table[label] = {"rows": rows, "limit_mps": max(held) if held else None}
    return table
