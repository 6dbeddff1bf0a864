"""Benchmarks, every figure measured in one run and printed with its baseline and ratio (never asserted in tests).

    python scripts/benchmark.py                                  # all sections, 256 envs
    python scripts/benchmark.py --sections env --num_envs 64 --steps 50 --json bench.json

Sections:
  env     policy steps/s of each task's env vs bare stepping of the same scene for the same physics steps (ratio:
          1.0 = the env adds nothing; both hold the default pose unless --action_std is given, so the solver does
          the same work); and the balance env with realgap's explicit actuator chain vs Isaac Lab's implicit PD with
          the same datasheet numbers.
  ppo     PPO end to end through scripts/train.py (collection and learning separately): 1 process with n envs, 2
          processes sharing n envs, and 2 processes with n envs each (the single process's load on each core);
          --ppo_layouts picks some of them.
  mujoco  plain MuJoCo C mj_step on the same G1 description (one thread: the CPU limit), standing from its default
          pose under datasheet PD (the reference; restarted if it falls) and, labelled, with zero torque (it collapses
          and lies on the ground: more contacts, slower), and the torch-free deploy runtime (sim2sim) on it.
--device cuda runs the env and ppo sections on the GPU (2-process PPO needs 2 GPUs: skipped, and said so, with one);
the mujoco section is MuJoCo C on one CPU thread whatever the device.
Figures depend on the machine and its load: run on an otherwise idle machine and compare ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

TASKS = ("Realgap-Balance-G1-v0", "Realgap-Grasp-Franka-v0")
PPO_LAYOUTS = ("one_process", "two_processes", "two_processes_double_envs")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from realgap.envs.run.cli import nonnegative_float, parser, positive_int, shared_flags

    p = parser(__doc__, shared_flags("num_envs", "device", "deterministic", num_envs=256))
    p.add_argument("--sections", default="env,ppo,mujoco", help="comma-separated: env, ppo, mujoco")
    p.add_argument("--tasks", default=",".join(TASKS), help="tasks of the env section")
    p.add_argument("--steps", type=positive_int, default=100, help="policy steps timed per measurement (after warm-up)")
    p.add_argument("--action_std", type=nonnegative_float, default=0.0,
                   help="env section: actions N(0, STD); 0 holds the pose, as the bare stepping does")  # fmt: skip
    p.add_argument("--ppo_iterations", type=positive_int, default=6, help="PPO iterations per run (first not timed)")
    p.add_argument("--ppo_layouts", default=",".join(PPO_LAYOUTS),
                   help="PPO runs of the ppo section: one_process (n envs), two_processes (sharing n envs), "
                        "two_processes_double_envs (n envs each)")  # fmt: skip
    p.add_argument("--json", default=None, help="write every figure to this JSON file")
    args = p.parse_args(argv)
    args.ppo_layouts = args.ppo_layouts.split(",")
    if unknown := [name for name in args.ppo_layouts if name not in PPO_LAYOUTS]:
        p.error(f"unknown --ppo_layouts {unknown}; known: {', '.join(PPO_LAYOUTS)}")
    return args


def row(name: str, envs: int | str, policy: float | None, physics: float | None, note: str = "") -> None:
    pol = f"{policy:>14.0f}" if policy is not None else f"{'':>14}"
    phy = f"{physics:>16.0f}" if physics is not None else f"{'':>16}"
    print(f"{name:<44} {envs!s:>6} {pol} {phy}  {note}")


def env_section(bench, tasks: list[str], n: int, args: argparse.Namespace, device: str, progress, result: dict) -> None:
    """Each task's env against bare stepping of its scene; the balance env with Isaac Lab's implicit PD."""
    for task in tasks:
        env = bench.env_policy_steps(task, n, args.steps, action_std=args.action_std, device=device)
        progress.update(1, done=f"{task} env")
        bare = bench.bare_physics_steps(task, n, env["physics_steps"], device=device)
        progress.update(1, done=f"{task} bare")
        ratio = env["physics_steps_per_s"] / bare["physics_steps_per_s"]
        result[task] = {"env": env, "bare": bare, "env_over_bare": ratio}
        row(f"{task} env", n, env["policy_steps_per_s"], env["physics_steps_per_s"], f"env/bare = {ratio:.3f}")
        row("  bare scene stepping (same physics steps)", n, None, bare["physics_steps_per_s"])
        solver_env = env["physics_seconds"] / env["physics_steps"]
        solver_bare = bare["physics_seconds"] / bare["physics_steps"]
        result[task] |= {"solver_step_env_over_bare": solver_env / solver_bare}
        print(f"{'':<44} {'':>6} {'':>14} {'':>16}  env overhead over its own physics = "
              f"{env['overhead_over_physics']:.1%} (bare: {bare['overhead_over_physics']:.1%}); "
              f"solver step env/bare = {solver_env / solver_bare:.2f}")  # fmt: skip
    balance = tasks[0]
    implicit = bench.env_policy_steps(balance, n, args.steps, actuators="implicit", action_std=args.action_std,
                                      device=device)  # fmt: skip
    progress.update(1, done="implicit PD")
    ratio = result[balance]["env"]["policy_steps_per_s"] / implicit["policy_steps_per_s"]
    result[balance] |= {"env_implicit_pd": implicit, "explicit_chain_over_implicit": ratio}
    row("  same env, Isaac Lab implicit PD", n, implicit["policy_steps_per_s"], implicit["physics_steps_per_s"],
        f"explicit chain (with delay) / implicit = {ratio:.3f}")  # fmt: skip


def ppo_section(bench, task: str, n: int, args: argparse.Namespace, device: str, progress, result: dict) -> None:
    """PPO end to end in one process, and in two (sharing n envs, and with n each) where the device allows."""
    import torch

    if device.startswith("cuda") and torch.cuda.device_count() < 2:
        one = bench.ppo_steps(task, n, args.ppo_iterations, num_procs=1, device=device)
        progress.update(1, done="PPO 1 process (2 processes need 2 GPUs)")
        result["ppo"] = {"one_process": one}
        row("PPO end to end, 1 process", one["num_envs"], one["env_steps_per_s"], None,
            f"collect {one['collect_s']:.2f} s + learn {one['learn_s']:.2f} s; 2 processes need 2 GPUs")  # fmt: skip
    else:
        layouts = {"one_process": (n, 1), "two_processes": (n, 2), "two_processes_double_envs": (2 * n, 2)}
        labels = {"one_process": "PPO end to end, 1 process", "two_processes": "PPO end to end, 2 processes",
                  "two_processes_double_envs": "PPO end to end, 2 processes x n envs"}  # fmt: skip
        ppo: dict = {}
        for name in args.ppo_layouts:  # 2 x n envs: the same load per core as the single process of n envs
            num_envs, num_procs = layouts[name]
            ppo[name] = bench.ppo_steps(task, num_envs, args.ppo_iterations, num_procs=num_procs, device=device)
            progress.update(1, done=labels[name])
        for name, key in (("two_processes", "speedup"), ("two_processes_double_envs", "speedup_double_envs")):
            if name in ppo and "one_process" in ppo:
                ppo[key] = ppo[name]["env_steps_per_s"] / ppo["one_process"]["env_steps_per_s"]
        result["ppo"] = ppo
        for name in args.ppo_layouts:
            r = ppo[name]
            row(labels[name], r["num_envs"], r["env_steps_per_s"], None,
                f"collect {r['collect_s']:.2f} s + learn {r['learn_s']:.2f} s")  # fmt: skip
        ratios = [f"{ppo[key]:.2f} ({what})" for key, what in (("speedup", "same total envs"),
                  ("speedup_double_envs", "same envs per process")) if key in ppo]  # fmt: skip
        if ratios:
            print(f"{'':<44} {'':>6} {'':>14} {'':>16}  2 processes / 1 = {', '.join(ratios)}")


def mujoco_section(bench, task: str, n: int, with_env: bool, progress, result: dict) -> None:
    """Plain MuJoCo C stepping of the G1 and the deploy runtime on it."""
    meta = bench.policy_metadata_of(task)
    mj = bench.mujoco_steps(meta)
    progress.update(1, done="MuJoCo")
    result["mujoco"] = mj
    row("plain MuJoCo C, G1 standing, PD, 1 thread", 1, None, mj["raw_mj_steps_per_s"],
        f"reference: holds the default pose ({mj['raw_restarts']} restarts)")  # fmt: skip
    row("  same, zero torque (collapses, lies down)", 1, None, mj["raw_zero_torque_mj_steps_per_s"],
        "not a reference: more contacts on the ground")  # fmt: skip
    row("deploy runtime + MuJoCo (sim2sim)", 1, mj["runtime_policy_steps_per_s"],
        mj["runtime_physics_steps_per_s"], f"runtime/raw = {mj['runtime_over_raw']:.3f}")  # fmt: skip
    if with_env:
        env = result[task]["env"]
        ratio = env["physics_steps_per_s"] / mj["raw_mj_steps_per_s"]
        result["isaaclab_over_raw_mujoco"] = ratio
        print(f"{'':<44} {'':>6} {'':>14} {'':>16}  Isaac Lab env ({n} envs) / raw MuJoCo (1 env) = {ratio:.2f}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import torch

    from realgap.envs.eval import bench
    from realgap.envs.sim.physics import resolve_device
    from realgap.tasks import check_task

    sections = set(args.sections.split(","))
    unknown = sections - {"env", "ppo", "mujoco"}
    if unknown:
        raise ValueError(f"unknown sections {sorted(unknown)}; known: env, ppo, mujoco")
    tasks = [check_task(t) for t in args.tasks.split(",")]
    device = resolve_device(args.device)
    n = args.num_envs
    result: dict = {"machine": {"cpu": platform.processor() or platform.machine(), "cores": torch.get_num_threads(),
                                "torch": torch.__version__, "device": device}, "num_envs": n}  # fmt: skip
    from realgap.envs.run.progress import Progress

    num_ppo = 1 if device.startswith("cuda") and torch.cuda.device_count() < 2 else len(args.ppo_layouts)
    total = (2 * len(tasks) + 1) * ("env" in sections) + num_ppo * ("ppo" in sections) + ("mujoco" in sections)
    progress = Progress("[realgap] benchmark", max(total, 1), unit="measurements", interval_s=0.0, bar=False)
    print(f"\n{'measurement':<44} {'envs':>6} {'policy st/s':>14} {'physics st/s':>16}  ratio")
    if "env" in sections:
        env_section(bench, tasks, n, args, device, progress, result)
    if "ppo" in sections:
        ppo_section(bench, tasks[0], n, args, device, progress, result)
    if "mujoco" in sections:
        mujoco_section(bench, tasks[0], n, "env" in sections, progress, result)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main)
