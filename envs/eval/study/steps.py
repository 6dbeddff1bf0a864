"""One (arm, seed) of the transfer study: train, export the last checkpoint, Play, suite — each step a process of its
own, skipped when its artifact exists, so a stopped sitting goes on where it ended.

The study's folder (``--out``)::

    runs/<experiment>/<stamp>_<arm>_s<seed>/   the training run (scripts/train.py --log_root runs --run_name …)
    exports/<arm>_s<seed>/                     its last checkpoint exported (scripts/export.py)
    play/<arm>_s<seed>.json                    its Play score (scripts/play.py --json)
    suite/<arm>_s<seed>/summary.json           its suite score (scripts/evaluate_suite.py)
    logs/<arm>_s<seed>.<step>.log              each step's output
    timing/<arm>_s<seed>.json                  each attempt of each step: wall-clock and CPU seconds, exit status

A step's artifact exists only once the step succeeded: a run's last checkpoint ``model_<N-1>.pt`` is written after its
last iteration, the export is staged and renamed into place (:mod:`realgap.envs.export.writer`), Play writes to a
temporary file renamed on success, and the suite writes ``episodes.csv`` last. A training stopped part-way continues
from its latest checkpoint (``scripts/train.py --resume``, an exact continuation); one stopped before its first
checkpoint trains again in a new folder (the old one is kept, never deleted).
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realgap.envs.eval.study.arms import SUITE_DIR, Arm, TaskSpec
from realgap.envs.run.run_dir import CHECKPOINT_RE, REPO_ROOT

STEPS = ("train", "export", "play", "suite")
"""The steps of one (arm, seed), in order."""
SCRIPTS = {"train": "train", "export": "export", "play": "play", "suite": "evaluate_suite"}
"""The script each step runs (``scripts/<name>.py``)."""
PLAY_NUM_ENVS = 32
"""scripts/play.py's default env count; fewer episodes than this (a smoke run) play with one env per episode."""
_STAMP = r"\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d"


@dataclass(frozen=True)
class Budget:
    """What makes two runs of one arm comparable: recorded in the study's folder and checked equal at every sitting.

    Attributes:
        task: The study's task (``balance`` or ``grasp``).
        device: ``cpu`` or ``cuda`` (arms are compared only within one device).
        max_iterations: PPO iterations per run (the page's budget unless a smoke run overrides it).
        num_envs: Envs per run (None: the task's default, the CPU rule; 4096 on a GPU).
        play_episodes: Play episodes per run (the page: 256).
        suite_robots: The first K robots of each suite family (None: all, the page's rule).
        suite_episodes: Suite episodes per robot (the page: 4).
    """

    task: str
    device: str
    max_iterations: int
    num_envs: int | None
    play_episodes: int
    suite_robots: int | None
    suite_episodes: int


@dataclass(frozen=True)
class Pair:
    """One training seed of one arm, and where its artifacts live under the study's folder ``out``."""

    arm: Arm
    seed: int
    out: Path

    @property
    def tag(self) -> str:
        """``<arm>_s<seed>``: the run name and every artifact's name."""
        return f"{self.arm.id}_s{self.seed}"

    @property
    def export(self) -> Path:
        return self.out / "exports" / self.tag

    @property
    def play(self) -> Path:
        return self.out / "play" / f"{self.tag}.json"

    @property
    def suite(self) -> Path:
        return self.out / "suite" / self.tag

    @property
    def timing(self) -> Path:
        return self.out / "timing" / f"{self.tag}.json"

    def log(self, step: str) -> Path:
        return self.out / "logs" / f"{self.tag}.{step}.log"


class StepFailed(RuntimeError):
    """A step's process exited with an error; the message names the pair, the step, its log and the log's tail."""


def checkpoints(run_dir: Path) -> list[int]:
    """The iterations of the ``model_<it>.pt`` files in ``run_dir``, ascending."""
    found = (CHECKPOINT_RE.search(p.name) for p in run_dir.glob("model_*.pt"))
    return sorted(int(m.group(1)) for m in found if m)


def find_run(pair: Pair) -> Path | None:
    """The training run of ``pair`` that got furthest (its latest checkpoint; the newest folder on a tie), or None
    when no run folder of it holds a checkpoint."""
    pattern = re.compile(rf"^{_STAMP}_{re.escape(pair.tag)}$")
    runs = [d for d in (pair.out / "runs").glob(f"*/*_{pair.tag}") if d.is_dir() and pattern.match(d.name)]
    started = [(checkpoints(d)[-1], d.name, d) for d in runs if checkpoints(d)]
    return max(started)[2] if started else None


def last_checkpoint(run_dir: Path, budget: Budget) -> Path:
    """The checkpoint the study scores: the run's last, ``model_<max_iterations - 1>.pt`` (no selection)."""
    return run_dir / f"model_{budget.max_iterations - 1}.pt"


def done(pair: Pair, step: str, budget: Budget) -> bool:
    """Whether ``step`` of ``pair`` has its artifact (module docstring)."""
    if step == "train":
        run_dir = find_run(pair)
        return run_dir is not None and last_checkpoint(run_dir, budget).is_file()
    if step == "export":
        return (pair.export / "policy.json").is_file() and (pair.export / "policy.onnx").is_file()
    if step == "play":
        return pair.play.is_file()
    return (pair.suite / "summary.json").is_file() and (pair.suite / "episodes.csv").is_file()


def _script(name: str) -> list[str]:
    return [sys.executable, str(REPO_ROOT / "scripts" / f"{name}.py")]


def command(pair: Pair, step: str, spec: TaskSpec, budget: Budget) -> list[str]:
    """The process of ``step`` for ``pair`` (its training's earlier steps done, except for ``train`` itself)."""
    device = ["--device", budget.device]
    run_dir = find_run(pair)
    if step == "train":
        if run_dir is not None:  # stopped after a checkpoint: continue it (every flag restored from its record)
            return [*_script("train"), "--resume", str(run_dir), *device]
        cmd = [*_script("train"), "--task", spec.task_id, "--dr_profile", pair.arm.dr_profile]
        cmd += ["--seed", str(pair.seed), "--max_iterations", str(budget.max_iterations)]
        cmd += ["--log_root", str(pair.out / "runs"), "--run_name", pair.tag, *device]
        cmd += ["--set", *pair.arm.overrides] if pair.arm.overrides else []
        # processes sharing the envs are the CPU's way to use its cores; a GPU arm steps all its envs in one
        cmd += ["--num_procs", str(spec.num_procs)] if spec.num_procs > 1 and budget.device == "cpu" else []
        return cmd + (["--num_envs", str(budget.num_envs)] if budget.num_envs is not None else [])
    assert run_dir is not None, f"{pair.tag}: {step} before its training"
    checkpoint = str(last_checkpoint(run_dir, budget))
    if step == "export":
        return [*_script("export"), "--checkpoint", checkpoint, "--out", str(pair.export), *device]
    if step == "play":
        cmd = [*_script("play"), "--checkpoint", checkpoint, "--episodes", str(budget.play_episodes), "--seed", "0"]
        cmd += ["--no_export", "--json", str(pair.play.with_suffix(".partial.json")), *device]
        return cmd + (["--num_envs", str(budget.play_episodes)] if budget.play_episodes < PLAY_NUM_ENVS else [])
    cmd = [*_script(SCRIPTS["suite"]), "--policy", str(pair.export), "--suite", str(SUITE_DIR / spec.suite)]
    cmd += ["--episodes", str(budget.suite_episodes), "--out", str(pair.suite)]
    return cmd + (["--robots", str(budget.suite_robots)] if budget.suite_robots is not None else [])


def run_step(cmd: list[str], log: Path, device: str) -> tuple[int, float, float]:
    """Run ``cmd`` with its output appended to ``log``; returns its exit status, wall-clock seconds and CPU seconds
    (user + system of the process and every process it waited for: torchrun's workers included).

    On the CPU the process runs with ``OMP_NUM_THREADS=1``: each process's physics steps on one core, and torch's
    default thread pool only contends with it (a learn step 6.9 s against 0.15 s, DESIGN.md).
    """
    env = dict(os.environ)
    if not device.startswith("cuda"):
        env["OMP_NUM_THREADS"] = "1"
    log.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with open(log, "a") as fh:
        fh.write(f"$ {shlex.join(cmd)}\n")
        fh.flush()
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=REPO_ROOT)
        _, status, usage = os.wait4(proc.pid, 0)  # rusage of this child alone (other pairs run beside it)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, time.perf_counter() - t0, usage.ru_utime + usage.ru_stime


def record_attempt(pair: Pair, step: str, entry: dict[str, Any]) -> None:
    """Append one attempt of ``step`` to the pair's timing file (a stopped sitting's attempts stay in it)."""
    timing = json.loads(pair.timing.read_text()) if pair.timing.is_file() else {}
    timing.setdefault(step, []).append(entry)
    pair.timing.parent.mkdir(parents=True, exist_ok=True)
    tmp = pair.timing.with_suffix(".tmp")
    tmp.write_text(json.dumps(timing, indent=1))
    os.replace(tmp, pair.timing)


def run_pair(pair: Pair, spec: TaskSpec, budget: Budget, say: Callable[[str], None] = print) -> list[str]:
    """Every step of ``pair`` whose artifact is missing, in order; returns the steps run.

    Raises:
        StepFailed: A step's process failed (the later steps are not run; the artifacts made so far are kept).
    """
    for folder in (pair.export.parent, pair.play.parent, pair.suite.parent):  # the scripts write into them
        folder.mkdir(parents=True, exist_ok=True)
    ran = []
    for step in STEPS:
        if done(pair, step, budget):
            continue
        cmd = command(pair, step, spec, budget)
        say(f"[realgap] study {pair.tag}: {step} …")
        code, wall_s, cpu_s = run_step(cmd, pair.log(step), budget.device)
        at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        entry = {"command": shlex.join(cmd), "exit": code, "wall_s": wall_s, "cpu_s": cpu_s, "finished_at": at}
        record_attempt(pair, step, entry)
        partial = pair.play.with_suffix(".partial.json")
        if code == 0 and step == "play" and partial.is_file():
            os.replace(partial, pair.play)
        if code != 0 or not done(pair, step, budget):
            tail = pair.log(step).read_text()[-1500:]
            how = f"failed (exit {code})" if code else "ended without its artifact"
            raise StepFailed(f"{pair.tag}: {step} {how}, log {pair.log(step)}:\n{tail}")
        say(f"[realgap] study {pair.tag}: {step} done in {wall_s:.0f} s ({cpu_s / 60:.1f} CPU-min)")
        ran.append(step)
    return ran
