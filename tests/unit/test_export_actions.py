"""An export trained around another nominal pose than the task's (the crouch lever) is evaluated on the task as
defined: the eval env takes the export's action terms (``export_actions``: offset, scale and ramp per joint), and on
MuJoCo the zero-action baseline holds the task's stance (``stance_metadata``)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from realgap.envs.deploy.episode import stance_metadata
from realgap.envs.export.actions import ExportError
from realgap.envs.format import load_metadata
from realgap.envs.robots.g1 import G1_CROUCH_TARGETS

pytestmark = pytest.mark.unit

POLICIES = Path(__file__).resolve().parents[2] / "configs" / "policies"
STANDING = POLICIES / "balance_g1_70min" / "policy.onnx"  # trained around the task's stance
CROUCH = POLICIES / "balance_g1" / "policy.onnx"  # the reference: around the crouch, over a 1 s ramp


def _pattern_value(table: dict[str, float], joint: str) -> float:
    return next((v for pattern, v in table.items() if re.fullmatch(pattern, joint)), 0.0)


def _crouched(meta, ramp_s: float | None = None):
    """``meta`` as if trained around the crouch (its offset), with a ramp into it when ``ramp_s`` is given."""
    (t,) = meta.actions.terms
    params = {**t.params, "offset": [_pattern_value(G1_CROUCH_TARGETS, j) for j in t.joint_names]}
    if ramp_s is not None:
        params["ramp_s"] = ramp_s
    return replace(meta, actions=replace(meta.actions, terms=(replace(t, params=params),)))


def test_stance_metadata_makes_the_zero_action_hold_the_tasks_stance():
    """On MuJoCo the baseline of an export trained around another nominal pose is the task's zero action (the stance),
    as in Isaac Lab; for an export of the task as defined nothing changes."""
    standing, crouch = load_metadata(STANDING), load_metadata(CROUCH)
    assert stance_metadata(standing) is standing
    stance = standing.actions.terms[0].params["offset"]
    for meta in (crouch, _crouched(standing)):
        assert meta.actions.terms[0].params["offset"] != stance
        back = stance_metadata(meta).actions.terms[0]
        assert back.params["offset"] == stance  # a ramp, if any, then runs from the stance to itself


def test_export_actions_give_the_env_cfg_the_exports_terms_by_exact_joint_name():
    from isaaclab.envs.mdp import JointPositionActionCfg

    from realgap.envs.rates import RateSpec
    from realgap.envs.run.factory import check_rates, load_cfgs
    from realgap.tasks.balance.action_terms import RampedJointPositionActionCfg

    meta = _crouched(load_metadata(STANDING), ramp_s=1.0)
    from realgap.envs.eval.policies import export_actions

    (t,) = meta.actions.terms
    env_cfg, _ = load_cfgs("Realgap-Balance-G1-v0", "cpu", 4, 0)
    env_cfg.actions.joint_pos = RampedJointPositionActionCfg(
        asset_name="robot", joint_names=[".*"], scale=0.5, use_default_offset=True
    )
    # the export's rates, too (here another policy rate than the task's 50 Hz): decimation and chains follow them
    meta = replace(meta, rates=RateSpec(200.0, 200.0, 25.0, "hold"))
    export_actions(env_cfg, meta)
    assert env_cfg.decimation == 8 and RateSpec.from_dict(env_cfg.rates) == meta.rates
    check_rates(env_cfg)
    cfg = env_cfg.actions.joint_pos
    assert not cfg.use_default_offset and cfg.ramp_s == 1.0
    assert list(cfg.offset.values()) == t.params["offset"] and list(cfg.scale.values()) == t.params["scale"]
    assert all(re.fullmatch(p, j) for p, j in zip(cfg.offset, t.joint_names, strict=True))  # each name its own key
    # a task whose term has no ramp cannot run an export that ramps; a missing term is named
    env_cfg.actions.joint_pos = JointPositionActionCfg(asset_name="robot", joint_names=[".*"])
    with pytest.raises(ExportError, match="ramps into its offset over 1 s.*has no ramp_s"):
        export_actions(env_cfg, meta)
    with pytest.raises(ExportError, match="'joint_pos' is not an action term"):
        export_actions(SimpleNamespace(actions=SimpleNamespace()), meta)


def test_an_export_whose_rates_disagree_with_its_physics_step_is_refused():
    """The export load path: ``rates`` and the recorded ``simulator.physics_dt`` must agree (read_export and
    export_actions check it before an env is built)."""
    from realgap.envs.eval.policies import check_export_rates, export_actions

    meta = load_metadata(STANDING)
    check_export_rates(meta)  # the shipped export agrees with itself
    edited = replace(meta, simulator={**meta.simulator, "physics_dt": 0.002})
    with pytest.raises(ExportError, match=r"physics_dt = 0.002 s disagrees with its rates .*sim_dt 0.005 s"):
        check_export_rates(edited)
    with pytest.raises(ExportError, match="physics_dt = 0.002 s disagrees"):
        export_actions(SimpleNamespace(actions=SimpleNamespace()), edited)
