"""Which group of errors makes a family fall: suite evaluations with one error group restored, pooled over policies.

A folder holds one ``scripts/evaluate_suite.py`` run per policy and group, named ``<policy>_<group>`` (``group`` one of
:data:`~realgap.envs.eval.suite.draw.GROUPS`, or ``none``: the family as drawn). Per group, pooled over the policies:
the success rate (Wilson 95 %), and against ``none`` episode by episode (the same robot, policy and pushes) the mean of
the per-episode differences of time up with its standard error, and the episodes only one side won
(:func:`~realgap.envs.eval.suite.report.paired`). Restoring a group that causes falls raises the rate; the rise is the
part of the family's gap that group causes, with the other errors in place.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from realgap.envs.eval.robustness.stats import finite_or_none, wilson_interval
from realgap.envs.eval.suite.draw import GROUPS
from realgap.envs.eval.suite.report import paired, read_episodes

BASELINE = "none"


def _runs(root: Path) -> dict[str, dict[str, Path]]:
    """``{group: {policy: folder}}`` of the runs under ``root``."""
    runs: dict[str, dict[str, Path]] = {}
    for folder in sorted(p for p in root.iterdir() if (p / "episodes.csv").is_file()):
        policy, _, group = folder.name.rpartition("_")
        if group not in (*GROUPS, BASELINE) or not policy:
            raise ValueError(f"{folder}: name it <policy>_<group> with a group among {[BASELINE, *GROUPS]}")
        runs.setdefault(group, {})[policy] = folder
    return runs


def attribution(root: str | Path) -> dict[str, Any]:
    """The table of the runs under ``root`` (module docstring).

    Raises:
        ValueError: No ``none`` runs, a group whose policies differ from the baseline's, or a badly named folder.
    """
    runs = _runs(Path(root))
    if BASELINE not in runs:
        raise ValueError(f"{root}: no <policy>_{BASELINE} runs (the family as drawn) to compare with")
    policies = sorted(runs[BASELINE])
    table = {}
    for group in (BASELINE, *(g for g in GROUPS if g in runs)):
        if sorted(runs[group]) != policies:
            raise ValueError(f"{root}: group {group} has policies {sorted(runs[group])}, the baseline {policies}")
        episodes, diffs, only = [], [], [0, 0]
        for policy in policies:
            mine, base = read_episodes(runs[group][policy]), read_episodes(runs[BASELINE][policy])
            episodes += mine
            pair = paired(mine, base)["all"]
            diffs.append((pair["episodes"], pair["time_diff_s"], pair["time_diff_se_s"]))
            only = [only[0] + pair["only_a"], only[1] + pair["only_b"]]
        n = sum(e["success"] for e in episodes)
        total = sum(k for k, _, _ in diffs)
        mean = sum(k * d for k, d, _ in diffs) / total
        se = math.sqrt(sum((k * s) ** 2 for k, _, s in diffs)) / total  # independent policies
        table[group] = {
            "episodes": len(episodes),
            "successes": n,
            "rate": n / len(episodes),
            "wilson95": list(wilson_interval(n, len(episodes))),
            "mean_time_s": sum(e["time_s"] for e in episodes) / len(episodes),
            "time_vs_none_s": mean,
            "time_vs_none_se_s": se,
            "only_restored": only[0],
            "only_none": only[1],
        }
    return {"root": str(root), "policies": policies, "groups": table}


def write_attribution(root: str | Path) -> Path:
    """:func:`attribution` of ``root`` written to ``root/attribution.json`` and ``.md``; returns the JSON path."""
    report = finite_or_none(attribution(root))
    out = Path(root) / "attribution.json"
    out.write_text(json.dumps(report, indent=1))
    lines = [
        f"# Error groups restored from the typical robots ({', '.join(report['policies'])})",
        "",
        "| restored | episodes | survival (Wilson 95 %) | mean time up, s | time up vs none, s (± se) "
        "| only restored / only none survived |",
        "|---|---|---|---|---|---|",
    ]
    for group, g in report["groups"].items():
        lo, hi = g["wilson95"]
        vs = "—" if group == BASELINE else f"{g['time_vs_none_s']:+.2f} ± {g['time_vs_none_se_s']:.2f}"
        lines.append(
            f"| {group} | {g['episodes']} | {g['rate']:.3f} ({lo:.3f}–{hi:.3f}) | {g['mean_time_s']:.2f} | {vs} | "
            f"{g['only_restored']} / {g['only_none']} |"
        )
    (Path(root) / "attribution.md").write_text("\n".join(lines) + "\n")
    return out
