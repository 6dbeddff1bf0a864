"""The identification checks its own log: stale (repeated) samples, skipped samples and a log at another rate than
the export commands are refused before a fit, by ``check_log_quality`` and by scripts/identify.py, which writes
nothing then; ``--accept_log_problems`` fits it anyway and records the problems in the spec. The logs are in-process
excitation logs of the hidden G1 (MuJoCo C), corrupted the way a loaded machine corrupts one."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from realgap.envs.deploy.log import RobotLog
from realgap.envs.identify.log_quality import LogQualityError, check_log_quality, log_quality

pytestmark = pytest.mark.sim
REPO = Path(__file__).resolve().parents[2]
JOINTS = ("left_knee_joint", "right_wrist_pitch_joint")
PER_SAMPLE = ("q", "qd", "tau", "q_target", "imu_ang_vel_b", "imu_projected_gravity_b", "action", "segment")


@pytest.fixture(scope="module", params=["none", "typical"])
def clean(request: pytest.FixtureRequest) -> RobotLog:
    from realgap.envs.deploy.hidden_robot import SENSOR_NOISE, HiddenRobot
    from realgap.envs.format.metadata import load_metadata
    from realgap.envs.identify.excitation import ExcitationPlan, run_excitation

    meta = load_metadata(REPO / "configs" / "policies" / "balance_g1" / "policy.json")
    robot = HiddenRobot(meta, 3, noise=SENSOR_NOISE[request.param])
    return run_excitation(meta, robot, ExcitationPlan(JOINTS), root_pos_w=robot.root_pos_w)


def stale(log: RobotLog, every: int = 25) -> RobotLog:
    """Every ``every``-th sample repeats the one before (the driver read a state the robot had not refreshed)."""
    rows = np.arange(every, log.num_samples, every)
    changed = {}
    for name in ("q", "qd", "tau"):
        a = getattr(log, name).copy()
        a[rows] = a[rows - 1]
        changed[name] = a
    return dataclasses.replace(log, **changed)


def skipped(log: RobotLog, every: int = 25) -> RobotLog:
    """Every ``every``-th sample missing (a period that covered two robot ticks), ``t`` still ``k · control_dt``."""
    keep = np.ones(log.num_samples, bool)
    keep[np.arange(every, log.num_samples, every)] = False
    return dataclasses.replace(log, t=log.t[: keep.sum()], **{n: getattr(log, n)[keep] for n in PER_SAMPLE})


def test_a_clean_log_meets_the_bounds(clean):
    quality = check_log_quality(clean, "clean")
    assert quality.repeated == 0 and quality.rate_hz == quality.expected_hz == 200.0
    assert quality.inconsistent <= 0.006 * quality.moving  # measured: 0 (no noise), 4 of 1,100 (typical noise)


def test_stale_samples_are_refused(clean):
    with pytest.raises(LogQualityError, match=r"repeated samples .* stale states"):
        check_log_quality(stale(clean), "stale")
    assert log_quality(stale(clean)).repeated >= 40  # 76 rows repeated, the moving ones counted


def test_skipped_samples_are_refused(clean):
    quality = log_quality(skipped(clean))
    assert quality.repeated == 0 and quality.inconsistent > 0.03 * quality.moving  # measured 3.8-4.3 %
    with pytest.raises(LogQualityError, match="move by another distance than their velocity says"):
        check_log_quality(skipped(clean), "skipped")


def test_a_log_at_another_rate_than_the_export_is_refused(clean):
    with pytest.raises(LogQualityError, match="sampled at 100 Hz .* the export commands 200 Hz"):
        check_log_quality(dataclasses.replace(clean, control_dt=0.01, t=clean.t * 2), "slow")


def test_identify_refuses_a_stale_log_and_writes_nothing_unless_told(clean, tmp_path):
    path = stale(clean).save(tmp_path / "stale.npz")
    out = tmp_path / "spec.yaml"
    cmd = [
        sys.executable,
        str(REPO / "scripts" / "identify.py"),
        "--log",
        str(path),
        "--out",
        str(out),
        "--no_plot",
        "--no_replay",
    ]
    refused = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "the log's timing cannot be trusted" in refused.stderr, refused.stderr[-2000:]
    assert "Traceback" not in refused.stderr and sorted(p.name for p in tmp_path.iterdir()) == ["stale.npz"]
    accepted = subprocess.run(
        [*cmd, "--accept_log_problems"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert accepted.returncode == 0, accepted.stderr[-2000:]
    notes = yaml.safe_load(out.read_text())["notes"]
    assert any("log timing problem accepted" in n and "repeated samples" in n for n in notes), notes


def _worn_suite_log(tmp_path: Path) -> RobotLog:
    from realgap.envs.deploy.log import load_log

    path = tmp_path / "worn0.npz"
    cmd = [sys.executable, "-m", "realgap.scripts", "deploy", "--policy", "configs/policies/balance_g1", "--robot"]
    cmd += ["suite", "--suite", "configs/suites/g1_v1.yaml", "--suite_family", "worn", "--suite_robot", "0"]
    cmd += ["--excite", *JOINTS[:1], "left_shoulder_pitch_joint", "--log", str(path)]
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return load_log(path)


def test_a_worn_encoders_noise_is_not_taken_for_a_timing_fault_and_a_gap_still_is(tmp_path):
    # the suite's worn G1 0 (1 mrad on q, 0.1 rad/s on q̇): by the half-motion rule alone 29 % of its clean log's moving
    # samples failed; judged only where the motion exceeds 8 σ of the log's own noise, none does, and one sample in 25
    # skipped is still refused
    worn = _worn_suite_log(tmp_path)
    quality = check_log_quality(worn, "worn")
    assert quality.noise_rad > 1e-3 and quality.moving >= 50 and quality.inconsistent == 0
    with pytest.raises(LogQualityError, match="move by another distance than their velocity says"):
        check_log_quality(skipped(worn), "skipped")


def test_a_log_too_noisy_to_judge_says_so_instead_of_blaming_its_timing():
    from realgap.envs.deploy.hidden_robot import HiddenRobot, SensorNoise
    from realgap.envs.format.metadata import load_metadata
    from realgap.envs.identify.excitation import ExcitationPlan, run_excitation

    meta = load_metadata(REPO / "configs" / "policies" / "balance_g1" / "policy.json")
    robot = HiddenRobot(meta, 3, noise=SensorNoise(q_rad=1e-3, qd_rads=0.1, tau_frac=0.01))
    slow = run_excitation(meta, robot, ExcitationPlan(JOINTS), root_pos_w=robot.root_pos_w)  # the wrist moves little
    (problem,) = log_quality(slow).problems
    assert "too noisy or too slow to check its timing" in problem
