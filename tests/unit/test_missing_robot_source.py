"""A missing robot package names what to install; nothing is written to the asset cache."""

import pytest

from realgap.envs.robots.base import MissingRobotSourceError, RobotSource

pytestmark = pytest.mark.unit


def test_missing_package_names_the_distribution(tmp_path, monkeypatch):
    monkeypatch.setenv("REALGAP_CACHE", str(tmp_path))
    robot = RobotSource(
        name="ghost",
        package="realgap_no_such_asset_pkg",
        distribution="no-such-asset-pkg",
        mjcf_relpath="robot.xml",
        joint_names=("j1",),
    )
    from realgap.envs.sim.assets import robot_usd

    with pytest.raises(MissingRobotSourceError, match=r"pip install no-such-asset-pkg"):
        robot_usd(robot)
    assert list(tmp_path.iterdir()) == []


def test_default_pose_follows_joint_order():
    from realgap.envs.robots import G1

    pose = dict(zip(G1.joint_names, G1.default_pose(), strict=True))
    # knees-bent stance (envs/robots/g1.py): hip pitch -0.312, knee 0.669, ankle pitch -0.363 rad on both legs
    assert pose["left_knee_joint"] == pytest.approx(0.669) and pose["right_knee_joint"] == pytest.approx(0.669)
    assert pose["right_ankle_pitch_joint"] == pytest.approx(-0.363)
    assert pose["left_shoulder_roll_joint"] == pytest.approx(0.2) and pose["right_shoulder_roll_joint"] == -0.2
    assert pose["waist_yaw_joint"] == 0.0 and len(pose) == 29
