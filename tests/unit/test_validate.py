"""The resolved training settings are range-checked in one place, before the env is built or a file is written."""

import pytest

from realgap.envs.run.factory import load_cfgs
from realgap.envs.run.overrides import apply_overrides, parse_override
from realgap.envs.run.validate import check_training_cfg, training_cfg_errors

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def task_cfgs():
    return load_cfgs("Realgap-Balance-G1-v0", "cpu", 4, 0)


def test_the_shipped_task_is_in_range(task_cfgs):
    assert training_cfg_errors(*task_cfgs) == []


@pytest.mark.parametrize(
    ("override", "text"),
    [
        ("agent.algorithm.num_learning_epochs=-2", "agent.algorithm.num_learning_epochs = -2 must be an integer >= 1"),
        ("agent.num_steps_per_env=0", "agent.num_steps_per_env = 0 must be an integer >= 1"),
        ("agent.max_iterations=0", "agent.max_iterations = 0 must be an integer >= 1"),
        ("agent.save_interval=0", "agent.save_interval = 0 must be an integer >= 1"),
        ("agent.algorithm.learning_rate=0.0", "learning_rate = 0.0 must be a finite number > 0"),
        ("env.sim.dt=-0.005", "env.sim.dt = -0.005 must be a finite number > 0"),
        ("agent.algorithm.gamma=1.5", "agent.algorithm.gamma = 1.5 must be a number in [0, 1]"),
        ("env.decimation=0", "env.decimation = 0 must be an integer >= 1"),
    ],
)
def test_an_out_of_range_setting_is_refused_with_its_key(override, text):
    env_cfg, agent_cfg = load_cfgs("Realgap-Balance-G1-v0", "cpu", 4, 0)
    apply_overrides(env_cfg, agent_cfg, [override])
    with pytest.raises(ValueError, match=text.replace("[", r"\[").replace("]", r"\]")) as err:
        check_training_cfg(env_cfg, agent_cfg)
    assert f"--set {override.split('=')[0]}=VALUE" in str(err.value)  # the fix named


@pytest.mark.parametrize("value", ["nan", ".nan", "inf", "-.inf", "-Infinity"])
def test_a_non_finite_set_value_is_refused_at_parse(value):
    with pytest.raises(ValueError, match="not a finite number"):
        parse_override(f"agent.algorithm.learning_rate={value}")
