"""mujoco.sysid on a hidden-robot log (MuJoCo C only, about a minute): the rollout-error fit moves the plant from the
datasheet towards the hidden truth, and identify.py's --engine mujoco_sysid writes its estimates (the engine choice).
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
    from realgap.envs.deploy.excitation import ExcitationPlan, run_excitation
    from realgap.envs.deploy.hidden_robot import HiddenRobot
    from realgap.envs.deploy.metadata import load_metadata

    meta = load_metadata(ROOT / "configs/policies/balance_g1/policy.json")
    robot = HiddenRobot(meta, seed=3)
    plan = ExcitationPlan(("left_knee_joint",), step_rad=(0.08,), step_hold_s=0.3, chirp_s=1.0, rest_s=0.2)
    log = run_excitation(meta, robot, plan, root_pos_w=robot.root_pos_w)
    path = log.save(tmp_path_factory.mktemp("log") / "hidden.mcap")
    i = meta.joint_names.index("left_knee_joint")
    return path, log, {"armature": robot.truth.armature[i], "coulomb": robot.truth.coulomb_nm[i]}


def test_rollout_fit_moves_towards_the_truth(hidden_log):
    from realgap.envs.sim2sim.sysid_mujoco import fit_plant

    _, log, truth = hidden_log
    (group,) = [g for g in log.metadata().actuator_groups if "left_knee_joint" in g.joint_names]
    i = group.joint_names.index("left_knee_joint")
    start = {"armature": group.armature[i], "coulomb": group.coulomb_friction[i]}
    fit = fit_plant(log, max_iters=15)
    for what in ("armature", "coulomb"):
        # the hidden robot's armature is datasheet x 1.3-1.7 and Coulomb x 1.7-2.3: the fit must close most of the gap
        got = fit.values["left_knee_joint"][what]
        assert abs(got - truth[what]) < 0.5 * abs(start[what] - truth[what]), (what, start[what], got, truth[what])


def test_identify_engine_choice_writes_the_sysid_plant(hidden_log, tmp_path):
    path, _, _ = hidden_log
    out = tmp_path / "ident.yaml"
    cmd = [sys.executable, str(ROOT / "scripts/identify.py"), "--log", str(path), "--out", str(out), "--no_plot",
           "--no_replay", "--engine", "mujoco_sysid"]  # fmt: skip
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "fitted by mujoco.sysid" in run.stdout
    assert out.is_file() and yaml.safe_load(out.read_text())
