"""Unit tier: the --deterministic plumbing on the CPU: the shared flag sets REALGAP_DETERMINISTIC (for this process and
the ones it starts), the physics config resolved for CUDA gets Newton's run_to_run mode with its prerequisite and
torch's deterministic algorithms, the CPU and non-Newton physics are refused with a clear error, and the first-GPU
check measures its cost against the default (printed from the two benchmark figures, never asserted)."""

import json
import os
from types import SimpleNamespace

import pytest
import torch

from realgap.envs.run.cli import parser, shared_flags
from realgap.envs.run.gpu_check import DETERMINISTIC, TASKS, Step, Verdict, deterministic_cost, gpu_check, plan
from realgap.envs.sim.device import GpuFacts
from realgap.envs.sim.physics import DETERMINISTIC_ENV, apply_device, deterministic_requested

pytestmark = pytest.mark.unit


def _cfg(newton: bool = True) -> SimpleNamespace:
    solver = SimpleNamespace(disable_sensors=False)
    physics = SimpleNamespace(use_cuda_graph=False, deterministic_mode="not_guaranteed", solver_cfg=solver)
    return SimpleNamespace(sim=SimpleNamespace(device=None, physics=physics if newton else SimpleNamespace()))


@pytest.fixture
def clean(monkeypatch):
    for name in (DETERMINISTIC_ENV, "CUBLAS_WORKSPACE_CONFIG"):  # set first: monkeypatch then restores them after
        monkeypatch.setenv(name, "x")  # (the flag writes os.environ itself)
        monkeypatch.delenv(name)
    yield monkeypatch
    torch.use_deterministic_algorithms(False)


def test_the_flag_sets_the_request_only_when_given(clean):
    p = parser(None, shared_flags("device", "deterministic"))
    assert p.parse_args([]).deterministic is False and not deterministic_requested()
    assert p.parse_args(["--deterministic"]).deterministic is True and deterministic_requested()


def test_a_cuda_config_gets_run_to_run_and_torch_deterministic_algorithms(clean, capsys):
    clean.setenv(DETERMINISTIC_ENV, "1")
    cfg = _cfg()
    apply_device(cfg, "cuda:0")  # only the config: no GPU needed
    assert cfg.sim.physics.deterministic_mode == "run_to_run" and cfg.sim.physics.solver_cfg.disable_sensors
    assert cfg.sim.physics.use_cuda_graph and torch.are_deterministic_algorithms_enabled()
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
    assert "(CUDA graphs on, deterministic run_to_run)" in capsys.readouterr().out  # stated in every run's output


def test_without_the_flag_nothing_changes(clean):
    cfg = _cfg()
    apply_device(cfg, "cuda:0")
    assert cfg.sim.physics.deterministic_mode == "not_guaranteed" and not cfg.sim.physics.solver_cfg.disable_sensors
    assert not torch.are_deterministic_algorithms_enabled()


@pytest.mark.parametrize(
    ("device", "newton", "match"),
    [
        ("cpu", True, "applies to CUDA runs: on the CPU every run is already exact"),
        ("cuda:0", False, "needs Newton physics"),
    ],
)
def test_refused_where_it_cannot_apply(clean, device, newton, match):
    clean.setenv(DETERMINISTIC_ENV, "1")
    cfg = _cfg(newton)
    with pytest.raises(ValueError, match=match):
        apply_device(cfg, device)
    assert not torch.are_deterministic_algorithms_enabled()  # refused before anything global changed


def test_gpu_check_prints_the_cost_beside_the_default(tmp_path):
    task = TASKS[0]
    for name, fps in ((f"throughput_{task}.json", 40000.0), ("throughput_deterministic.json", 30000.0)):
        (tmp_path / name).write_text(json.dumps({task: {"env": {"policy_steps_per_s": fps}}}))
    want = f"{task} at 4096 envs: 30000 policy steps/s deterministic vs 40000 default (x0.75)"
    assert deterministic_cost(tmp_path) == want
    step = next(s for s in plan(tmp_path) if s.name == DETERMINISTIC)
    assert "--deterministic" in step.command and "--device" in step.command
    good = GpuFacts(("GPU 0: NVIDIA H200",), "580.65.06", "13.0", "2.11.0+cu130", "13.0", True, 1, 1)
    verdicts = gpu_check(tmp_path, good, runner=lambda s, log: Verdict(s.name, "PASS", "exit 0"))
    assert verdicts[-1].detail.startswith(f"{task} at 4096 envs: 30000") and "x0.75" in verdicts[-1].line()
    assert isinstance(step, Step) and deterministic_cost(tmp_path / "missing") is None


def test_train_refuses_it_on_the_cpu_before_writing_anything(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "scripts" / "train.py"
    env = {k: v for k, v in os.environ.items() if k != DETERMINISTIC_ENV}
    out = subprocess.run(
        [sys.executable, str(script), "--device", "cpu", "--deterministic", "--log_root", str(tmp_path / "runs")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert out.returncode == 2 and "error: --deterministic applies to CUDA runs" in out.stderr, out.stderr[-2000:]
    assert "Traceback" not in out.stderr and not (tmp_path / "runs").exists()
