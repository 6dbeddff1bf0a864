"""Noisy sensors on the hidden robot and the identification's answer to them (``envs/deploy/hidden_robot.py``
``SensorNoise``; ``envs/identify/fit.py`` ``filter_hz``): the noise is what the bus reports, not what the drive's
own servo reads; the zero-phase filter keeps a linear law exact when both sides pass through it; a corner at or above
the Nyquist rate and negative noise are refused. numpy + MuJoCo C, no Isaac Lab: seconds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
GRASP = REPO / "configs" / "policies" / "grasp_franka"


def test_filtering_both_sides_keeps_a_linear_law_exact_and_removes_noise_from_the_regressors():
    from realgap.envs.identify.fit import _lowpass

    rng = np.random.default_rng(0)
    dt, n = 0.005, 2000
    t = np.arange(n) * dt
    x_true = np.stack([np.sin(2 * np.pi * 1.3 * t), np.cos(2 * np.pi * 0.7 * t) * t], axis=1)
    y = x_true @ np.array([3.0, -2.0])
    x_noisy = x_true + rng.normal(0.0, 0.3, x_true.shape)  # errors in the regressors: OLS shrinks towards zero
    samples = np.arange(n)
    raw, *_ = np.linalg.lstsq(x_noisy, y, rcond=None)
    both = _lowpass(np.column_stack([y, x_noisy]), samples, 5.0, dt)
    filtered, *_ = np.linalg.lstsq(both[:, 1:], both[:, 0], rcond=None)
    assert abs(raw[0] - 3.0) > 0.1  # the raw fit is biased by the regressor noise ...
    np.testing.assert_allclose(filtered, [3.0, -2.0], rtol=0.03)  # ... the parallel-filtered one is not
    exact = _lowpass(np.column_stack([y, x_true]), samples, 5.0, dt)
    np.testing.assert_allclose(np.linalg.lstsq(exact[:, 1:], exact[:, 0], rcond=None)[0], [3.0, -2.0], rtol=1e-9)
    split = np.concatenate([np.arange(0, 500), np.arange(700, 2000)])  # two stretches: filtered apart
    out = _lowpass(x_true[split], split, 5.0, dt)
    assert out.shape == (split.size, 2) and np.isfinite(out).all()
    np.testing.assert_array_equal(_lowpass(x_true, samples, None, dt), x_true)


@pytest.mark.parametrize("hz", [0.0, -1.0, 100.0, 250.0, float("nan")])
def test_a_filter_corner_outside_zero_to_nyquist_is_refused(hz):
    from realgap.envs.identify.fit import check_filter

    with pytest.raises(ValueError, match=r"below the log's Nyquist rate 100 Hz \(samples every 0.005 s\)"):
        check_filter(hz, 0.005)
    check_filter(None, 0.005)
    check_filter(20.0, 0.005)


@pytest.mark.parametrize("bad", [dict(q_rad=-1e-4), dict(qd_rads=float("nan")), dict(tau_frac=float("inf"))])
def test_negative_or_non_finite_noise_is_refused(bad):
    from realgap.envs.deploy.hidden_robot import SensorNoise

    with pytest.raises(ValueError, match="must be finite and >= 0"):
        SensorNoise(**bad)


def test_the_noise_is_on_what_the_robot_reports_not_on_what_its_servo_reads():
    from realgap.envs.deploy import DeployRuntime
    from realgap.envs.deploy.hidden_robot import SENSOR_NOISE, HiddenRobot
    from realgap.envs.format import load_metadata

    meta = load_metadata(GRASP)
    runs = {}
    for level in ("none", "typical"):
        robot = HiddenRobot(meta, 3, noise=SENSOR_NOISE[level])
        runtime = DeployRuntime(meta, robot, None, command_delay=False)  # no policy: the targets are written here
        runtime.q_target[3] += 0.05
        reported = []
        for _ in range(40):
            runtime.control()
            reported.append((robot.read_joints().pos, robot.read_torque()))
        runs[level] = (robot.sim.read_joints().pos.copy(), reported)
    np.testing.assert_array_equal(runs["none"][0], runs["typical"][0])  # the same motion: the servo saw no noise
    dq = np.array([a[0] - b[0] for a, b in zip(runs["typical"][1], runs["none"][1], strict=True)])
    dtau = np.array([a[1] - b[1] for a, b in zip(runs["typical"][1], runs["none"][1], strict=True)])
    assert 0.5e-4 < dq.std() < 2e-4  # 0.1 mrad
    peak = meta.joint_array("peak_torque")  # 87 N·m on joints 1-4, 12 on 5-7, 140 N on the fingers
    assert peak[0] == 87 and peak[5] == 12
    assert 0.005 < (dtau / peak).std() < 0.02  # 1 % of the peak torque


def test_a_runtime_without_a_policy_refuses_to_act():
    from realgap.envs.deploy import DeployRuntime
    from realgap.envs.deploy.hidden_robot import HiddenRobot
    from realgap.envs.format import load_metadata

    meta = load_metadata(GRASP)
    runtime = DeployRuntime(meta, HiddenRobot(meta, 3), None)
    with pytest.raises(RuntimeError, match="built without a policy"):
        runtime.step()


def test_sensor_noise_on_a_robot_that_is_not_hidden_is_refused(tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "realgap.scripts.deploy",
        "--policy",
        str(GRASP),
        "--robot",
        "mujoco",
        "--sensor_noise",
        "typical",
        "--excite",
        "joint4",
        "--log",
        str(tmp_path / "x.npz"),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.returncode == 2 and "a property of the hidden robot: add --robot hidden" in out.stderr, out.stderr
    assert not (tmp_path / "x.npz").exists()


def test_a_base_group_whose_joints_were_all_identified_is_dropped_from_the_generated_profile():
    """The generated DR profile keeps the base ranges only for joints not identified; a base pattern left matching
    none of the robot's joints (the whole group identified) is dropped, as the DR loader refuses such a pattern."""
    import re

    from realgap.envs.identify.report import _rest

    names = ("left_knee_joint", "right_knee_joint", "left_elbow_joint")
    group = {"asset": "robot", "joints": [".*_knee_joint", ".*_elbow_joint"], "coulomb_nm": [0.1, 0.2]}
    both_knees = "|".join(re.escape(j) for j in names[:2])
    kept = _rest(group, both_knees, names)
    assert kept["coulomb_nm"] == [0.1, 0.2] and len(kept["joints"]) == 1  # the knee pattern went, the elbow stays
    assert [n for n in names if re.fullmatch(kept["joints"][0], n)] == ["left_elbow_joint"]
    one_knee = _rest(group, re.escape("left_knee_joint"), names)
    assert [n for n in names if any(re.fullmatch(p, n) for p in one_knee["joints"])] == list(names[1:])
    assert _rest(group, "|".join(re.escape(j) for j in names), names) is None  # nothing left: the group goes


def test_the_committed_worn_profile_names_only_joints_the_g1_has():
    """What the DR loader checks when a training starts (every joint pattern matches a joint of the asset), on the
    profile the worn-robot loop trained with: all 15 leg and waist joints identified, so the base groups of those
    joints must be gone and the arm groups kept."""
    import json
    import re

    import yaml

    names = json.loads((REPO / "configs/policies/balance_g1/policy.json").read_text())["joints"]["names"]
    profile = yaml.safe_load((REPO / "configs/identified/g1_worn_seed3_dr.yaml").read_text())
    for kind in ("joint_friction", "actuator"):
        for group in profile[kind]:
            for pattern in group["joints"]:
                assert any(re.fullmatch(pattern, n) for n in names), (kind, pattern)
    covered = {n for g in profile["actuator"] for p in g["joints"] for n in names if re.fullmatch(p, n)}
    assert covered == set(names)  # identified joints by their own entries, the arms by the base's


def _plant_log(armature: float, coulomb: float, viscous: float):
    from types import SimpleNamespace

    dt, n = 0.005, 1200
    t = np.arange(n) * dt
    qd = 1.5 * np.sin(2 * np.pi * 0.8 * t) + 0.4 * np.sin(2 * np.pi * 2.3 * t)
    qdd = np.append(np.diff(qd) / dt, 0.0)
    tau = np.roll(armature * qdd + coulomb * np.sign(qd) + viscous * qd, 1)  # τ[k] drives q̇[k] → q̇[k+1]
    return SimpleNamespace(qd=qd[:, None], tau=tau[:, None], control_dt=dt, num_samples=n)


@pytest.mark.parametrize(("armature", "identified"), [(0.05, True), (-0.05, False)])
def test_a_negative_armature_fit_is_reported_not_identifiable(armature, identified):
    from realgap.envs.identify.estimates import JointFit
    from realgap.envs.identify.fit import _plant

    log = _plant_log(armature, 0.4, 0.2)
    fit = JointFit("j", 0, np.arange(log.num_samples))
    _plant(fit, log, np.zeros_like(log.tau))
    got = fit.estimates["armature"]
    assert got.identifiable is identified
    if identified:
        assert got.value == pytest.approx(armature, rel=0.05)
        assert fit.estimates["coulomb"].value == pytest.approx(0.4, rel=0.05)
    else:
        assert "negative, which no real joint has" in got.reason
