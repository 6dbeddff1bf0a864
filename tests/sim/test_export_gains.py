"""``play --policy`` runs the export's own gains or refuses: the shipped balance export fits its Play env as
exported, and the same export with one joint's kp changed (30 instead of 300) is refused naming joint and values."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

pytestmark = pytest.mark.sim

POLICY = Path(__file__).resolve().parents[2] / "configs" / "policies" / "balance_g1"


def test_play_policy_runs_the_exports_gains_or_refuses():
    from conftest import build_env

    from realgap.envs.eval.policies import export_actions, exported_policy, read_export
    from realgap.envs.export.metadata import ExportError, check_gains
    from realgap.tasks import play_task

    meta, onnx_path = read_export(POLICY)
    group = meta.actuator_groups[0]
    knee = group.joint_names.index("left_knee_joint")
    kp = list(group.kp)
    kp[knee] = kp[knee] / 10
    weak = dataclasses.replace(
        meta, actuator_groups=(dataclasses.replace(group, kp=tuple(kp)), *meta.actuator_groups[1:])
    )
    with build_env(play_task(meta.task), num_envs=4, seed=0, prepare=lambda cfg: export_actions(cfg, meta)) as env:
        exported_policy(env, meta, onnx_path)  # the shipped export: its gains are the env's
        with pytest.raises(ExportError, match=r"kp of left_knee_joint: the export has 30, the env 300"):
            check_gains(weak, env)
