"""The first-GPU check's verdict logic with injected facts, and what it reports on this machine.

No step command is run here: on a machine without a GPU every step must be NOT RUN (nothing silently on the CPU).
"""

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from realgap.envs.run.gpu_check import Step, Verdict, exit_code, gpu_check, plan
from realgap.envs.sim.device import GpuFacts, probe, unusable_gpu_reason

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[2]
NO_GPU = GpuFacts((), None, None, "2.11.0+cu130", "13.0", False, 0, warp_cuda_count=0)
OLD_DRIVER = GpuFacts(("GPU 0: NVIDIA H200",), "570.133.20", "12.8", "2.11.0+cu130", "13.0", False, 0, 1)
GOOD = GpuFacts(("GPU 0: NVIDIA H200",), "580.65.06", "13.0", "2.11.0+cu130", "13.0", True, 1, 1)


def test_no_gpu_runs_nothing_and_says_so(tmp_path):
    verdicts = gpu_check(tmp_path, NO_GPU, runner=lambda s, log: pytest.fail(f"ran {s.name} without a GPU"))
    assert verdicts[0].verdict == "NO GPU" and "no GPU on this machine" in verdicts[0].detail
    assert [v.verdict for v in verdicts[1:]] == ["NOT RUN"] * len(plan(tmp_path))
    assert exit_code(verdicts) == 2
    assert (tmp_path / "report.txt").read_text().splitlines()[0].startswith("NO GPU")


def test_unusable_gpu_is_a_failure_naming_the_driver(tmp_path):
    verdicts = gpu_check(tmp_path, OLD_DRIVER, runner=lambda s, log: pytest.fail("ran a step"))
    assert verdicts[0].verdict == "FAIL" and "R580" in verdicts[0].detail and exit_code(verdicts) == 1


def test_usable_gpu_runs_every_step_in_order_and_one_failure_fails_the_check(tmp_path):
    ran: list[str] = []

    def runner(step: Step, log: Path) -> Verdict:
        ran.append(step.name)
        return Verdict(step.name, "FAIL" if step.name == "resume" else "PASS", "")

    verdicts = gpu_check(tmp_path, GOOD, runner=runner)
    assert ran == [
        "gpu tier",
        "train 2 iterations",
        "resume",
        *(f"throughput {t}" for t in ("Realgap-Balance-G1-v0", "Realgap-Grasp-Franka-v0")),
        "deterministic cost",
    ]
    assert exit_code(verdicts) == 1 and exit_code([v for v in verdicts if v.name != "resume"]) == 0


def test_the_plan_fits_15_minutes_and_every_command_targets_cuda(tmp_path):
    steps = plan(tmp_path)
    assert sum(s.timeout_s for s in steps) <= 15 * 60
    for step in steps[1:]:
        assert "--device" in step.command or "--resume" in step.command
    assert all((REPO / s.command[1]).exists() for s in steps if s.command[1].endswith(".py"))


def test_the_script_on_this_machine_reports_its_gpu_state(tmp_path):
    facts = probe()
    if facts.torch_cuda_available:
        pytest.skip("this machine has a usable GPU: the full check is the gpu tier's job")
    out = subprocess.run(
        [sys.executable, str(REPO / "scripts/gpu_check.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    first = next(ln for ln in out.stdout.splitlines() if ln.startswith(("PASS", "FAIL", "NO GPU")))  # warp prints too
    expected = ("FAIL", 1) if unusable_gpu_reason(dataclasses.replace(facts)) else ("NO GPU", 2)
    assert first.startswith(expected[0]) and out.returncode == expected[1], out.stdout + out.stderr
    assert "NOT RUN" in out.stdout and (tmp_path / "report.txt").is_file()


def test_gpu_tier_fails_not_skips_when_a_present_gpu_is_unusable(tmp_path):
    # injected facts: nvidia-smi sees an H200 on driver 570 (CUDA 12.8), the torch wheel is cu130
    (tmp_path / "unusable_gpu.py").write_text(
        "import realgap.envs.sim.device as d\n"
        "d.probe = lambda ask_warp=False: d.GpuFacts(('GPU 0: NVIDIA H200',), '570.133.20', '12.8', '2.11.0+cu130',"
        " '13.0', False, 0)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
            "-p",
            "unusable_gpu",
            "-q",
            "tests/gpu/test_cuda_path.py",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode != 0 and "skipped" not in out.stdout.splitlines()[-1], out.stdout[-2000:]
    assert "R580" in out.stdout
