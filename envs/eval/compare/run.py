"""The action-space comparison's runs: each space and seed trained and evaluated in a process of its own.

What ``scripts/compare_actions.py`` runs (its docstring describes the outputs). A run's process calls the library's
training (:func:`realgap.envs.run.training.train`) and evaluation
(:func:`realgap.envs.eval.robustness.evaluation.evaluate`) in one interpreter — one start-up of torch, Isaac Lab and
warp instead of two, about 10 s of every run on a CPU — and hands its run folder back as a value (a small JSON result
file), not as a line of its output to be parsed. Its output still goes to the run's log, and its progress lines are
forwarded to the comparison's.
"""

from __future__ import annotations

import csv
import datetime
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from realgap.envs.eval.compare import table as compare
from realgap.envs.eval.robustness.evaluation import EvalRequest, evaluate, summary_lines
from realgap.envs.run.progress import Progress

_PRINT = threading.Lock()
CHILD = "import sys; from realgap.envs.eval.compare.run import run_child; run_child(*sys.argv[1:])"
"""A run's process: ``python -c CHILD TRAIN_JSON EVAL_JSON RESULT_PATH``."""


@dataclass(frozen=True)
class CompareRequest:
    """A comparison as scripts/compare_actions.py's flags give it (see its ``--help`` for each); the fields in the
    order of its flags, as its settings are recorded in comparison.json."""

    num_envs: int = 64
    episodes: int = 16
    device: str | None = None
    spaces: str | None = None
    seeds: str = "0"
    max_iterations: int = 300
    max_minutes: float | None = None
    eval_envs: int = 32
    episode_s: float | None = None
    factors: str = "object_mass_scale,command_delay_s,joint_friction_scale"
    values: list[str] = field(default_factory=list)
    jobs: int = 1
    out: str | None = None
    include: list[str] = field(default_factory=list)


def say(text: str) -> None:
    """Print one whole line; the worker threads and the main thread's progress share stdout, one line at a time."""
    with _PRINT:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def run_child(train_json: str, eval_json: str, result_path: str) -> None:
    """One run: train (``train_json``: :class:`~realgap.envs.run.training.TrainRequest` fields), then evaluate its
    folder (``eval_json``: :class:`~realgap.envs.eval.robustness.evaluation.EvalRequest` fields); the run folder is
    written to ``result_path``."""
    from realgap.envs.run.cli import run_cli

    def both() -> int:
        from realgap.envs.run.training import TrainRequest, train

        training = json.loads(train_json)
        done = training.pop("finished_run", None)  # a sitting run again: its training had ended, only evaluate
        run_dir = Path(done) if done else train(TrainRequest(**training))
        print(f"[realgap] done: {run_dir}", flush=True)  # the comparison's progress: the training has ended
        report, out, plots = evaluate(EvalRequest(checkpoint=[str(run_dir)], **json.loads(eval_json)))
        print("\n".join(summary_lines(report, out, plots)), flush=True)
        Path(result_path).write_text(json.dumps({"run_dir": str(run_dir)}))
        return 0

    run_cli(both)


def run(cmd: list[str], log: Path, tag: str, forward_s: float = 30.0) -> float:
    """Run ``cmd`` (a run's process: training, then evaluation) with its output in ``log``, forwarding its progress
    lines (``[realgap] train|evaluate``) as ``[realgap] <tag> | ...`` at most every ``forward_s`` (and its last one)
    and saying when the training ended (``[realgap] done:``); returns the training's wall time (from the start of the
    process).

    Raises:
        RuntimeError: The run failed; the message holds the log's tail.
    """
    t0 = time.perf_counter()
    lines, last_forward, pending, train_s = [], -forward_s, None, None
    with open(log, "w") as fh:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        for line in proc.stdout:
            fh.write(line)
            lines.append(line)
            if line.startswith("[realgap] done:") and train_s is None:
                train_s = time.perf_counter() - t0
                if pending:
                    say(f"[realgap] {tag} | {pending.removeprefix('[realgap] ')}")
                    pending = None
                say(f"[realgap] evaluate {tag} ({train_s:.0f} s of training)")
            if line.startswith(("[realgap] train ", "[realgap] evaluate ")):
                pending = line.rstrip()
                if time.perf_counter() - last_forward >= forward_s:
                    say(f"[realgap] {tag} | {pending.removeprefix('[realgap] ')}")
                    last_forward, pending = time.perf_counter(), None
        proc.wait()
    if pending:
        say(f"[realgap] {tag} | {pending.removeprefix('[realgap] ')}")
    if proc.returncode != 0 or train_s is None:
        tail = "".join(lines)[-2000:]
        raise RuntimeError(f"run {tag} failed (exit {proc.returncode}), log {log}:\n{tail}")
    return train_s


def finished_training(runs: Path, tag: str, max_iterations: int, max_minutes: float | None) -> Path | None:
    """The run folder of ``tag`` under ``runs`` whose training ended at the whole budget (``max_iterations`` rows in
    its progress.csv and the last checkpoint saved), or ``None`` (none yet, or a wall-clock budget: train again)."""
    if max_minutes is not None:
        return None
    for run_dir in sorted(runs.glob(f"*/*_{tag}")):
        progress = run_dir / "progress.csv"
        if (run_dir / f"model_{max_iterations - 1}.pt").is_file() and progress.is_file():
            if len(progress.read_text().splitlines()) - 1 >= max_iterations:
                return run_dir
    return None


def loop_seconds(run_dir: Path) -> float:
    """Seconds the training loop of ``run_dir`` spent collecting and learning (its progress.csv)."""

    with open(run_dir / "progress.csv") as fh:
        return sum(float(r["collect_s"]) + float(r["learn_s"]) for r in csv.DictReader(fh))


def parse_seeds(text: str) -> list[int]:
    """``--seeds``: comma-separated integers ≥ 0, or ``none`` (train nothing).

    Raises:
        ValueError: A seed that is not an integer ≥ 0 (named).
    """
    if text == "none":
        return []
    seeds = []
    for item in text.split(","):
        if not item.strip().isdigit():
            raise ValueError(f"--seeds {text!r}: {item!r} is not an integer >= 0 (give e.g. --seeds 0,1,2, or none)")
        seeds.append(int(item))
    return seeds


def check_request(args: CompareRequest) -> tuple[list[str], list[int], list[str], list[Any]]:
    """Spaces, seeds, factors and the included runs of a comparison, every one checked before anything is trained.

    Raises:
        ValueError: An unknown space or factor, bad seeds or values, runs both included and to be trained.
    """
    from realgap.envs.eval.robustness.sweep import get_factor, parse_values
    from realgap.tasks.grasp import ACTION_SPACE_IDS

    spaces = args.spaces.split(",") if args.spaces else list(ACTION_SPACE_IDS)
    if unknown := [s for s in spaces if s not in ACTION_SPACE_IDS]:
        raise ValueError(f"unknown action spaces {unknown}; known: {', '.join(ACTION_SPACE_IDS)}")
    if twice := sorted({s for s in spaces if spaces.count(s) > 1}):  # a space listed twice would train twice
        raise ValueError(f"--spaces {args.spaces!r} lists {', '.join(twice)} more than once: give each space once")
    seeds = parse_seeds(args.seeds)
    if twice := sorted({n for n in seeds if seeds.count(n) > 1}):
        raise ValueError(f"--seeds {args.seeds!r} lists {', '.join(map(str, twice))} more than once: give each once")
    if not seeds and not args.include:
        raise ValueError("--seeds none trains nothing: it needs --include DIR (the comparison to rebuild)")
    factors = args.factors.split(",")
    for name in factors:
        get_factor(name)
    parse_values(args.values)
    # checks that read files only come first: a refused command costs no Isaac Lab build
    settings = asdict(args) | {"spaces": spaces, "seeds": seeds, "factors": factors}
    included = [r for folder in args.include for r in compare.load_comparison(Path(folder), settings)]
    tags = [f"{r.space}_s{r.seed}" for r in included]
    if repeated := sorted({t for t in tags if tags.count(t) > 1}):
        raise ValueError(f"runs {', '.join(repeated)} are in more than one --include folder: each run counts once")
    if twice := sorted(set(tags) & {f"{s}_s{n}" for s in spaces for n in seeds}):
        raise ValueError(f"runs {', '.join(twice)} are both included and to be trained: drop them from --seeds")
    if seeds:  # a rebuild (--seeds none) evaluates nothing: its factors are the included folders' (checked equal)
        from realgap.envs.eval.robustness.prepare import available_factors
        from realgap.envs.run.factory import load_cfgs

        available = available_factors(load_cfgs(ACTION_SPACE_IDS[spaces[0]], args.device, 1)[0])
        if missing := [f for f in factors if f not in available]:
            raise ValueError(
                f"factors {missing} are not available for the grasp task; available: {', '.join(available)}"
            )
    return spaces, seeds, factors, included


def _table_order(runs: list[compare.RunResult]) -> list[compare.RunResult]:
    """``runs`` in the table's order: the action spaces as ``ACTION_SPACE_IDS`` lists them, then the seeds."""
    from realgap.tasks.grasp import ACTION_SPACE_IDS

    order = {space: i for i, space in enumerate(ACTION_SPACE_IDS)}
    return sorted(runs, key=lambda r: (order[r.space], r.seed))


def train_and_evaluate(args: CompareRequest, out: Path, factors: list[str], space: str, seed: int) -> compare.RunResult:
    """One run of the comparison in its own process (:data:`CHILD`): train ``space`` with ``seed`` into
    ``<out>/runs`` (only evaluate it where a stopped sitting's training had ended), evaluate it into ``<out>/eval``.

    Args:
        args: The comparison's request.
        out: The comparison's folder.
        factors: The robustness factors every run is evaluated under.
        space: The action space (a key of ``ACTION_SPACE_IDS``).
        seed: The run's seed (training and evaluation).

    Returns:
        The run's result: its run folder, training wall time (s) and evaluation report.
    """
    from realgap.tasks.grasp import ACTION_SPACE_IDS

    tag = f"{space}_s{seed}"
    finished = finished_training(out / "runs", tag, args.max_iterations, args.max_minutes)
    if finished is not None:
        say(f"[realgap] {tag}: its training had ended ({finished}): evaluating it")
    else:
        say(f"[realgap] train {tag}: {args.max_iterations} it x {args.num_envs} envs")
    training = dict(
        task=ACTION_SPACE_IDS[space],
        num_envs=args.num_envs,
        max_iterations=args.max_iterations,
        seed=seed,
        log_root=str(out / "runs"),
        run_name=tag,
        save_interval=args.max_iterations,
        device=args.device,
        max_minutes=args.max_minutes,
    )
    evaluation = dict(
        label=[tag],
        factors=",".join(factors),
        heatmap="none",
        episodes=args.episodes,
        num_envs=args.eval_envs,
        seed=seed,
        device=args.device,
        out=str(out / "eval" / tag),
        values=list(args.values),
        episode_s=args.episode_s,
    )
    result = out / "logs" / f"{tag}.result.json"
    if finished is not None:
        training["finished_run"] = str(finished)
    cmd = [sys.executable, "-c", CHILD, json.dumps(training), json.dumps(evaluation), str(result)]
    timing = out / "logs" / f"{tag}.train_s.json"
    train_s = run(cmd, out / "logs" / f"{tag}.log", tag)
    if finished is None:
        timing.write_text(json.dumps({"train_wall_s": train_s}))
    else:  # the first attempt's measured time, else the training loop's own (progress.csv, no env build)
        train_s = json.loads(timing.read_text())["train_wall_s"] if timing.is_file() else loop_seconds(finished)
    run_dir = Path(json.loads(result.read_text())["run_dir"])
    result.unlink()
    report = json.loads((out / "eval" / tag / "report.json").read_text())
    compare.keep_training_record(run_dir, out / "eval" / tag / "run")  # the output folder stands on its own
    return compare.RunResult(space, seed, run_dir, train_s, report)


def record_comparison(
    args: CompareRequest,
    out: Path,
    spaces: list[str],
    seeds: list[int],
    factors: list[str],
    runs: list[compare.RunResult],
) -> list[dict[str, Any]]:
    """Write ``<out>/comparison.json`` of ``runs`` (those finished and the included); rewritten after every run, so a
    sitting stopped part-way keeps each run it finished joinable by ``--include``.

    Args:
        args: The comparison's request (its settings are recorded).
        out: The comparison's folder.
        spaces: The action spaces trained in this sitting.
        seeds: The seeds trained in this sitting.
        factors: The robustness factors.
        runs: The runs of the table, in any order.

    Returns:
        The table's rows (:func:`realgap.envs.eval.compare.table.table_rows`).
    """
    from realgap.envs.eval.robustness.sweep import finite_or_none

    results = _table_order(runs)
    rows = compare.table_rows(results)
    # the table's seeds (trained here or included) and those trained in this sitting
    settings = asdict(args) | {
        "spaces": spaces,
        "seeds": sorted({r.seed for r in results}),
        "factors": factors,
        "trained_seeds": seeds,
    }
    (out / "comparison.json").write_text(
        json.dumps(finite_or_none({"settings": settings, "rows": rows}), indent=2, default=str)
    )
    return rows


def compare_action_spaces(args: CompareRequest) -> tuple[Path, str]:
    """Run the comparison ``args`` asks for; returns its folder and the markdown."""
    from realgap.envs.eval.compare import plots as compare_plots
    from realgap.envs.eval.compare import seeds as compare_seeds

    spaces, seeds, factors, included = check_request(args)
    out = Path(args.out or Path("runs") / "compare_actions" / f"{datetime.datetime.now():%Y-%m-%d_%H-%M-%S}")
    (out / "logs").mkdir(parents=True, exist_ok=True)
    included = compare.adopt(included, out)  # every run's evaluation and record in <out>/eval, none left outside it
    # the same command run again into the same folder goes on where a stopped sitting ended (settings checked equal):
    # finished runs are kept, a run whose training ended is only evaluated, the others train from the start
    kept = (
        {(r.space, r.seed): r for r in compare.load_comparison(out, asdict(args) | {"factors": factors})}
        if (out / "comparison.json").is_file()
        else {}
    )
    jobs = [(space, seed) for space in spaces for seed in seeds if (space, seed) not in kept]
    done = {job: kept[job] for job in kept if job[1] in seeds and job[0] in spaces}
    if done:
        say(f"[realgap] compare: {len(done)} runs kept from the stopped sitting in {out}")
    if jobs:  # --seeds none: nothing to train, the table is rebuilt from --include
        progress = Progress("[realgap] compare", len(jobs), unit="runs", interval_s=0.0, bar=False)
        # one training per core: each process steps its physics on one core (--jobs 2 on a 2-core machine)
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {pool.submit(train_and_evaluate, args, out, factors, *job): job for job in jobs}
            for future in as_completed(futures):
                done[futures[future]] = future.result()
                record_comparison(args, out, spaces, seeds, factors, [*included, *done.values()])
                with _PRINT:  # its line must not land inside a worker's line
                    progress.update(1, finished=f"{futures[future][0]}_s{futures[future][1]}")
    results = _table_order([*included, *done.values()])
    rows = record_comparison(args, out, spaces, seeds, factors, [*included, *done.values()])
    compare.write_csv(rows, out / "comparison.csv")
    text = compare.markdown(rows, factors) + "\n" + compare_seeds.markdown(results, rows)
    (out / "comparison.md").write_text(text)
    compare_plots.plot_learning_curves(results, out / "learning_curves.png")
    compare_seeds.plot_bands(results, out / "learning_curves_seeds.png")
    compare_plots.plot_success(rows, out / "success.png")
    compare_plots.plot_robustness(results, out / "robustness.png")
    return out, text
