"""RealgapRunner checkpoints: a save/load round trip restores policy, critic, observation normalizers, optimizer,
iteration (continuing after it) and, when resuming, the RNG state; a corrupted file is refused with its name."""

import pytest
import torch

pytestmark = pytest.mark.sim


def _state(runner):
    return runner.alg.save()


def test_round_trip_restores_everything(tmp_path):
    from conftest import build_env
    from isaaclab.utils import to_dict
    from isaaclab_rl.rsl_rl import check_rsl_rl_version, handle_deprecated_rsl_rl_cfg

    from realgap.envs.run.factory import load_cfgs
    from realgap.envs.run.runner import CheckpointError, RealgapRunner
    from realgap.envs.sim.nan_guard import FiniteVecEnv

    _, agent_cfg = load_cfgs("Realgap-Balance-G1-v0", "cpu", 4, 5)
    agent_cfg.num_steps_per_env = 8
    cfg = to_dict(handle_deprecated_rsl_rl_cfg(agent_cfg, check_rsl_rl_version()))
    with build_env("Realgap-Balance-G1-v0", num_envs=4, seed=5) as env:
        vec = FiniteVecEnv(env)
        a = RealgapRunner(vec, dict(cfg), log_dir=str(tmp_path), device="cpu")
        a.learn(num_learning_iterations=2)  # iterations 0, 1 (the normalizers and Adam moments move)
        a.save(str(tmp_path / "ck.pt"))
        rng_after_save = torch.rand(3)

        b = RealgapRunner(vec, dict(cfg), log_dir=None, device="cpu")
        torch.manual_seed(123)
        b.load(str(tmp_path / "ck.pt"))  # evaluation-style load: weights, optimizer, iteration only
        assert not torch.equal(torch.rand(3), rng_after_save)  # the RNG is left alone
        b.load(str(tmp_path / "ck.pt"), resume=True)
        assert b.current_learning_iteration == a.current_learning_iteration + 1 == 2
        sa, sb = _state(a), _state(b)
        for key in ("actor_state_dict", "critic_state_dict"):
            for name, value in sa[key].items():
                assert torch.equal(value, sb[key][name]), f"{key}.{name}"
        assert any("normalizer" in name for name in sa["actor_state_dict"])  # obs normalizer is in the policy state
        opt_a, opt_b = sa["optimizer_state_dict"]["state"], sb["optimizer_state_dict"]["state"]
        assert opt_a.keys() == opt_b.keys() and all(
            torch.equal(opt_a[k]["exp_avg"], opt_b[k]["exp_avg"]) for k in opt_a
        )
        assert torch.equal(torch.rand(3), rng_after_save)  # torch RNG continues where the saved run was

        # a per-joint initial exploration std lands on the actions of the joints it names, in the env's action order
        c = RealgapRunner(
            vec, dict(cfg) | {"actor_init_std_by_joint": {".*_hip_pitch_joint": 0.3}}, log_dir=None, device="cpu"
        )
        names = env.unwrapped.action_manager.get_term("joint_pos")._joint_names
        std = c.alg.actor.distribution.std_param.detach()
        assert std.numel() == len(names) == 29
        for i, name in enumerate(names):
            assert std[i].item() == pytest.approx(0.3 if name.endswith("_hip_pitch_joint") else 0.1), name

        (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
        with pytest.raises(CheckpointError, match="bad.pt"):
            b.load(str(tmp_path / "bad.pt"))
        assert not list(tmp_path.glob(".tmp_*"))  # atomic saves leave no temporary file behind
