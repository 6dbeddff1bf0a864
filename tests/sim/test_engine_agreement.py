"""The training engine (Newton + MuJoCo-Warp, as the tasks build it) against MuJoCo C on the canonical scenes: the grasp
task's object resting on its table with its centre of mass 0 / 5 / 10 mm off centre and dropped 2 cm, the G1 standing
on its soles and pushed. Tolerances are ``engine_agreement.TOLERANCES``, fixed before the first comparison ran."""

import pytest

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("index", range(5))
def test_training_engine_agrees_with_mujoco_c(index):
    from realgap.envs.sim2sim.engine_agreement import CANONICAL_SCENES, compare_scene

    scene = CANONICAL_SCENES[index]
    row = compare_scene(scene)
    assert all(row["agree"].values()), row
    if scene.robot == "box":
        # the bar: the object rests (< 1e-3 rad/s) on its four corners in the training engine
        assert row["training_engine"]["max_angular_speed"] < 1e-3
        assert row["training_engine"]["contacts"] == 4.0
    else:
        assert row["training_engine"]["contacts"] == 8.0  # the G1's eight sole spheres, as in MuJoCo C


def test_the_pushed_g1_stays_up_in_both_and_its_paths_part():
    """The open disagreement (docs/results/engine_agreement.md): after a 0.2 m/s push both engines keep the G1 up with
    the same penetration and load, yet their pelvis paths part by more than the 0.2 mm bound within 1 s."""
    from realgap.envs.sim2sim.engine_agreement import CANONICAL_SCENES, compare_scene

    row = compare_scene(next(s for s in CANONICAL_SCENES if s.push_mps > 0))
    for engine in ("training_engine", "mujoco_c"):
        assert row[engine]["final_root_z_m"] > 0.75  # standing (the keyframe's pelvis is at 0.79 m)
    assert row["agree"]["max_penetration_m"] and row["agree"]["normal_force_n"]
    # if this starts failing, the engines now agree on the pushed G1: move the row into the test above
    assert not row["agree"]["position_m"]


def test_every_task_physics_builds_the_exact_box_box_solver():
    from realgap.envs.sim.mjwarp import NewtonExactBoxBoxManager
    from realgap.envs.sim.physics import newton_physics

    physics = newton_physics()
    assert physics.class_type is NewtonExactBoxBoxManager
