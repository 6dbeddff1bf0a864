"""The SRBD balance law both engines call (envs/srbd/law.py) and the Isaac Lab runner's pure parts (joint mapping by
name, raw actions of a joint-position term); pinocchio on the G1 MJCF, no simulator."""

import numpy as np
import pytest
import torch

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def law():
    from realgap.envs.robots import G1
    from realgap.envs.srbd.law import BalanceLaw

    return BalanceLaw(G1.mjcf_path(), G1.joint_names)


def test_joint_index_reorders_by_name_and_refuses_unknown_or_repeated_names():
    from realgap.envs.srbd.law import joint_index

    source = ["a", "b", "c", "d"]
    idx = joint_index(source, ["c", "a", "d", "b"])
    assert idx.tolist() == [2, 0, 3, 1]
    values = np.array([10.0, 20.0, 30.0, 40.0])  # per joint of `source`
    assert values[idx].tolist() == [30.0, 10.0, 40.0, 20.0]  # the same joints' values in the target's order
    with pytest.raises(ValueError, match=r"\['e'\] are not among"):
        joint_index(source, ["a", "e"])
    with pytest.raises(ValueError, match="unique"):
        joint_index(["a", "a"], ["a"])


def test_law_joint_order_follows_the_names_it_is_given(law):
    from realgap.envs.robots import G1
    from realgap.envs.srbd.law import BalanceLaw

    names = list(reversed(G1.joint_names))
    other = BalanceLaw(G1.mjcf_path(), names)
    q, v = law.pin_state(
        np.array([0, 0, 0.6]),
        np.array([1.0, 0, 0, 0]),
        np.zeros(3),
        np.zeros(3),
        np.arange(29) * 0.01,
        np.arange(29) * 0.1,
    )
    q2, v2 = other.pin_state(
        np.array([0, 0, 0.6]),
        np.array([1.0, 0, 0, 0]),
        np.zeros(3),
        np.zeros(3),
        np.arange(29)[::-1] * 0.01,
        np.arange(29)[::-1] * 0.1,
    )
    np.testing.assert_array_equal(q, q2)  # the same joint gets the same value whatever the order it came in
    np.testing.assert_array_equal(v, v2)
    knee = list(G1.joint_names).index("left_knee_joint")
    assert law.q_nom_end[knee] == other.q_nom_end[names.index("left_knee_joint")] == pytest.approx(1.669)
    with pytest.raises(ValueError, match="not in"):
        BalanceLaw(G1.mjcf_path(), ["left_knee_joint", "no_such_joint"])


def test_pin_state_puts_base_velocities_in_the_base_frame(law):
    # base yawed +90°: quaternion (w, x, y, z) = (cos 45°, 0, 0, sin 45°); base x axis = world y
    s = np.sqrt(0.5)
    q, v = law.pin_state(
        np.array([1.0, 2.0, 0.6]),
        np.array([s, 0.0, 0.0, s]),
        np.array([1.0, 0.0, 0.0]),
        np.array([0.0, 2.0, 0.0]),
        np.zeros(29),
        np.zeros(29),
    )
    np.testing.assert_allclose(q[:7], [1.0, 2.0, 0.6, 0.0, 0.0, s, s])  # pinocchio's q stores (x, y, z, w)
    np.testing.assert_allclose(v[:3], [0.0, -1.0, 0.0], atol=1e-12)  # world +x is base -y
    np.testing.assert_allclose(v[3:6], [2.0, 0.0, 0.0], atol=1e-12)  # world +y is base +x


def test_law_in_the_crouch_at_rest_carries_the_weight_inside_the_friction_pyramids(law):
    from realgap.envs.robots.g1 import G1_CROUCH_ROOT_HEIGHT

    root = np.array([0.0, 0.0, G1_CROUCH_ROOT_HEIGHT - 0.005])  # sole spheres (r 5 mm) touching: centres below 12 mm
    q, v = law.pin_state(root, np.array([1.0, 0, 0, 0]), np.zeros(3), np.zeros(3), law.q_nom_end, np.zeros(29))
    data = law.new_data()
    ref = law.reference(data, q)
    tau, forces = law.torques(data, q, v, 2.0, ref)  # after the ramp: hold the crouch
    assert forces.shape == (8, 3)  # all four corners of both soles touch
    # at rest, CoM 5 mm below the crouch's: F_z = M (g + kp_com 0.005 m) = 33.34 (9.81 + 0.2) = 333.7 N
    assert forces[:, 2].sum() == pytest.approx(33.34 * (9.81 + 40.0 * 0.005), rel=2e-3)
    assert (forces[:, 2] >= -1e-9).all() and (np.abs(forces[:, :2]) <= law.mu * forces[:, 2:3] + 1e-6).all()
    knee = list(law.joint_names).index("left_knee_joint")
    assert tau[knee] == pytest.approx(-28.0, abs=6.0)  # the crouch's static knee torque (envs/robots/g1.py: -28 N·m)
    kp, peak = np.full(29, 100.0), np.full(29, 20.0)
    target = law.targets(tau, 2.0, ref, kp, peak)
    np.testing.assert_allclose(target, law.q_nom_end + np.clip(tau, -20.0, 20.0) / 100.0)
    np.testing.assert_allclose(law.targets(tau, 0.0, ref, kp, peak), ref.q_nom_start + np.clip(tau, -20, 20) / 100)


def test_law_refuses_bad_settings():
    from realgap.envs.robots import G1
    from realgap.envs.srbd.law import BalanceLaw

    with pytest.raises(ValueError, match="mu must be > 0"):
        BalanceLaw(G1.mjcf_path(), G1.joint_names, mu=0.0)


def test_raw_actions_solve_the_term_for_its_targets():
    from realgap.envs.eval.srbd.lab import raw_actions

    q_target = torch.tensor([[0.5, -0.2], [0.1, 0.3]])
    offset = torch.tensor([[0.4, 0.0], [0.0, 0.1]])
    scale = torch.tensor([0.25, 0.5])
    a = raw_actions(q_target, offset, scale)
    torch.testing.assert_close(a, torch.tensor([[0.4, -0.4], [0.4, 0.4]]))  # (0.5-0.4)/0.25 = 0.4, ...
    torch.testing.assert_close(offset + scale * a, q_target)  # the term's q = offset + scale a gives the targets back
    with pytest.raises(ValueError, match="zero scale"):
        raw_actions(q_target, offset, torch.tensor([0.25, 0.0]))


def test_term_values_read_a_number_or_a_regex_table_per_joint():
    from realgap.envs.eval.srbd.lab import term_values

    names = ["left_knee_joint", "right_knee_joint", "waist_yaw_joint"]
    assert term_values(0.25, names, 1.0).tolist() == [0.25, 0.25, 0.25]
    assert term_values({".*_knee_joint": 0.5}, names, 1.0).tolist() == [0.5, 0.5, 1.0]  # unmatched: the default
    with pytest.raises(ValueError):
        term_values({".*_knee_joint": 0.5, "left_.*": 0.1}, names, 1.0)  # two patterns for one joint


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"episodes": 0}, "episodes and num_envs must be >= 1"),
        ({"num_envs": 0}, "episodes and num_envs must be >= 1"),
        ({"factors": {"no_such_factor": (1.0,)}}, "unknown factor"),
        ({"factors": {"payload_kg": (-1.0,)}}, "outside its admissible range"),
    ],
)
def test_lab_evaluation_refuses_bad_input_before_building_anything(tmp_path, kwargs, message):
    from realgap.envs.eval.srbd.balance import lab_evaluate

    with pytest.raises(ValueError, match=message):
        lab_evaluate("configs/policies/balance_g1", tmp_path / "out", **kwargs)
    assert not (tmp_path / "out").exists()
