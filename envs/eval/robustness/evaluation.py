"""A robustness evaluation from its inputs to its report: which policies, which factors, the sweep, the summary.

What ``scripts/evaluate.py`` runs, callable (and tested) without its command line: :func:`resolve_inputs` checks the
policies and chooses the output folder, :func:`choose_factors` applies the factor rules (available for the task,
compliant factors alone), :func:`parse_heatmap` reads the heatmap axes, :func:`match_policies` makes the env the
policies were trained for, :func:`sweep_inputs` gathers the checked sweep inputs, :func:`evaluate` builds the env, runs
the plan and writes ``report.json`` and the plots, :func:`summary_lines` says the result in a few lines. Every input
is checked before an env is built.
"""

from __future__ import annotations

import datetime
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from realgap.envs.run.memory import check_env_memory
from realgap.envs.run.run_dir import latest_checkpoint, run_task
from realgap.envs.run.run_record import policy_settings

ZERO_ACTION_TASK = "Realgap-Balance-G1-v0"
"""The task the zero action alone is evaluated on when no ``--task`` is given: the balance task as defined (play.py
and sim2sim.py fall back to the same)."""

Policies = dict[str, tuple[str, Any] | None]
"""Label → ``("checkpoint", model path)``, ``("export", (metadata, onnx path))`` or ``None`` (the zero action)."""


@dataclass(frozen=True)
class EvalRequest:
    """An evaluation as scripts/evaluate.py's flags give it (see its ``--help`` for each)."""

    checkpoint: list[str] = field(default_factory=list)
    policy: list[str] = field(default_factory=list)
    label: list[str] = field(default_factory=list)
    zero_action: bool = False
    task: str | None = None
    factors: str | None = None
    values: list[str] = field(default_factory=list)
    heatmap: str | None = None
    episodes: int = 16
    num_envs: int = 64
    episode_s: float | None = None
    device: str | None = None
    seed: int = 0
    out: str | None = None


def resolve_inputs(req: EvalRequest) -> tuple[str, Policies, Path]:
    """Task id (its Play variant), the policies by label, and the output folder; every input checked.

    Raises:
        ValueError: No policy, a label count that does not match, policies of different tasks without ``--task``.
    """
    from realgap.envs.eval.policies import read_export
    from realgap.tasks import play_task

    if not req.checkpoint and not req.policy and not req.zero_action:
        raise ValueError("give at least one --checkpoint or --policy, or --zero_action")
    given = [("checkpoint", c) for c in req.checkpoint] + [("export", e) for e in req.policy]
    if req.label and len(req.label) != len(given):
        raise ValueError(f"{len(req.label)} --label for {len(given)} --checkpoint/--policy; give one each or none")
    policies: Policies = {}
    tasks = set()
    for i, (kind, where) in enumerate(given):
        path = Path(where)
        if kind == "checkpoint":
            ckpt = path if path.is_file() else latest_checkpoint(path)
            tasks.add(req.task or run_task(ckpt))  # realgap's or isaaclab train's record; none is refused
            default_label, value = f"{ckpt.parent.name}/{ckpt.stem}", ckpt
        else:
            meta, onnx_path = read_export(path, req.task)
            tasks.add(meta.task)
            default_label, value = f"export {path.name}", (meta, onnx_path)
        policies[req.label[i] if req.label else default_label] = (kind, value)
    if req.zero_action:
        policies["zero action"] = None
    if len({play_task(t) for t in tasks - {None}}) > 1 and req.task is None:
        raise ValueError(f"the policies come from different tasks {sorted(tasks - {None})}; pass --task")
    task = play_task(req.task or next(iter(tasks - {None}), None) or ZERO_ACTION_TASK)
    if req.out:
        out = Path(req.out)
    elif len(given) == 1:
        kind, value = next(p for p in policies.values() if p is not None)
        out = (value.parent / "robustness") if kind == "checkpoint" else Path("runs") / "robustness" / path.name
    else:
        out = Path("runs") / "robustness" / datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    return task, policies, out


def describe(given: tuple[str, Any] | None) -> str:
    """What a policy of the report is: the checkpoint file, the export folder, or the zero action."""
    if given is None:
        return "zero action"
    kind, value = given
    return str(value) if kind == "checkpoint" else f"export {value[1].parent}"


def choose_factors(requested: str | None, available: list[str], task: str) -> list[str]:
    """The factors to sweep: ``requested`` (comma-separated) or every available one, each checked to exist, to be
    sweepable and to be available for ``task``.

    Raises:
        ValueError: An unknown, unsweepable or unavailable factor (says which and why).
    """
    from realgap.envs.eval.robustness.sweep import get_factor

    factors = requested.split(",") if requested else list(available)
    for name in factors:
        get_factor(name)
    if bad := [f for f in factors if f not in available]:
        raise ValueError(f"factors {bad} are not available for {task}; available: {', '.join(available)}")
    return factors


def check_compliant_alone(factors: list[str], standin: dict[str, Any]) -> None:
    """Compliant-transmission factors build the joints compliant (the robot's stand-in, ``standin`` non-empty): every
    rigid factor would then be swept on another robot, so they are refused together.

    Raises:
        ValueError: Compliant and rigid factors in one call with a stand-in built.
    """
    from realgap.envs.eval.robustness.sweep import COMPLIANT_FACTORS

    rigid = [f for f in factors if f not in COMPLIANT_FACTORS]
    if standin and rigid:
        raise ValueError(
            f"{sorted(set(factors) & set(COMPLIANT_FACTORS))} build the joints compliant, which "
            f"changes the robot {rigid} would be swept on: sweep them in a separate call"
        )


def parse_heatmap(text: str | None, factors: list[str]) -> tuple[str, str] | None:
    """The heatmap axes: ``"X,Y"``, ``"none"``, or (``None``) push_mps × payload_kg when both are swept.

    Raises:
        ValueError: Not two different factors among ``factors``.
    """
    heatmap = None if text == "none" else tuple(text.split(",")) if text else None
    if text is None and {"push_mps", "payload_kg"} <= set(factors):
        heatmap = ("push_mps", "payload_kg")
    if heatmap is not None and (len(heatmap) != 2 or not set(heatmap) <= set(factors) or heatmap[0] == heatmap[1]):
        raise ValueError(f"--heatmap needs two different factors among --factors {factors}, got {text!r}")
    return heatmap  # type: ignore[return-value]


def match_policies(env_cfg: Any, agent_cfg: Any, checkpoints: Policies) -> None:
    """Build the env the policies were trained for: the checkpoints' run settings (rates and interface overrides: an
    observation history, a network size) and the exports' action terms (a policy trained around another nominal pose;
    the zero action holds the stance).

    Args:
        env_cfg: The task's env config, changed in place.
        agent_cfg: Its PPO config, changed in place.
        checkpoints: The policies by label (:func:`resolve_inputs`).

    Raises:
        ValueError: Checkpoints of runs with different settings, or exports acting through different action terms:
            one env cannot serve them, so they are evaluated one at a time.
    """
    settings = {policy_settings(v[1]) for v in checkpoints.values() if v is not None and v[0] == "checkpoint"}
    if len(settings) > 1:
        raise ValueError(
            "the checkpoints come from runs with different rates or interface overrides "
            f"({sorted(map(str, settings))}); evaluate them one run at a time"
        )
    for s in settings:  # the run's rates and interface overrides (an observation history, a network size)
        s.apply(env_cfg, agent_cfg)
    exports = [v[1][0] for v in checkpoints.values() if v is not None and v[0] == "export"]
    if any(m.actions != exports[0].actions for m in exports):
        raise ValueError(
            "the exports act through different action terms (another nominal pose, scale or ramp); "
            "evaluate them one at a time"
        )
    if exports:  # their action terms (a policy trained around another nominal pose); the zero action holds the stance
        from realgap.envs.eval.policies import export_actions

        export_actions(env_cfg, exports[0])


def sweep_inputs(
    req: EvalRequest, env_cfg: Any, task: str
) -> tuple[list[str], dict[str, Any], dict[str, tuple[float, ...]], tuple[str, str] | None]:
    """The sweep's inputs, each checked before the env is built: the factors, the compliant stand-in they need (the
    joints of ``env_cfg`` built compliant in place), the values given per factor and the heatmap axes.

    Returns:
        The factors, the stand-in (spec group → (stiffness N·m/rad, damping N·m·s/rad); empty when none was built),
        the ``--values`` by factor and the heatmap axes (``None``: no heatmap).

    Raises:
        ValueError: See :func:`choose_factors`, :func:`check_compliant_alone` and :func:`parse_heatmap`; a value out
            of its factor's range, or ``--values`` for a factor not swept.
    """
    from realgap.envs.eval.robustness.prepare import available_factors, prepare_compliant
    from realgap.envs.eval.robustness.sweep import COMPLIANT_FACTORS, parse_values

    factors = choose_factors(req.factors, available_factors(env_cfg), task)
    standin = {}
    if req.factors and set(factors) & set(COMPLIANT_FACTORS):
        standin = prepare_compliant(env_cfg)  # the robot's compliant stand-in, unless its specs are compliant already
        check_compliant_alone(factors, standin)
    given = parse_values(req.values, env_cfg.sim.dt)  # cutoffs below the Nyquist rate of the physics step
    if extra := sorted(set(given) - set(factors)):
        raise ValueError(f"--values given for {extra}, which are not in --factors {factors}")
    return factors, standin, given, parse_heatmap(req.heatmap, factors)


def evaluate(req: EvalRequest) -> tuple[dict[str, Any], Path, int]:
    """Run the evaluation ``req`` asks for; returns the report, its folder and the number of plots written."""
    task, checkpoints, out = resolve_inputs(req)
    if not str(req.device or "").startswith("cuda"):  # the envs' estimated memory against the machine's, up front
        check_env_memory(task, req.num_envs)
    from realgap.envs.eval.robustness.prepare import prepare_env_cfg
    from realgap.envs.run.factory import load_cfgs, make_env, simulation

    env_cfg, agent_cfg = load_cfgs(task, req.device, req.num_envs, req.seed)
    match_policies(env_cfg, agent_cfg, checkpoints)
    factors, standin, given, heatmap = sweep_inputs(req, env_cfg, task)
    prepare_env_cfg(env_cfg, req.episode_s)
    t0 = time.perf_counter()
    with simulation(env_cfg):
        from isaaclab_rl.rsl_rl import check_rsl_rl_version, handle_deprecated_rsl_rl_cfg

        from realgap.envs.eval.policies import checkpoint_policy, exported_policy, zero_policy
        from realgap.envs.eval.robustness import run as robustness_run
        from realgap.envs.eval.robustness.apply import pin_term
        from realgap.envs.eval.robustness.sweep import DEFAULT_VALUES, build_report, make_plan
        from realgap.envs.robots import robot_name

        agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, check_rsl_rl_version())
        env = make_env(task, env_cfg)
        robot = robot_name(env.scene["robot"].joint_names)
        nominal = pin_term(env).nominal_values()
        if not req.factors:  # by default only what this env can pin (an actuator stage its joints set alike)
            factors = [f for f in factors if f in nominal]
        sweeps = {f: given.get(f, DEFAULT_VALUES[robot].get(f, ())) for f in factors}
        plan = make_plan(sweeps, nominal, heatmap)

        def make_policy(given: tuple[str, Any] | None) -> Any:
            if given is None:
                return zero_policy(env)
            kind, value = given
            return checkpoint_policy(env, agent_cfg, value) if kind == "checkpoint" else exported_policy(env, *value)

        policies = {label: make_policy(given) for label, given in checkpoints.items()}
        print(
            f"[realgap] {task}: {len(plan.points)} points x {req.episodes} episodes x {len(policies)} policies "
            f"in batches of {env.num_envs} envs"
        )
        results = robustness_run.run_plan(env, policies, plan, req.episodes, seed=req.seed)
        env.close()
    success = "task success" if getattr(env_cfg, "episode_success", None) is not None else "survival to the time-out"
    report = {
        "task": task,
        "robot": robot,
        "success": success,
        "rates": env_cfg.rates,
        "action_space": getattr(env_cfg, "action_space_info", None),
        "actuators": {
            name: {"model": type(cfg).__name__, "specs": sorted(getattr(cfg, "specs", {}))}
            for name, cfg in env_cfg.scene.robot.actuators.items()
        },
        "compliant_transmission": standin,  # spec group -> (N·m/rad, N·m·s/rad) of the stand-in the env was built with
        "policies": {label: describe(given) for label, given in checkpoints.items()},
        "episodes_per_point": req.episodes,
        "episode_s": env_cfg.episode_length_s,
        "num_envs": env_cfg.scene.num_envs,
        "seed": req.seed,
        "wall_s": round(time.perf_counter() - t0, 1),
    } | build_report(plan, results)
    return report, out, write_report(report, out)


def metric_name(report: dict[str, Any]) -> str:
    """What the task counts, named as play.py does: ``success`` or ``survival``."""
    return "success" if report["success"] == "task success" else "survival"


def write_report(report: dict[str, Any], out: Path) -> int:
    """Write ``out/report.json`` and the plots; returns the number of plots."""
    from realgap.envs.eval.robustness.plots import write_plots
    from realgap.envs.eval.robustness.sweep import finite_or_none

    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(finite_or_none(report), indent=2))
    return len(write_plots(report, out, metric_name(report)))


def summary_lines(report: dict[str, Any], out: Path, plots: int) -> list[str]:
    """The result in a few lines: each policy's reference success with its interval, each factor's row."""
    metric = metric_name(report)
    lines = []
    for label, stats in report["reference"].items():
        lo, hi = stats["success_ci95"]
        lines.append(
            f"[realgap] {label}: {metric}={stats['success_rate']:.3f} (95 % CI {lo:.3f}-{hi:.3f}, "
            f"{stats['episodes']} episodes) under the task's own draws (reference)"
        )
    for name, f in report["factors"].items():
        rows = "  ".join(f"{r['value']:g}:{r['success_rate']:.2f}" for r in next(iter(f["policies"].values())))
        lines.append(f"[realgap] {name:>20}  {rows}")
    lines.append(f"[realgap] wrote {out / 'report.json'} and {plots} plots in {report['wall_s']} s")
    return lines
