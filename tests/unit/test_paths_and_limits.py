"""Paths stay where they belong (run names, output files and folders: separators, ``..``, symbolic links, odd
characters), a request that cannot fit in memory is refused up front, a deploy flag the run would ignore is refused,
one Wilson interval serves every layer, and a run folder's files share one mode."""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path

import pytest

from realgap.envs.run.paths import PathRefused, check_inside, check_name, check_output_dir, check_output_file

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("name", ["../../x", "a/b", "..", ".hidden", "-flag", "a b", "tab\there", "x" * 101, "é", ""])
def test_a_run_name_must_be_one_plain_folder_name(name):
    with pytest.raises(PathRefused, match="is not a plain name"):
        check_name(name, "--run_name")


@pytest.mark.parametrize("name", ["seed3", "ppo_lr=3e-4", "a.b-c+d@e,f", "0"])
def test_plain_names_pass(name):
    assert check_name(name, "--run_name") == name


def test_new_run_dir_refuses_an_escape_and_a_symlink_out_of_the_root(tmp_path):
    from realgap.envs.run.run_dir import new_run_dir

    root = tmp_path / "runs"
    assert new_run_dir(root, "balance_g1", "ok").parent == root / "balance_g1"
    with pytest.raises(PathRefused, match="not a plain name"):
        new_run_dir(root, "balance_g1", "../../../x")
    (tmp_path / "elsewhere").mkdir()
    (root / "linked").symlink_to(tmp_path / "elsewhere")  # an experiment folder that points outside the root
    with pytest.raises(PathRefused, match="outside its root"):
        new_run_dir(root, "linked", "x")
    assert list((tmp_path / "elsewhere").iterdir()) == []  # nothing made there


def test_check_inside_resolves_before_comparing(tmp_path):
    assert check_inside(tmp_path / "a" / ".." / "b", tmp_path, "--out") == (tmp_path / "b").resolve()
    with pytest.raises(PathRefused, match="outside its root"):
        check_inside(tmp_path / ".." / "b", tmp_path, "--out")


def test_output_files_and_folders(tmp_path):
    (tmp_path / "dir.yaml").mkdir()
    (tmp_path / "file").write_text("x")
    (tmp_path / "link.yaml").symlink_to(tmp_path / "target.yaml")  # dangling: a write would create the target
    assert check_output_file(tmp_path / "new" / "spec.yaml", "--out", (".yaml",)) == tmp_path / "new" / "spec.yaml"
    for path, text in [
        (tmp_path / "dir.yaml", "is an existing folder"),
        (tmp_path / "link.yaml", "symbolic link"),
        (tmp_path / "spec.txt", "must end in .yaml"),
        (tmp_path / "file" / "spec.yaml", "is a file, not a folder"),
    ]:
        with pytest.raises(PathRefused, match=text):
            check_output_file(path, "--out", (".yaml",))
    with pytest.raises(PathRefused, match="is an existing file"):
        check_output_dir(tmp_path / "file", "--out")
    with pytest.raises(PathRefused, match="symbolic link"):
        check_output_dir(tmp_path / "link.yaml", "--out")


def test_memory_estimate_refuses_what_cannot_fit_and_names_what_does():
    from realgap.envs.run.memory import check_env_memory, estimate_mib

    assert estimate_mib("Realgap-Balance-G1-v0", 1000) == pytest.approx(1180 + 210)  # 1,180 MiB + 0.21 MiB per env
    assert estimate_mib("Realgap-Balance-G1-v0", 1000, num_procs=2) == pytest.approx(2 * 1180 + 210)
    check_env_memory("Realgap-Balance-G1-v0", 4096, available=4000.0)  # 2.0 GiB estimated: fits
    with pytest.raises(ValueError, match=r"--num_envs 50000000 needs an estimated .* at most about 13428 envs fit"):
        check_env_memory("Realgap-Balance-G1-v0", 50_000_000, available=4000.0)  # (4000 - 1180) / 0.21 = 13428


def test_available_memory_is_read_from_meminfo(tmp_path):
    from realgap.envs.run.memory import available_mib

    (tmp_path / "meminfo").write_text("MemTotal: 24000000 kB\nMemAvailable:   2048000 kB\n")
    assert available_mib(tmp_path / "meminfo") == pytest.approx(2000.0)
    assert available_mib(tmp_path / "missing") is None


@pytest.mark.parametrize(
    ("argv", "robot", "grasp", "excite", "ignored"),
    [
        (["--log", "x.npz", "--episodes", "2"], "mujoco", True, False, "--log"),
        (["--log=x.npz"], "franka", False, False, "--log"),
        (["--hostname", "h"], "mujoco", False, False, "--hostname"),
        (["--push_mps", "0,0"], "mujoco", False, True, "--push_mps"),
        (["--interface", "lo"], "hidden", False, False, "--interface"),
    ],
)
def test_a_deploy_flag_the_run_ignores_is_refused(argv, robot, grasp, excite, ignored):
    from realgap.envs.deploy.flags import check_flags

    with pytest.raises(ValueError, match=f"^{ignored} would be ignored"):
        check_flags(["--policy", "p", "--robot", robot, *argv], robot, grasp, excite)


def test_deploy_flags_each_run_reads_pass():
    from realgap.envs.deploy.flags import check_flags, join_pair_values

    check_flags(["--robot", "mujoco", "--log", "x.npz", "--episodes", "2", "--seed", "1"], "mujoco", False, False)
    check_flags(
        ["--robot", "unitree_g1", "--interface", "lo", "--excite", "j", "--log", "x"], "unitree_g1", False, True
    )
    assert join_pair_values(["--push_mps", "-1,0.2", "--seed", "-1"]) == ["--push_mps=-1,0.2", "--seed", "-1"]


def test_one_wilson_interval_for_every_layer():
    from realgap.envs.deploy import grasp_scene
    from realgap.envs.eval.robustness import sweep
    from realgap.envs.format.stats import wilson_interval

    assert grasp_scene.wilson_interval is sweep.wilson_interval is wilson_interval
    assert wilson_interval(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)  # hand-computed (test_sweep.py)
    assert all(math.isnan(v) for v in wilson_interval(0, 0))  # no trials: no interval


def test_checkpoints_and_progress_get_the_mode_every_other_run_file_gets(tmp_path):
    import torch

    from realgap.envs.run.checkpoint import write_checkpoint
    from realgap.envs.run.run_dir import file_mode, write_progress

    old = os.umask(0o027)  # a stricter umask than the usual 022: the files must follow it, not mkstemp's 0600
    try:
        assert file_mode() == 0o640
        write_checkpoint({"iter": 1}, tmp_path / "model_1.pt", {"env": torch.zeros(2)})
        write_progress(tmp_path / "progress.csv", ["iteration"], [{"iteration": 1}])
        (tmp_path / "run.json").write_text("{}")  # how every other file of a run is written
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in Path(tmp_path).iterdir()}
    assert modes == dict.fromkeys(["model_1.pt", "model_1.env.pt", "progress.csv", "run.json"], 0o640), modes


def test_a_folder_that_refuses_new_files_is_named_before_anything_runs(tmp_path):
    """An immutable folder (root ignores permission bits, so chattr stands in for a read-only one): resuming into it
    failed after the env was built, in TensorBoard's writer thread, with three tracebacks."""
    import shutil
    import subprocess

    from realgap.envs.run.paths import check_writable

    folder = tmp_path / "run"
    folder.mkdir()
    assert check_writable(folder / "not_yet" / "made", "--log_root") == folder / "not_yet" / "made"  # probes 'run'
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)]).returncode != 0:
        pytest.skip("chattr +i is not available here (needs root and a file system with the flag)")
    try:
        with pytest.raises(PathRefused, match=r"--resume: cannot write in '.*run' \(Operation not permitted\)"):
            check_writable(folder, "--resume")
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    assert list(folder.iterdir()) == []  # the probe left nothing
