"""Sim tier: the library functions behind play.py and push_headings.py, called directly on 4 kitless CPU envs.

The zero action holds the stance through a 0.5 s episode (it stands 2.5 s and more without pushes; the task's first push
comes after 3 s), and the push log of a short zero-action rollout is written as the report the script prints.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.sim
REPO = Path(__file__).resolve().parents[2]


def test_play_rolls_the_zero_action_out_and_records_what_it_prints(tmp_path):
    from realgap.envs.eval.play import PlayRequest, play

    lines: list[str] = []
    req = PlayRequest(
        task="Realgap-Balance-G1-v0",
        zero_action=True,
        episodes=4,
        num_envs=4,
        device="cpu",
        episode_s=0.5,
        json=str(tmp_path / "play.json"),
    )
    record = play(req, echo=lines.append)
    assert record["episodes"] == 4 and record["episode_s"] == 0.5 and record["policy"] == "zero action"
    assert record["survival_rate"] == 1.0  # 0.5 s of standing: no fall, no push yet
    assert lines[0] == "[realgap] Realgap-Balance-G1-Play-v0 | zero action | 4 episodes of 0.5 s"
    assert any(line.startswith("[realgap] survival=1.000 (95 % CI") for line in lines)
    assert json.loads((tmp_path / "play.json").read_text())["summary"]["survival"]["value"] == 1.0


def test_push_headings_logs_a_short_rollout_into_its_report(tmp_path):
    from realgap.envs.eval.push.headings_run import PushHeadingsRequest, push_headings, report_lines

    req = PushHeadingsRequest(
        policy=str(REPO / "configs/policies/balance_g1"),
        zero_action=True,
        num_envs=4,
        steps=100,
        out=str(tmp_path / "ph.json"),
    )
    report, out = push_headings(req)
    assert json.loads(out.read_text()) == json.loads(json.dumps(report))
    assert report["policy"] == "zero action" and report["num_envs"] == 4 and report["steps"] == 100
    assert report["summary"]["pushes"] == sum(r["pushes"] for r in report["rows"])  # every push binned once
    assert len(report_lines(report)) == 2 + len(report["rows"])
