"""The SRBD study from its inputs to its files (``scripts/srbd.py``), callable without the command line.

:func:`run_srbd` validates the single rigid body against the MuJoCo G1 in each of :data:`SCENARIOS`
(:mod:`realgap.envs.srbd.validate`: validation.json and a plot per scenario), then, if asked, the three-way balance
evaluation and the SRBD controller's single-push sweep on MuJoCo (:mod:`realgap.envs.eval.srbd.balance`); or, with
``isaac``, only the three-way evaluation in the Isaac Lab task's robustness protocol.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realgap.envs.eval.robustness.evaluation import summary_lines
from realgap.envs.eval.srbd.balance import PUSH_LIMIT_MPS, evaluate, evaluation_lines, lab_evaluate, single_push
from realgap.envs.srbd.model import g1_model
from realgap.envs.srbd.validate import plot, run_episode, summary

SCENARIOS = {"standing": (), "push_forward_0.4": ((2.0, 0.4, 0.0),), "push_sideways_0.4": ((2.0, 0.0, 0.4),)}
"""Validation scenarios: pushes as ``(time s, vx m/s, vy m/s)``; none, 0.4 m/s forward, 0.4 m/s sideways at 2 s."""


@dataclass(frozen=True)
class SrbdRequest:
    """An SRBD study as scripts/srbd.py's flags give it (see its ``--help`` for each)."""

    out: str
    policy: str = "configs/policies/balance_g1"
    duration_s: float = 6.0
    horizon_s: float = 0.2
    evaluate: int = 0
    push_limit: int = 0
    isaac: int = 0
    num_envs: int = 112


def check_request(req: SrbdRequest) -> None:
    """Refuse an episode that ends before the pushes (at 2 s), a horizon <= 0 or a negative count, before anything is
    written.

    Raises:
        ValueError: Names the flags and their ranges.
    """
    if not req.duration_s > 2.5 or not req.horizon_s > 0 or min(req.evaluate, req.push_limit, req.isaac) < 0:
        raise ValueError(
            "--duration_s must be > 2.5 (the pushes come at 2 s), --horizon_s > 0, --evaluate, "
            "--push_limit and --isaac >= 0"
        )


def run_srbd(req: SrbdRequest, command: str) -> None:
    """Run the study ``req`` asks for into ``req.out``, printing each result as it comes (``command``: the command
    line, recorded in the Isaac Lab report).

    Raises:
        ValueError: See :func:`check_request`.
    """
    check_request(req)
    if req.isaac:
        report = lab_evaluate(req.policy, req.out, episodes=req.isaac, num_envs=req.num_envs, command=command)
        print("\n".join(summary_lines(report, Path(req.out), len(report["factors"]))))
        return
    out = Path(req.out)
    validate_scenarios(req, out)
    if req.evaluate:
        result = evaluate(req.policy, episodes=req.evaluate)
        (out / "evaluation.json").write_text(json.dumps(result, indent=2))
        print("\n".join(evaluation_lines(result)))
    if req.push_limit:
        # the crouch export's committed protocol (push_limit_balance_g1_crouch.json): push at 3 s, after the ramp
        limit = single_push(req.policy, PUSH_LIMIT_MPS, episodes=req.push_limit, push_at_s=3.0, duration_s=6.0)
        (out / "push_limit.json").write_text(json.dumps(limit, indent=2))
        rows = ", ".join(f"{r['push_mps']}: {r['survived']}/{r['episodes']}" for r in limit["rows"])
        print(f"[realgap] srbd_controller single-push limit {limit['limit_mps']} m/s: {rows}")
    print(f"[realgap] wrote {out}/validation.json and {len(SCENARIOS)} plots")


def validate_scenarios(req: SrbdRequest, out: Path) -> dict[str, Any]:
    """The single body against MuJoCo in each scenario: a summary per scenario (printed), a plot in ``out`` (created);
    written to ``out/validation.json`` and returned."""
    model, _ = g1_model()
    mass = float(model.body_subtreemass[1])
    out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"policy": req.policy, "duration_s": req.duration_s, "horizon_s": req.horizon_s}
    report["scenarios"] = {}
    for name, pushes in SCENARIOS.items():
        trace = run_episode(req.policy, req.duration_s, pushes, req.horizon_s)
        report["scenarios"][name] = summary(trace, mass) | {"pushes": [list(p) for p in pushes]}
        plot(trace, out / f"{name}.png", f"{name}: SRBD with the measured contact forces vs MuJoCo")
        print(f"[realgap] {name}: {report['scenarios'][name]}")
    (out / "validation.json").write_text(json.dumps(report, indent=2))
    return report
