"""``env_cfg.rates`` is a run's one source of rates: config resolution derives the physics step, the decimation and
every actuator chain from it; ``--set`` cannot move them away; every load path (resume, play / evaluate / export of a
checkpoint, an export's own metadata) builds the rates with ``RateSpec.from_dict`` and refuses a record whose
physics step or decimation disagrees with them, naming the file and both values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from realgap.envs.rates import RateSpec, load_rate_profile
from realgap.envs.run.factory import check_rates, load_cfgs
from realgap.envs.run.overrides import apply_overrides
from realgap.envs.run.resume import prepare_resume
from realgap.envs.run.run_dir import CheckpointError, write_params
from realgap.envs.run.run_record import policy_settings, recorded_rates
from realgap.envs.run.training import TrainRequest

pytestmark = pytest.mark.unit
TASK = "Realgap-Balance-G1-v0"


def _chains(env_cfg) -> list[dict]:
    return [act.rates for act in env_cfg.scene.robot.actuators.values()]


def test_config_resolution_derives_everything_from_the_rate_spec():
    env_cfg, _ = load_cfgs(TASK, "cpu", 4, 0, rates="servo_100hz")
    spec = load_rate_profile("servo_100hz")
    assert RateSpec.from_dict(env_cfg.rates) == spec
    assert (env_cfg.sim.dt, env_cfg.decimation, env_cfg.sim.render_interval) == (0.005, 4, 4)
    assert _chains(env_cfg) and all(RateSpec.from_dict(r) == spec for r in _chains(env_cfg))  # servo 100 Hz
    assert check_rates(env_cfg) == spec


@pytest.mark.parametrize(
    ("override", "text"),
    [
        ("env.decimation=2", "decimation = 2 but the rate spec says 4"),
        ("env.sim.dt=0.002", "sim.dt = 0.002 s but the rate spec says physics 200"),
        ("env.rates.policy_hz=25", "decimation=4 disagrees with the rates, which give 8"),
    ],
)
def test_a_set_override_that_moves_one_copy_is_refused(override, text):
    env_cfg, agent_cfg = load_cfgs(TASK, "cpu", 4, 0)
    apply_overrides(env_cfg, agent_cfg, [override])  # what train.py does with --set, then it checks the rates
    with pytest.raises(ValueError, match=text):
        check_rates(env_cfg)


def _run(folder: Path, decimation: int | None = None, dt: float | None = None, rates: dict | None = None) -> Path:
    """A run folder as train.py writes it (``write_params``: env.yaml, agent.yaml, run.json) and a checkpoint; the
    resolved config edited after the fact where asked (an inconsistent record)."""
    env_cfg, agent_cfg = load_cfgs(TASK, "cpu", 4, 0)
    record = {
        "task": TASK,
        "rates": rates or env_cfg.rates,
        "num_envs_total": 4,
        "num_procs": 1,
        "overrides": [],
        "max_iterations": 5,
        "save_interval": 5,
    }
    env_cfg.decimation = decimation or env_cfg.decimation
    env_cfg.sim.dt = dt or env_cfg.sim.dt
    folder.mkdir(parents=True)
    write_params(folder, env_cfg, agent_cfg, record)
    torch.save({"iter": 2, "actor_state_dict": {}}, folder / "model_2.pt")
    return folder


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    return {
        "good": _run(root / "good"),
        "decimation": _run(root / "decimation", decimation=8),
        "dt": _run(root / "dt", dt=0.002),
        "invalid": _run(root / "invalid", rates={"physics_hz": 200, "control_hz": 200, "policy_hz": 0}),
    }


REFUSALS = {
    "decimation": r"env.yaml': decimation = 8 disagrees with the run's recorded rates .* which give 4",
    "dt": r"env.yaml': sim.dt = 0.002 disagrees with the run's recorded rates .* which give 0.005",
    "invalid": r"run.json': its recorded rates are invalid: RateSpec: policy_hz must be a finite rate > 0",
}


def test_a_consistent_record_loads_on_every_path(runs):
    want = load_rate_profile("default")
    assert recorded_rates(runs["good"], json.loads((runs["good"] / "params" / "run.json").read_text())) == want
    assert policy_settings(runs["good"] / "model_2.pt").rates == want
    assert prepare_resume(_resume_flags(runs["good"]))[1].record["rates"]["decimation"] == 4


@pytest.mark.parametrize("case", list(REFUSALS))
def test_play_evaluate_and_export_of_a_checkpoint_refuse_an_inconsistent_record(runs, case):
    # policy_settings is how play.py, evaluate.py, eval_checkpoints.py and export.py load a checkpoint's rates
    with pytest.raises(CheckpointError, match=REFUSALS[case]):
        policy_settings(runs[case] / "model_2.pt")


def _resume_flags(run: Path) -> TrainRequest:
    return TrainRequest(task=None, resume=str(run))


@pytest.mark.parametrize("case", list(REFUSALS))
def test_resume_refuses_an_inconsistent_record(runs, case):
    with pytest.raises(CheckpointError, match=REFUSALS[case]):
        prepare_resume(_resume_flags(runs[case]))
