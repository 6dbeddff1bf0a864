"""Bad input to the scripts: one clear message, exit status 2, and no run folder left behind.

These fail before any simulator is built (the checks run first), so they belong to the fast tier.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[2]


def run_script(script: str, *args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def test_unknown_task_lists_registered_ones(tmp_path):
    out = run_script("train.py", "--task", "Realgap-Nope-v0", "--log_root", str(tmp_path / "runs"), cwd=tmp_path)
    assert out.returncode == 2
    assert "Unknown task 'Realgap-Nope-v0'" in out.stderr
    assert "Realgap-Balance-G1-v0" in out.stderr  # the registered ids are listed
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "runs").exists()


def test_cuda_without_cuda_says_so(tmp_path):
    no_cuda = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # hides any GPU, so this runs on GPU machines too
    out = run_script("train.py", "--device", "cuda", "--log_root", str(tmp_path / "runs"), cwd=tmp_path, env=no_cuda)
    assert out.returncode == 2
    assert "no GPU that torch sees" in out.stderr
    assert not (tmp_path / "runs").exists()


def test_resume_of_missing_run_says_so(tmp_path):
    out = run_script("train.py", "--resume", str(tmp_path / "runs" / "nope"), cwd=tmp_path)
    assert out.returncode == 2
    assert "does not exist" in out.stderr
    assert not (tmp_path / "runs").exists()


def test_resume_of_run_without_checkpoint_says_so(tmp_path):
    run = tmp_path / "runs" / "balance_g1" / "empty"
    run.mkdir(parents=True)
    out = run_script("train.py", "--resume", str(run), cwd=tmp_path)
    assert out.returncode == 2
    assert "holds no checkpoint" in out.stderr
    assert sorted(p.name for p in run.iterdir()) == []  # nothing written into it


def test_play_without_checkpoint_says_so(tmp_path):
    out = run_script("play.py", cwd=tmp_path)
    assert out.returncode == 2
    assert "give one of --checkpoint RUN, --policy EXPORT_DIR or --zero_action" in out.stderr


def test_play_refuses_a_non_positive_episode_length():
    import runpy

    main = runpy.run_path(str(REPO / "scripts" / "play.py"))["main"]  # refused before any env is built
    with pytest.raises(ValueError, match="--episode_s must be > 0 s, got 0.0"):
        main(["--zero_action", "--episode_s", "0"])


def test_push_headings_refuses_bad_bins_and_a_grasp_policy_before_building():
    import runpy

    main = runpy.run_path(str(REPO / "scripts" / "push_headings.py"))["main"]
    with pytest.raises(ValueError, match="magnitude bin edges must be at least two increasing values"):
        main(["--policy", str(REPO / "configs/policies/balance_g1"), "--edges", "0.4,0.3"])
    with pytest.raises(ValueError, match="pushes are a balance measure"):
        main(["--policy", str(REPO / "configs/policies/grasp_franka")])
    with pytest.raises(ValueError, match="--reflex_steps must be >= 1"):
        main(["--policy", str(REPO / "configs/policies/balance_g1"), "--hip_reflex", "2", "--reflex_steps", "0"])


def test_non_positive_budget_is_refused(tmp_path):
    out = run_script("train.py", "--max_minutes", "-1", "--log_root", str(tmp_path / "runs"), cwd=tmp_path)
    assert out.returncode == 2
    assert "--max_minutes must be > 0" in out.stderr
    assert not (tmp_path / "runs").exists()


def test_malformed_override_is_refused(tmp_path):
    out = run_script("train.py", "--set", "algorithm.gamma=0.9", "--log_root", str(tmp_path / "runs"), cwd=tmp_path)
    assert out.returncode == 2
    assert "expected env.PATH=VALUE or agent.PATH=VALUE" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "runs").exists()


def test_uneven_env_split_names_the_nearest_valid_counts(tmp_path):
    out = run_script(
        "train.py", "--num_procs", "3", "--num_envs", "256", "--log_root", str(tmp_path / "runs"), cwd=tmp_path
    )
    assert out.returncode == 2
    assert "--num_envs 256 does not split evenly over 3 processes; nearest valid counts: 255 or 258" in out.stderr
    assert not (tmp_path / "runs").exists()


def test_play_policy_refuses_what_is_not_an_export_of_its_task(tmp_path):
    """--policy: a missing folder, a folder without an export, a corrupted file and another task's export are refused
    before any env is built, each with a message naming what is wrong."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "corrupt").mkdir()
    (tmp_path / "corrupt" / "policy.onnx").write_bytes(b"not an onnx graph")
    shipped = str(REPO / "configs" / "policies" / "balance_g1")
    cases = [
        (["--policy", str(tmp_path / "nope")], "no such folder"),
        (["--policy", str(tmp_path / "empty")], "no export there (policy.onnx missing"),
        (["--policy", str(tmp_path / "corrupt")], "policy.onnx is not a readable ONNX model"),
        (
            ["--policy", shipped, "--task", "Realgap-Grasp-Franka-v0"],
            "is an export of task Realgap-Balance-G1-v0 (robot 'g1'), not of Realgap-Grasp-Franka-v0",
        ),
        (["--policy", shipped, "--zero_action"], "give one of --checkpoint RUN, --policy EXPORT_DIR or --zero_action"),
    ]
    for args, message in cases:
        out = run_script("play.py", *args, cwd=tmp_path)
        assert out.returncode == 2, (args, out.stderr[-2000:])
        assert message in out.stderr, (args, out.stderr[-2000:])
        assert "Traceback" not in out.stderr


RUN_CLI_PROBE = """
import atexit, gc, sys
from realgap.envs.run.cli import run_cli
out = open(sys.argv[1], "w")  # left open on purpose: the interpreter's teardown must still flush it
def main():
    out.write("written")
    atexit.register(lambda: print(f"atexit frozen={gc.get_freeze_count() > 0}"))
    if sys.argv[2] == "error":
        raise ValueError("bad input")
    return int(sys.argv[2])
run_cli(main)
"""


@pytest.mark.parametrize("outcome, code", [("3", 3), ("error", 2)])
def test_run_cli_exit_keeps_status_files_and_atexit(tmp_path, outcome, code):
    """run_cli freezes the garbage collector before exit (a 5-7 s teardown saved per script): the exit status, a
    buffered file left open and atexit handlers are what a plain exit gives."""
    path = tmp_path / "out.txt"
    out = subprocess.run(
        [sys.executable, "-c", RUN_CLI_PROBE, str(path), outcome], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == code, out.stderr
    assert path.read_text() == "written"
    assert "atexit frozen=True" in out.stdout
    assert ("error: bad input" in out.stderr) == (outcome == "error")
