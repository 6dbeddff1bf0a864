"""G1 and Panda datasheets: joint coverage, published numbers, reflected inertia, explicit stability at 5 ms."""

import numpy as np
import pytest

from realgap.actuators import ActuatorChain, ActuatorSpec, ChainTiming, resolve_joint_specs
from realgap.envs.robots.g1 import G1_ACTUATORS, G1_ACTUATORS_BANDWIDTH
from realgap.envs.robots.panda import PANDA_ACTUATORS

pytestmark = pytest.mark.unit

# Joint order of Menagerie unitree_g1/g1.xml (29 actuated joints).
G1_JOINTS = (
    [
        f"{side}_{j}"
        for side in ("left", "right")
        for j in (
            "hip_pitch_joint",
            "hip_roll_joint",
            "hip_yaw_joint",
            "knee_joint",
            "ankle_pitch_joint",
            "ankle_roll_joint",
        )
    ]
    + ["waist_yaw_joint", "waist_roll_joint", "waist_pitch_joint"]
    + [
        f"{side}_{j}"
        for side in ("left", "right")
        for j in (
            "shoulder_pitch_joint",
            "shoulder_roll_joint",
            "shoulder_yaw_joint",
            "elbow_joint",
            "wrist_roll_joint",
            "wrist_pitch_joint",
            "wrist_yaw_joint",
        )
    ]
)
PANDA_JOINTS = [f"joint{i}" for i in range(1, 8)] + ["finger_joint1", "finger_joint2"]


@pytest.mark.unit
def test_g1_every_joint_has_exactly_one_spec_with_published_limits():
    assert len(G1_JOINTS) == 29
    specs = dict(zip(G1_JOINTS, resolve_joint_specs(G1_JOINTS, G1_ACTUATORS), strict=True))
    # Unitree g1_29dof_rev_1_0.urdf / mjlab effort limits, N·m
    expected_peak = {
        "hip_pitch": 88,
        "hip_roll": 139,
        "hip_yaw": 88,
        "knee": 139,
        "ankle_pitch": 50,
        "ankle_roll": 50,
        "waist_yaw": 88,
        "waist_roll": 50,
        "waist_pitch": 50,
        "shoulder_pitch": 25,
        "shoulder_roll": 25,
        "shoulder_yaw": 25,
        "elbow": 25,
        "wrist_roll": 25,
        "wrist_pitch": 5,
        "wrist_yaw": 5,
    }
    for joint, spec in specs.items():
        key = joint.removeprefix("left_").removeprefix("right_").removesuffix("_joint")
        assert spec.peak_torque == expected_peak[key], joint
        assert spec.continuous_torque <= spec.peak_torque
    assert specs["left_knee_joint"].velocity_limit == 20.0
    assert specs["left_wrist_yaw_joint"].velocity_limit == 22.0


@pytest.mark.unit
def test_g1_reflected_inertias_match_mjlab():
    # mjlab g1_constants armatures, kg·m² (two-stage planetary sums; 2×5020 for ankles and waist roll/pitch)
    expected = {
        "hip_pitch_yaw_waist_yaw": 0.010177520,
        "hip_roll_knee": 0.025101925,
        "arms": 0.003609725,
        "wrists": 0.00425,
        "ankles": 2 * 0.003609725,
        "waist_roll_pitch": 2 * 0.003609725,
    }
    for key, value in expected.items():
        assert G1_ACTUATORS[key].reflected_inertia == pytest.approx(value, rel=1e-6), key


@pytest.mark.unit
def test_g1_gains_measured_and_bandwidth_variant():
    assert (G1_ACTUATORS["hip_roll_knee"].kp, G1_ACTUATORS["hip_roll_knee"].kd) == (300.0, 5.0)
    assert (G1_ACTUATORS["ankles"].kp, G1_ACTUATORS["ankles"].kd) == (300.0, 2.0)
    assert (G1_ACTUATORS["arms"].kp, G1_ACTUATORS["arms"].kd) == (100.0, 1.0)
    # mjlab rule 10 Hz, ζ = 2 on 7520-22: kp = 0.025101925·(20π)² = 99.098, kd = 4·0.025101925·20π = 6.3085
    knee = G1_ACTUATORS_BANDWIDTH["hip_roll_knee"]
    assert knee.kp == pytest.approx(99.098, rel=1e-4)
    assert knee.kd == pytest.approx(6.3085, rel=1e-4)


@pytest.mark.unit
@pytest.mark.parametrize("table", [G1_ACTUATORS, G1_ACTUATORS_BANDWIDTH, PANDA_ACTUATORS])
def test_default_gains_stable_with_explicit_pd_at_5ms(table):
    for key, spec in table.items():
        # with the friction slope (chain applies friction) and without
        assert spec.explicit_stability_margin(0.005) < 1.0, key
        assert spec.explicit_stability_margin(0.005, include_friction=False) < 1.0, key
        # bandwidth variant: stable on the reflected inertia alone (no link inertia credited)
        if table is G1_ACTUATORS_BANDWIDTH:
            refl = (spec.kp * 0.005**2 + 2 * spec.kd * 0.005) / (4 * spec.reflected_inertia)
            assert refl == pytest.approx(0.6530, abs=1e-3), key


@pytest.mark.unit
def test_panda_specs():
    specs = resolve_joint_specs(PANDA_JOINTS, PANDA_ACTUATORS)
    assert [s.peak_torque for s in specs] == [87.0] * 4 + [12.0] * 3 + [140.0] * 2
    assert [s.velocity_limit for s in specs[:7]] == [2.175] * 4 + [2.61] * 3
    assert resolve_joint_specs(["panda_joint4"], PANDA_ACTUATORS)[0].name == "panda_joint4"  # URDF names too
    # Gaz et al. 2019, joint 1: φ1 = 0.54615, φ2 = 5.1181 -> f_c = 0.273075 N·m, v_s = 0.390770 rad/s
    assert specs[0].coulomb_friction == pytest.approx(0.273075)
    assert specs[0].friction_velocity_scale == pytest.approx(0.390770, rel=1e-5)
    assert all(s.reflected_inertia == 0.1 for s in specs)


@pytest.mark.unit
@pytest.mark.parametrize(("table", "joints"), [(G1_ACTUATORS, G1_JOINTS), (PANDA_ACTUATORS, PANDA_JOINTS)])
def test_datasheet_chain_builds_and_round_trips(table, joints):
    specs = resolve_joint_specs(joints, table)
    chain = ActuatorChain.from_specs(
        specs, ChainTiming(0.005, 4), 8, generator=np.random.default_rng(0), apply_friction=True
    )
    # a held 0.02 rad position error at rest, past any command delay: tau = clip(kp·e, ±peak) per joint's datasheet
    # spec (the servo's D term and the friction are zero at zero velocity)
    target, zero = np.full((8, len(joints)), 0.02), np.zeros((8, len(joints)))
    for _ in range(20):
        out = chain.compute(target, zero, zero, zero)
    kp = np.array([s.kp for s in specs])
    peak = np.array([s.peak_torque for s in specs])
    np.testing.assert_allclose(
        out.tau_applied, np.broadcast_to(np.minimum(kp * 0.02, peak), (8, len(joints))), rtol=1e-9
    )
    for spec in table.values():
        assert ActuatorSpec.from_dict(spec.to_dict()) == spec
