"""The single-push limit from its inputs to its report (``scripts/push_limit.py``), callable without the command line:
:func:`check_request` refuses bad magnitudes, engines and durations and a non-balance export before an env is built;
:func:`push_limit` runs the engines (:mod:`realgap.envs.eval.push.limit`), tabulates survival with its 95 % Wilson
interval and the limit (the largest magnitude survived in >= 50 % of the episodes; :func:`~realgap.envs.eval.push.
limit.survival_table`) and writes the JSON;
:func:`limit_lines` says the result as the script prints it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realgap.envs.eval.policies import read_export
from realgap.envs.eval.push.limit import DEFAULT_VALUES, isaac_single_push, mujoco_single_push, survival_table

ENGINES = ("isaac", "mujoco")


@dataclass(frozen=True)
class PushLimitRequest:
    """A push-limit measure as scripts/push_limit.py's flags give it (see its ``--help`` for each)."""

    policy: str
    episodes: int = 64
    num_envs: int = 128
    seed: int = 0
    zero_action: bool = False
    values: str = DEFAULT_VALUES
    engines: str = "isaac,mujoco"
    push_at_s: float = 1.0
    recover_s: float = 3.0
    out: str | None = None


def check_request(req: PushLimitRequest) -> tuple[list[float], list[str], Any, Path]:
    """The magnitudes, the engines and the export ``(metadata, onnx path)``, every input checked before an env is built.

    Raises:
        ValueError: An unknown engine, a negative magnitude, a count < 1 or a time <= 0; an export of another task
            than balance.
        ExportError: No export at ``req.policy``.
    """
    values = [float(v) for v in req.values.split(",")]
    engines = req.engines.split(",")
    if not set(engines) <= set(ENGINES):
        raise ValueError(f"--engines: choose from isaac, mujoco; got {req.engines!r}")
    if min(values) < 0 or req.episodes < 1 or req.push_at_s <= 0 or req.recover_s <= 0:
        raise ValueError("--values must be >= 0 m/s, --episodes >= 1, --push_at_s and --recover_s > 0")
    meta, onnx_path = read_export(req.policy)
    if not meta.is_balance:
        raise ValueError(f"--policy {req.policy} is a {meta.task} policy; the push limit is a balance measure")
    return values, engines, meta, onnx_path


def push_limit(req: PushLimitRequest) -> tuple[dict[str, Any], Path]:
    """Measure single-push survival per engine, label (the policy, and the zero action if asked) and magnitude; write
    the report as JSON (``req.out``, default ``runs/push_limit/<export name>.json``); return it and its path."""
    values, engines, meta, onnx_path = check_request(req)
    labels = ["policy"] + (["zero action"] if req.zero_action else [])
    duration = req.push_at_s + req.recover_s
    survived: dict[str, dict[str, list[tuple[int, int]]]] = {engine: {} for engine in engines}
    if "isaac" in engines:
        survived["isaac"] = isaac_single_push(
            meta, onnx_path, labels, values, req.episodes, req.push_at_s, duration, req.num_envs, req.seed
        )
    if "mujoco" in engines:
        survived["mujoco"] = mujoco_single_push(
            meta, onnx_path, labels, values, req.episodes, req.push_at_s, duration, req.seed
        )
    report = {
        "policy": str(req.policy),
        "task": meta.task,
        "values_mps": values,
        "episodes": req.episodes,
        "push_at_s": req.push_at_s,
        "recover_s": req.recover_s,
        "seed": req.seed,
        "engines": {engine: survival_table(values, by_label) for engine, by_label in survived.items()},
    }
    out = Path(req.out or Path("runs") / "push_limit" / f"{Path(req.policy).name}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    return report, out


def limit_lines(report: dict[str, Any]) -> list[str]:
    """One line per engine and label: the limit and the survival curve, as scripts/push_limit.py prints them."""
    lines = []
    for engine, by_label in report["engines"].items():
        for label, result in by_label.items():
            limit = result["limit_mps"]
            curve = "  ".join(f"{r['push_mps']:g}:{r['survival']:.2f}" for r in result["rows"])
            lines.append(
                f"[realgap] {engine:>6} {label:>12}  limit {limit if limit is not None else '—'} m/s  | {curve}"
            )
    return lines
