"""The suite's statistics and files: per family and over the whole suite, one JSON, one markdown table, the plots.

Per family: survival (balance) or success (grasp) over all its episodes with the Wilson 95 % interval of
:func:`realgap.envs.eval.robustness.stats.wilson_interval` (episodes pooled: the episode-noise interval), the mean over
its robots of each robot's rate with the Student-t 95 % interval over robots (:func:`realgap.envs.eval.seed_stats.
t_interval`: the robot-to-robot spread, NaN for one robot), and the mean time (balance: time up, s) with its normal
95 % interval. ``all``: the same over every episode of the suite.

:func:`paired` compares two evaluations of one suite episode by episode (``scripts/suite_paired.py``).
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import json
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from realgap.envs.eval.robustness.stats import finite_or_none, mean_std_ci, wilson_interval
from realgap.envs.eval.seed_stats import t_interval
from realgap.envs.eval.suite.schema import Suite


def summarize(outcomes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Statistics of a set of episodes (module docstring); each a :class:`~realgap.envs.eval.suite.run.Outcome` as a
    dict."""
    n = len(outcomes)
    wins = sum(bool(o["success"]) for o in outcomes)
    robots: dict[tuple[str, int], list[bool]] = {}
    for o in outcomes:
        robots.setdefault((o["family"], o["robot"]), []).append(bool(o["success"]))
    rates = [sum(v) / len(v) for v in robots.values()]
    mean, lo, hi = t_interval(rates)
    times = [float(o["time_s"]) for o in outcomes]
    time_ci = mean_std_ci(times)
    endings: dict[str, int] = {}
    for o in outcomes:
        endings[o["ended_by"]] = endings.get(o["ended_by"], 0) + 1
    return {
        "episodes": n,
        "robots": len(robots),
        "successes": wins,
        "rate": wins / n if n else math.nan,
        "wilson95": list(wilson_interval(wins, n)),
        "robot_rates": rates,
        "robot_mean_rate": mean,
        "robot_t95": [lo, hi],
        "mean_time_s": time_ci["mean"],
        "time_ci95_half": time_ci["ci95"],
        "endings": dict(sorted(endings.items())),
    }


def _markdown(report: dict[str, Any]) -> str:
    metric = "survival" if report["task"] == "balance" else "success"
    time_col = "mean time up, s" if report["task"] == "balance" else "mean episode time, s"
    lines = [
        f"# {report['policy']} on suite {report['suite']['name']} v{report['suite']['version']}",
        "",
        f"{report['episodes_per_robot']} episodes per robot; {report['wall_s']:.0f} s wall. Command: "
        f"`{report['command']}`",
        "",
        f"| family | robots × episodes | {metric} | Wilson 95 % | mean over robots (t 95 %) | {time_col} | endings |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in [*report["families"].items(), ("all", report["all"])]:
        lo, hi = s["wilson95"]
        rlo, rhi = s["robot_t95"]
        robot = f"{s['robot_mean_rate']:.3f}" + ("" if rlo is None else f" ({rlo:.3f}-{rhi:.3f})")
        half = "" if s["time_ci95_half"] is None else f" ± {s['time_ci95_half']:.2f}"
        ends = ", ".join(f"{k} {v}" for k, v in s["endings"].items())
        lines.append(
            f"| {name} | {s['robots']} × {report['episodes_per_robot']} | {s['successes']}/{s['episodes']} = "
            f"{s['rate']:.3f} | {lo:.3f}-{hi:.3f} | {robot} | {s['mean_time_s']:.2f}{half} | {ends} |"
        )
    return "\n".join(lines) + "\n"


def _plot(report: dict[str, Any], outcomes: Sequence[dict[str, Any]], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(report["families"])
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for i, name in enumerate(names):
        s = report["families"][name]
        lo, hi = s["wilson95"]
        ax.bar(i, s["rate"], color="C0", alpha=0.6)
        ax.errorbar(i, s["rate"], yerr=[[s["rate"] - lo], [hi - s["rate"]]], color="k", capsize=4)
        ax.plot(
            np.full(len(s["robot_rates"]), i) + np.linspace(-0.2, 0.2, len(s["robot_rates"])),
            s["robot_rates"],
            "o",
            color="C1",
            ms=3,
        )
    metric = "survival" if report["task"] == "balance" else "success"
    ax.set(
        xticks=range(len(names)),
        xticklabels=names,
        ylim=(0, 1.05),
        ylabel=f"{metric} (Wilson 95 %; dots: robots)",
        title=f"{report['policy']}\nsuite {report['suite']['name']} v{report['suite']['version']}",
    )
    ax.title.set_fontsize(8)
    files = [out / "rates.png"]
    fig.savefig(files[0], dpi=120, bbox_inches="tight")
    plt.close(fig)
    if report["task"] == "balance":
        t = np.linspace(0.0, report["settings"]["duration_s"], 401)
        fig, ax = plt.subplots(figsize=(6, 3.5))
        for name in names:
            fam = [o for o in outcomes if o["family"] == name]
            falls = np.array([o["time_s"] for o in fam if not o["success"]])
            ax.step(t, 1.0 - (falls[None, :] <= t[:, None]).sum(axis=1) / len(fam), where="post", label=name)
        ax.set(xlabel="time, s", ylabel="fraction standing", ylim=(0, 1.02), title=report["policy"])
        ax.title.set_fontsize(8)
        ax.legend()
        files.append(out / "standing.png")
        fig.savefig(files[1], dpi=120, bbox_inches="tight")
        plt.close(fig)
    return [f.name for f in files]


def write_report(
    suite: Suite,
    label: str,
    req: Any,
    outcomes: Sequence[dict[str, Any]],
    robots: Sequence[dict[str, Any]],
    wall_s: float,
) -> tuple[dict[str, Any], Path]:
    """Summaries, then ``summary.json``, ``summary.md``, ``episodes.csv`` and the plots in ``req.out``."""
    out = Path(req.out)
    out.mkdir(parents=True, exist_ok=True)
    families = {}
    for o in outcomes:
        families.setdefault(o["family"], []).append(o)
    source = Path(suite.source)
    report = {
        "suite": {
            "name": suite.name,
            "version": suite.version,
            "file": str(source),
            "sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
        },
        "task": suite.task,
        "policy": label,
        "export": req.policy,
        "zero_action": req.zero_action,
        "restored": {"groups": list(req.restore), "from": req.restore_from} if req.restore else None,
        "episodes_per_robot": req.episodes,
        "settings": suite.episode,
        "families": {name: summarize(v) for name, v in families.items()},
        "all": summarize(outcomes),
        "wall_s": wall_s,
        "command": " ".join(["python", "scripts/evaluate_suite.py", *sys.argv[1:]])
        if sys.argv and sys.argv[0].endswith("evaluate_suite.py")
        else repr(req),
        "written_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "robots": list(robots),
    }
    report["plots"] = _plot(report, outcomes, out)
    (out / "summary.json").write_text(json.dumps(finite_or_none(report), indent=1))
    (out / "summary.md").write_text(_markdown(finite_or_none(report)))
    with (out / "episodes.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(outcomes[0]))
        writer.writeheader()
        writer.writerows(outcomes)
    return report, out


def read_episodes(folder: str | Path) -> list[dict[str, Any]]:
    """The ``episodes.csv`` of a suite evaluation, typed (success bool, time float, indices int).

    Raises:
        FileNotFoundError: The folder holds no ``episodes.csv``.
    """
    path = Path(folder) / "episodes.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: give the --out folder of a scripts/evaluate_suite.py run")
    rows = list(csv.DictReader(path.open()))
    return [
        r
        | {
            "robot": int(r["robot"]),
            "episode": int(r["episode"]),
            "success": r["success"] == "True",
            "time_s": float(r["time_s"]),
        }
        for r in rows
    ]


def paired(a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Two evaluations of one suite compared episode by episode (the same robot and push schedule or objects: the
    same family, robot and episode index), ``a`` minus ``b``, per family and over all (``all``).

    Per group: ``episodes``; ``time_diff_s`` the mean of the per-episode differences of time (time up for balance)
    and ``time_diff_se_s`` its standard error (sample standard deviation / √n; NaN for one episode): pairing removes
    the robot-to-robot and schedule-to-schedule spread; ``only_a`` / ``only_b`` the episodes only one of them won.

    Raises:
        ValueError: The two hold different episodes (another suite, family subset, robot count or episode count).
    """
    index_b = {(o["family"], o["robot"], o["episode"]): o for o in b}
    keys = [(o["family"], o["robot"], o["episode"]) for o in a]
    if sorted(keys) != sorted(index_b):
        raise ValueError(
            f"paired evaluations need the same episodes; got {len(keys)} and {len(index_b)} that differ "
            "(same suite, families, --robots and --episodes?)"
        )
    groups: dict[str, list[tuple[dict, dict]]] = {"all": []}
    for o in a:
        pair = (o, index_b[(o["family"], o["robot"], o["episode"])])
        groups.setdefault(o["family"], []).append(pair)
        groups["all"].append(pair)
    out = {}
    for name, pairs in groups.items():
        diff = [x["time_s"] - y["time_s"] for x, y in pairs]
        n = len(diff)
        mean = sum(diff) / n
        se = math.sqrt(sum((d - mean) ** 2 for d in diff) / (n - 1) / n) if n > 1 else math.nan
        out[name] = {
            "episodes": n,
            "time_diff_s": mean,
            "time_diff_se_s": se,
            "only_a": sum(x["success"] and not y["success"] for x, y in pairs),
            "only_b": sum(y["success"] and not x["success"] for x, y in pairs),
        }
    return dict(sorted(out.items(), key=lambda kv: kv[0] == "all"))


@dataclass(frozen=True)
class PairedRequest:
    """A paired comparison as scripts/suite_paired.py's flags give it (see its ``--help``)."""

    a: str
    b: str
    out: str


def paired_report(req: PairedRequest, echo: Callable[[str], None] = print) -> tuple[dict[str, Any], Path]:
    """:func:`paired` of the evaluations in folders ``req.a`` and ``req.b``, ``echo`` one line per group, written to
    ``req.out`` (JSON). Returns the report and its path.

    Raises:
        FileNotFoundError: A folder without ``episodes.csv``. ValueError: See :func:`paired`.
    """
    groups = paired(read_episodes(req.a), read_episodes(req.b))
    for name, g in groups.items():
        echo(
            f"[realgap] {name}: time {g['time_diff_s']:+.3f} ± {g['time_diff_se_s']:.3f} s (a − b, mean ± standard "
            f"error, {g['episodes']} paired episodes); won only by a {g['only_a']}, only by b {g['only_b']}"
        )
    report = {"a": req.a, "b": req.b, "rule": paired.__doc__.split("\n\n")[0].replace("\n", " "), "groups": groups}
    out = Path(req.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(finite_or_none(report), indent=1))
    echo(f"[realgap] wrote {out}")
    return report, out
