"""The ``joint_position_measured`` action term (the balance task's ``relative_to="measured"``): targets set about the
joint positions read at each policy step. Its format entry, the deploy runtime's equation, the zero-action baseline
(the stance, not wherever the robot is) and the Play env an export of it configures."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from isaaclab.envs.mdp import JointPositionActionCfg

from realgap.envs.deploy.actions import ActionMapper
from realgap.envs.deploy.episode import stance_metadata
from realgap.envs.export.actions import ExportError
from realgap.envs.format import load_metadata
from realgap.envs.format.actions import ActionTerm
from realgap.envs.format.schema import MetadataError
from realgap.envs.format.terms import joint_position_measured

pytestmark = pytest.mark.unit

STANDING = Path(__file__).resolve().parents[2] / "configs" / "policies" / "balance_g1_70min" / "policy.onnx"


def _measured(meta, scale: float = 0.25, clip: tuple[float, float] | None = None):
    """``meta`` (a one-term joint-position export) with its term set about the measured joint positions."""
    (t,) = meta.actions.terms
    n = len(t.joint_names)
    bounds = None if clip is None else np.tile(np.asarray(clip, dtype=np.float32), (1, n, 1))
    d = joint_position_measured(t.joint_names, scale, bounds)
    term = ActionTerm(t.name, d["type"], t.start, t.stop, d["joint_names"], d["params"], d["equation"], d["units"])
    return replace(meta, actions=replace(meta.actions, terms=(term,)))


def test_the_runtime_sets_targets_about_the_joint_positions_read_at_that_step():
    meta = _measured(load_metadata(STANDING), scale=0.25, clip=(-1.0, 1.0))
    (t,) = meta.actions.terms
    assert t.type == "joint_position_measured" and "q[j] + scale[j]" in t.equation
    rng = np.random.default_rng(0)
    mapper = ActionMapper(meta)
    n = len(meta.joint_names)
    for _ in range(3):  # no state: each step's targets depend on that step's reading only
        q, a = rng.uniform(-0.8, 0.8, n), rng.uniform(-4.0, 4.0, t.dim)
        q_target = np.zeros(n)
        mapper.apply(a, q_target, q)
        idx = [meta.joint_names.index(j) for j in t.joint_names]
        assert np.allclose(q_target[idx], np.clip(q[idx] + 0.25 * a, -1.0, 1.0))
    zero = np.zeros(n)
    mapper.apply(np.zeros(t.dim), zero, q)
    assert np.allclose(zero[idx], q[idx])  # a zero action holds the robot where it is
    with pytest.raises(ValueError, match=r"'joint_pos' \(joint_position_measured\) needs the measured joint positions"):
        mapper.apply(np.zeros(t.dim), zero, None)


def test_the_format_needs_its_scale_and_bounds():
    (t,) = _measured(load_metadata(STANDING)).actions.terms
    with pytest.raises(MetadataError, match="params lack 'scale'"):
        replace(t, params={k: v for k, v in t.params.items() if k != "scale"})


def test_its_zero_action_baseline_is_the_stance():
    """The zero policy of a measured export would hold wherever the robot sags to; its baseline is the task's stance:
    the offset term at the default pose with the same scale."""
    standing = load_metadata(STANDING)
    meta = _measured(standing, scale=0.3)
    (back,) = stance_metadata(meta).actions.terms
    assert back.type == "joint_position_offset" and back.params["scale"] == [0.3] * len(back.joint_names)
    pose = [standing.default_joint_pos[standing.joint_names.index(j)] for j in back.joint_names]
    assert back.params["offset"] == pose


def test_play_of_a_measured_export_sets_the_tasks_term_about_the_measured_positions():
    from realgap.envs.eval.policies import export_actions
    from realgap.envs.run.factory import load_cfgs
    from realgap.tasks.balance.action_terms import RampedJointPositionActionCfg

    meta = _measured(load_metadata(STANDING), scale=0.3)
    env_cfg, _ = load_cfgs("Realgap-Balance-G1-v0", "cpu", 4, 0)
    assert isinstance(env_cfg.actions.joint_pos, RampedJointPositionActionCfg)
    export_actions(env_cfg, meta)
    cfg = env_cfg.actions.joint_pos
    assert cfg.relative_to == "measured" and set(cfg.scale.values()) == {0.3}
    env_cfg.actions.joint_pos = JointPositionActionCfg(asset_name="robot", joint_names=[".*"])  # Isaac Lab's own
    with pytest.raises(ExportError, match="about the measured joint positions.*no relative_to"):
        export_actions(env_cfg, meta)
