"""Unit tier: the balance task's push curriculum (tasks/balance/mdp.py) on plain tensors, no simulator.

The term reads only the termination buffers of the envs that end an episode and writes the push term's range; a
stand-in env with those fields drives it through hand-computed decisions.
"""

from types import SimpleNamespace

import pytest
import torch

from realgap.envs.dr.push import push_robot
from realgap.tasks.balance.mdp import push_curriculum

pytestmark = pytest.mark.unit
TASK = (0.2, 0.4)


def _env(num_envs: int = 8, name: str = "shove") -> SimpleNamespace:
    # the push term is found by its function (push_robot), whatever it is named
    push_cfg = SimpleNamespace(func=push_robot, params={"magnitude_mps": TASK})
    terms = {name: push_cfg, "reset_base": SimpleNamespace(func=print, params={})}
    return SimpleNamespace(
        num_envs=num_envs,
        device="cpu",
        common_step_counter=0,
        event_manager=SimpleNamespace(get_term_cfg=terms.__getitem__, active_terms={"interval": list(terms)}),
        termination_manager=SimpleNamespace(
            time_outs=torch.zeros(num_envs, dtype=torch.bool), terminated=torch.zeros(num_envs, dtype=torch.bool)
        ),
        push_cfg=push_cfg,
    )


def _term(env: SimpleNamespace, **params) -> push_curriculum:
    params = {"start_mps": (0.0, 0.2), "step": 0.25, "promote": 0.75, "demote": 0.4, "min_episodes": 4} | params
    return push_curriculum(SimpleNamespace(params=params), env)


def _end(term: push_curriculum, env: SimpleNamespace, survived: list[bool]) -> dict[str, float]:
    """End one episode in each of the first len(survived) envs: time-out where True, a fall where False."""
    env.common_step_counter += 1
    ids = torch.arange(len(survived))
    env.termination_manager.time_outs[:] = False
    env.termination_manager.terminated[:] = False
    env.termination_manager.time_outs[ids] = torch.tensor(survived)
    env.termination_manager.terminated[ids] = ~torch.tensor(survived)
    return term(env, ids)


def test_off_by_default_leaves_the_task_pushes():
    env = _env()
    term = _term(env, start_mps=None)
    assert env.push_cfg.params["magnitude_mps"] is TASK and term.level == 1.0  # untouched
    for _ in range(3):
        assert _end(term, env, [False] * 8) == {}  # falls change nothing, nothing logged
    assert env.push_cfg.params["magnitude_mps"] is TASK


def test_levels_rise_with_survival_and_fall_with_falls():
    env = _env()
    term = _term(env)
    assert env.push_cfg.params["magnitude_mps"] == [0.0, 0.2]  # level 0 from construction on
    _end(term, env, [True] * 8)  # first episodes: not counted (random initial lengths)
    assert term.level == 0.0
    _end(term, env, [True, True, True, False])  # 3/4 = 0.75 >= promote: level 0.25
    assert term.level == 0.25
    assert env.push_cfg.params["magnitude_mps"] == pytest.approx((0.05, 0.25))  # 0 + 0.25·0.2, 0.2 + 0.25·0.2
    _end(term, env, [True, False])  # only 2 episodes since the last decision: no decision yet
    assert term.level == 0.25
    _end(term, env, [False, False])  # 1 of 4 = 0.25 < demote: back to 0
    assert term.level == 0.0
    _end(term, env, [True, True, False, False])  # 0.5: between demote and promote, stays
    assert term.level == 0.0
    for _ in range(6):
        out = _end(term, env, [True] * 4)
    assert term.level == 1.0 and out == {"level": 1.0, "push_max_mps": pytest.approx(0.4)}  # capped at the task's
    assert env.push_cfg.params["magnitude_mps"] == pytest.approx(TASK)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"start_mps": (0.3, 0.2)}, "min <= max"),
        ({"start_mps": (0.0, 0.5)}, "must not exceed"),
        ({"step": 0.0}, "0 < step"),
        ({"promote": 0.3, "demote": 0.5}, "demote <= promote"),
        ({"min_episodes": 0}, "min_episodes >= 1"),
    ],
)
def test_bad_parameters_are_refused(params, match):
    with pytest.raises(ValueError, match=match):
        _term(_env(), **params)


def test_a_task_without_a_push_term_is_refused():
    env = _env()
    env.event_manager.active_terms = {"interval": ["reset_base"]}  # only a term of another type
    with pytest.raises(ValueError, match="needs a push event term"):
        _term(env)
