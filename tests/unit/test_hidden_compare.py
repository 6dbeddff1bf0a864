"""The hidden G1 (``envs/deploy/hidden_robot.py``) as a plant for balance episodes, and the paired comparison of two
exports on it (``envs/deploy/episode.py``, ``scripts/hidden_compare.py``).

Free-floating in the start pose it is pushed and falls like the MuJoCo robot; welded it still hangs for identification;
one seed is one truth in both mounts. A policy compared with itself on the same schedules ties exactly, and bad input
is refused with one message. Plain MuJoCo C (no Isaac Lab), episodes of 1-2 s: seconds.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from realgap.envs.format.protocol import BALANCE_PROTOCOL

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
BALANCE = REPO / "configs" / "policies" / "balance_g1_70min"  # a standing policy: these tests are about the plant
SYMMETRY = REPO / "configs" / "policies" / "balance_g1_symmetry"
GRASP = REPO / "configs" / "policies" / "grasp_franka"
SHORT = dict(
    episodes=2, protocol=BALANCE_PROTOCOL.with_changes(episode_s=1.5, push_mps=(0.3, 0.4), push_interval_s=(0.3, 0.6))
)
"""Two 1.5 s episodes with pushes every 0.3-0.6 s: each episode is pushed at least twice."""


@pytest.fixture(scope="module")
def balance():
    from realgap.envs.format import load_policy

    return load_policy(BALANCE)


def _robot(kind: str, meta):
    from realgap.envs.deploy.hidden_robot import HiddenRobot
    from realgap.envs.deploy.mujoco_robot import MujocoRobot

    return MujocoRobot.for_policy(meta) if kind == "mujoco" else HiddenRobot(meta, 3, fixed_base=False)


def _base_pos(robot) -> np.ndarray:
    return getattr(robot, "sim", robot).data.qpos[:3].copy()  # the free joint's position, world frame, m


@pytest.mark.parametrize("kind", ["mujoco", "hidden"])
def test_a_push_moves_the_free_base(kind, balance):
    from realgap.envs.deploy import DeployRuntime, ZeroPolicy

    meta, _ = balance
    robot = _robot(kind, meta)
    runtime = DeployRuntime(meta, robot, ZeroPolicy(meta.action_dim))
    assert robot.root_height() == pytest.approx(meta.robot.start_root_pos[2], abs=1e-12)  # feet on the ground
    for _ in range(10):  # 0.2 s of standing: the stance settles by millimetres
        runtime.step()
    before = _base_pos(robot)
    robot.push((0.4, 0.0))
    for _ in range(10):
        runtime.step()
    moved = _base_pos(robot) - before
    # a free body at 0.4 m/s covers 0.4 * 0.2 = 0.08 m in 0.2 s; the feet's friction slows it (measured 0.058 m)
    assert 0.03 < moved[0] < 0.08 and abs(moved[1]) < 0.01, moved


def test_the_free_hidden_robot_falls_like_the_mujoco_robot(balance):
    from realgap.envs.deploy import DeployRuntime, ZeroPolicy
    from realgap.envs.deploy.episode import Push, run_episode

    meta, _ = balance
    results = {}
    for kind in ("mujoco", "hidden"):
        robot = _robot(kind, meta)
        runtime = DeployRuntime(meta, robot, ZeroPolicy(meta.action_dim))
        results[kind] = run_episode(
            runtime, robot, [Push(0.2, (1.5, 0.0))], BALANCE_PROTOCOL.with_changes(episode_s=2.0)
        )  # far beyond 0.4 m/s
    assert all(r.fell and r.pushes == 1 and r.time_up_s < 1.5 for r in results.values()), results
    assert results["hidden"].time_up_s == pytest.approx(results["mujoco"].time_up_s, abs=0.1)  # measured: equal


def test_the_welded_hidden_robot_still_hangs(balance):
    from realgap.envs.deploy import DeployRuntime, ZeroPolicy
    from realgap.envs.deploy.hidden_robot import HiddenRobot

    meta, _ = balance
    robot = HiddenRobot(meta, 3)  # the identification mount, as --excite builds it
    assert not robot.sim.floating and robot.fixed_base
    hang = meta.robot.start_root_pos[2] + 0.5
    assert robot.root_height() == pytest.approx(hang, abs=1e-12)
    runtime = DeployRuntime(meta, robot, ZeroPolicy(meta.action_dim))
    for _ in range(25):  # 0.5 s
        runtime.step()
    assert robot.root_height() == pytest.approx(hang, abs=1e-12) and robot.tilt() == 0.0
    assert np.abs(robot.read_torque()).max() > 0  # the drives did work against gravity
    with pytest.raises(ValueError, match="floating base"):
        robot.push((0.4, 0.0))


def test_one_seed_is_one_truth_in_both_mounts(balance):
    from realgap.envs.deploy.hidden_robot import HiddenRobot, draw_truth

    meta, _ = balance
    welded, free = HiddenRobot(meta, 3), HiddenRobot(meta, 3, fixed_base=False)
    assert welded.truth.to_dict() == free.truth.to_dict() == draw_truth(meta, 3).to_dict()
    assert welded.truth.to_dict() != draw_truth(meta, 4).to_dict()
    for field in ("dof_armature", "dof_frictionloss", "dof_damping"):  # what MuJoCo applies, per driven joint
        a, b = (getattr(r.sim.model, field)[r.sim.dof_adr] for r in (welded, free))
        np.testing.assert_array_equal(a, b)


def test_worn_drives_are_drawn_in_their_own_ranges_and_an_unknown_family_is_refused(balance):
    from realgap.envs.deploy.hidden_robot import DRIVE_FAMILIES, HiddenRobot, draw_truth

    meta, _ = balance
    default, worn = draw_truth(meta, 3), draw_truth(meta, 3, "worn")
    assert default.to_dict() == draw_truth(meta, 3, "default").to_dict()  # the default family is the old draw
    r = DRIVE_FAMILIES["worn"]
    assert r["delay_steps"][0] <= worn.delay_steps <= r["delay_steps"][1] and worn.delay_steps > default.delay_steps
    driven = meta.joint_array("armature") > 0
    for name, field, base in (
        ("kp_scale", worn.kp_scale, 1.0),
        ("kd_scale", worn.kd_scale, 1.0),
        ("viscous_nms", worn.viscous_nms, 1.0),
        ("coulomb", worn.coulomb_nm, meta.joint_array("coulomb_friction")),
        ("armature", worn.armature[driven], meta.joint_array("armature")[driven]),
        ("peak_torque", worn.peak_torque, meta.joint_array("peak_torque")),
    ):
        lo, hi = r[name]
        assert np.all(field >= lo * base - 1e-12) and np.all(field <= hi * base + 1e-12), name
    assert np.all(worn.kp_scale < default.kp_scale) and np.all(worn.peak_torque < default.peak_torque)
    assert HiddenRobot(meta, 3, fixed_base=False, drives="worn").truth.to_dict() == worn.to_dict()
    with pytest.raises(ValueError, match="unknown hidden drive family 'new'; known: default, worn"):
        draw_truth(meta, 3, "new")


def test_the_free_mount_refuses_a_robot_fixed_to_the_world():
    from realgap.envs.deploy.hidden_robot import HiddenRobot
    from realgap.envs.format import load_metadata

    with pytest.raises(ValueError, match="robot 'panda' of Realgap-Grasp-Franka-EEPoseDelta-v0 is fixed to the world"):
        HiddenRobot(load_metadata(GRASP), 3, fixed_base=False)


def test_paired_time_up_is_the_mean_and_standard_error_of_the_differences():
    from realgap.envs.deploy.episode import EpisodeResult, paired_time_up

    a = [EpisodeResult(10.0, False, 3), EpisodeResult(5.0, True, 2), EpisodeResult(7.0, True, 2)]
    b = [EpisodeResult(8.0, True, 2), EpisodeResult(5.0, True, 2), EpisodeResult(10.0, False, 3)]
    p = paired_time_up(a, b)
    # differences 2, 0, -3: mean -1/3; sample variance ((7/3)² + (1/3)² + (8/3)²) / 2 = 19/3; se = √(19/3) / √3
    assert (p.episodes, p.falls_a, p.falls_b) == (3, 2, 2)
    assert p.mean_time_up_a_s == pytest.approx(22 / 3) and p.mean_time_up_b_s == pytest.approx(23 / 3)
    assert p.diff_mean_s == pytest.approx(-1 / 3) and p.diff_se_s == pytest.approx(math.sqrt(19 / 9))
    assert math.isnan(paired_time_up(a[:1], b[:1]).diff_se_s)  # one episode: no spread to estimate
    with pytest.raises(ValueError, match="equal, non-zero counts; got 3 and 2"):
        paired_time_up(a, b[:2])


def test_a_policy_against_itself_ties_exactly_on_the_hidden_robot(balance):
    from functools import partial

    from realgap.envs.deploy.episode import paired_time_up, survival
    from realgap.envs.deploy.hidden_robot import HiddenRobot, draw_truth

    meta, policy = balance
    make_robot = partial(HiddenRobot, meta, fixed_base=False, truth=draw_truth(meta, 3))
    first = survival(meta, policy, make_robot=make_robot, **SHORT)
    again = survival(meta, policy, make_robot=make_robot, **SHORT)
    assert all(r.pushes >= 2 for r in first)  # the schedules did push
    assert first == again
    p = paired_time_up(first, again)
    assert (p.diff_mean_s, p.diff_se_s) == (0.0, 0.0)


def _script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "hidden_compare.py"), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_comparison_script_writes_paired_results(tmp_path):
    from realgap.envs.deploy.hidden_robot import draw_truth
    from realgap.envs.format import load_metadata

    out = tmp_path / "cmp.json"
    proc = _script(
        "--policy",
        str(SYMMETRY),
        "--against",
        str(BALANCE),
        "--hidden_seed",
        "3",
        "--episodes",
        "2",
        "--duration_s",
        "1",
        "--zero_action",
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "paired time up, policy - against:" in proc.stdout and "mean ± standard error" in proc.stdout
    report = json.loads(out.read_text())
    assert report["hidden_robot"]["truth"] == draw_truth(load_metadata(BALANCE), 3).to_dict()
    assert set(report["paired"]) == {"policy - against", "policy - zero", "against - zero"}
    assert len(report["per_episode"]) == 2 and set(report["per_episode"][0]) == {"pushes", "policy", "against", "zero"}
    pair = report["paired"]["policy - against"]
    policy_up = [e["policy"]["time_up_s"] for e in report["per_episode"]]
    against_up = [e["against"]["time_up_s"] for e in report["per_episode"]]
    assert pair["diff_mean_s"] == pytest.approx(np.mean(np.subtract(policy_up, against_up)))


def test_the_comparison_on_worn_drives_records_them_and_draws_who_stays_standing(tmp_path):
    import matplotlib.image

    from realgap.envs.deploy.hidden_robot import draw_truth
    from realgap.envs.format import load_metadata

    out, png = tmp_path / "worn.json", tmp_path / "worn.png"
    proc = _script(
        "--policy",
        str(BALANCE),
        "--against",
        str(BALANCE),
        "--hidden_seed",
        "3",
        "--hidden_drives",
        "worn",
        "--episodes",
        "2",
        "--duration_s",
        "1",
        "--out",
        str(out),
        "--plot",
        str(png),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["hidden_robot"]["drives"] == "worn"
    assert report["hidden_robot"]["truth"] == draw_truth(load_metadata(BALANCE), 3, "worn").to_dict()
    assert png.stat().st_size > 1024 and matplotlib.image.imread(png).ndim == 3
    bad = _script("--policy", str(BALANCE), "--against", str(BALANCE), "--hidden_drives", "new", "--episodes", "1")
    assert bad.returncode == 2 and "unknown hidden drive family 'new'" in bad.stderr, bad.stderr[-2000:]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policy", "/nonexistent"], "no policy at /nonexistent: expected an export folder with policy.onnx"),
        (["--against", str(GRASP)], "a paired comparison needs exports of one task on one robot; they differ in task"),
        (["--against", "corrupt"], "policy.onnx is not a readable ONNX model"),
        (["--episodes", "0"], "--episodes must be >= 1"),
    ],
)
def test_the_comparison_script_refuses_bad_input(args, message, tmp_path):
    (tmp_path / "policy.onnx").write_bytes(b"not an onnx graph")
    base = {"--policy": str(BALANCE), "--against": str(SYMMETRY), "--episodes": "1", "--duration_s": "1"}
    base |= {k: str(tmp_path) if v == "corrupt" else v for k, v in zip(args[::2], args[1::2], strict=True)}
    proc = _script(*[x for kv in base.items() for x in kv])
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr


def _deploy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "realgap.scripts.deploy", *args], cwd=REPO, capture_output=True, text=True, timeout=120
    )


def test_the_deploy_command_runs_pushed_episodes_on_the_free_hidden_robot():
    proc = _deploy(
        "--policy", str(BALANCE), "--robot", "hidden", "--hidden_seed", "3", "--episodes", "1", "--duration_s", "1"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "hidden G1 (default drives, seed 3, command delay 3 steps), free base" in proc.stdout
    assert "episode 1/1" in proc.stdout
    refused = _deploy("--policy", str(GRASP), "--robot", "hidden", "--episodes", "1")
    assert refused.returncode == 2 and "need a floating base" in refused.stderr, refused.stderr[-3000:]


def test_the_deploy_command_still_excites_the_welded_hidden_robot(tmp_path):
    from realgap.envs.deploy.log import load_log

    log = tmp_path / "hidden.npz"
    proc = _deploy(
        "--policy",
        str(BALANCE),
        "--robot",
        "hidden",
        "--hidden_seed",
        "3",
        "--excite",
        "left_wrist_yaw_joint",
        "--log",
        str(log),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    recorded = load_log(log)
    assert recorded.fixed_base and recorded.source == "excitation" and recorded.tau_source == "measured"
