"""Identification from a robot log to its files (``scripts/identify.py``), callable without the command line:
the log loaded (checked against the export it must come from, if given), its timing checked, the actuator chain fitted
(:mod:`realgap.envs.identify.fit`; armature and friction by ``mujoco.sysid`` if asked) and the identified spec, its DR
profile and the fit plot written (:mod:`realgap.envs.identify.report`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from realgap.envs.deploy.log import load_log, metadata_sha256
from realgap.envs.format.verify import load_verified
from realgap.envs.identify.fit import identify
from realgap.envs.identify.log_quality import check_log_quality, log_quality
from realgap.envs.identify.report import output_paths, summary_lines, write_outputs
from realgap.envs.identify.sysid_mujoco import use_sysid_plant


@dataclass(frozen=True)
class IdentifyRequest:
    """An identification as scripts/identify.py's flags give it (see its ``--help`` for each)."""

    log: str
    out: str
    policy: str | None = None
    joints: list[str] | None = None
    max_delay_steps: int = 6
    base_profile: str = "nominal"
    filter_hz: float | None = None
    delay_per_joint: bool = False
    engine: str = "realgap"
    no_replay: bool = False
    no_plot: bool = False
    accept_log_problems: bool = False


def identify_log(req: IdentifyRequest) -> dict[str, Path]:
    """Fit the actuator chain to the log ``req`` names and write the outputs; prints the log's quality and the fit's
    summary as they come; returns what was written, by name.

    Raises:
        ValueError: ``max_delay_steps`` < 1, an output path refused, a log that fails the timing checks (unless
            ``accept_log_problems``) or does not match the export.
        MetadataError: The export at ``req.policy`` fails its checks.
    """
    if req.max_delay_steps < 1:
        raise ValueError("--max_delay_steps must be >= 1")
    output_paths(req.out)  # a folder, a link or a wrong suffix at any of the three outputs: refused before the fit
    expected = joint_names = None
    if req.policy is not None:
        meta, _ = load_verified(req.policy)
        expected, joint_names = metadata_sha256(meta), meta.joint_names
    log = load_log(req.log, joint_names=joint_names, metadata_hash=expected)
    quality = log_quality(log) if req.accept_log_problems else check_log_quality(log, req.log)
    print(f"[realgap] {quality.line()}")
    ident = identify(
        log,
        req.joints,
        max_delay_steps=req.max_delay_steps,
        replay=not req.no_replay,
        filter_hz=req.filter_hz,
        delay_per_joint=req.delay_per_joint,
    )
    ident.notes.extend(f"log timing problem accepted (--accept_log_problems): {p}" for p in quality.problems)
    if req.engine == "mujoco_sysid":
        use_sysid_plant(ident, log)
    print("\n".join(summary_lines(ident)))
    return write_outputs(ident, log, req.log, req.out, base_profile=req.base_profile, plot=not req.no_plot)
