"""The benchmark report from its inputs to its table (``scripts/benchmark.py``), callable without the command line:
:func:`run_benchmark` measures the requested sections with :mod:`realgap.envs.eval.bench.throughput`, prints one
table row per figure (:func:`row`: baseline and ratio beside each) and returns every figure.

Figures depend on the machine and its load; they are printed and recorded, never asserted.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass, field
from typing import Any

from realgap.envs.run.progress import Progress
from realgap.envs.sim.physics import resolve_device

TASKS = ("Realgap-Balance-G1-v0", "Realgap-Grasp-Franka-v0")
"""Tasks of the env section (the first is the one of the ppo and mujoco sections)."""
SECTIONS = ("env", "ppo", "mujoco")
PPO_LAYOUTS = ("one_process", "two_processes", "two_processes_double_envs")
"""PPO runs of the ppo section: 1 process with n envs, 2 processes sharing n envs, 2 processes with n envs each."""
PPO_LABELS = {
    "one_process": "PPO end to end, 1 process",
    "two_processes": "PPO end to end, 2 processes",
    "two_processes_double_envs": "PPO end to end, 2 processes x n envs",
}


@dataclass(frozen=True)
class BenchRequest:
    """A benchmark as scripts/benchmark.py's flags give it (see its ``--help`` for each)."""

    num_envs: int = 256
    device: str | None = None
    sections: str = ",".join(SECTIONS)
    tasks: str = ",".join(TASKS)
    steps: int = 100
    action_std: float = 0.0
    ppo_iterations: int = 6
    ppo_layouts: list[str] = field(default_factory=lambda: list(PPO_LAYOUTS))
    json: str | None = None
    deterministic: bool = False
    """The shared ``--deterministic`` flag: it acts through the environment variable the parser sets, read where the
    physics config is resolved (:mod:`realgap.envs.run.cli`); here so the request mirrors the flags."""


def check_sections(text: str) -> set[str]:
    """The comma-separated sections of ``text``.

    Raises:
        ValueError: A name that is not a section.
    """
    sections = set(text.split(","))
    if unknown := sections - set(SECTIONS):
        raise ValueError(f"unknown sections {sorted(unknown)}; known: {', '.join(SECTIONS)}")
    return sections


def row(name: str, envs: int | str, policy: float | None, physics: float | None, note: str = "") -> str:
    """One table row: measurement, envs, policy steps/s, physics steps/s (blank where not measured), note."""
    pol = f"{policy:>14.0f}" if policy is not None else f"{'':>14}"
    phy = f"{physics:>16.0f}" if physics is not None else f"{'':>16}"
    return f"{name:<44} {envs!s:>6} {pol} {phy}  {note}"


def note(text: str) -> str:
    """A line of the table that holds only a note (under the row it explains)."""
    return f"{'':<44} {'':>6} {'':>14} {'':>16}  {text}"


def env_section(
    bench: Any, tasks: list[str], n: int, req: BenchRequest, device: str, progress: Any, result: dict
) -> None:
    """Each task's env against bare stepping of its scene; the balance env with Isaac Lab's implicit PD."""
    for task in tasks:
        env = bench.env_policy_steps(task, n, req.steps, action_std=req.action_std, device=device)
        progress.update(1, done=f"{task} env")
        bare = bench.bare_physics_steps(task, n, env["physics_steps"], device=device)
        progress.update(1, done=f"{task} bare")
        ratio = env["physics_steps_per_s"] / bare["physics_steps_per_s"]
        result[task] = {"env": env, "bare": bare, "env_over_bare": ratio}
        print(row(f"{task} env", n, env["policy_steps_per_s"], env["physics_steps_per_s"], f"env/bare = {ratio:.3f}"))
        print(row("  bare scene stepping (same physics steps)", n, None, bare["physics_steps_per_s"]))
        solver_env = env["physics_seconds"] / env["physics_steps"]
        solver_bare = bare["physics_seconds"] / bare["physics_steps"]
        result[task] |= {"solver_step_env_over_bare": solver_env / solver_bare}
        overhead = f"env overhead over its own physics = {env['overhead_over_physics']:.1%}"
        print(
            note(
                f"{overhead} (bare: {bare['overhead_over_physics']:.1%}); solver step env/bare = "
                f"{solver_env / solver_bare:.2f}"
            )
        )
    balance = tasks[0]
    implicit = bench.env_policy_steps(
        balance, n, req.steps, actuators="implicit", action_std=req.action_std, device=device
    )
    progress.update(1, done="implicit PD")
    ratio = result[balance]["env"]["policy_steps_per_s"] / implicit["policy_steps_per_s"]
    result[balance] |= {"env_implicit_pd": implicit, "explicit_chain_over_implicit": ratio}
    print(
        row(
            "  same env, Isaac Lab implicit PD",
            n,
            implicit["policy_steps_per_s"],
            implicit["physics_steps_per_s"],
            f"explicit chain (with delay) / implicit = {ratio:.3f}",
        )
    )


def one_gpu_only(device: str) -> bool:
    """On CUDA with fewer than two GPUs: the 2-process PPO layouts cannot run (one process per GPU)."""
    import torch

    return device.startswith("cuda") and torch.cuda.device_count() < 2


def ppo_section(bench: Any, task: str, n: int, req: BenchRequest, device: str, progress: Any, result: dict) -> None:
    """PPO end to end in one process, and in two (sharing n envs, and with n each) where the device allows."""
    if one_gpu_only(device):
        one = bench.ppo_steps(task, n, req.ppo_iterations, num_procs=1, device=device)
        progress.update(1, done="PPO 1 process (2 processes need 2 GPUs)")
        result["ppo"] = {"one_process": one}
        times = f"collect {one['collect_s']:.2f} s + learn {one['learn_s']:.2f} s"
        print(
            row(
                "PPO end to end, 1 process",
                one["num_envs"],
                one["env_steps_per_s"],
                None,
                f"{times}; 2 processes need 2 GPUs",
            )
        )
        return
    sizes = {"one_process": (n, 1), "two_processes": (n, 2), "two_processes_double_envs": (2 * n, 2)}
    ppo: dict = {}
    for name in req.ppo_layouts:  # 2 x n envs: the same load per core as the single process of n envs
        num_envs, num_procs = sizes[name]
        ppo[name] = bench.ppo_steps(task, num_envs, req.ppo_iterations, num_procs=num_procs, device=device)
        progress.update(1, done=PPO_LABELS[name])
    for name, key in (("two_processes", "speedup"), ("two_processes_double_envs", "speedup_double_envs")):
        if name in ppo and "one_process" in ppo:
            ppo[key] = ppo[name]["env_steps_per_s"] / ppo["one_process"]["env_steps_per_s"]
    result["ppo"] = ppo
    for name in req.ppo_layouts:
        r = ppo[name]
        print(
            row(
                PPO_LABELS[name],
                r["num_envs"],
                r["env_steps_per_s"],
                None,
                f"collect {r['collect_s']:.2f} s + learn {r['learn_s']:.2f} s",
            )
        )
    ratios = [
        f"{ppo[key]:.2f} ({what})"
        for key, what in (("speedup", "same total envs"), ("speedup_double_envs", "same envs per process"))
        if key in ppo
    ]
    if ratios:
        print(note(f"2 processes / 1 = {', '.join(ratios)}"))


def mujoco_section(bench: Any, task: str, n: int, with_env: bool, progress: Any, result: dict) -> None:
    """Plain MuJoCo C stepping of the G1 and the deploy runtime on it."""
    meta = bench.policy_metadata_of(task)
    mj = bench.mujoco_steps(meta)
    progress.update(1, done="MuJoCo")
    result["mujoco"] = mj
    print(
        row(
            "plain MuJoCo C, G1 standing, PD, 1 thread",
            1,
            None,
            mj["raw_mj_steps_per_s"],
            f"reference: holds the default pose ({mj['raw_restarts']} restarts)",
        )
    )
    print(
        row(
            "  same, zero torque (collapses, lies down)",
            1,
            None,
            mj["raw_zero_torque_mj_steps_per_s"],
            "not a reference: more contacts on the ground",
        )
    )
    print(
        row(
            "deploy runtime + MuJoCo (sim2sim)",
            1,
            mj["runtime_policy_steps_per_s"],
            mj["runtime_physics_steps_per_s"],
            f"runtime/raw = {mj['runtime_over_raw']:.3f}",
        )
    )
    if with_env:
        env = result[task]["env"]
        ratio = env["physics_steps_per_s"] / mj["raw_mj_steps_per_s"]
        result["isaaclab_over_raw_mujoco"] = ratio
        print(note(f"Isaac Lab env ({n} envs) / raw MuJoCo (1 env) = {ratio:.2f}"))


def run_benchmark(req: BenchRequest) -> dict[str, Any]:
    """Measure the requested sections, printing the table as it fills; every figure, with the machine it ran on.

    Raises:
        ValueError: An unknown section; UnknownTaskError: an unknown task; DeviceUnavailableError: no such device.
    """
    sections = check_sections(req.sections)
    import torch

    from realgap.envs.eval.bench import throughput as bench
    from realgap.tasks import check_task

    tasks = [check_task(t) for t in req.tasks.split(",")]
    device = resolve_device(req.device)
    n = req.num_envs
    result: dict = {
        "machine": {
            "cpu": platform.processor() or platform.machine(),
            "cores": torch.get_num_threads(),
            "torch": torch.__version__,
            "device": device,
        },
        "num_envs": n,
    }
    num_ppo = 1 if one_gpu_only(device) else len(req.ppo_layouts)
    total = (2 * len(tasks) + 1) * ("env" in sections) + num_ppo * ("ppo" in sections) + ("mujoco" in sections)
    progress = Progress("[realgap] benchmark", max(total, 1), unit="measurements", interval_s=0.0, bar=False)
    print(f"\n{'measurement':<44} {'envs':>6} {'policy st/s':>14} {'physics st/s':>16}  ratio")
    if "env" in sections:
        env_section(bench, tasks, n, req, device, progress, result)
    if "ppo" in sections:
        ppo_section(bench, tasks[0], n, req, device, progress, result)
    if "mujoco" in sections:
        mujoco_section(bench, tasks[0], n, "env" in sections, progress, result)
    return result
