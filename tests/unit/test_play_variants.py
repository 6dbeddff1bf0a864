"""Every task id has an evaluation variant: play.py and evaluate.py evaluate a grasp policy of any action space from
the task's normal resets (no reverse-curriculum states), never in the training variant."""

import pytest

pytestmark = pytest.mark.unit


def test_every_grasp_action_space_has_its_play_variant():
    from realgap.envs.run.factory import load_cfgs
    from realgap.tasks import play_task
    from realgap.tasks.grasp import ACTION_SPACE_IDS

    for space, task in ACTION_SPACE_IDS.items():
        play = play_task(task)
        assert play == task.replace("-v0", "-Play-v0"), play
        env_cfg, _ = load_cfgs(play, "cpu")
        assert env_cfg.action_space_info["name"] == space  # the same interface as the policy was trained on
        assert env_cfg.events.reset_from_states is None and env_cfg.scene.num_envs == 32
    assert play_task("Realgap-Balance-G1-v0") == "Realgap-Balance-G1-Play-v0"
