"""Action-space comparison: gather each run's learning curve, evaluation and robustness into one table and plots.

Reads what ``scripts/train.py`` (``progress.csv``, ``params/run.json``) and ``scripts/evaluate.py`` (``report.json``)
wrote; no simulator import. Every row names the run's action space, its low-level actuator model and the three rates
(physics, servo, policy) with the target mode (a comparison that does not report them is not fair: the same network
behaves differently at another rate or actuator), and the budget it was trained with.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from realgap.envs.run.run_dir import env_steps_per_iteration, fill_reward_terms


@dataclass(frozen=True)
class RunResult:
    """One trained variant.

    Attributes:
        space: Action space name.
        seed: Training seed.
        run_dir: The run folder.
        train_wall_s: Wall-clock time of the training subprocess, s.
        report: The evaluation report (``scripts/evaluate.py``'s ``report.json``).
    """

    space: str
    seed: int
    run_dir: Path
    train_wall_s: float
    report: Mapping[str, Any]


def read_progress(run_dir: Path) -> list[dict[str, float]]:
    """The rows of ``progress.csv`` as floats (NaN for empty cells)."""
    path = Path(run_dir) / "progress.csv"
    if not path.is_file():
        return []
    with open(path, newline="") as fh:
        return [
            {k: float(v) if v not in ("", "nan") else math.nan for k, v in row.items()} for row in csv.DictReader(fh)
        ]


def _nominal_stats(report: Mapping[str, Any]) -> dict[str, Any]:
    """Success statistics at the nominal point (identical in every factor's sweep; read from the first)."""
    factor = next(iter(report["factors"].values()))
    rows = next(iter(factor["policies"].values()))
    return next(r for r in rows if math.isclose(r["value"], factor["nominal"], abs_tol=1e-9))


def _num(value: float | None) -> float:
    return math.nan if value is None else float(value)


TRAINING_RECORD = ("progress.csv", "params/run.json", "params/agent.yaml")
"""The parts of a run folder the table and the learning curves read."""

COMPARABLE_SETTINGS = (
    "max_iterations",
    "max_minutes",
    "num_envs",
    "episodes",
    "eval_envs",
    "episode_s",
    "factors",
    "values",
    "device",
)
"""Settings two comparisons must share for their runs to sit in one table (one budget, one evaluation)."""


def keep_training_record(run_dir: Path, dest: Path) -> Path:
    """Copy :data:`TRAINING_RECORD` of ``run_dir`` to ``dest``: a comparison's output folder then holds every run's
    learning curve and budget beside its evaluation, and stands on its own once the run folders are gone."""

    for name in TRAINING_RECORD:
        target = Path(dest) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(Path(run_dir) / name, target)
    fill_reward_terms(run_dir, Path(dest) / "progress.csv")  # a run trained before progress.csv had reward terms
    return Path(dest)


def load_comparison(folder: Path, settings: Mapping[str, Any]) -> list[RunResult]:
    """The runs of an earlier comparison (its output folder), to join a new one's table and plots.

    Each run is rebuilt from what the folder keeps: ``eval/<space>_s<seed>/report.json``, the training record beside
    it (``eval/<space>_s<seed>/run/``, see :func:`keep_training_record`) and its training time (``comparison.json``).

    Raises:
        ValueError: The folder is not a comparison, keeps no training record for a run, or was made with other
            :data:`COMPARABLE_SETTINGS` than ``settings`` (another budget or evaluation is not comparable).
    """
    folder = Path(folder)
    path = folder / "comparison.json"
    if not path.is_file():
        raise ValueError(f"{folder} holds no comparison.json: not an output folder of scripts/compare_actions.py")
    record = json.loads(path.read_text())
    theirs = record.get("settings", {})
    differ = [k for k in COMPARABLE_SETTINGS if theirs.get(k) != settings.get(k)]
    if differ:
        detail = ", ".join(f"{k}: {theirs.get(k)!r} there, {settings.get(k)!r} here" for k in differ)
        raise ValueError(f"{folder} was made with other settings ({detail}); one table needs one budget and evaluation")
    results = []
    for row in record["rows"]:
        tag = f"{row['action_space']}_s{row['seed']}"
        evaluation = folder / "eval" / tag
        kept = ["report.json", *(f"run/{name}" for name in TRAINING_RECORD)]
        if missing := [name for name in kept if not (evaluation / name).is_file()]:
            raise ValueError(
                f"{folder}: run {tag} keeps no {', '.join(missing)} (a comparison made before its "
                f"training records were kept cannot be joined)"
            )
        run = evaluation / "run"
        report = json.loads((evaluation / "report.json").read_text())
        results.append(RunResult(row["action_space"], int(row["seed"]), run, float(row["train_wall_s"]), report))
    return results


def adopt(results: Sequence[RunResult], out: Path) -> list[RunResult]:
    """Copy each included run's evaluation folder (report, plots, training record) into ``out/eval/<space>_s<seed>``
    and point the run there: the joined comparison then stands on its own, with no path into a sitting's folder.

    A run already under ``out/eval`` is kept as it is. Expects runs as :func:`load_comparison` returns them (the
    training record in ``<folder>/eval/<tag>/run``).
    """

    adopted = []
    for r in results:
        tag = f"{r.space}_s{r.seed}"
        target = Path(out) / "eval" / tag
        source = Path(r.run_dir).parent
        if source.resolve() != target.resolve():
            shutil.copytree(source, target, dirs_exist_ok=True)
        adopted.append(replace(r, run_dir=target / "run"))
    return adopted


def table_rows(results: Sequence[RunResult]) -> list[dict[str, Any]]:
    """One flat row per run (the CSV and the markdown table); the budget is read from the run's own record."""
    rows = []
    for r in results:
        progress = read_progress(r.run_dir)
        rates = r.report["rates"]
        info = r.report.get("action_space") or {}
        nominal = _nominal_stats(r.report)
        per_iteration = env_steps_per_iteration(r.run_dir)
        row = {
            "action_space": r.space,
            "seed": r.seed,
            "low_level_actuator_model": info.get("low_level", ""),
            "physics_hz": rates["physics_hz"],
            "control_hz": rates["control_hz"],
            "policy_hz": rates["policy_hz"],
            "target_mode": rates["target_mode"],
            "iterations": len(progress),
            "num_envs": _num_envs(r.run_dir),
            "env_steps": len(progress) * per_iteration,
            "train_wall_s": round(r.train_wall_s, 1),
            "final_mean_reward": progress[-1]["mean_reward"] if progress else math.nan,
            "success_rate": _num(nominal["success_rate"]),
            "success_ci95_lo": _num(nominal["success_ci95"][0]),
            "success_ci95_hi": _num(nominal["success_ci95"][1]),
            "eval_episodes": nominal["episodes"],
            "task_draws_success_rate": _num(next(iter(r.report.get("reference", {}).values()), {}).get("success_rate")),
            # violations: episodes the joint-speed reflex ended (an arm that breaks its limits has not learned)
            "speed_reflex_rate": _num((nominal.get("ended_by") or {}).get("joint_speed_reflex", 0.0)),
            "train_success_rate": _last(progress, "success_rate"),
            "train_reflex_rate": _last(progress, "reflex_rate"),
            # how fast: env steps to the first iteration whose training success reached each level (NaN: never)
            "steps_to_first_success": _steps_to(progress, per_iteration, 0.0),
            f"steps_to_train_success_{LEARNED_AT:g}": _steps_to(progress, per_iteration, LEARNED_AT),
            # where a run that does not lift stands: its training steps' contact modes over the last quarter
            **{f"late_{m}": _late_mean(progress, f"mode_{m}") for m in LATE_MODES},
            # and the stage its episodes reach: the grasp, first-millimetre and lift reward terms
            **{f"late_reward_{t}": _late_mean(progress, f"reward_{t}") for t in LATE_REWARDS},
        }
        for name, factor in r.report["factors"].items():
            rates_f = [_num(x["success_rate"]) for x in next(iter(factor["policies"].values()))]
            row[f"{name}_mean_success"] = sum(rates_f) / len(rates_f)
            row[f"{name}_worst_success"] = min(rates_f)
        row["run_dir"] = str(r.run_dir)
        rows.append(row)
    return rows


LEARNED_AT = 0.4
"""Training success (running mean, exploration on) whose first crossing the table reports as "how fast"."""


LATE_MODES = ("no_contact", "sticking", "sliding")
"""Contact modes (``progress.csv``'s ``mode_*``, each iteration's share of steps), averaged over the last quarter."""

LATE_REWARDS = ("grasp", "grasped_lift", "lift")
"""Reward terms (``progress.csv``'s ``reward_*``: episode sum per second of the maximum episode) of the stages pinch,
first millimetre, lift; averaged over the last quarter. Runs trained before progress.csv recorded reward terms have
NaN here."""


def _late_mean(progress: Sequence[Mapping[str, float]], key: str, fraction: float = 0.25) -> float:
    """Mean of ``key`` over the last ``fraction`` of the logged iterations (NaN: no iterations or no such column)."""
    tail = progress[len(progress) - math.ceil(len(progress) * fraction) :]
    values = [row.get(key, math.nan) for row in tail]
    return sum(values) / len(values) if values else math.nan


def _steps_to(progress: Sequence[Mapping[str, float]], per_iteration: int, level: float) -> float:
    """Env steps at the end of the first logged iteration whose training success exceeds ``level`` (NaN: never)."""
    for row in progress:
        if row.get("success_rate", math.nan) > level:
            return (row["iteration"] + 1) * per_iteration
    return math.nan


def summary_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per action space over its seeds (in the order of ``rows``): the evaluation episodes of all seeds pooled
    (successes and Wilson 95 % interval of the pooled rate, which holds episode noise only: the spread between seeds
    is in the per-seed rates beside it), each seed's env steps to training success, and the worst success any seed
    kept over each swept factor."""
    from realgap.envs.eval.robustness.sweep import wilson_interval

    by_space: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        by_space.setdefault(r["action_space"], []).append(r)
    out = []
    for space, runs in by_space.items():
        episodes = sum(int(r["eval_episodes"]) for r in runs)
        successes = sum(round(r["success_rate"] * int(r["eval_episodes"])) for r in runs)
        lo, hi = wilson_interval(successes, episodes)
        learned = [r[f"steps_to_train_success_{LEARNED_AT:g}"] for r in runs]
        row = {
            "action_space": space,
            "seeds": [r["seed"] for r in runs],
            "success_per_seed": [r["success_rate"] for r in runs],
            "successes": successes,
            "episodes": episodes,
            "success_pooled": successes / episodes,
            "success_pooled_ci95_lo": lo,
            "success_pooled_ci95_hi": hi,
            f"steps_to_train_success_{LEARNED_AT:g}_per_seed": learned,
            "train_min_mean": sum(r["train_wall_s"] for r in runs) / len(runs) / 60.0,
            "speed_reflex_rate_eval": sum(r["speed_reflex_rate"] * int(r["eval_episodes"]) for r in runs) / episodes,
            "train_reflex_rate_mean": sum(r["train_reflex_rate"] for r in runs) / len(runs),
        }
        for key in [k for k in runs[0] if k.endswith("_worst_success")]:
            row[key] = min(r[key] for r in runs)
        out.append(row)
    return out


def _last(progress: Sequence[Mapping[str, float]], key: str) -> float:
    """The last logged value of ``key`` in a run's progress rows (NaN if never logged)."""
    values = [row[key] for row in progress if not math.isnan(row.get(key, math.nan))]
    return values[-1] if values else math.nan


def _num_envs(run_dir: Path) -> int:
    """The run's envs over all its processes (``params/run.json``; 0 when not recorded)."""
    path = Path(run_dir) / "params" / "run.json"
    return int(json.loads(path.read_text()).get("num_envs_total", 0)) if path.is_file() else 0


def write_csv(rows: Sequence[Mapping[str, Any]], path: Path) -> Path:
    """The rows as CSV (columns of the first row; robustness columns may differ only if the reports differ)."""
    fields = list(dict.fromkeys(k for row in rows for k in row))
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return path


def _two(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.2f}"


def _mega(steps: float) -> str:
    return "never" if math.isnan(steps) else f"{steps / 1e6:.2f} M"


def _pct(v: float) -> str:
    return "–" if math.isnan(v) else f"{100 * v:.0f} %"


def _summary_table(rows: Sequence[Mapping[str, Any]], factors: Sequence[str]) -> list[str]:
    """The per-space table's lines: one row per action space over its seeds."""
    learned = f"steps_to_train_success_{LEARNED_AT:g}"
    head = [
        "action space",
        "seeds",
        "Play success, seeds pooled (Wilson 95 %)",
        "Play success per seed",
        f"env steps to {_pct(LEARNED_AT)} training success, per seed",
        "training min (mean)",
        "speed-reflex episodes: eval / training",
    ]
    head += [f"{f}: worst of any seed" for f in factors]
    summary = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in summary_rows(rows):
        cells = [
            f"`{r['action_space']}`",
            ", ".join(map(str, r["seeds"])),
            f"{_pct(r['success_pooled'])} ({_pct(r['success_pooled_ci95_lo'])}–{_pct(r['success_pooled_ci95_hi'])}"
            f", {r['successes']}/{r['episodes']})",
            " / ".join(_pct(v) for v in r["success_per_seed"]),
            " / ".join(_mega(v) for v in r[f"{learned}_per_seed"]),
            f"{r['train_min_mean']:.1f}",
            f"{_pct(r['speed_reflex_rate_eval'])} / {_pct(r['train_reflex_rate_mean'])}",
        ]
        cells += [_pct(r[f"{f}_worst_success"]) for f in factors]
        summary.append("| " + " | ".join(cells) + " |")
    return summary


def _run_table(rows: Sequence[Mapping[str, Any]], factors: Sequence[str]) -> list[str]:
    """The per-run table's lines: one row per run."""
    learned = f"steps_to_train_success_{LEARNED_AT:g}"
    head = [
        "action space",
        "seed",
        "rates (physics / servo / policy, targets)",
        "budget",
        "train s",
        "success (95 % CI)",
        "training success (last)",
        f"env steps to first / {_pct(LEARNED_AT)} training success",
        "speed-reflex episodes: eval / training",
        "contact, training's last quarter: none / sticking / sliding",
        "reward terms (per episode-second), last quarter: grasp / first mm / lift",
    ]
    head += [f"{f}: mean / worst" for f in factors]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [
            f"`{r['action_space']}`",
            str(r["seed"]),
            f"{r['physics_hz']:g} / {r['control_hz']:g} / {r['policy_hz']:g} Hz, {r['target_mode']}",
            f"{r['iterations']} it × {r['num_envs']} envs ({r['env_steps']} steps)",
            f"{r['train_wall_s']:g}",
            f"{_pct(r['success_rate'])} ({_pct(r['success_ci95_lo'])}–{_pct(r['success_ci95_hi'])})",
            _pct(r["train_success_rate"]),
            f"{_mega(r['steps_to_first_success'])} / {_mega(r[learned])}",
            f"{_pct(r['speed_reflex_rate'])} / {_pct(r['train_reflex_rate'])}",
            " / ".join(_pct(r[f"late_{m}"]) for m in LATE_MODES),
            " / ".join(_two(r[f"late_reward_{t}"]) for t in LATE_REWARDS),
        ]
        cells += [f"{_pct(r[f'{f}_mean_success'])} / {_pct(r[f'{f}_worst_success'])}" for f in factors]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def markdown(rows: Sequence[Mapping[str, Any]], factors: Sequence[str]) -> str:
    """Readable tables: one row per action space over its seeds (pooled success, per-seed success and speed,
    robustness), then one per run (rates, budget, success (95 % CI), speed, violations, robustness per factor)."""
    summary, lines = _summary_table(rows, factors), _run_table(rows, factors)
    models = [f"- `{r['action_space']}`: {r['low_level_actuator_model']}" for r in rows if r["seed"] == rows[0]["seed"]]
    return "\n".join(
        [
            "Per action space, over its seeds:",
            "",
            *summary,
            "",
            "Per run:",
            "",
            *lines,
            "",
            "Low-level actuator model of each action space:",
            "",
            *models,
            "",
        ]
    )
