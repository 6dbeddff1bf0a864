"""The first-GPU check: one command that says, line by line, whether realgap works on this machine's GPU.

Steps, in order, each with a verdict (PASS, FAIL, NO GPU, NOT RUN): the driver / torch / warp facts
(:mod:`realgap.envs.sim.device`), the ``gpu`` test tier, a 2-iteration training on CUDA and its resume, a short
PPO throughput run at 4,096 envs for each task (``scripts/benchmark.py``), and the cost of ``--deterministic`` (the
first task's env throughput again with it on, printed beside the default's). Sized to finish within 15 minutes on one
GPU. Why: the first GPU a user brings should fail here, loudly and with the cause, not hours into a run.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from realgap.envs.sim.device import GpuFacts, probe, unusable_gpu_reason

REPO = Path(__file__).resolve().parents[2]
TASKS = ("Realgap-Balance-G1-v0", "Realgap-Grasp-Franka-v0")
THROUGHPUT_ENVS = 4096
BUDGET_S = {"gpu tier": 360, "train 2 iterations": 140, "resume": 110, "throughput": 100, "deterministic": 80}
"""Wall-clock limit per step, s (the throughput limit is per task): 15 minutes in all."""
DETERMINISTIC = "deterministic cost"
"""The step that measures ``--deterministic`` against the default: env steps/s of the first task, same envs."""


@dataclass(frozen=True)
class Step:
    """One line of the check: its name, the command it runs (None: the facts check) and its time limit, s."""

    name: str
    command: tuple[str, ...] | None
    timeout_s: float


@dataclass(frozen=True)
class Verdict:
    """The outcome of one :class:`Step`: ``PASS``, ``FAIL``, ``NO GPU`` or ``NOT RUN``, with one line of detail."""

    name: str
    verdict: str
    detail: str

    def line(self) -> str:
        return f"{self.verdict:<8} {self.name}: {self.detail}"


def facts_verdict(facts: GpuFacts) -> Verdict:
    """The driver / torch / warp line: PASS with the versions, FAIL with the cause and fix, or NO GPU."""
    versions = (
        f"driver {facts.driver_version or '-'} (CUDA {facts.driver_cuda or '-'}), torch {facts.torch_version} "
        f"(CUDA {facts.torch_cuda or 'none'}), warp CUDA devices {facts.warp_cuda_count}"
    )
    reason = unusable_gpu_reason(facts)
    if reason is not None:
        return Verdict("driver/torch/warp", "FAIL", reason)
    if not facts.torch_cuda_available:
        return Verdict(
            "driver/torch/warp", "NO GPU", f"no GPU on this machine (nvidia-smi and warp see none); {versions}"
        )
    return Verdict("driver/torch/warp", "PASS", f"{', '.join(facts.smi_gpus) or 'GPU'}; {versions}")


def plan(work: Path, python: str = sys.executable) -> list[Step]:
    """The steps after the facts check, as commands run from the repository root; outputs go under ``work``."""
    run_dir = work / "train_run"
    train = (
        python,
        "scripts/train.py",
        "--task",
        TASKS[0],
        "--device",
        "cuda",
        "--num_envs",
        "64",
        "--save_interval",
        "1",
        "--run_dir",
        str(run_dir),
    )
    steps = [
        Step(
            "gpu tier",
            (python, "-m", "pytest", "-m", "gpu", "-n", "0", "-p", "no:cacheprovider", "tests/gpu"),
            BUDGET_S["gpu tier"],
        ),
        Step("train 2 iterations", (*train, "--max_iterations", "2"), BUDGET_S["train 2 iterations"]),
        Step(
            "resume",
            (python, "scripts/train.py", "--resume", str(run_dir), "--max_iterations", "3"),
            BUDGET_S["resume"],
        ),
    ]
    steps += [_throughput_step(work, python, task) for task in TASKS]
    steps.append(_deterministic_step(work, python))
    return steps


def _throughput_step(work: Path, python: str, task: str) -> Step:
    """Env and PPO throughput of ``task`` at :data:`THROUGHPUT_ENVS` envs on CUDA (one process), JSON under ``work``."""
    return Step(
        f"throughput {task}",
        (
            python,
            "scripts/benchmark.py",
            "--sections",
            "env,ppo",
            "--tasks",
            task,
            "--num_envs",
            str(THROUGHPUT_ENVS),
            "--steps",
            "50",
            "--ppo_iterations",
            "3",
            "--ppo_layouts",
            "one_process",
            "--device",
            "cuda",
            "--json",
            str(work / f"throughput_{task}.json"),
        ),
        BUDGET_S["throughput"],
    )


def _deterministic_step(work: Path, python: str) -> Step:
    """The first task's env throughput with ``--deterministic`` (its cost against the default, see
    :func:`deterministic_cost`), JSON under ``work``."""
    return Step(
        DETERMINISTIC,
        (
            python,
            "scripts/benchmark.py",
            "--sections",
            "env",
            "--tasks",
            TASKS[0],
            "--num_envs",
            str(THROUGHPUT_ENVS),
            "--steps",
            "50",
            "--device",
            "cuda",
            "--deterministic",
            "--json",
            str(work / "throughput_deterministic.json"),
        ),
        BUDGET_S["deterministic"],
    )


def deterministic_cost(work: Path) -> str | None:
    """The deterministic run's env steps/s against the default's (the first task's throughput step), as one line;
    None when either figure is missing. Printed, never asserted: a cost, not a requirement."""
    import json

    try:
        fast = json.loads((work / f"throughput_{TASKS[0]}.json").read_text())[TASKS[0]]["env"]["policy_steps_per_s"]
        exact = json.loads((work / "throughput_deterministic.json").read_text())[TASKS[0]]["env"]["policy_steps_per_s"]
    except (OSError, KeyError, TypeError, ValueError):
        return None
    return (
        f"{TASKS[0]} at {THROUGHPUT_ENVS} envs: {exact:.0f} policy steps/s deterministic vs {fast:.0f} default "
        f"(x{exact / fast:.2f})"
    )


def run_step(step: Step, log: Path) -> Verdict:
    """Run ``step``'s command with its time limit, its output in ``log``; PASS on exit status 0."""
    start = time.monotonic()
    with log.open("w") as fh:
        try:
            rc = subprocess.run(
                step.command, cwd=REPO, stdout=fh, stderr=subprocess.STDOUT, timeout=step.timeout_s
            ).returncode
        except subprocess.TimeoutExpired:
            return Verdict(step.name, "FAIL", f"over its {step.timeout_s:.0f} s limit (log: {log})")
    tail = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()][-1:] or [""]
    took = f"{time.monotonic() - start:.0f} s"
    verdict = "PASS" if rc == 0 else "FAIL"
    return Verdict(step.name, verdict, f"exit {rc} in {took}; last line: {tail[0][:160]} (log: {log})")


def gpu_check(
    work: Path, facts: GpuFacts | None = None, runner: Callable[[Step, Path], Verdict] = run_step
) -> list[Verdict]:
    """Run the whole check, write ``work/report.txt`` and return the verdicts (the first is the facts line).

    Without a usable GPU every later step is ``NOT RUN`` with the reason: nothing is run on the CPU in its place.
    """
    work.mkdir(parents=True, exist_ok=True)
    facts = probe(ask_warp=True) if facts is None else facts
    verdicts = [facts_verdict(facts)]
    for step in plan(work):
        if verdicts[0].verdict != "PASS":
            verdicts.append(Verdict(step.name, "NOT RUN", f"needs a usable GPU ({verdicts[0].verdict})"))
        else:
            verdicts.append(runner(step, work / f"{step.name.replace(' ', '_').replace('/', '_')}.log"))
    cost = deterministic_cost(work)
    if cost is not None and verdicts[-1].name == DETERMINISTIC and verdicts[-1].verdict == "PASS":
        verdicts[-1] = Verdict(DETERMINISTIC, "PASS", f"{cost}; {verdicts[-1].detail}")
    (work / "report.txt").write_text("\n".join(v.line() for v in verdicts) + "\n")
    return verdicts


def exit_code(verdicts: list[Verdict]) -> int:
    """0 when every line passed, 2 when there is no GPU, 1 on any failure."""
    if any(v.verdict == "FAIL" for v in verdicts):
        return 1
    return 0 if all(v.verdict == "PASS" for v in verdicts) else 2
