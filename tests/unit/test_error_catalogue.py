"""Error catalogue: each bad input across the CLIs and configs gives its message, exit status 2, and loses nothing.

Every case here fails before an env is built (the checks come first), so the tier stays fast. Cases tested elsewhere:
unknown task, CUDA without CUDA, missing resume folder / checkpoint (test_cli_errors.py); missing robot package
(test_missing_robot_source.py); invalid inertia and impossible DR ranges (test_inertia*.py, test_dr_profile.py); bad
actuator specs and rates (test_actuator_spec.py, test_rates.py); mismatched export metadata (test_deploy.py).
"""

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[2]


def run(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``scripts/<script>`` (``deploy``: the robot-side command, ``scripts/deploy.py``)."""
    command = [str(REPO / "scripts" / ("deploy.py" if script == "deploy" else script))]
    return subprocess.run([sys.executable, *command, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with its content hash: compared before/after to show nothing changed."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_rates_that_do_not_divide(tmp_path):
    bad = tmp_path / "bad_rates.yaml"
    bad.write_text("physics_hz: 200\ncontrol_hz: 200\npolicy_hz: 30\ntarget_mode: hold\n")
    out = run("train.py", "--rates", str(bad), "--log_root", str(tmp_path / "runs"), cwd=tmp_path)
    assert out.returncode == 2, out.stderr[-2000:]
    assert "(200 Hz) / policy_hz (30 Hz) = 6.66667" in out.stderr  # names both rates and their ratio
    assert "not a whole number" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "runs").exists()


def test_unknown_rate_and_dr_profiles_list_the_known_ones(tmp_path):
    out = run("train.py", "--rates", "turbo", "--log_root", str(tmp_path / "runs"), cwd=tmp_path)
    assert out.returncode == 2 and "default" in out.stderr, out.stderr[-2000:]
    out = run("train.py", "--dr_profile", "nope", "--log_root", str(tmp_path / "runs"), cwd=tmp_path)
    assert out.returncode == 2 and "nominal" in out.stderr and "grasp_nominal" in out.stderr, out.stderr[-2000:]
    assert not (tmp_path / "runs").exists()


def test_dr_profile_that_can_make_an_impossible_body(tmp_path):
    profile = (REPO / "configs" / "dr" / "nominal.yaml").read_text()
    bad = tmp_path / "negative_mass.yaml"
    assert "mass_scale: [0.92, 1.08]" in profile  # the line edited below
    bad.write_text(profile.replace("mass_scale: [0.92, 1.08]", "mass_scale: [-0.5, 1.08]"))
    out = run("train.py", "--dr_profile", str(bad), "--log_root", str(tmp_path / "runs"), cwd=tmp_path)
    assert out.returncode == 2, out.stderr[-2000:]
    assert "mass_scale" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "runs").exists()


def test_corrupted_checkpoint_is_refused_and_the_run_is_left_as_it_was(tmp_path):
    run_dir = tmp_path / "runs" / "balance_g1" / "crashed"
    (run_dir / "params").mkdir(parents=True)
    (run_dir / "params" / "run.json").write_text('{"task": "Realgap-Balance-G1-v0"}')
    (run_dir / "model_0.pt").write_bytes(b"\x80\x02}q\x00(truncated")  # a write cut short by a crash
    before = snapshot(run_dir)
    out = run("train.py", "--resume", str(run_dir), cwd=tmp_path)
    assert out.returncode == 2, out.stderr[-2000:]
    assert "Cannot load checkpoint" in out.stderr and "model_0.pt" in out.stderr
    assert snapshot(run_dir) == before
    out = run("play.py", "--checkpoint", str(run_dir / "model_0.pt"), cwd=tmp_path)
    assert out.returncode == 2 and "model_0.pt" in out.stderr, out.stderr[-2000:]
    assert snapshot(run_dir) == before


def test_num_envs_that_do_not_split_over_processes(tmp_path):
    out = run("train.py", "--num_envs", "7", "--num_procs", "2", "--log_root", str(tmp_path / "runs"), cwd=tmp_path)
    assert out.returncode == 2 and "does not split evenly over 2 processes" in out.stderr, out.stderr[-2000:]
    assert not (tmp_path / "runs").exists()


def _valid_run(folder: Path, iteration: int = 2, record_text: str | None = None, **changes: object) -> Path:
    """A resumable run folder: a loadable checkpoint ``model_<iteration>.pt`` and its record (``changes`` applied;
    ``record_text`` replaces the record whole)."""
    import json

    import torch

    (folder / "params").mkdir(parents=True)
    torch.save({"iter": iteration, "actor_state_dict": {}}, folder / f"model_{iteration}.pt")
    record = {"task": "Realgap-Balance-G1-v0", "num_envs_total": 8, "num_procs": 1, "max_iterations": 5} | changes
    (folder / "params" / "run.json").write_text(record_text if record_text is not None else json.dumps(record))
    return folder


def _inputs(tmp: Path) -> None:
    """The files the catalogue's commands are given: each bad in one way."""
    (tmp / "bad.yaml").write_text(BAD_YAML_RATES)
    np.savez(tmp / "objects.npz", format=np.array([{"a": 1}], dtype=object))  # loading it would run pickle
    (tmp / "text.npz").write_text("time,q\n0,0.1\n")  # a CSV saved under the wrong name
    (tmp / "a_folder.yaml").mkdir()
    (tmp / "a_folder.npz").mkdir()
    feet = (REPO / "configs" / "contact" / "g1_ground.yaml").read_text()
    assert "timeconst: 0.02 " in feet and "timestep: 0.005" in feet  # the lines edited below
    (tmp / "fast_feet.yaml").write_text(
        feet.replace("timeconst: 0.02 ", "timeconst: 0.008").replace("timestep: 0.005", "timestep: 0.002")
    )  # valid at 2 ms, under two steps at the lab's 5 ms
    runs = tmp / "runs" / "balance_g1"
    _valid_run(runs / "r")
    _valid_run(runs / "done", iteration=4)  # model_4.pt ends iteration 4 of max_iterations 5: complete
    _valid_run(runs / "typo", num_env=16)  # a mistyped key that would be ignored
    _valid_run(runs / "negative", num_envs_total=-8)
    _valid_run(runs / "corrupt", record_text='{"task": "Realgap-Balance-G1-v0", ')


BAD_YAML_RATES = "physics_hz: 200\ncontrol_hz: [200\n"

# (script, args; "{tmp}" is the test's folder, "{run}" a resumable run in it), text the refusal must hold
CATALOGUE: list[tuple[str, list[str], str]] = [
    ("train.py", ["--num_envs", "0"], "--num_envs must be >= 1, got 0"),
    ("train.py", ["--num_envs", "abc"], "--num_envs 'abc' is not an integer"),
    ("train.py", ["--max_iterations", "0"], "--max_iterations must be >= 1, got 0"),
    ("train.py", ["--save_interval", "0"], "--save_interval must be >= 1, got 0"),
    ("train.py", ["--max_minutes", "nan"], "--max_minutes 'nan' is not a finite number"),
    ("train.py", ["--seed", "-1"], "--seed must be >= 0, got -1"),
    ("train.py", ["--set", "agent.algorithm.learning_rate=nan"], "the value is not a finite number"),
    ("train.py", ["--rates", "{tmp}/bad.yaml"], "is not valid YAML"),
    ("train.py", ["--resume", "{run}", "--num_envs", "16"], "which recorded --num_envs 8"),
    ("train.py", ["--resume", "{run}", "--max_iterations", "3"], "the checkpoint continues at iteration 3"),
    ("train.py", ["--resume", "{run}", "--task", "Realgap-Grasp-Franka-v0"], "which recorded --task Realgap-Bal"),
    ("train.py", ["--resume", "{run}/params/run.json"], "give a run folder or a model_<iteration>.pt"),
    ("play.py", ["--episodes", "0", "--zero_action"], "--episodes must be >= 1, got 0"),
    ("evaluate.py", ["--episodes", "0"], "--episodes must be >= 1, got 0"),
    ("bench_dr.py", ["--num_envs", "-4"], "--num_envs must be >= 1, got -4"),
    ("bench_dr.py", ["--profile", "nope"], "unknown DR profile 'nope'; available:"),
    ("bench_dr.py", ["--task", "Realgap-Nope-v0"], "Unknown task 'Realgap-Nope-v0'"),
    ("benchmark.py", ["--sections", "foo"], "unknown sections ['foo']; known: env, ppo, mujoco"),
    ("identify.py", ["--log", "{tmp}/objects.npz", "--out", "{tmp}/spec.yaml"], "pickled Python objects"),
    ("benchmark.py", ["--num_envs", "x"], "--num_envs 'x' is not an integer"),
    ("sim2sim.py", ["--zero_action", "--episodes", "0"], "--episodes must be >= 1, got 0"),
    ("compare_actions.py", ["--seeds", "0,one"], "--seeds '0,one': 'one' is not an integer >= 0"),
    ("compare_actions.py", ["--jobs", "0"], "--jobs must be >= 1, got 0"),
    ("eval_checkpoints.py", ["--run", "{run}", "--every", "0"], "--every must be >= 1, got 0"),
    (
        "hidden_compare.py",
        ["--policy", "p", "--against", "q", "--fall_height", "nan"],
        "--fall_height must be a finite number >= 0, got nan",
    ),
    ("push_limit.py", ["--policy", "p", "--episodes", "0"], "--episodes must be >= 1, got 0"),
    # silent before: a run folder outside --log_root, a flag dropped, a duplicate run, a resume that trains nothing
    ("train.py", ["--run_name", "../../../../x"], "--run_name '../../../../x' is not a plain name"),
    ("train.py", ["--run_name", "a b"], "is not a plain name"),
    ("train.py", ["--resume", "{runs}/r", "--run_name", "again"], "a resumed run keeps its own: drop --run_name"),
    ("train.py", ["--resume", "{runs}/done"], "the run is complete: its checkpoint ends iteration 4 of its recorded"),
    ("train.py", ["--resume", "{runs}/typo"], "holds unknown keys ['num_env']"),
    ("train.py", ["--resume", "{runs}/negative"], "num_envs_total = -8 is not a valid record (expected int >= 1)"),
    ("compare_actions.py", ["--spaces", "joint_pos,joint_pos"], "lists joint_pos more than once"),
    ("compare_actions.py", ["--seeds", "0,0"], "lists 0 more than once"),
    (
        "deploy",
        ["--policy", str(REPO / "configs/policies/grasp_franka"), "--robot", "mujoco", "--log", "{tmp}/x.npz"],
        "--log would be ignored by the grasp scene",
    ),
    (
        "deploy",
        [
            "--policy",
            str(REPO / "configs/policies/grasp_franka"),
            "--robot",
            "franka",
            "--hostname",
            "127.0.0.1",
            "--log",
            "{tmp}/x.npz",
        ],
        "--log would be ignored by --robot franka",
    ),
    (
        "deploy",
        ["--policy", str(REPO / "configs/policies/balance_g1"), "--robot", "mujoco", "--hostname", "h"],
        "--hostname would be ignored by --robot mujoco",
    ),
    # unclear before: a traceback, argparse's words, the wrong cause, or no file named
    (
        "deploy",
        ["--policy", str(REPO / "configs/policies/balance_g1"), "--robot", "mujoco", "--push_mps", "-1,0.2"],
        "--push_mps needs 0 <= LO <= HI, got -1,0.2",
    ),
    (
        "deploy",
        ["--policy", str(REPO / "configs/policies/balance_g1"), "--robot", "unitree_g1", "--interface", "nope0"],
        "--interface 'nope0' is not a network interface of this machine",
    ),
    (
        "deploy",
        ["--policy", str(REPO / "configs/policies/balance_g1"), "--robot", "mujoco", "--require_signature"],
        "--require_signature needs the public keys to trust",
    ),
    (
        "deploy",
        ["--policy", str(REPO / "configs/policies/balance_g1"), "--robot", "mujoco", "--log", "{tmp}/a_folder.npz"],
        "is an existing folder; give a file path",
    ),
    (
        "deploy",
        ["--policy", str(REPO / "configs/policies/balance_g1"), "--robot", "mujoco", "--log", "{tmp}/x.csv"],
        "must end in .npz or .mcap",
    ),
    ("play.py", ["--zero_action", "--checkpoint", "-run"], "it was given '-run', which starts with '-'"),
    ("play.py", ["--checkpoint", "{runs}/corrupt/model_2.pt"], "corrupt/params/run.json' is unreadable or not JSON"),
    ("identify.py", ["--log", "{tmp}/text.npz", "--out", "{tmp}/spec.yaml"], "text.npz: not an .npz file"),
    ("identify.py", ["--log", "{tmp}/objects.npz", "--out", "{tmp}/a_folder.yaml"], "is an existing folder"),
    ("identify.py", ["--log", "{tmp}/objects.npz", "--out", "{tmp}/spec.txt"], "--out '"),
    ("contact_lab.py", ["--engines", "--g1", "{tmp}/fast_feet.yaml", "--out", "{tmp}/lab"], "at the 5 ms step"),
    ("train.py", ["--num_envs", "50000000"], "an estimated"),
    ("play.py", ["--zero_action", "--num_envs", "50000000", "--device", "cpu"], "an estimated"),
    ("evaluate.py", ["--zero_action", "--num_envs", "50000000", "--device", "cpu"], "an estimated"),
    ("srbd.py", ["--out", "{tmp}/bad.yaml"], "bad.yaml' is an existing file; give a folder"),
    ("export.py", ["--checkpoint", "{run}", "--out", "{tmp}/bad.yaml"], "is an existing file; give a folder"),
    ("sim2sim.py", ["--zero_action", "--out", "{tmp}/runs"], "must end in .json"),
    ("plot_curve.py", ["--run", "{run}", "--out", "{tmp}/a_folder.npz"], "must end in .png"),
    (
        "sign_export.py",
        ["verify", "--policy", str(REPO / "configs/policies/balance_g1"), "--trust", "{tmp}/none.pub"],
        "--trust '",
    ),
]


@pytest.mark.parametrize(("script", "args", "text"), CATALOGUE, ids=[f"{s}{' '.join(a)}" for s, a, _ in CATALOGUE])
def test_catalogue(tmp_path, script, args, text):
    _inputs(tmp_path)
    runs = tmp_path / "runs" / "balance_g1"
    before = snapshot(tmp_path)
    filled = [
        a.replace("{tmp}", str(tmp_path)).replace("{runs}", str(runs)).replace("{run}", str(runs / "r")) for a in args
    ]
    out = (
        run(script, *filled, "--log_root", str(tmp_path / "runs"), cwd=tmp_path)
        if script == "train.py"
        else run(script, *filled, cwd=tmp_path)
    )
    assert out.returncode == 2, out.stderr[-2000:]
    assert text in out.stderr and out.stderr.startswith("error: "), out.stderr[-2000:]
    assert "Traceback" not in out.stderr and "allow_pickle" not in out.stderr  # never advise loading pickles
    assert snapshot(tmp_path) == before  # nothing written, nothing changed
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["a_folder.npz", "a_folder.yaml", "runs"]
