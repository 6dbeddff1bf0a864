"""Run records: a resumed run keeps every continuation's command and git state, and an export carries them."""

from __future__ import annotations

import csv
import json
import sys

import pytest

from realgap.envs.export.writer import training_record
from realgap.envs.run.run_dir import record_resume

pytestmark = pytest.mark.unit


def test_resumes_are_appended_and_the_first_command_is_kept(tmp_path, monkeypatch):
    params = tmp_path / "params"
    params.mkdir()
    first = {"argv": ["scripts/train.py", "--max_minutes", "30"], "git": {"commit": "a" * 40}, "task": "T"}
    (params / "run.json").write_text(json.dumps(first))
    for it, budget in ((133, "75"), (400, "10")):
        monkeypatch.setattr(sys, "argv", ["scripts/train.py", "--resume", str(tmp_path), "--max_minutes", budget])
        record_resume(tmp_path, it)
    record = json.loads((params / "run.json").read_text())
    assert {k: record[k] for k in first} == first
    assert [r["from_iteration"] for r in record["resumes"]] == [133, 400]
    assert [r["argv"][-1] for r in record["resumes"]] == ["75", "10"]
    assert all(r["at"].endswith("+00:00") for r in record["resumes"])
    assert not list(params.glob("*.tmp"))

    checkpoint = tmp_path / "model_450.pt"
    checkpoint.write_bytes(b"")
    exported = training_record(checkpoint, 450)
    assert exported["argv"] == first["argv"] and exported["resumes"] == record["resumes"]
    assert exported["iteration"] == 450 and exported["git"] == first["git"]


def test_env_steps_and_training_time_are_read_from_the_run(tmp_path):
    from realgap.envs.run.run_dir import env_steps_per_iteration, training_seconds

    assert env_steps_per_iteration(tmp_path) == 0 and training_seconds(tmp_path) == {}  # nothing recorded yet
    (tmp_path / "params").mkdir()
    (tmp_path / "params" / "agent.yaml").write_text("seed: 1\nnum_steps_per_env: 24\nmax_iterations: 9\n")
    (tmp_path / "params" / "run.json").write_text(json.dumps({"num_envs_total": 256}))
    assert env_steps_per_iteration(tmp_path) == 24 * 256  # every process's envs, one rollout each
    (tmp_path / "progress.csv").write_text("iteration,collect_s,learn_s\n0,5.0,1.0\n1,4.5,0.5\n")
    assert training_seconds(tmp_path) == {0: 6.0, 1: 11.0}


def test_policy_settings_keep_the_runs_rates_and_interface_overrides(tmp_path):
    """A checkpoint is loaded again with the rates it trained at and the overrides that define its inputs, outputs
    and network (observations, actions, agent); those of the training distribution (events, rewards) are not
    re-applied: evaluation stays on the task as defined."""
    from realgap.envs.rates import RateSpec
    from realgap.envs.run.run_record import policy_settings

    (tmp_path / "params").mkdir()
    overrides = [
        "env.observations.policy.history_length=3",
        "env.events.push.params.magnitude_mps=[0.2,0.6]",
        "agent.actor.hidden_dims=[512,256,128]",
        "env.rewards.capture_point.weight=-50",
        "env.actions.arm.max_velocity=1.0",
    ]
    rates = {"physics_hz": 200, "control_hz": 100, "policy_hz": 50, "target_mode": "interpolate", "sim_dt": 0.005}
    (tmp_path / "params" / "run.json").write_text(json.dumps({"rates": rates, "overrides": overrides}))
    got = policy_settings(tmp_path / "model_10.pt")
    assert got.rates == RateSpec(200, 100, 50, "interpolate")
    assert got.overrides == (
        "env.observations.policy.history_length=3",
        "agent.actor.hidden_dims=[512,256,128]",
        "env.actions.arm.max_velocity=1.0",
    )
    assert got.actuator_model == "chain"  # a record without the field trained on the chain
    bare = policy_settings(tmp_path / "elsewhere" / "model_1.pt")  # no run record: the task's defaults
    assert bare.rates is None and bare.overrides == () and bare.actuator_model == "chain"


def test_policy_settings_carry_the_runs_actuator_model_and_refuse_an_unknown_one(tmp_path):
    """The actuator model is the robot a policy learned on (the transfer study's arms (a), (b)): Play and the export
    run it again; a record naming a model realgap does not know is refused, naming the file."""
    from realgap.envs.run.run_dir import CheckpointError
    from realgap.envs.run.run_record import policy_settings

    (tmp_path / "params").mkdir()
    run_json = tmp_path / "params" / "run.json"
    run_json.write_text(json.dumps({"actuator_model": "implicit_pd"}))
    assert policy_settings(tmp_path / "model_1.pt").actuator_model == "implicit_pd"
    run_json.write_text(json.dumps({"actuator_model": "ideal"}))
    with pytest.raises(CheckpointError, match=r"run.json': unknown actuator_model 'ideal'"):
        policy_settings(tmp_path / "model_1.pt")


def test_reward_terms_of_an_older_record_are_read_from_the_runs_own_tensorboard_log(tmp_path):
    """A progress.csv written before the runner recorded reward terms gets them from the run's TensorBoard log
    (as rsl-rl writes it: Episode_Reward/<term> at step = iteration; a resumed run's later file wins a step it
    repeats); a record that has them, or a run without a log, is left as it is."""
    from torch.utils.tensorboard import SummaryWriter

    from realgap.envs.run.run_dir import fill_reward_terms

    progress = tmp_path / "progress.csv"
    older = "iteration,collect_s,learn_s,mean_reward,mean_episode_length,success_rate\n"
    older += "".join(f"{i},1.0,0.5,2.0,250.0,0.0\n" for i in range(3))
    progress.write_text(older)
    assert fill_reward_terms(tmp_path) == [] and progress.read_text() == older  # no log: unchanged
    for name, steps in (("a", range(3)), ("b", [2])):  # b: a resumed run's file, logged iteration 2 again
        writer = SummaryWriter(log_dir=str(tmp_path), filename_suffix=name)
        for it in steps:
            writer.add_scalar("Episode_Reward/lift", 0.5 * it + (name == "b"), it)
            writer.add_scalar("Episode_Reward/grasp", 1.0, it)
            writer.add_scalar("Loss/value", 9.0, it)
        writer.close()
    assert sorted(fill_reward_terms(tmp_path)) == ["reward_grasp", "reward_lift"]
    with open(progress) as fh:
        rows = list(csv.DictReader(fh))
    header = list(rows[0])
    assert header[:5] == ["iteration", "collect_s", "learn_s", "mean_reward", "mean_episode_length"]
    assert set(header[5:7]) == {"reward_grasp", "reward_lift"} and header[7:] == ["success_rate"]  # runner's order
    assert [float(r["reward_lift"]) for r in rows] == [0.0, 0.5, 2.0]  # iteration 2 from the resumed file
    assert all(float(r["reward_grasp"]) == 1.0 and r["success_rate"] == "0.0" for r in rows)
    assert "Loss" not in progress.read_text()
    kept = progress.read_text()
    assert fill_reward_terms(tmp_path) == [] and progress.read_text() == kept  # has them: unchanged
