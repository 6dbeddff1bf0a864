"""GPU tier: the CUDA path end to end, for the first machine that has a GPU (skipped with the reason elsewhere).

A balance env of 16 envs builds, steps and randomizes its bodies on ``cuda`` (CUDA graphs on: :func:`apply_device`);
the DR writes stay in stream order when torch works on a side stream; the grasp task's batched g(q) runs on the GPU
and equals pinocchio's; PPO trains 2 iterations on ``cuda`` in a subprocess, and with two GPUs in two processes (one
GPU each). Run: ``.venv/bin/python -m pytest -m gpu tests/gpu``.
"""

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

# skipped without a GPU; tests/gpu/conftest.py fails every test instead when a GPU is present that torch cannot use
NO_CUDA = "torch sees no CUDA device"
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason=NO_CUDA)]
REPO = Path(__file__).resolve().parents[2]
TASK = "Realgap-Balance-G1-v0"
NUM_ENVS = 16


def _balance_env(dr_profile=None):
    """A context manager building the balance env on cuda:0 (one env alive at a time per process)."""
    import contextlib

    from realgap.envs.run.factory import load_cfgs, make_env, simulation

    @contextlib.contextmanager
    def build():
        env_cfg, _ = load_cfgs(TASK, "cuda", NUM_ENVS, 0, dr_profile=dr_profile)
        assert env_cfg.sim.device == "cuda:0" and env_cfg.sim.physics.use_cuda_graph
        with simulation(env_cfg):
            env = make_env(TASK, env_cfg)
            try:
                yield env
            finally:
                env.close()

    return build()


def test_balance_env_builds_and_steps_on_cuda():
    with _balance_env() as env:
        obs, _ = env.reset()
        assert obs["policy"].device.type == "cuda" and obs["policy"].shape == (NUM_ENVS, 93)
        act = torch.zeros(NUM_ENVS, env.action_manager.total_action_dim, device=env.device)
        for _ in range(50):  # 1 s: the CUDA graph is captured on the first steps and replayed after
            obs, rew, terminated, _, _ = env.step(act)
            assert torch.isfinite(obs["policy"]).all() and torch.isfinite(rew).all()
        robot = env.scene["robot"]
        assert (robot.data.root_pos_w.torch[:, 2] - 0.757).abs().max() < 0.03  # the stance is held, as on the CPU
        assert not terminated.any()


def test_dr_writes_are_ordered_with_a_torch_side_stream():
    from isaaclab_newton.physics import NewtonManager

    from realgap.envs.dr.profile import load_dr_profile

    with _balance_env(load_dr_profile("nominal")) as env:
        env.reset()
        act = torch.zeros(NUM_ENVS, env.action_manager.total_action_dim, device=env.device)
        env.step(act)  # consume the exact model updates of the build: from here on the fast solver path
        side = torch.cuda.Stream(device=env.device)
        with torch.cuda.stream(side):  # torch work on a non-default stream: only the stream scope orders it
            env._reset_idx(torch.arange(NUM_ENVS, device=env.device))
        torch.cuda.synchronize()
        robot = env.scene["robot"]
        mj_mass = torch.from_numpy(NewtonManager._solver.mjw_model.body_mass.numpy())[:, 1:]
        lab_mass = robot.data.body_mass.torch.cpu()
        assert torch.equal(mj_mass.sort(dim=1).values, lab_mass.sort(dim=1).values)
        assert lab_mass[:, robot.body_names.index("torso_link")].unique().numel() == NUM_ENVS  # one draw per env
        for _ in range(10):
            obs, *_ = env.step(act)
        assert torch.isfinite(obs["policy"]).all()


def test_dr_write_changes_the_dynamics_under_graph_replay():
    from dr_write_check import dr_write_effect
    from isaaclab_newton.physics import NewtonManager

    with _balance_env() as env:
        env.reset()
        env.step(torch.zeros(NUM_ENVS, env.action_manager.total_action_dim, device=env.device))
        assert NewtonManager._graph is not None, "no CUDA graph captured: this would test eager stepping"
        changed, noise = dr_write_effect(env)
        # the snapshot restores on CUDA: two runs from it agree up to MuJoCo-Warp's atomics (a standing robot damps)
        assert noise < 1e-3, f"runs from one restored snapshot differ by {noise:.2e}"
        # the replayed graph reads the written masses: the trajectory moves far beyond the engine's run-to-run noise
        assert changed > 1e-4 and changed > 10 * noise, (changed, noise)


def test_batched_gravity_on_cuda_equals_pinocchio():
    import numpy as np
    import pinocchio as pin

    from realgap.envs.sim.gravity import TorchGravity, urdf_model
    from realgap.envs.sim2sim.dynamics import URDF_PATHS

    model = urdf_model(URDF_PATHS["panda"])
    gravity = TorchGravity.from_pinocchio(model, [model.names[i] for i in range(1, model.njoints)])
    q = model.lowerPositionLimit + (model.upperPositionLimit - model.lowerPositionLimit) * np.random.rand(64, model.nq)
    data = model.createData()
    ref = torch.tensor(np.stack([pin.computeGeneralizedGravity(model, data, qi) for qi in q]))
    out = gravity(torch.tensor(q, dtype=torch.float32, device="cuda"))
    assert out.device.type == "cuda"
    assert float((out.double().cpu() - ref).abs().max() / ref.abs().max()) < 1e-4


def _train(tmp_path: Path, *extra: str) -> Path:
    runs = tmp_path / "runs"
    out = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts/train.py"),
            "--num_envs",
            "64",
            "--max_iterations",
            "2",
            "--seed",
            "3",
            "--log_root",
            str(runs),
            "--device",
            "cuda",
            *extra,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    (run,) = list((runs / "balance_g1").iterdir())
    rows = list(csv.DictReader(open(run / "progress.csv")))
    assert [int(r["iteration"]) for r in rows] == [0, 1]
    assert (run / "model_1.pt").is_file()
    return run


def test_ppo_trains_two_iterations_on_cuda(tmp_path):
    run = _train(tmp_path)
    record = json.loads((run / "params" / "run.json").read_text())
    assert record["device"] == "cuda:0" and record["num_procs"] == 1


@pytest.mark.skipif(
    torch.cuda.device_count() < 2,
    reason=NO_CUDA if not torch.cuda.is_available() else "needs 2 CUDA devices (one per process)",
)
def test_ppo_trains_in_two_processes_one_gpu_each(tmp_path):
    run = _train(tmp_path, "--num_procs", "2")  # rank r on cuda:r, or rsl-rl refuses ("does not match ... rank")
    record = json.loads((run / "params" / "run.json").read_text())
    assert record["num_procs"] == 2 and record["num_envs_total"] == 64
