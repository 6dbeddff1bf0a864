"""The training engine (Newton + MuJoCo-Warp, as the tasks build it) against MuJoCo C on the canonical scenes: the grasp
task's object resting on its table with its centre of mass 0 / 5 / 10 mm off centre and dropped 2 cm, held lifted by the
Panda hand, the G1 standing on its soles and pushed. Tolerances are ``engine_agreement.TOLERANCES``, fixed before the
first comparison ran."""

import pytest

pytestmark = pytest.mark.sim


AGREEING = (
    "object at rest, CoM centred",
    "object at rest, CoM 5 mm off",
    "object at rest, CoM 10 mm off",
    "object dropped 2 cm",
    "object held by the Panda hand, lifted",
    "G1 standing on its soles",
)


@pytest.mark.parametrize("name", AGREEING)
def test_training_engine_agrees_with_mujoco_c(name):
    from realgap.envs.sim2sim.engine_agreement import compare_scene
    from realgap.envs.sim2sim.engine_scenes import CANONICAL_SCENES

    scene = next(s for s in CANONICAL_SCENES if s.name == name)
    row = compare_scene(scene)
    assert all(row["agree"].values()), row
    if scene.robot == "box":
        # the bar: the object rests (< 1e-3 rad/s) on its four corners in the training engine
        assert row["training_engine"]["max_angular_speed"] < 1e-3
        assert row["training_engine"]["contacts"] == 4.0
    elif scene.robot == "hold":
        # the eight pad boxes against the object, four corners each; the squeeze ~ 2 × kp × 24.65 mm (22.36 N)
        assert row["training_engine"]["contacts"] == 32.0
        assert 20.0 < row["training_engine"]["normal_force_n"] < 25.0
    else:
        assert row["training_engine"]["contacts"] == 8.0  # the G1's eight sole spheres, as in MuJoCo C


def test_every_scene_but_the_open_one_is_checked():
    from realgap.envs.sim2sim.engine_scenes import CANONICAL_SCENES

    assert {s.name for s in CANONICAL_SCENES if s.push_mps == 0} == set(AGREEING)


def test_inverse_weights_of_a_simple_body_leave_out_its_armature_in_mujoco_c_only():
    """The upstream report's second table (docs/results/engine_agreement.md): a body on one slide joint off the world
    is "simple" in MuJoCo C, whose inverse weight then ignores the joint's armature; MuJoCo-Warp's set_const_0 (which
    Newton runs) includes it. If this fails, the engines now agree: the hold scene's stand-in servo may go."""
    from realgap.envs.sim2sim.engine_agreement import arm_finger_invweights, simple_body_invweights

    rows = {r["armature"]: r for r in simple_body_invweights()}
    assert rows[0.0]["mujoco_c"] == pytest.approx(rows[0.0]["mujoco_warp"], rel=1e-5)  # 1/m = 66.67 both
    assert rows[0.1]["mujoco_c"] == pytest.approx(1 / 0.015, rel=1e-5)  # 1/m: the armature left out
    assert rows[0.1]["mujoco_warp"] == pytest.approx(1 / 0.115, rel=1e-5)  # 1/(m + armature)
    # the tasks' fingers hang on the arm: no simple body, and there the engines agree
    fingers = arm_finger_invweights()
    assert len(fingers["mujoco_c"]) == 2
    assert fingers["mujoco_c"] == pytest.approx(fingers["mujoco_warp"], rel=1e-5)


def test_the_pushed_g1_stays_up_in_both_and_its_paths_part():
    """The open disagreement (docs/results/engine_agreement.md): after a 0.2 m/s push both engines keep the G1 up with
    the same penetration and load, yet their pelvis paths part by more than the 0.2 mm bound within 1 s."""
    from realgap.envs.sim2sim.engine_agreement import compare_scene
    from realgap.envs.sim2sim.engine_scenes import CANONICAL_SCENES

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
