"""``--set`` config overrides (envs/run/overrides.py): a dotted key sets the field of the real PPO config, and every
malformed key, missing field or mistyped value is refused naming what exists, leaving the config untouched."""

import pytest

from realgap.envs.run.overrides import apply_overrides, parse_override

pytestmark = pytest.mark.unit


@pytest.fixture()
def cfgs():
    from realgap.tasks.balance.agent_cfg import BalancePPOCfg

    class Env:  # a stand-in env cfg: nested attributes and a dict, like Isaac Lab's configclasses
        def __init__(self):
            self.rewards = type("R", (), {})()
            self.rewards.fall = type("T", (), {})()
            self.rewards.fall.weight = -100.0
            self.rewards.fall.params = {"minimum_height": 0.45}
            self.episode_length_s = 10.0

    return Env(), BalancePPOCfg()


def test_overrides_set_nested_fields_in_their_types(cfgs):
    env, agent = cfgs
    apply_overrides(
        env,
        agent,
        [
            "agent.algorithm.num_learning_epochs=8",
            "agent.algorithm.learning_rate=3e-4",
            "env.rewards.fall.weight=-50",
            "env.rewards.fall.params.minimum_height=0.5",
            "agent.actor.hidden_dims=[128, 128]",
        ],
    )
    assert agent.algorithm.num_learning_epochs == 8 and agent.algorithm.learning_rate == 3e-4
    assert env.rewards.fall.weight == -50.0 and isinstance(env.rewards.fall.weight, float)
    assert env.rewards.fall.params["minimum_height"] == 0.5
    assert list(agent.actor.hidden_dims) == [128, 128]


@pytest.mark.parametrize(
    "item,match",
    [
        ("algorithm.gamma=0.9", "expected env.PATH=VALUE"),
        ("agent.algorithm.gamma", "expected env.PATH=VALUE"),
        ("agent.algorithm.num_learning_epoch=8", "has no field 'num_learning_epoch'.*num_learning_epochs"),
        ("agent.algo.gamma=0.9", "agent has no field 'algo'.*algorithm"),
        ("agent.algorithm.num_learning_epochs=8.5", "holds int 5, got float"),
        ("env.rewards.fall.weight=heavy", "holds float -100.0, got str"),
        ("env.episode_length_s=[1, 2", "not valid YAML"),
    ],
)
def test_bad_overrides_are_refused_by_name(cfgs, item, match):
    env, agent = cfgs
    with pytest.raises(ValueError, match=match):
        apply_overrides(env, agent, [item])
    assert agent.algorithm.num_learning_epochs == 5 and env.rewards.fall.weight == -100.0


def test_parse_reads_values_as_yaml():
    assert parse_override("env.scene.num_envs=64") == ("env", ["scene", "num_envs"], 64)
    assert parse_override("agent.run_name=abc") == ("agent", ["run_name"], "abc")


def test_a_dict_is_taken_only_where_the_field_is_annotated_to_hold_one():
    """Isaac Lab's joint action offset is ``float | dict[str, float]``: a per-joint table by name pattern is accepted
    there (a nominal pose other than the robot's default), refused on a float-only field."""
    from isaaclab.envs.mdp import JointPositionActionCfg

    class Env:
        def __init__(self):
            self.actions = type("A", (), {})()
            self.actions.joint_pos = JointPositionActionCfg(asset_name="robot", joint_names=[".*"])
            self.episode_length_s = 10.0

    env, agent = Env(), None
    apply_overrides(env, agent, ['env.actions.joint_pos.offset={".*_knee_joint": 1.5}'])
    assert env.actions.joint_pos.offset == {".*_knee_joint": 1.5}
    with pytest.raises(ValueError, match="holds float 10.0, got dict"):
        apply_overrides(env, agent, ['env.episode_length_s={"a": 1.0}'])
    assert env.episode_length_s == 10.0
