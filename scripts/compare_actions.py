"""Compare the grasp task's action spaces: train each with the same budget and seeds, evaluate, tabulate, plot.

    python scripts/compare_actions.py --max_iterations 300 --num_envs 64                  # all six, seed 0
    python scripts/compare_actions.py --spaces joint_pos,joint_torque --seeds 0,1 --factors object_mass_scale
    python scripts/compare_actions.py --max_iterations 2 --num_envs 8 --episodes 2        # smoke test
    python scripts/compare_actions.py --seeds 1 --include runs/compare_actions/<seed-0 folder>  # add a seed later
    python scripts/compare_actions.py --seeds none --include DIR --out NEW    # rebuild DIR's tables, train nothing

For every action space and seed, one subprocess (``--jobs`` at a time: the physics of one takes a core, so 2 on a
2-core CPU) runs ``scripts/train.py`` with identical ``--max_iterations``, ``--num_envs`` and ``--seed`` (each
variant's PPO config differs only in its initial action noise, tasks/grasp/agent_cfg.py), then ``scripts/evaluate.py``
on the last checkpoint at the nominal point and under the ``--factors`` sweeps (both in one interpreter, as from their
command lines). Writes into <out> (default
runs/compare_actions/<timestamp>): comparison.csv and comparison.md (action space, low-level actuator model, physics /
servo / policy rates and target mode, budget, training time, success with its 95 % CI, mean and worst success over
each sweep), learning_curves.png, learning_curves_seeds.png (mean ± 95 % band over seeds), success.png,
robustness.png; comparison.md ends with the seed-level ranks (envs/eval/compare_seeds.py); the runs under <out>/runs,
the evaluations under <out>/eval (each with the run's training record, progress.csv and params, in
eval/<space>_s<seed>/run/, so the folder stands on its own), each run's log in <out>/logs/<space>_s<seed>.log.
``--include DIR`` joins an earlier comparison's runs (same
budget and evaluation settings, checked) to this one's table and plots: seeds can be added in another sitting; with
``--seeds none`` nothing is trained and the tables and plots are rebuilt from the included folders alone.
comparison.md opens with one row per action space over its seeds (evaluation episodes of all seeds pooled, per-seed
success and env steps to 40 % training success), then one row per run.

Progress: one line per finished run with an ETA, and each child's own progress line every 30 s.
"""

from __future__ import annotations

import argparse
import datetime
import json
import runpy
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
_PRINT = threading.Lock()


def say(text: str) -> None:
    """Print one whole line; the worker threads and the main thread's progress share stdout, one line at a time."""
    with _PRINT:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from realgap.envs.run.cli import parser, positive_float, positive_int, shared_flags

    p = parser(__doc__, shared_flags("num_envs", "episodes", "device", num_envs=64))
    p.add_argument("--spaces", default=None, help="comma-separated action spaces (default: all)")
    p.add_argument("--seeds", default="0",
                   help="comma-separated training seeds (each space trains once per seed); 'none' trains nothing and "
                        "rebuilds the tables from --include")  # fmt: skip
    p.add_argument("--max_iterations", type=positive_int, default=300, help="PPO iterations per run (the equal budget)")
    p.add_argument("--max_minutes", type=positive_float, default=None,
                   help="wall-clock budget per run (train.py --max_minutes); --max_iterations caps it")  # fmt: skip
    p.add_argument("--eval_envs", type=positive_int, default=32, help="envs per evaluation batch")
    p.add_argument("--episode_s", type=positive_float, default=None, help="evaluation episode, s (default: task's)")
    p.add_argument("--factors", default="object_mass_scale,command_delay_s,joint_friction_scale",
                   help="robustness factors (scripts/evaluate.py --factors)")  # fmt: skip
    p.add_argument("--values", action="append", default=[], help="FACTOR=V1,V2,... (scripts/evaluate.py --values)")
    p.add_argument("--jobs", type=positive_int, default=1, help="trainings at a time (one per core: 2 on a 2-core CPU)")
    p.add_argument("--out", default=None, help="output folder")
    p.add_argument("--include", action="append", default=[], metavar="DIR",
                   help="an earlier comparison's output folder whose runs join the table and plots (same settings; "
                        "e.g. another seed run in another sitting)")  # fmt: skip
    return p.parse_args(argv)


CHILD = "import runpy, sys; runpy.run_path(sys.argv[1])['train_then_evaluate'](*sys.argv[2:])"
"""A run's process: ``python -c CHILD <this script> TRAIN_ARGV_JSON EVAL_ARGV_JSON``."""


def train_then_evaluate(train_argv: str, eval_argv: str) -> None:
    """One run in one interpreter: ``scripts/train.py``'s main, then ``scripts/evaluate.py``'s on the run folder the
    training names in its last line (``--checkpoint``), each as from its command line. One start-up of torch, Isaac
    Lab and warp instead of two: about 10 s of every run on a CPU."""
    import contextlib
    import io

    from realgap.envs.run.cli import run_cli

    train_main = runpy.run_path(str(SCRIPTS / "train.py"))["main"]
    evaluate_main = runpy.run_path(str(SCRIPTS / "evaluate.py"))["main"]

    def both() -> int:
        echo = _Tee(sys.stdout)
        with contextlib.redirect_stdout(echo):
            code = train_main(json.loads(train_argv))
        if code:
            return code
        run_dir = next(line for line in reversed(echo.text.getvalue().splitlines()) if "[realgap] done:" in line)
        return evaluate_main(["--checkpoint", run_dir.split("done:", 1)[1].strip(), *json.loads(eval_argv)])

    class _Tee(io.TextIOBase):
        def __init__(self, out) -> None:
            self.out, self.text = out, io.StringIO()

        def write(self, text: str) -> int:
            self.text.write(text)
            return self.out.write(text)

        def flush(self) -> None:
            self.out.flush()

    run_cli(both)


def run(cmd: list[str], log: Path, tag: str, forward_s: float = 30.0) -> tuple[str, float]:
    """Run ``cmd`` (a run's process: training, then evaluation) with its output in ``log``, forwarding its progress
    lines (``[realgap] train|evaluate``) as ``[realgap] <tag> | ...`` at most every ``forward_s`` (and its last one)
    and saying when the training ended (``[realgap] done:``); its stdout and the training's wall time (from the start
    of the process), or a RuntimeError with the log's tail."""
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
    return "".join(lines), train_s


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from realgap.envs.eval.sweep import finite_or_none, get_factor, parse_values
    from realgap.tasks.grasp import ACTION_SPACE_IDS

    spaces = args.spaces.split(",") if args.spaces else list(ACTION_SPACE_IDS)
    unknown = [s for s in spaces if s not in ACTION_SPACE_IDS]
    if unknown:
        raise ValueError(f"unknown action spaces {unknown}; known: {', '.join(ACTION_SPACE_IDS)}")
    seeds = [] if args.seeds == "none" else [int(s) for s in args.seeds.split(",")]
    if not seeds and not args.include:
        raise ValueError("--seeds none trains nothing: it needs --include DIR (the comparison to rebuild)")
    factors = args.factors.split(",")
    for name in factors:
        get_factor(name)
    parse_values(args.values)
    if args.max_minutes is not None and not args.max_minutes > 0:
        raise ValueError(f"--max_minutes must be > 0, got {args.max_minutes}")
    if min(args.max_iterations, args.num_envs, args.episodes, args.eval_envs, args.jobs) < 1:
        raise ValueError("--max_iterations, --num_envs, --episodes, --eval_envs and --jobs must be >= 1")
    from realgap.envs.eval import compare

    # checks that read files only come first: a refused command costs no Isaac Lab build
    settings = vars(args) | {"spaces": spaces, "seeds": seeds, "factors": factors}
    included = [r for folder in args.include for r in compare.load_comparison(Path(folder), settings)]
    if twice := sorted({f"{r.space}_s{r.seed}" for r in included} & {f"{s}_s{n}" for s in spaces for n in seeds}):
        raise ValueError(f"runs {', '.join(twice)} are both included and to be trained: drop them from --seeds")
    if seeds:  # a rebuild (--seeds none) evaluates nothing: its factors are the included folders' (checked equal)
        from realgap.envs.eval.robustness import available_factors
        from realgap.envs.run.factory import load_cfgs

        available = available_factors(load_cfgs(ACTION_SPACE_IDS[spaces[0]], args.device, 1)[0])
        if missing := [f for f in factors if f not in available]:
            raise ValueError(f"factors {missing} are not available for the grasp task; available: "
                             f"{', '.join(available)}")  # fmt: skip
    out = Path(args.out or Path("runs") / "compare_actions" / f"{datetime.datetime.now():%Y-%m-%d_%H-%M-%S}")
    (out / "logs").mkdir(parents=True, exist_ok=True)

    def train_and_evaluate(space: str, seed: int) -> compare.RunResult:
        tag = f"{space}_s{seed}"
        say(f"[realgap] train {tag}: {args.max_iterations} it x {args.num_envs} envs")
        train_argv = ["--task", ACTION_SPACE_IDS[space], "--num_envs", str(args.num_envs), "--max_iterations",
                      str(args.max_iterations), "--seed", str(seed), "--log_root", str(out / "runs"), "--run_name",
                      tag, "--save_interval", str(args.max_iterations), "--device", args.device,
                      *(["--max_minutes", str(args.max_minutes)] if args.max_minutes else [])]  # fmt: skip
        eval_argv = ["--label", tag, "--factors", ",".join(factors), "--heatmap", "none", "--episodes",
                     str(args.episodes), "--num_envs", str(args.eval_envs), "--seed", str(seed), "--device",
                     args.device, "--out", str(out / "eval" / tag)]  # fmt: skip
        eval_argv += [f"--values={v}" for v in args.values]
        eval_argv += ["--episode_s", str(args.episode_s)] if args.episode_s else []
        cmd = [sys.executable, "-c", CHILD, __file__, json.dumps(train_argv), json.dumps(eval_argv)]
        stdout, train_s = run(cmd, out / "logs" / f"{tag}.log", tag)
        run_dir = Path(next(line for line in reversed(stdout.splitlines()) if "[realgap] done:" in line)
                       .split("done:", 1)[1].strip())  # fmt: skip
        report = json.loads((out / "eval" / tag / "report.json").read_text())
        compare.keep_training_record(run_dir, out / "eval" / tag / "run")  # the output folder stands on its own
        return compare.RunResult(space, seed, run_dir, train_s, report)

    from realgap.envs.run.progress import Progress

    jobs = [(space, seed) for space in spaces for seed in seeds]
    done = {}
    if jobs:  # --seeds none: nothing to train, the table is rebuilt from --include
        progress = Progress("[realgap] compare", len(jobs), unit="runs", interval_s=0.0, bar=False)
        # one training per core: each process steps its physics on one core (--jobs 2 on a 2-core machine)
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {pool.submit(train_and_evaluate, *job): job for job in jobs}
            for future in as_completed(futures):
                done[futures[future]] = future.result()
                with _PRINT:  # its line must not land inside a worker's line
                    progress.update(1, finished=f"{futures[future][0]}_s{futures[future][1]}")
    order = {space: i for i, space in enumerate(ACTION_SPACE_IDS)}
    results = sorted([*included, *(done[job] for job in jobs)], key=lambda r: (order[r.space], r.seed))

    rows = compare.table_rows(results)
    compare.write_csv(rows, out / "comparison.csv")
    from realgap.envs.eval import compare_seeds

    text = compare.markdown(rows, factors) + "\n" + compare_seeds.markdown(results, rows)
    (out / "comparison.md").write_text(text)
    compare.plot_learning_curves(results, out / "learning_curves.png")
    compare_seeds.plot_bands(results, out / "learning_curves_seeds.png")
    compare.plot_success(rows, out / "success.png")
    compare.plot_robustness(results, out / "robustness.png")
    # the table's seeds (trained here or included) and those trained in this sitting
    settings |= {"seeds": sorted({r.seed for r in results}), "trained_seeds": seeds}
    record = finite_or_none({"settings": settings, "rows": rows})
    (out / "comparison.json").write_text(json.dumps(record, indent=2, default=str))
    print(text)
    print(f"[realgap] wrote {out}/comparison.csv, comparison.md and 4 plots")
    return 0


if __name__ == "__main__":
    from realgap.envs.run.cli import run_cli

    run_cli(main, extra_errors=(RuntimeError,))
