"""The transfer study's sittings: the arms and seeds asked for, trained and scored in parallel, then the summary of
everything finished in the study's folder (``scripts/transfer_study.py``).

A study's folder belongs to one request: its task, device and budget (:class:`~realgap.envs.eval.study.steps.Budget`)
are written to ``request.json`` at its first sitting and every later sitting must ask for the same, so runs of
another budget never join a study's table. Arms and seeds may differ between sittings (one sitting trains (a) and (b),
the next (g) and (h)); the summary covers every (arm, seed) whose Play and suite scores exist. Each sitting is
recorded (its commit, arms, seeds, start). Nothing is ever deleted: a failed step keeps what the pair made so far,
and the next sitting goes on from it (:mod:`~realgap.envs.eval.study.steps`).
"""

from __future__ import annotations

import csv
import datetime
import json
import os
import re
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from realgap.envs.eval.compare.run import say
from realgap.envs.eval.robustness.stats import finite_or_none
from realgap.envs.eval.study.arms import GPU_NUM_ENVS, TaskSpec, parse_arms, parse_study_seeds, task_spec
from realgap.envs.eval.study.curves import curve_points, kept_points, write_curves
from realgap.envs.eval.study.steps import STEPS, Budget, Pair, StepFailed, find_run, run_pair
from realgap.envs.eval.study.summary import markdown, read_seed_row, study_summary
from realgap.envs.run.run_dir import git_state
from realgap.envs.sim.physics import resolve_device

REQUEST_FILE = "request.json"
"""The study's request (budget) and its sittings, in the study's folder."""
RULE_PLAY_EPISODES, RULE_SUITE_EPISODES = 256, 4
"""The page's Play episodes per run and suite episodes per robot."""


@dataclass(frozen=True)
class StudyRequest:
    """A sitting as scripts/transfer_study.py's flags give it (see its ``--help`` for each)."""

    task: str
    out: str
    arms: str = "a,b,g,h"
    seeds: str = "1,2,3"
    jobs: int = 1
    device: str | None = None
    summarize_only: bool = False
    max_iterations: int | None = None
    num_envs: int | None = None
    play_episodes: int = RULE_PLAY_EPISODES
    suite_robots: int | None = None
    suite_episodes: int = RULE_SUITE_EPISODES


def deviations(spec: TaskSpec, budget: Budget) -> list[str]:
    """Where ``budget`` departs from the page's rules (a smoke run); empty for the study itself."""
    rule = {
        "max_iterations": spec.max_iterations,
        "num_envs": GPU_NUM_ENVS if budget.device.startswith("cuda") else None,  # None: the task's default
        "play_episodes": RULE_PLAY_EPISODES,
        "suite_robots": None,  # every robot of each family
        "suite_episodes": RULE_SUITE_EPISODES,
    }
    return [
        f"--{flag} {getattr(budget, flag)} (the study: {'default' if want is None else want})"
        for flag, want in rule.items()
        if getattr(budget, flag) != want
    ]


def sharing_note(jobs: int, procs: int, cores: int | None = None) -> str | None:
    """The note for more training processes than CPU cores (``jobs`` runs of ``procs`` processes each), else None:
    runs that share a core take longer, so their wall-clock is not the budget's (their CPU seconds still are)."""
    cores = cores if cores is not None else (os.cpu_count() or 1)
    if jobs * procs <= cores:
        return None
    return (
        f"--jobs {jobs} runs of {procs} process(es) each are {jobs * procs} processes on {cores} CPU cores: they "
        "share cores, so each run's wall-clock is longer than alone (its CPU seconds are not)"
    )


def check_request(req: StudyRequest) -> tuple[TaskSpec, list[Pair], Budget]:
    """The task, the (arm, seed) pairs and the budget of ``req``, every one checked before anything runs.

    Raises:
        ValueError: An unknown task or arm, bad seeds, ``--summarize_only`` on a folder with no study, or a folder
            holding a study of another request (names every setting that differs).
        DeviceUnavailableError: CUDA asked for but unusable.
    """

    spec = task_spec(req.task)
    arms = parse_arms(spec, req.arms)
    seeds = parse_study_seeds(req.seeds)
    out = Path(req.out).resolve()
    device = resolve_device(req.device)
    num_envs = req.num_envs or (GPU_NUM_ENVS if device.startswith("cuda") else None)
    budget = Budget(
        spec.name,
        device,
        req.max_iterations or spec.max_iterations,
        num_envs,
        req.play_episodes,
        req.suite_robots,
        req.suite_episodes,
    )
    path = out / REQUEST_FILE
    if path.is_file():
        recorded = json.loads(path.read_text())["budget"]
        if differ := [f"{k} {v} (asked: {asdict(budget)[k]})" for k, v in recorded.items() if asdict(budget)[k] != v]:
            raise ValueError(
                f"--out {req.out} holds a study of another request, recorded with {', '.join(differ)}: ask for the "
                "same, or give another --out (nothing was changed)"
            )
    elif req.summarize_only:
        raise ValueError(f"--out {req.out}: no study there (no {REQUEST_FILE}), nothing to summarize")
    elif out.is_dir() and any(out.iterdir()):
        raise ValueError(f"--out {req.out} is a folder that holds no study (no {REQUEST_FILE}): give an empty one")
    return spec, [Pair(arm, seed, out) for arm in arms for seed in seeds], budget


def record_sitting(out: Path, budget: Budget, req: StudyRequest) -> list[dict[str, Any]]:
    """Write ``request.json`` (the budget, every sitting so far and this one); returns the sittings."""
    path = out / REQUEST_FILE
    sittings = json.loads(path.read_text())["sittings"] if path.is_file() else []
    sittings.append(
        {
            "started_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "arms": req.arms,
            "seeds": req.seeds,
            "jobs": req.jobs,
            "summarize_only": req.summarize_only,
            "git": git_state(),
        }
    )
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"budget": asdict(budget), "sittings": sittings}, indent=1))
    return sittings


def step_totals(timing_file: Path) -> dict[str, float]:
    """Per step, wall-clock and CPU seconds summed over its attempts (``<step>_wall_s``, ``<step>_cpu_s``)."""
    timing = json.loads(timing_file.read_text()) if timing_file.is_file() else {}
    out = {}
    for step in STEPS:
        attempts = timing.get(step, [])
        out[f"{step}_wall_s"] = sum(a["wall_s"] for a in attempts)
        out[f"{step}_cpu_s"] = sum(a["cpu_s"] for a in attempts)
    return out


def gather(
    spec: TaskSpec, out: Path
) -> tuple[list[dict[str, Any]], dict[str, dict[str, float]], list[str], list[Pair]]:
    """The finished seeds of every arm in ``out`` (:func:`~realgap.envs.eval.study.summary.seed_row`), the timing of
    every pair that ran a step, the tags of pairs started but not finished, and every pair found."""
    tags = {p.stem.split(".")[0] for p in (out / "timing").glob("*.json")}
    tags |= {d.name.split("_", 2)[-1] for d in (out / "runs").glob("*/*") if d.is_dir()}
    rows, timing, unfinished, pairs = [], {}, [], []
    for arm in spec.arms:
        seeds = sorted(int(m.group(1)) for t in tags if (m := re.fullmatch(rf"{re.escape(arm.id)}_s(\d+)", t)))
        for seed in seeds:
            pair = Pair(arm, seed, out)
            pairs.append(pair)
            timing[pair.tag] = step_totals(pair.timing)
            row = read_seed_row(arm.id, seed, pair.play, pair.suite, spec.metric)
            if row is None:
                unfinished.append(pair.tag)
            else:
                rows.append(row | timing[pair.tag])
    return rows, timing, unfinished, pairs


def write_outputs(spec: TaskSpec, budget: Budget, out: Path, sittings: list[dict[str, Any]]) -> str:
    """``study.json``, ``study.md`` and ``study.csv`` of everything finished in ``out``, and the training curves of
    every run started (:mod:`~realgap.envs.eval.study.curves`); returns the markdown."""
    rows, timing, unfinished, pairs = gather(spec, out)
    write_curves(kept_points(out, pairs) + curve_points(pairs, f"{spec.metric}_rate"), spec.metric, out)
    summary = study_summary(rows, [a.id for a in spec.arms])
    smoke = deviations(spec, budget)
    header = [f"# Transfer study: {spec.name} ({spec.task_id}, {spec.metric}), {budget.device}", ""]
    robots = "every robot" if budget.suite_robots is None else f"the first {budget.suite_robots} robot(s)"
    header += [
        f"Budget: {budget.max_iterations} iterations per run, envs: {budget.num_envs or 'the task default'}; Play "
        f"{budget.play_episodes} episodes; suite {spec.suite}, {robots} of each family × {budget.suite_episodes}."
    ]
    if smoke:
        header += ["", f"**NOT THE STUDY — a smoke run**: {'; '.join(smoke)}."]
    if unfinished:
        header += ["", f"Unfinished (not in the tables): {', '.join(unfinished)}."]
    text = markdown(summary, header)
    arms = {a.id: {"what": a.what, "dr_profile": a.dr_profile, "overrides": list(a.overrides)} for a in spec.arms}
    record = {
        "task": spec.task_id,
        "metric": spec.metric,
        "suite": spec.suite,
        "budget": asdict(budget),
        "is_study": not smoke,
        "deviations": smoke,
        "arms": arms,
        "sittings": sittings,
        "unfinished": unfinished,
        "timing": timing,
        **summary,
    }
    (out / "study.json").write_text(json.dumps(finite_or_none(record), indent=1))
    (out / "study.md").write_text(text)
    table = summary["seeds"]  # one row per seed: scores, intervals, families, each step's seconds
    with (out / "study.csv").open("w", newline="") as fh:
        fields = list(dict.fromkeys(k for row in table for k in row)) or ["arm", "seed"]
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(table)
    return text


def run_study(req: StudyRequest) -> tuple[Path, str, list[str]]:
    """One sitting of ``req``: every missing step of its pairs (``jobs`` pairs at a time), then the summary of the
    whole folder; returns the folder, the markdown and the failures (one message per failed pair)."""
    spec, pairs, budget = check_request(req)
    out = Path(req.out).resolve()
    sittings = record_sitting(out, budget, req)
    failures: list[str] = []
    if not req.summarize_only:
        kept = [p.tag for p in pairs if find_run(p) is not None]
        say(f"[realgap] study {spec.name}: {len(pairs)} runs, {len(kept)} started before, in {out}")
        if budget.device == "cpu" and (note := sharing_note(req.jobs, spec.num_procs)):
            say(f"[realgap] study: {note}")
        with ThreadPoolExecutor(max_workers=req.jobs) as pool:
            futures = {pool.submit(run_pair, pair, spec, budget, say): pair for pair in pairs}
            for future in as_completed(futures):
                try:
                    future.result()
                    say(f"[realgap] study {futures[future].tag}: finished")
                except StepFailed as err:  # the others go on; this pair resumes at the next sitting
                    failures.append(str(err))
                    say(f"[realgap] study {err}")
    return out, write_outputs(spec, budget, out, sittings), failures
