"""The training engine (Newton + MuJoCo-Warp, as the tasks build it) against MuJoCo C on the canonical scenes: the grasp
task's object resting on its table with its centre of mass 0 / 5 / 10 mm off centre, and dropped 2 cm. Tolerances are
``engine_agreement.TOLERANCES``, fixed before the first comparison ran."""

import pytest

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("index", range(4))
def test_training_engine_agrees_with_mujoco_c(index):
    from realgap.envs.eval.engine_agreement import CANONICAL_SCENES, compare_scene

    row = compare_scene(CANONICAL_SCENES[index])
    assert all(row["agree"].values()), row
    # the bar: the object rests (< 1e-3 rad/s) on its four corners in the training engine
    assert row["training_engine"]["max_angular_speed"] < 1e-3
    assert row["training_engine"]["contacts"] == 4.0


def test_every_task_physics_builds_the_exact_box_box_solver():
    from realgap.envs.sim.mjwarp import NewtonExactBoxBoxManager
    from realgap.envs.sim.physics import newton_physics

    physics = newton_physics()
    assert physics.class_type is NewtonExactBoxBoxManager
