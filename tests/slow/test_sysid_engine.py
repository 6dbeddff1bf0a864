"""mujoco.sysid on a hidden-robot log recorded as MCAP by the deploy CLI (MuJoCo C only, a few minutes): the
rollout-error fit moves the plant from the datasheet towards the hidden truth, and identify.py reads the MCAP log with
either engine (--engine mujoco_sysid writes the sysid plant).
The side-by-side figures are docs/results/identify_engines (scripts/identify_engines.py)."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hidden_log(tmp_path_factory):
    # recorded as a user would: the deploy CLI's identification motion on the hidden robot, logged as MCAP
    from realgap.envs.deploy.hidden_robot import draw_truth
    from realgap.envs.deploy.log import load_log
    from realgap.envs.format.metadata import load_metadata

    path = tmp_path_factory.mktemp("log") / "hidden.mcap"
    cmd = [
        sys.executable,
        "-m",
        "realgap.scripts.deploy",
        "--policy",
        "configs/policies/balance_g1",
        "--robot",
        "hidden",
        "--hidden_seed",
        "3",
        "--excite",
        "left_knee_joint",
        "--log",
        str(path),
    ]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    meta = load_metadata(ROOT / "configs/policies/balance_g1/policy.json")
    truth = draw_truth(meta, 3)
    i = meta.joint_names.index("left_knee_joint")
    return path, load_log(path), {"armature": truth.armature[i], "coulomb": truth.coulomb_nm[i]}


def test_engine_choice_fits_the_plant_with_mujoco_sysid(hidden_log, tmp_path):
    path, _, truth = hidden_log
    out = tmp_path / "ident.yaml"
    cmd = [
        sys.executable,
        str(ROOT / "scripts/identify.py"),
        "--log",
        str(path),
        "--out",
        str(out),
        "--no_plot",
        "--no_replay",
        "--engine",
        "mujoco_sysid",
    ]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "fitted by mujoco.sysid" in run.stdout
    knee = yaml.safe_load(out.read_text())["joints"]["left_knee_joint"]
    for what in ("armature", "coulomb"):
        # the hidden armature is datasheet x 1.3-1.7 and Coulomb x 1.7-2.3: the fit must close most of the gap
        got, start = knee[what]["value"], knee[what]["datasheet"]
        assert "mujoco.sysid" in knee[what]["method"]
        assert abs(got - truth[what]) < 0.5 * abs(start - truth[what]), (what, start, got, truth[what])
    assert "OLS" in knee["kp"]["method"]  # the drive's gains stay realgap's


def test_identify_reads_the_deploy_clis_mcap_log(hidden_log, tmp_path):
    path, _, truth = hidden_log
    out = tmp_path / "ident.yaml"
    cmd = [
        sys.executable,
        str(ROOT / "scripts/identify.py"),
        "--log",
        str(path),
        "--out",
        str(out),
        "--no_plot",
        "--no_replay",
    ]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    assert out.is_file() and "left_knee_joint" in out.read_text()
