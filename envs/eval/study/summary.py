"""The transfer study's numbers: per arm and seed the suite score, its families, the Play score and the gap; per arm
over its seeds the means with their t intervals; between arms the verdicts and tiers (docs/results/transfer.md,
"Statistics").

Per seed: the **suite score** is survival (balance) or success (grasp) pooled over every episode of the suite with its
Wilson 95 % interval (:mod:`realgap.envs.eval.suite.report`), the **Play score** the task's metric over the Play
episodes with its Wilson interval (``scripts/play.py --json``), the **gap** Play − suite. Over an arm's seeds:
:func:`~realgap.envs.eval.seed_stats.summarize` (mean, Student-t 95 % interval). Between arms:
:func:`~realgap.envs.eval.seed_stats.pairwise` (Welch interval of the difference of seed means, each seed's variance
floored by :func:`~realgap.envs.eval.seed_stats.binomial_floor` of its episodes) and
:func:`~realgap.envs.eval.seed_stats.tiers`; an arm separates from another only where that interval excludes zero.
The unit of replication is the training seed. :func:`seed_row` reads a pair's artifacts; the rest is pure.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from realgap.envs.eval.robustness.stats import wilson_interval
from realgap.envs.eval.seed_stats import binomial_floor, pairwise, summarize, tiers


def seed_row(arm: str, seed: int, play: Mapping[str, Any], suite: Mapping[str, Any], metric: str) -> dict[str, Any]:
    """One trained seed's scores from its Play record (``scripts/play.py --json``) and suite ``summary.json``.

    The Play interval is computed again from the count (Wilson 95 %), the suite's is the one its summary holds.
    """
    play_n = int(play["episodes"])
    play_rate = float(play["summary"][metric]["value"])
    play_lo, play_hi = wilson_interval(round(play_rate * play_n), play_n)
    pooled = suite["all"]
    row: dict[str, Any] = {
        "arm": arm,
        "seed": seed,
        "suite": float(pooled["rate"]),
        "suite_lo": float(pooled["wilson95"][0]),
        "suite_hi": float(pooled["wilson95"][1]),
        "suite_episodes": int(pooled["episodes"]),
        "play": play_rate,
        "play_lo": play_lo,
        "play_hi": play_hi,
        "play_episodes": play_n,
        "gap": play_rate - float(pooled["rate"]),
    }
    for family, stats in suite["families"].items():
        row[f"suite_{family}"] = float(stats["rate"])
        row[f"suite_{family}_lo"], row[f"suite_{family}_hi"] = (float(v) for v in stats["wilson95"])
        row[f"suite_{family}_episodes"] = int(stats["episodes"])
    return row


def read_seed_row(arm: str, seed: int, play: Path, suite: Path, metric: str) -> dict[str, Any] | None:
    """:func:`seed_row` of a pair's Play JSON and suite folder, or None when either is missing (not finished)."""
    if not play.is_file() or not (suite / "summary.json").is_file():
        return None
    return seed_row(arm, seed, json.loads(play.read_text()), json.loads((suite / "summary.json").read_text()), metric)


def families(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The suite families of ``rows``, in the order their summaries list them."""
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:  # a family's score is the key with a "_lo" beside it (suite_lo, suite_worn_lo: none)
            if key.startswith("suite_") and f"{key}_lo" in row:
                seen.setdefault(key.removeprefix("suite_"))
    return list(seen)


def _interval(name: str, values: Sequence[float]) -> dict[str, Any]:
    s = summarize(name, values)
    return {"values": list(s.values), "mean": s.mean, "lo": s.lo, "hi": s.hi}


def arm_summary(arm: str, rows: Sequence[Mapping[str, Any]], fams: Sequence[str]) -> dict[str, Any]:
    """One arm over its seeds (``rows``: its :func:`seed_row` s): mean and t interval of the suite score, of each
    family's score, of the Play score and of the gap; the binomial variance floors of its suite and Play scores."""
    suite = [r["suite"] for r in rows]
    play = [r["play"] for r in rows]
    out = {
        "arm": arm,
        "seeds": [r["seed"] for r in rows],
        "suite": _interval(arm, suite),
        "play": _interval(arm, play),
        "gap": _interval(arm, [r["gap"] for r in rows]),
        "families": {f: _interval(arm, [r[f"suite_{f}"] for r in rows if f"suite_{f}" in r]) for f in fams},
        # a seed's score over m episodes carries at least p(1-p)/m of variance (the page: floored per seed)
        "suite_floor": binomial_floor(suite, min(r["suite_episodes"] for r in rows)),
        "play_floor": binomial_floor(play, min(r["play_episodes"] for r in rows)),
        "train_cpu_min": sum(r.get("train_cpu_s", math.nan) for r in rows) / len(rows) / 60.0,
        "train_wall_min": sum(r.get("train_wall_s", math.nan) for r in rows) / len(rows) / 60.0,
    }
    return out


def _verdicts(groups: dict[str, list[float]], floors: dict[str, float], higher: bool) -> list[dict[str, Any]]:
    return [
        {"better": v.better, "worse": v.worse, "diff": v.diff, "lo": v.lo, "hi": v.hi, "separated": v.separated}
        | {"words": v.words()}
        for v in pairwise(groups, higher_is_better=higher, floors=floors)
    ]


def study_summary(rows: Sequence[Mapping[str, Any]], order: Sequence[str]) -> dict[str, Any]:
    """Everything the study reports from its finished seeds ``rows`` (arms in the order of ``order``).

    Returns:
        ``seeds`` (the rows), ``arms`` (per arm: :func:`arm_summary`), ``suite_pairs`` and ``gap_pairs`` (every pair
        of arms: better, worse, |difference|, its Welch interval, whether it separates, in words) and ``suite_tiers``
        (:func:`~realgap.envs.eval.seed_stats.tiers` of the suite score). The gap is compared with lower as better and
        a floor that adds both scores' binomial floors (Play and suite episodes are independent).
    """
    arms = [a for a in order if any(r["arm"] == a for r in rows)]
    fams = families(rows)
    per_arm = {a: arm_summary(a, [r for r in rows if r["arm"] == a], fams) for a in arms}
    suite = {a: per_arm[a]["suite"]["values"] for a in arms}
    gap = {a: per_arm[a]["gap"]["values"] for a in arms}
    suite_floors = {a: per_arm[a]["suite_floor"] for a in arms}
    gap_floors = {a: per_arm[a]["suite_floor"] + per_arm[a]["play_floor"] for a in arms}
    return {
        "families": fams,
        "seeds": [dict(r) for r in rows],
        "arms": per_arm,
        "suite_pairs": _verdicts(suite, suite_floors, higher=True),
        "gap_pairs": _verdicts(gap, gap_floors, higher=False),
        "suite_tiers": tiers(suite, floors=suite_floors) if arms else [],
    }


def _f(value: float) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.3f}"


def _ci(entry: Mapping[str, Any]) -> str:
    if math.isnan(entry["lo"]):
        return f"{_f(entry['mean'])} (one seed)"
    return f"{_f(entry['mean'])} ({_f(entry['lo'])}–{_f(entry['hi'])})"


def markdown(summary: Mapping[str, Any], header: Sequence[str] = ()) -> str:
    """The study's tables: per seed, per arm (t intervals over seeds), the tiers and every pair's verdict in words."""
    fams = summary["families"]
    lines = [*header, "", "## Per seed (Wilson 95 % intervals over episodes)", ""]
    lines += ["| arm | seed | suite | " + " | ".join(fams) + " | Play | gap | train CPU-min |"]
    lines += ["|---" * (6 + len(fams)) + "|"]
    for r in summary["seeds"]:
        cells = [r["arm"], str(r["seed"]), f"{_f(r['suite'])} ({_f(r['suite_lo'])}–{_f(r['suite_hi'])})"]
        cells += [_f(r.get(f"suite_{f}", math.nan)) for f in fams]
        cells += [f"{_f(r['play'])} ({_f(r['play_lo'])}–{_f(r['play_hi'])})", f"{r['gap']:+.3f}"]
        cells += [f"{r.get('train_cpu_s', math.nan) / 60:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## Per arm (mean over seeds, Student-t 95 % interval)", ""]
    lines += ["| arm | seeds | suite | " + " | ".join(fams) + " | Play | gap | train CPU-min (mean) |"]
    lines += ["|---" * (6 + len(fams)) + "|"]
    for arm, a in summary["arms"].items():
        cells = [arm, str(len(a["seeds"])), _ci(a["suite"]), *(_ci(a["families"][f]) for f in fams)]
        cells += [_ci(a["play"]), _ci(a["gap"]), f"{a['train_cpu_min']:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    tiers_text = " > ".join("{" + ", ".join(t) + "}" for t in summary["suite_tiers"])
    lines += ["", f"Suite-score tiers (a new tier only where separated from every arm above): {tiers_text or '–'}", ""]
    lines += ["## Suite score, pair by pair (Welch 95 %, binomial floor per seed)", ""]
    lines += [f"- {p['words']}" for p in summary["suite_pairs"]] or ["- (fewer than two arms)"]
    lines += ["", "## Gap (Play − suite; smaller is better), pair by pair", ""]
    lines += [f"- {p['words']}" for p in summary["gap_pairs"]] or ["- (fewer than two arms)"]
    return "\n".join(lines) + "\n"
