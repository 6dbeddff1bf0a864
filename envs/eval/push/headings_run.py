"""The push-heading measure from its inputs to its report (``scripts/push_headings.py``), callable without the command
line: :func:`check_request` refuses bad bins, counts and a non-balance export before an env is built;
:func:`push_headings` logs the pushes of the task's Play variant, measures the standing capture point and writes the
JSON; :func:`report_lines` says the result as the script prints it. The pure tables live in
:mod:`realgap.envs.eval.push.headings`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class PushHeadingsRequest:
    """A push-heading measure as scripts/push_headings.py's flags give it (see its ``--help`` for each)."""

    policy: str
    num_envs: int = 128
    seed: int = 0
    zero_action: bool = False
    steps: int = 2000
    edges: str = "0.2,0.3,0.35,0.4"
    ankle_pitch_bias: float = 0.0
    hip_reflex: float = 0.0
    reflex_steps: int = 10
    crouch: float = 0.0
    out: str | None = None


def check_request(req: PushHeadingsRequest) -> tuple[list[float], Any, Path]:
    """The magnitude bin edges and the export ``(metadata, onnx path)``, every input checked before an env is built.

    Raises:
        ValueError: Bin edges that are not at least two increasing numbers; a count < 1; an export of another task
            than balance.
        ExportError: No export at ``req.policy``.
    """
    from realgap.envs.eval.policies import read_export
    from realgap.envs.eval.push.headings import heading_table

    edges = [float(v) for v in req.edges.split(",")]
    heading_table([], edges)  # bad edges are refused here, before an env is built
    if req.steps < 1 or req.num_envs < 1 or req.reflex_steps < 1:
        raise ValueError("--steps, --num_envs and --reflex_steps must be >= 1")
    meta, onnx_path = read_export(req.policy)
    if not meta.is_balance:
        raise ValueError(f"--policy {req.policy} is a {meta.task} policy; pushes are a balance measure")
    return edges, meta, onnx_path


def variant_label(req: PushHeadingsRequest) -> str:
    """The policy and the what-ifs on it, as the report names them."""
    label = "zero action" if req.zero_action else str(req.policy)
    label += f" + ankle-pitch bias {req.ankle_pitch_bias:g}" if req.ankle_pitch_bias else ""
    label += f" + crouch {req.crouch:g} rad" if req.crouch else ""
    label += f" + hip reflex {req.hip_reflex:g} x {req.reflex_steps}" if req.hip_reflex else ""
    return label


def default_out(req: PushHeadingsRequest) -> Path:
    """``runs/push_headings/<export folder>[_zero_action][_<what-if>...].json``."""
    name = Path(req.policy).name + ("_zero_action" if req.zero_action else "")
    name += f"_ankle_bias{req.ankle_pitch_bias:g}" if req.ankle_pitch_bias else ""
    name += f"_crouch{req.crouch:g}" if req.crouch else ""
    name += f"_hip_reflex{req.hip_reflex:g}x{req.reflex_steps}" if req.hip_reflex else ""
    return Path("runs") / "push_headings" / f"{name}.json"


def push_headings(req: PushHeadingsRequest) -> tuple[dict[str, Any], Path]:
    """Log every push of ``req.steps`` policy steps and the standing capture point; write the report. Returns the
    report and the path written (``req.out`` or :func:`default_out`)."""
    edges, meta, onnx_path = check_request(req)
    from realgap.envs.eval.policies import export_actions
    from realgap.envs.eval.push.headings import (
        heading_table,
        log_pushes,
        stance_offset,
        summary,
        with_ankle_pitch_bias,
        with_crouch,
        with_hip_reflex,
    )
    from realgap.envs.run.factory import load_cfgs, make_env, simulation
    from realgap.tasks import play_task

    task = play_task(meta.task)
    env_cfg, _ = load_cfgs(task, None, req.num_envs, req.seed)
    export_actions(env_cfg, meta)  # the policy's action terms; the zero action still holds the task's stance
    with simulation(env_cfg):
        from realgap.envs.eval.policies import exported_policy, zero_policy

        env = make_env(task, env_cfg)
        policy = zero_policy(env) if req.zero_action else exported_policy(env, meta, onnx_path)
        if req.ankle_pitch_bias:
            policy = with_ankle_pitch_bias(env, policy, req.ankle_pitch_bias)
        if req.crouch:
            policy = with_crouch(env, policy, req.crouch)
        if req.hip_reflex:
            policy = with_hip_reflex(env, policy, req.hip_reflex, req.reflex_steps)
        records = log_pushes(env, policy, req.steps)  # each policy clips its raw actions as in training
        stance = stance_offset(env, policy)  # after the log: the pushes logged are the task's draws from the seed
        env.close()
    report = {
        "policy": variant_label(req),
        "task": task,
        "steps": req.steps,
        "num_envs": req.num_envs,
        "seed": req.seed,
        "ankle_pitch_bias": req.ankle_pitch_bias,
        "hip_reflex": req.hip_reflex,
        "crouch_rad": req.crouch,
        "reflex_steps": req.reflex_steps,
        "edges_mps": edges,
        "summary": summary(records),
        "rows": heading_table(records, edges),
        "stance_xi_ahead_of_ankles_m": {"mean": stance[0], "std": stance[1]},
    }
    out = Path(req.out or default_out(req))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    return report, out


def report_lines(report: dict[str, Any]) -> list[str]:
    """The report as scripts/push_headings.py prints it: totals, the standing capture point, one line per row."""
    totals, stance = report["summary"], report["stance_xi_ahead_of_ankles_m"]
    lines = [
        f"[realgap] {report['task']} | {report['policy']} | {totals['pushes']} pushes, {totals['falls']} followed "
        f"by a fall ({totals['sagittal_share_of_falls']:.2f} of them sagittal)",
        f"[realgap] standing (3 s, no pushes): ξ {stance['mean'] * 100:.1f} ± {stance['std'] * 100:.1f} cm ahead "
        "of the ankles",
    ]
    for r in report["rows"]:
        lo, hi = r["push_mps"]
        lines.append(
            f"[realgap] {r['direction']:>8} {lo:g}-{hi:g} m/s  falls {r['falls']:>3} / {r['pushes']:<3}  "
            f"{r['fall_rate']:.2f} (95 % CI {r['ci95'][0]:.2f}-{r['ci95'][1]:.2f})"
        )
    return lines
