"""The library side of sim2sim.py and hidden_compare.py, called directly: inputs refused before a model is loaded,
the policy resolved from an export, the paired comparison run on the hidden G1 (plain MuJoCo C, 1 s episodes), the
standing plot. No Isaac Lab.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from realgap.envs.deploy.episode import EpisodeResult
from realgap.envs.eval.hidden_compare import HiddenCompareRequest, check_request, hidden_compare, plot_standing
from realgap.envs.sim2sim.isaac_vs_mujoco import Sim2SimRequest, default_out, resolve_policy, sim2sim

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[2]
BALANCE = REPO / "configs" / "policies" / "balance_g1_70min"


# --- sim2sim -----------------------------------------------------------------------------------------------------


def test_push_flags_parse_or_fall_back_to_the_tasks():
    from realgap.envs.deploy.flags import protocol_from_flags
    from realgap.envs.format.protocol import BALANCE_PROTOCOL

    def push(text):
        return protocol_from_flags(Sim2SimRequest(push_mps=text), BALANCE_PROTOCOL).push_mps

    assert push(None) == (0.2, 0.4)  # the task's
    assert push("0.1,0.3") == (0.1, 0.3)
    assert push("0.3,0.3") == (0.3, 0.3)  # a single magnitude
    for bad in ("0.4,0.3", "-0.1,0.3"):
        with pytest.raises(ValueError, match=rf"--push_mps needs 0 <= LO <= HI, got {bad}"):
            push(bad)
    for bad in ("0.3", "0.1,0.2,0.3"):
        with pytest.raises(ValueError, match=rf"--push_mps takes two numbers LO,HI, got '{bad}'"):
            push(bad)


def test_sim2sim_refuses_bad_counts_and_a_missing_export_before_a_model(tmp_path):
    for fields in ({"episodes": 0}, {"duration_s": 0.0}, {"open_loop_s": -1.0}):
        with pytest.raises(ValueError, match="--episodes must be >= 1, --duration_s and --open_loop_s > 0"):
            sim2sim(Sim2SimRequest(zero_action=True, **fields))
    with pytest.raises(FileNotFoundError, match="no policy.onnx at"):
        resolve_policy(Sim2SimRequest(policy=str(tmp_path)))


def test_sim2sim_resolves_an_export_or_nothing_for_the_zero_action():
    folder, checkpoint, meta, policy = resolve_policy(Sim2SimRequest(policy=str(BALANCE)))
    assert folder == BALANCE and checkpoint is None and meta.task.startswith("Realgap-Balance-G1")
    assert np.asarray(policy(np.zeros(meta.obs_dim, dtype=np.float32))).shape[-1] == meta.action_dim
    assert resolve_policy(Sim2SimRequest(zero_action=True)) == (None, None, None, None)
    assert default_out(Path("runs/x/model_3.pt")) == Path("runs/x/sim2sim.json")
    assert default_out(None).parent == Path("runs/sim2sim") and default_out(None).suffix == ".json"


# --- hidden_compare ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"episodes": 0}, "--episodes must be >= 1, got 0"),
        ({"duration_s": 0.0}, "--duration_s must be a finite number > 0, got 0.0"),
        ({"push_mps": (0.4, 0.2)}, "--push_mps needs 0 <= LO <= HI, got 0.4,0.2"),
        ({"push_mps": (-0.1, 0.2)}, "--push_mps needs 0 <= LO <= HI, got -0.1,0.2"),
        ({"push_interval_s": (0.0, 1.0)}, "--push_interval_s needs LO > 0 s, got 0"),
        ({"push_interval_s": (2.0, 1.0)}, "--push_interval_s needs 0 <= LO <= HI, got 2,1"),
        ({"fall_tilt": 4.0}, "--fall_tilt must be a finite number > 0 and <= 3.14159"),
    ],
)
def test_hidden_compare_refuses_bad_ranges_before_an_export_is_read(fields, message):
    req = HiddenCompareRequest(policy="/nonexistent", against="/nonexistent", **fields)
    with pytest.raises(ValueError, match=message):
        check_request(req)
    with pytest.raises(ValueError, match=message):
        hidden_compare(req, echo=lambda line: None)


def test_hidden_compare_pairs_a_policy_with_itself_and_the_zero_action(tmp_path):
    lines: list[str] = []
    req = HiddenCompareRequest(
        policy=str(BALANCE),
        against=str(BALANCE),
        hidden_seed=3,
        episodes=2,
        duration_s=1.0,
        push_interval_s=(0.3, 0.6),
        zero_action=True,
        out=str(tmp_path / "r.json"),
    )
    report, out = hidden_compare(req, echo=lines.append)
    assert out == tmp_path / "r.json" and json.loads(out.read_text())["paired"] == report["paired"]
    same = report["paired"]["policy - against"]
    assert (same["diff_mean_s"], same["diff_se_s"]) == (0.0, 0.0)  # one policy, one robot, one schedule: a tie
    assert set(report["paired"]) == {"policy - against", "policy - zero", "against - zero"}
    assert lines[0].startswith("[realgap] hidden G1, default drives, seed 3") and lines[-1] == f"[realgap] wrote {out}"
    assert sum(line.startswith("[realgap] paired time up") for line in lines) == 3


def test_the_standing_plot_draws_each_arm(tmp_path):
    import matplotlib.image

    fell, stood = EpisodeResult(1.0, True, 1), EpisodeResult(2.0, False, 2)
    results = {"a": [fell, stood], "b": [stood, stood]}
    plot_standing(results, {"a": "arm a", "b": "arm b"}, 2.0, tmp_path / "sub" / "s.png", "title")
    assert matplotlib.image.imread(tmp_path / "sub" / "s.png").ndim == 3
