"""Sim tier: the actuator-stage randomization and the transmission sweep reach the live actuator chains.

1. The shipped ``actuator_stages`` profile on 4 balance envs: every randomized value is read back from the chain's
   per-env params (in its range, different across envs, redrawn at a reset), the stages it randomizes are on, the
   knee / hip-roll group is built compliant (solver armature 0: the chain integrates the motor inertia), the other
   joints stay rigid, and the env steps without NaN.
2. ``scripts/evaluate.py`` sweeping ``backlash_rad`` over two values (1 episode each, 0.2 s, zero action, 4 envs):
   the env is built with the compliant stand-in, each env's chain holds its point's dead band, and the report lists
   both values.
"""

import importlib.util
import json
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.sim
TASK = "Realgap-Balance-G1-v0"
REPO = Path(__file__).resolve().parents[2]


def test_profile_values_reach_the_live_chain(env_builder):
    from realgap.actuators.chain import ChainStages
    from realgap.envs.dr.profile import load_dr_profile
    from realgap.envs.run.factory import load_cfgs, make_env, simulation

    profile = load_dr_profile("actuator_stages")
    env_cfg, _ = load_cfgs(TASK, "cpu", 4, 3, dr_profile=profile)
    with simulation(env_cfg):
        env = make_env(TASK, env_cfg)
        try:
            env.reset()
            robot = env.scene["robot"]
            (act,) = robot.actuators.values()
            chain, p = act.chain, act.chain.params
            assert chain.stages == ChainStages(
                velocity_limit=True, position_filter=True, torque_filter=True, transmission=True
            )
            knee = [i for i, n in enumerate(act.joint_names) if n.endswith(("_knee_joint", "_hip_roll_joint"))]
            rigid = [i for i in range(len(act.joint_names)) if i not in knee]
            assert len(knee) == 4
            armature = robot.data.joint_armature.torch[0]
            assert float(armature[act.joint_indices][knee].abs().max()) == 0.0 and bool((armature > 0).any())
            velocity = torch.tensor([s.velocity_limit for s in act.specs])
            lo_hi = {"torque_filter_hz": (40.0, 90.0), "position_filter_hz": (30.0, 90.0)}
            for name, (lo, hi) in lo_hi.items():
                v = getattr(p, name)
                assert bool(((v >= lo) & (v <= hi)).all()) and float(v.std()) > 1.0, name
            scale = p.velocity_limit / velocity
            assert bool(((scale >= 0.8 - 1e-6) & (scale <= 1.0 + 1e-6)).all())
            b, k = p.backlash, p.transmission_stiffness
            assert bool(((b[:, knee] >= 0) & (b[:, knee] <= 0.003)).all()) and float(b[:, knee].std()) > 1e-4
            assert bool(((k[:, knee] >= 900.0 - 1e-3) & (k[:, knee] <= 1500.0 + 1e-3)).all())  # 1200 × [0.75, 1.25]
            assert bool((b[:, rigid] == 0).all()) and bool(torch.isinf(k[:, rigid]).all())  # rigid joints untouched
            before = b.clone()
            env._reset_idx(torch.tensor([1]))  # a reset redraws that env only
            assert torch.equal(b[[0, 2, 3]], before[[0, 2, 3]]) and not torch.equal(b[1], before[1])
            for _ in range(10):
                obs, *_ = env.step(torch.zeros(4, env.action_manager.total_action_dim))
            assert bool(torch.isfinite(obs["policy"]).all()) and bool(torch.isfinite(robot.data.joint_pos.torch).all())
        finally:
            env.close()


def test_evaluate_sweeps_backlash_on_the_compliant_stand_in(tmp_path, monkeypatch):
    import realgap.envs.eval.robustness.run as run
    from realgap.envs.eval.robustness.apply import pin_term

    seen = []
    first = run.first_episodes

    def spy(env, policy):
        (act, _), *_ = pin_term(env).actuators
        knee = act.joint_names.index("left_knee_joint")
        seen.append(act.chain.params.backlash[:, knee].tolist())
        return first(env, policy)

    monkeypatch.setattr(run, "first_episodes", spy)
    spec = importlib.util.spec_from_file_location("evaluate_script", REPO / "scripts" / "evaluate.py")
    evaluate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(evaluate)
    out = tmp_path / "sweep"
    assert (
        evaluate.main(
            [
                "--zero_action",
                "--task",
                TASK,
                "--factors",
                "backlash_rad",
                "--values",
                "backlash_rad=0,0.005",
                "--episodes",
                "1",
                "--num_envs",
                "4",
                "--episode_s",
                "0.2",
                "--device",
                "cpu",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    report = json.loads((out / "report.json").read_text())
    assert report["compliant_transmission"] == {"hip_roll_knee": [1200.0, 0.5]}
    factor = report["factors"]["backlash_rad"]
    assert factor["nominal"] == 0.0 and factor["values"] == [0.0, 0.005]
    assert [r["episodes"] for r in factor["policies"]["zero action"]] == [1, 1]
    # one batch: nominal, the task's reference and backlash 0.005 (points in plan order), the spare env nominal
    assert seen == [pytest.approx([0.0, 0.0, 0.005, 0.0])]
