"""The engine comparison of the identification page: realgap's fit and ``mujoco.sysid`` on one hidden-robot log per
drive family (:func:`run_family`), tabulated (:func:`markdown`). The hidden robot is the test stand-in for hardware
(:mod:`realgap.envs.deploy.hidden_robot`); only this report, never the identification, reads its truth."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

JOINTS = ("left_knee_joint", "left_shoulder_pitch_joint", "right_wrist_pitch_joint")
"""The joints excited and identified by default: a knee, a shoulder and a wrist (large, mid and small drives)."""


@dataclass(frozen=True)
class IdentifyEnginesRequest:
    """An engine comparison as scripts/identify_engines.py's flags give it (see its ``--help`` for each)."""

    out: str
    seed: int = 3
    joints: list[str] = field(default_factory=lambda: list(JOINTS))
    drives: list[str] = field(default_factory=lambda: ["default", "worn"])
    max_iters: int = 30


def identify_engines(req: IdentifyEnginesRequest) -> tuple[dict[str, Any], Path]:
    """Both engines on each drive family (printing each as it is fitted); the report written to ``req.out`` as
    report.json and report.md; returns the report and the folder.

    Raises:
        ValueError: ``max_iters`` < 1.
    """
    if req.max_iters < 1:
        raise ValueError("--max_iters must be >= 1")
    out = Path(req.out)
    report: dict[str, Any] = {"seed": req.seed, "joints": req.joints, "families": {}}
    for drives in req.drives:
        report["families"][drives] = run_family(req.seed, req.joints, drives, req.max_iters)
        print(f"[realgap] {drives}: fitted")
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=2))
    (out / "report.md").write_text(markdown(report))
    return report, out


def run_family(seed: int, joints: Sequence[str], drives: str, max_iters: int) -> dict[str, Any]:
    """Excite ``joints`` of the hidden G1 (seed, drive family) hanging, and compare both engines on its log."""
    from realgap.envs.deploy.hidden_robot import HiddenRobot
    from realgap.envs.format.verify import load_verified
    from realgap.envs.identify.excitation import ExcitationPlan, run_excitation
    from realgap.envs.identify.sysid_mujoco import compare_engines

    meta, _ = load_verified("configs/policies/balance_g1")
    robot = HiddenRobot(meta, seed=seed, drives=drives)
    plan = ExcitationPlan(tuple(joints), step_rad=tuple(0.08 for _ in joints), step_hold_s=0.3, chirp_s=2.0, rest_s=0.2)
    log = run_excitation(meta, robot, plan, root_pos_w=robot.root_pos_w)
    t = robot.truth
    truth = {}
    for name in joints:
        i = meta.joint_names.index(name)
        truth[name] = {
            "armature": float(t.armature[i]),
            "coulomb": float(t.coulomb_nm[i]),
            "viscous": float(t.viscous_nms[i]),
        }
    return compare_engines(log, truth, max_iters=max_iters)


def markdown(report: Mapping[str, Any]) -> str:
    """One table per drive family: truth, each engine's estimate and relative error; fit times below it."""

    def pct(v: float | None) -> str:
        return "not identifiable" if v is None else f"{100 * v:+.1f} %"

    def num(v: float | None) -> str:
        return "–" if v is None else f"{v:.4g}"

    lines = []
    for family, r in report["families"].items():
        head = "| joint | parameter | truth | realgap | error | mujoco.sysid | error |"
        lines += [
            f"**{family} drives** (hidden G1 seed {report['seed']}, {r['samples']} samples)",
            "",
            head,
            "|---|---|---|---|---|---|---|",
        ]
        for row in r["rows"]:
            lines.append(
                f"| {row['joint']} | {row['parameter']} | {num(row['truth'])} | {num(row['realgap'])} | "
                f"{pct(row['realgap_rel_error'])} | {num(row['mujoco_sysid'])} | "
                f"{pct(row['mujoco_sysid_rel_error'])} |"
            )
        lines += [
            "",
            f"Fit time: realgap {r['realgap_fit_s']:.1f} s, mujoco.sysid {r['mujoco_sysid_fit_s']:.1f} s "
            f"(final residual RMS {r['mujoco_sysid_residual_rms']:.3g}).",
            "",
        ]
    return "\n".join(lines)
