"""G1 DDS facts: the motor map against the SDK's documented order and the MJCF; the deploy CLI's numeric refusals."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from realgap.envs.deploy.drivers import g1_dds_sim
from realgap.envs.deploy.drivers.g1_dds import G1_MOTOR_ORDER, motor_indices, quat_to_gravity_b, tilt_of
from realgap.envs.run.deploy import cli, main

pytestmark = pytest.mark.unit
POLICY = "configs/policies/balance_g1"


def test_motor_order_is_the_sdks_documented_layout() -> None:
    # unitree_sdk2 G1 29-DoF: legs L 0-5, R 6-11, waist 12-14, left arm 15-21, right arm 22-28
    assert len(G1_MOTOR_ORDER) == 29
    assert G1_MOTOR_ORDER[0] == "left_hip_pitch_joint" and G1_MOTOR_ORDER[3] == "left_knee_joint"
    assert G1_MOTOR_ORDER[6] == "right_hip_pitch_joint" and G1_MOTOR_ORDER[11] == "right_ankle_roll_joint"
    assert G1_MOTOR_ORDER[12:15] == ("waist_yaw_joint", "waist_roll_joint", "waist_pitch_joint")
    assert G1_MOTOR_ORDER[15] == "left_shoulder_pitch_joint" and G1_MOTOR_ORDER[18] == "left_elbow_joint"
    assert G1_MOTOR_ORDER[22] == "right_shoulder_pitch_joint" and G1_MOTOR_ORDER[28] == "right_wrist_yaw_joint"


def test_motor_order_names_every_mjcf_hinge_and_maps_by_name() -> None:
    mujoco = pytest.importorskip("mujoco")
    from realgap.envs.format import load_policy
    from realgap.envs.format.description import locate_description

    meta, _ = load_policy(POLICY)
    model = mujoco.MjModel.from_xml_path(str(locate_description(meta.robot.description)))
    hinges = [model.joint(j).name for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    assert sorted(hinges) == sorted(G1_MOTOR_ORDER)
    shuffled = list(reversed(meta.joint_names))
    slots = motor_indices(shuffled)
    assert [G1_MOTOR_ORDER[s] for s in slots] == shuffled


def test_motor_map_refuses_unknown_and_duplicate_joints() -> None:
    with pytest.raises(ValueError, match="not G1 29-DoF motors"):
        motor_indices(["left_hip_pitch_joint", "tail_joint"])
    with pytest.raises(ValueError, match="twice"):
        motor_indices(["left_knee_joint", "left_knee_joint"])


def test_lowstate_crc_equals_the_sdks() -> None:
    pytest.importorskip("unitree_sdk2py", reason="needs the unitree extra")
    from unitree_sdk2py.idl.default import unitree_hg_msg_dds__LowState_
    from unitree_sdk2py.utils.crc import CRC

    from realgap.envs.deploy.drivers.g1_dds import LowStateCrc

    sdk, fast, state, rng = CRC(), LowStateCrc(), unitree_hg_msg_dds__LowState_(), np.random.default_rng(0)
    for _ in range(20):  # every field group the CRC covers, random values
        state.tick, state.mode_machine, state.crc = (int(v) for v in rng.integers(0, [2**32, 256, 2**32]))
        state.imu_state.quaternion = [float(v) for v in rng.normal(size=4)]
        state.imu_state.rpy = [float(v) for v in rng.normal(size=3)]
        for m in state.motor_state:
            m.q, m.dq, m.tau_est = (float(v) for v in rng.normal(size=3))
            m.temperature = [int(v) for v in rng.integers(-100, 100, size=2)]
        state.wireless_remote = [int(v) for v in rng.integers(0, 256, size=40)]
        assert fast(state) == sdk.Crc(state)


def test_gravity_and_tilt_from_quaternion() -> None:
    assert np.allclose(quat_to_gravity_b(np.array([1.0, 0, 0, 0])), [0, 0, -1])
    half = np.pi / 4  # a 90-degree roll: gravity lies in the body's x-y plane
    q = np.array([np.cos(half), np.sin(half), 0, 0])
    assert tilt_of(q) == pytest.approx(np.pi / 2)
    g = quat_to_gravity_b(q)
    assert np.linalg.norm(g) == pytest.approx(1.0) and abs(g[2]) < 1e-9


@pytest.mark.parametrize(
    ("flags", "text"),
    [
        (["--fall_height", "nan"], "--fall_height must be a finite"),
        (["--fall_tilt", "nan"], "--fall_tilt must be a finite"),
        (["--fall_tilt", "inf"], "--fall_tilt must be a finite"),
        (["--fall_tilt", "7"], "--fall_tilt must be a finite number > 0 and <= 3.14159, got 7.0"),
        (["--fall_height", "-1"], "--fall_height must be"),
        (["--duration_s", "0"], "--duration_s must be"),
        (["--duration_s", "nan"], "--duration_s must be"),
        (["--hang_m", "inf"], "--hang_m must be"),
        (["--push_mps", "0.2,inf"], "--push_mps"),
        (["--push_mps", "nan,nan"], "--push_mps"),
        (["--robot", "unitree_g1", "--domain", "300"], "--domain"),
        (["--robot", "unitree_g1", "--watchdog_s", "0"], "--watchdog_s"),
        (["--robot", "unitree_g1", "--connect_timeout_s", "nan"], "--connect_timeout_s"),
        (["--robot", "unitree_g1", "--episodes", "2"], "one pushed episode"),
        (["--robot", "unitree_g1", "--tick_period_s", "nan"], "--tick_period_s"),
        (["--robot", "unitree_g1", "--tick_period_s", "0"], "--tick_period_s"),
    ],
)
def test_cli_refuses_bad_numbers_before_running(flags: list[str], text: str) -> None:
    argv = ["--policy", POLICY] + (["--robot", "mujoco"] if "--robot" not in flags else []) + flags
    with pytest.raises(ValueError, match=text.replace("(", r"\(")):
        main(argv)


@pytest.mark.parametrize("value", ["0", "-1", "7"])
def test_a_bad_fall_tilt_is_refused_once_by_the_protocols_rule(value: str, monkeypatch, capsys) -> None:
    # 0 once passed a ">= 0" check here and failed the protocol's "> 0"; -1 got the other check's wording
    monkeypatch.setattr(sys, "argv", ["deploy", "--policy", POLICY, "--robot", "mujoco", "--fall_tilt", value])
    with pytest.raises(SystemExit) as stop:
        cli()
    assert stop.value.code == 2
    out = capsys.readouterr()
    want = f"error: --fall_tilt must be a finite number > 0 and <= 3.14159, got {float(value)!r}"
    assert out.err.splitlines() == [want] and out.out == ""


def test_the_dds_simulators_peak_torques_follow_the_export_by_joint_name() -> None:
    from realgap.envs.format import load_verified

    meta, _ = load_verified(POLICY)
    names = list(reversed(meta.joint_names))  # the simulator's joint order need not be the export's
    peak = meta.joint_array("peak_torque", names)  # what the DDS simulator clips its torques to
    group = meta.actuator_groups[0]
    knee = group.peak_torque[group.joint_names.index("left_knee_joint")]
    assert knee > 100.0 and peak[names.index("left_knee_joint")] == knee  # the knee's drive (139 N·m on the G1)
    assert (peak > 0).all()


def test_the_simulators_command_line_is_written_once() -> None:
    argv = g1_dds_sim.command(POLICY, 7, hidden_seed=0, lockstep=True, fault=False, report=None, push_mps="0.2,0.4")
    assert argv[1:] == ["-m", "realgap.envs.deploy.drivers.g1_dds_sim", "--policy", POLICY, "--domain", "7"] + [
        "--hidden_seed",
        "0",
        "--lockstep",
        "--push_mps",
        "0.2,0.4",
    ]
