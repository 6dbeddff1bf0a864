"""Slow tier: the tier's shared tiny policy (8 envs, 2 PPO iterations; tests/conftest.py) exported with
scripts/export.py, and the export checked: three self-contained files, the same metadata (realgap.policy/2)
everywhere, the training commit recorded, onnxruntime == TorchScript == the checkpoint's own actor (normalizer folded
in), and the deploy runtime driving the MuJoCo G1 with it. A missing checkpoint is refused with nothing written.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from shared_run import copy_run

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def run_script(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def run_copy(tiny_run, tmp_path_factory) -> Path:
    """A copy of the tier's shared tiny run (tests/conftest.py): the export writes into the run folder."""
    return copy_run(tiny_run, tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def exported(run_copy) -> Path:
    out = run_script("scripts/export.py", "--checkpoint", str(run_copy))
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    print(out.stdout.strip().splitlines()[-1])  # the export's own ONNX-vs-torch figure
    return run_copy / "realgap_export"


def test_export_writes_three_self_contained_files(exported):
    import onnx

    assert sorted(p.name for p in exported.iterdir()) == ["SHA256SUMS", "policy.json", "policy.onnx", "policy.pt"]
    model = onnx.load(str(exported / "policy.onnx"), load_external_data=False)
    external = [t.name for t in model.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    assert external == []  # weights embedded: one file to ship, no policy.onnx.data
    assert not [p for p in exported.parent.iterdir() if "staging" in p.name or "-old-" in p.name]


def test_metadata_is_the_same_everywhere_and_names_the_training_commit(run_copy, exported):
    from realgap.envs.format import load_metadata
    from realgap.envs.format.provenance import repo_relative
    from realgap.envs.format.verify import load_verified
    from realgap.envs.run.run_dir import latest_checkpoint

    from_json, from_onnx = load_metadata(exported / "policy.json"), load_metadata(exported / "policy.onnx")
    assert from_json == from_onnx == load_verified(exported)[0]  # digest and SHA256SUMS written at export
    with zipfile.ZipFile(exported / "policy.pt") as pt:  # TorchScript archive: extra files live under */extra/
        (name,) = [n for n in pt.namelist() if n.endswith("extra/realgap_metadata.json")]
        assert json.loads(pt.read(name)) == json.loads((exported / "policy.json").read_text())
    run = json.loads((run_copy / "params" / "run.json").read_text())
    assert from_json.training["git"] == run["git"]
    assert from_json.training["checkpoint"] == repo_relative(latest_checkpoint(run_copy).resolve())
    assert from_json.task == "Realgap-Balance-G1-v0" and from_json.obs_dim == 93 and from_json.action_dim == 29
    assert json.loads((exported / "policy.json").read_text())["format"] == "realgap.policy/2"  # schema-checked
    assert from_json.training["dr_profile"] == "none" and from_json.training["randomization"]["events"]["interval"]
    # the training variant's sensor noise is recorded (joint velocity ±0.4 rad/s)
    noise = {t.name: t.noise for t in from_json.observations}
    assert noise["joint_vel"]["n_min"] == -0.4 and noise["actions"] is None


def test_onnx_matches_torch_and_the_checkpoint(run_copy, exported):
    import torch

    from realgap.envs.export.writer import compare_onnx_torch
    from realgap.envs.format import OnnxPolicy
    from realgap.envs.run.run_dir import latest_checkpoint

    rng = np.random.default_rng(1)
    obs = rng.standard_normal((256, 93)).astype(np.float32)
    diff_torchscript = compare_onnx_torch(exported, obs)
    # an independent torch forward pass from the checkpoint's actor weights: (obs − mean)/(std + eps) -> MLP (ELU)
    sd = torch.load(latest_checkpoint(run_copy), weights_only=False, map_location="cpu")["actor_state_dict"]
    x = torch.from_numpy(obs)
    x = (x - sd["obs_normalizer._mean"]) / (sd["obs_normalizer._std"] + 1e-2)
    for i in (0, 2, 4, 6):
        x = torch.nn.functional.linear(x, sd[f"mlp.{i}.weight"], sd[f"mlp.{i}.bias"])
        x = torch.nn.functional.elu(x) if i < 6 else x
    policy = OnnxPolicy(exported / "policy.onnx")
    ours = np.stack([policy(o) for o in obs])
    diff_checkpoint = float(np.abs(ours - x.numpy()).max())
    print(f"max |onnxruntime - TorchScript| = {diff_torchscript:.2e}, |onnxruntime - ckpt| = {diff_checkpoint:.2e}")
    assert diff_torchscript <= 1e-5
    assert diff_checkpoint <= 1e-5
    assert not torch.allclose(sd["obs_normalizer._mean"], torch.zeros(93))  # the normalizer is not the identity


def test_runtime_drives_the_mujoco_g1_with_the_exported_policy(exported):
    from realgap.envs.deploy import DeployRuntime
    from realgap.envs.deploy.mujoco_robot import MujocoRobot
    from realgap.envs.format import load_policy

    meta, policy = load_policy(exported / "policy.onnx")
    robot = MujocoRobot.for_policy(meta)
    runtime = DeployRuntime(meta, robot, policy, seed=0)
    runtime.step()  # warm-up (onnxruntime's first run allocates)
    runtime.policy_time_s = runtime.control_time_s = 0.0
    runtime.policy_steps = runtime.control_steps = 0
    start = time.perf_counter()
    for _ in range(50):  # 1 s
        action = runtime.step()
        assert np.isfinite(action).all()
    wall = time.perf_counter() - start
    assert robot.time == pytest.approx(1.02) and runtime.control_steps == 200
    print(
        f"runtime: policy step {1e6 * runtime.policy_time_s / 50:.0f} µs (obs + onnxruntime), control step "
        f"{1e6 * runtime.control_time_s / 200:.0f} µs (actuator chain), 1 s of robot time in {wall:.2f} s wall"
    )


def test_export_refuses_a_folder_without_checkpoint(tmp_path):
    out = run_script("scripts/export.py", "--checkpoint", str(tmp_path), "--out", str(tmp_path / "exported"))
    assert out.returncode == 2 and "holds no checkpoint" in out.stderr
    assert list(tmp_path.iterdir()) == []


def test_export_and_its_checkpoint_act_alike_inside_the_env(run_copy, exported):
    """The shipped form (ONNX + metadata, read by play.py --policy) and the checkpoint give the same actions on the
    observations of a rollout in the task's Play variant."""
    import torch
    from conftest import build_env
    from isaaclab_rl.rsl_rl import check_rsl_rl_version, handle_deprecated_rsl_rl_cfg

    from realgap.envs.eval.policies import checkpoint_policy, exported_policy, read_export
    from realgap.envs.run.factory import load_cfgs
    from realgap.envs.run.run_dir import latest_checkpoint

    meta, onnx_path = read_export(exported)
    _, agent_cfg = load_cfgs("Realgap-Balance-G1-Play-v0", "cpu", 4, 0)
    agent_cfg = handle_deprecated_rsl_rl_cfg(agent_cfg, check_rsl_rl_version())
    with build_env("Realgap-Balance-G1-Play-v0", num_envs=4, seed=0) as env:
        from_ckpt = checkpoint_policy(env, agent_cfg, latest_checkpoint(run_copy))
        from_export = exported_policy(env, meta, onnx_path)
        obs, _ = env.reset()
        worst = 0.0
        with torch.inference_mode():  # as the evaluation rollouts run
            for _ in range(50):
                a_ckpt, a_export = from_ckpt(obs["policy"]), from_export(obs["policy"])
                worst = max(worst, float((a_ckpt - a_export).abs().max()))
                obs, *_ = env.step(a_ckpt)
        assert worst < 1e-4, worst
        assert float(a_ckpt.abs().max()) > 1e-3  # the actions compared are not all zero
        torch.testing.assert_close(a_export, a_ckpt, atol=1e-4, rtol=0)
