"""Robustness sweeps: evaluate trained policies while one physical factor at a time moves away from nominal.

    python scripts/evaluate.py --checkpoint runs/balance_g1/<run>                        # every factor, defaults
    python scripts/evaluate.py --checkpoint runs/balance_g1/<dr_run> --label DR --checkpoint runs/balance_g1/<run> \\
        --label "no DR" --zero_action --factors payload_kg,push_mps --heatmap push_mps,payload_kg
    python scripts/evaluate.py --zero_action --task Realgap-Balance-G1-v0 --values push_mps=0,0.5,1 --episodes 32
    python scripts/evaluate.py --policy configs/policies/balance_g1 --zero_action        # a shipped export

Factors (``realgap.envs.eval.sweep.FACTORS``; default values per robot in ``DEFAULT_VALUES``, set your own with
``--values NAME=V1,V2,...``): payload_kg, link_mass_scale, com_shift_m, inertia_scale, object_mass_scale,
command_delay_s, pd_gain_scale, torque_limit_scale, joint_friction_scale, contact_friction, torque_filter_hz,
speed_limit_scale, backlash_rad, transmission_stiffness_scale, push_mps (``inf`` is a value of torque_filter_hz and
speed_limit_scale: an ideal current loop, no speed cut-off). backlash_rad and transmission_stiffness_scale need joints
built compliant: named in --factors (alone), the env is built once with the robot's compliant stand-in (G1: knees and
hip roll; Panda: wrist joints 5-7; envs/robots/) and every value is written per env in place, no rebuild per value.
Every other factor stays at its nominal value; the nominal point is part of every sweep. Each point runs ``--episodes``
episodes of the task's evaluation variant; points are packed into batches of ``--num_envs`` envs (on a CPU, 64 envs cost
little more per step than 16). Writes <out>/report.json (per factor: values, success rate with its 95 % Wilson interval,
time up and return mean ± std / 95 % CI, episodes; the heatmap grid; rates and actuator model) and one PNG per factor
plus the heatmap. Default <out>: <run>/robustness for one checkpoint, else runs/robustness/<timestamp>.
"""

from __future__ import annotations

import argparse
import datetime
import json
import time
from pathlib import Path
from typing import Any


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from realgap.envs.eval.sweep import FACTORS, NOT_SWEEPABLE
    from realgap.envs.run.cli import parser, positive_float, shared_flags

    p = parser(__doc__, shared_flags("task", "episodes", "num_envs", "device", "seed", task=None, num_envs=64))
    p.add_argument("--checkpoint", action="append", default=[], help="run folder or model_<it>.pt (repeatable)")
    p.add_argument("--policy", action="append", default=[], help="export folder (policy.onnx + metadata; repeatable)")
    p.add_argument("--label", action="append", default=[],
                   help="name of each --checkpoint, then each --policy, in the report and plots")  # fmt: skip
    p.add_argument("--zero_action", action="store_true", help="also evaluate the zero action (hold the default pose)")
    p.add_argument("--factors", default=None, help="comma-separated factors (default: every one the task supports) "
                   f"among {', '.join(FACTORS)}; not sweepable: {', '.join(NOT_SWEEPABLE)}")  # fmt: skip
    p.add_argument("--values", action="append", default=[], help="FACTOR=V1,V2,... sweep values (repeatable)")
    p.add_argument("--heatmap", default=None, help="X,Y factors of the success heatmap, or 'none' "
                   "(default: push_mps,payload_kg when both are swept)")  # fmt: skip
    p.add_argument("--episode_s", type=positive_float, default=None, help="episode length, s (default: the task's)")
    p.add_argument("--out", default=None, help="output folder")
    return p.parse_args(argv)


def resolve_inputs(args: argparse.Namespace) -> tuple[str, dict[str, tuple[str, Any] | None], Path]:
    """Task id, policy label → ``("checkpoint", path)`` / ``("export", (metadata, onnx path))`` / None (zero action),
    and the output folder; every input checked before an env is built."""
    from realgap.envs.eval.policies import read_export
    from realgap.envs.run.runner import latest_checkpoint
    from realgap.tasks import play_task

    if not args.checkpoint and not args.policy and not args.zero_action:
        raise ValueError("give at least one --checkpoint or --policy, or --zero_action")
    given = [("checkpoint", c) for c in args.checkpoint] + [("export", e) for e in args.policy]
    if args.label and len(args.label) != len(given):
        raise ValueError(f"{len(args.label)} --label for {len(given)} --checkpoint/--policy; give one each or none")
    policies: dict[str, tuple[str, Any] | None] = {}
    tasks = set()
    for i, (kind, where) in enumerate(given):
        path = Path(where)
        if kind == "checkpoint":
            ckpt = path if path.is_file() else latest_checkpoint(path)
            run_json = ckpt.parent / "params" / "run.json"
            if run_json.is_file():
                tasks.add(json.loads(run_json.read_text()).get("task"))
            default_label, value = f"{ckpt.parent.name}/{ckpt.stem}", ckpt
        else:
            meta, onnx_path = read_export(path, args.task)
            tasks.add(meta.task)
            default_label, value = f"export {path.name}", (meta, onnx_path)
        policies[args.label[i] if args.label else default_label] = (kind, value)
    if args.zero_action:
        policies["zero action"] = None
    if len({play_task(t) for t in tasks - {None}}) > 1 and args.task is None:
        raise ValueError(f"the policies come from different tasks {sorted(tasks - {None})}; pass --task")
    task = play_task(args.task or next(iter(tasks - {None}), None) or "Realgap-Balance-G1-v0")
    if args.out:
        out = Path(args.out)
    elif len(given) == 1:
        kind, value = next(p for p in policies.values() if p is not None)
        out = (value.parent / "robustness") if kind == "checkpoint" else Path("runs") / "robustness" / path.name
    else:
        out = Path("runs") / "robustness" / datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    return task, policies, out


def _describe(given: tuple[str, Any] | None) -> str:
    """What a policy of the report is: the checkpoint file, the export folder, or the zero action."""
    if given is None:
        return "zero action"
    kind, value = given
    return str(value) if kind == "checkpoint" else f"export {value[1].parent}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from realgap.envs.eval.robustness import available_factors, prepare_compliant, prepare_env_cfg
    from realgap.envs.eval.sweep import COMPLIANT_FACTORS, get_factor, parse_values
    from realgap.envs.run.factory import load_cfgs, make_env, simulation
    from realgap.envs.run.run_dir import policy_settings

    task, checkpoints, out = resolve_inputs(args)
    env_cfg, agent_cfg = load_cfgs(task, args.device, args.num_envs, args.seed)
    settings = {policy_settings(v[1]) for v in checkpoints.values() if v is not None and v[0] == "checkpoint"}
    if len(settings) > 1:
        raise ValueError("the checkpoints come from runs with different rates or interface overrides "
                         f"({sorted(map(str, settings))}); evaluate them one run at a time")  # fmt: skip
    for s in settings:  # the run's rates and interface overrides (an observation history, a network size)
        s.apply(env_cfg, agent_cfg)
    exports = [v[1][0] for v in checkpoints.values() if v is not None and v[0] == "export"]
    if any(m.actions != exports[0].actions for m in exports):
        raise ValueError("the exports act through different action terms (another nominal pose, scale or ramp); "
                         "evaluate them one at a time")  # fmt: skip
    if exports:  # their action terms (a policy trained around another nominal pose); the zero action holds the stance
        from realgap.envs.eval.policies import export_actions

        export_actions(env_cfg, exports[0])
    available = available_factors(env_cfg)
    factors = args.factors.split(",") if args.factors else available
    for name in factors:
        get_factor(name)  # an unknown or unsweepable factor: says which and why
    bad = [f for f in factors if f not in available]
    if bad:
        raise ValueError(f"factors {bad} are not available for {task}; available: {', '.join(available)}")
    standin = {}
    if args.factors and set(factors) & set(COMPLIANT_FACTORS):
        rigid = [f for f in factors if f not in COMPLIANT_FACTORS]
        standin = prepare_compliant(env_cfg)  # the robot's compliant stand-in, unless its specs are compliant already
        if standin and rigid:
            raise ValueError(f"{sorted(set(factors) & set(COMPLIANT_FACTORS))} build the joints compliant, which "
                             f"changes the robot {rigid} would be swept on: sweep them in a separate call")  # fmt: skip
    given = parse_values(args.values, env_cfg.sim.dt)  # cutoffs below the Nyquist rate of the physics step
    extra = sorted(set(given) - set(factors))
    if extra:
        raise ValueError(f"--values given for {extra}, which are not in --factors {factors}")
    heatmap = None if args.heatmap == "none" else tuple(args.heatmap.split(",")) if args.heatmap else None
    if args.heatmap is None and {"push_mps", "payload_kg"} <= set(factors):
        heatmap = ("push_mps", "payload_kg")
    if heatmap is not None and (len(heatmap) != 2 or not set(heatmap) <= set(factors) or heatmap[0] == heatmap[1]):
        raise ValueError(f"--heatmap needs two different factors among --factors {factors}, got {args.heatmap!r}")
    prepare_env_cfg(env_cfg, args.episode_s)
    t0 = time.perf_counter()
    with simulation(env_cfg):
        from isaaclab_rl.rsl_rl import check_rsl_rl_version, handle_deprecated_rsl_rl_cfg

        from realgap.envs.eval.policies import checkpoint_policy, exported_policy, zero_policy
        from realgap.envs.eval.robustness import pin_term
        from realgap.envs.eval.robustness_run import run_plan
        from realgap.envs.eval.sweep import DEFAULT_VALUES, build_report, finite_or_none, make_plan
        from realgap.envs.robots import robot_name

        agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, check_rsl_rl_version())
        env = make_env(task, env_cfg)
        robot = robot_name(env.scene["robot"].joint_names)
        nominal = pin_term(env).nominal_values()
        if not args.factors:  # by default only what this env can pin (an actuator stage its joints set alike)
            factors = [f for f in factors if f in nominal]
        sweeps = {f: given.get(f, DEFAULT_VALUES[robot].get(f, ())) for f in factors}
        plan = make_plan(sweeps, nominal, heatmap)

        def make_policy(given: tuple[str, Any] | None) -> Any:
            if given is None:
                return zero_policy(env)
            kind, value = given
            return checkpoint_policy(env, agent_cfg, value) if kind == "checkpoint" else exported_policy(env, *value)

        policies = {label: make_policy(given) for label, given in checkpoints.items()}
        print(f"[realgap] {task}: {len(plan.points)} points x {args.episodes} episodes x {len(policies)} policies "
              f"in batches of {env.num_envs} envs")  # fmt: skip
        results = run_plan(env, policies, plan, args.episodes, seed=args.seed)
        env.close()
    success = "task success" if getattr(env_cfg, "episode_success", None) is not None else "survival to the time-out"
    report = {
        "task": task, "robot": robot, "success": success, "rates": env_cfg.rates,
        "action_space": getattr(env_cfg, "action_space_info", None),
        "actuators": {name: {"model": type(cfg).__name__, "specs": sorted(getattr(cfg, "specs", {}))}
                      for name, cfg in env_cfg.scene.robot.actuators.items()},
        "compliant_transmission": standin,  # spec group -> (N·m/rad, N·m·s/rad) of the stand-in the env was built with
        "policies": {label: _describe(given) for label, given in checkpoints.items()},
        "episodes_per_point": args.episodes, "episode_s": env_cfg.episode_length_s, "num_envs": env_cfg.scene.num_envs,
        "seed": args.seed, "wall_s": round(time.perf_counter() - t0, 1),
    } | build_report(plan, results)  # fmt: skip
    from realgap.envs.eval.plots import write_plots

    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(finite_or_none(report), indent=2))
    metric = "success" if success == "task success" else "survival"  # what the task counts, named as play.py does
    plots = write_plots(report, out, metric)
    for label, stats in report["reference"].items():
        lo, hi = stats["success_ci95"]
        print(
            f"[realgap] {label}: {metric}={stats['success_rate']:.3f} (95 % CI {lo:.3f}-{hi:.3f}, "
            f"{stats['episodes']} episodes) under the task's own draws (reference)"
        )
    for name, f in report["factors"].items():
        rows = "  ".join(f"{r['value']:g}:{r['success_rate']:.2f}" for r in next(iter(f["policies"].values())))
        print(f"[realgap] {name:>20}  {rows}")
    print(f"[realgap] wrote {out / 'report.json'} and {len(plots)} plots in {report['wall_s']} s")
    return 0


if __name__ == "__main__":
    from realgap.envs.export.metadata import ExportError
    from realgap.envs.run.cli import run_cli
    from realgap.envs.run.runner import CheckpointError

    run_cli(main, extra_errors=(CheckpointError, ExportError))
