"""The proof of identification (``scripts/score_identification.py``): an identified actuator spec scored against the
hidden robot it was identified on.

The hidden truth of ``--robot hidden --hidden_seed N`` (:func:`realgap.envs.deploy.hidden_robot.draw_truth`) is read
here, in evaluation, never by the identification code (``envs/identify/``). One markdown row per identified parameter:
datasheet, truth, identified ± std, relative error; the command delay exact or not; a parameter the spec calls not
identifiable is listed with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from realgap.envs.deploy.hidden_robot import draw_truth
from realgap.envs.format import load_metadata
from realgap.envs.identify.report import FORMAT


@dataclass(frozen=True)
class ScoreRequest:
    """A scoring as scripts/score_identification.py's flags give it (see its ``--help`` for each)."""

    policy: str
    spec: str
    hidden_seed: int
    hidden_drives: str = "default"


def score_identification(req: ScoreRequest) -> list[str]:
    """The score as lines: the command delay's verdict, then a markdown table of every identified parameter.

    Raises:
        ValueError: ``req.spec`` is not an identified spec, or names a joint the policy does not have.
        FileNotFoundError: No spec or no export metadata at the path given.
    """
    spec = yaml.safe_load(Path(req.spec).read_text())
    if not isinstance(spec, dict) or spec.get("format") != FORMAT:
        raise ValueError(f"{req.spec} is not an identified spec (format {FORMAT})")
    meta = load_metadata(req.policy)
    truth = draw_truth(meta, req.hidden_seed, req.hidden_drives)
    delay = spec["command_delay_steps"]["value"]
    verdict = "exact" if delay == truth.delay_steps else "WRONG"
    lines = [
        f"command delay: identified {delay:g} steps, hidden {truth.delay_steps} steps: {verdict}",
        "| joint | parameter | datasheet | hidden truth | identified ± std | error |",
        "|---|---|---|---|---|---|",
    ]
    for joint, params in spec["joints"].items():
        if joint not in meta.joint_names:
            raise ValueError(f"{req.spec}: joint {joint!r} is not one of the policy's joints")
        lines += _joint_rows(joint, params, truth, meta.joint_names.index(joint))
    return lines


def _joint_rows(joint: str, params: dict[str, Any], truth: Any, i: int) -> list[str]:
    """The table rows of joint ``joint`` (index ``i`` in the policy): each identified parameter beside its truth."""
    rows = []
    for name, est in params.items():
        sheet = est.get("datasheet", float("nan"))
        want = {
            "kp": sheet * truth.kp_scale[i],
            "kd": sheet * truth.kd_scale[i],
            "armature": truth.armature[i],
            "coulomb": truth.coulomb_nm[i],
            "viscous": truth.viscous_nms[i],
            "torque_limit": truth.peak_torque[i],
        }.get(name)
        if want is None:
            continue
        if not est.get("identifiable", True):
            rows.append(f"| {joint} | {name} | {sheet:.4g} | {want:.4g} | not identifiable: {est['reason']} | – |")
            continue
        err = abs(est["value"] - want) / abs(want)
        ident = f"{est['value']:.4g} ± {est['std']:.1g}"
        rows.append(f"| {joint} | {name} | {sheet:.4g} | {want:.4g} | {ident} | {100 * err:.2f} % |")
    return rows
