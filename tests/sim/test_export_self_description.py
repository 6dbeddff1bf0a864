"""Sim tier: every action term describes itself (``export_description()``), and the shipped policies' action metadata
comes out of a freshly built env byte for byte as recorded in ``configs/policies/*/policy.json``.

One balance export (the crouch, around another nominal pose over a ramp: the balance term's richest description) and
the grasp export (differential IK with gravity feed-forward, then the binary gripper); the env is built as evaluation
builds it, with the export's action terms (``export_actions``).
"""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from realgap.envs.format import load_metadata

pytestmark = pytest.mark.sim

POLICIES = Path(__file__).resolve().parents[2] / "configs" / "policies"


@pytest.mark.parametrize("export", ["balance_g1", "grasp_franka", "grasp_franka_hand"])
def test_shipped_action_metadata_is_redescribed_byte_for_byte(export):
    from conftest import build_env

    from realgap.envs.eval.policies import export_actions
    from realgap.envs.export.actions import action_terms

    path = POLICIES / export / "policy.json"
    meta = load_metadata(path)
    recorded = json.loads(path.read_text())["actions"]
    with build_env(meta.task, num_envs=1, seed=0, prepare=lambda cfg: export_actions(cfg, meta)) as env:
        for name in env.action_manager.active_terms:
            assert callable(getattr(env.action_manager.get_term(name), "export_description", None)), name
        actions, _ = action_terms(env, meta.actions.raw_clip)
    described = replace(meta, actions=actions).to_dict()["actions"]
    # the JSON an export writes (PolicyMetadata.to_json: indent 2), for the actions section
    assert json.dumps(described, indent=2, allow_nan=False) == json.dumps(recorded, indent=2, allow_nan=False)
