"""Sim tier: the actuator-stage sweep factors reach the torques the simulator is stepped with.

Two G1 envs of the balance task (built rigid, ideal current loop, no speed cut-off): env 0 at the nominal point,
env 1 with a 5 Hz current loop and the speed limit at 0.5 × datasheet. Every physics step's chain output is recorded
and compared with the reference torque computed by hand from the same step's PD torque and joint velocity.
"""

import math

import pytest
import torch

pytestmark = pytest.mark.sim
TASK = "Realgap-Balance-G1-v0"


def test_torque_filter_and_speed_limit_change_the_stepped_torques():
    from conftest import build_env

    from realgap.actuators.chain import ChainStages
    from realgap.actuators.models import clip_torque_speed, clip_velocity_limit
    from realgap.envs.eval.robustness.apply import pin_term
    from realgap.envs.eval.robustness.prepare import prepare_env_cfg

    with build_env(TASK, 2, 0, prepare=lambda cfg: prepare_env_cfg(cfg, episode_s=2.0)) as env:
        term = pin_term(env)
        nominal = term.nominal_values()
        assert nominal["torque_filter_hz"] == math.inf and nominal["speed_limit_scale"] == math.inf  # G1 specs
        act = term.actuators[0][0]
        chain, inf = act.chain, math.inf
        assert chain.stages == ChainStages()  # built without the optional stages
        term.set_values({"torque_filter_hz": torch.tensor([inf, 5.0]), "speed_limit_scale": torch.tensor([inf, 0.5])})
        p = chain.params
        assert chain.stages == ChainStages(velocity_limit=True, torque_filter=True)
        assert bool(torch.isinf(p.torque_filter_hz[0]).all()) and bool((p.torque_filter_hz[1] == 5.0).all())
        knee = act.joint_names.index("left_knee_joint")
        assert float(p.velocity_limit[1, knee]) == 10.0 and math.isinf(float(p.velocity_limit[0, knee]))  # 20 rad/s
        with pytest.raises(ValueError, match=r"factor torque_filter_hz: value 150.* Nyquist rate .* = 100 Hz"):
            term.set_values({"torque_filter_hz": torch.tensor([inf, 150.0])})
        with pytest.raises(ValueError, match=r"factors \[.backlash_rad.\] are not available"):  # rigid joints
            term.set_values({"backlash_rad": torch.tensor([0.0, 0.01])})
        assert bool((p.torque_filter_hz[1] == 5.0).all())  # a refused point writes nothing

        env.reset()
        records = []
        compute = chain.compute

        def spy(q_target, qd_target, q, qd, tau_ff=None):
            out = compute(q_target, qd_target, q, qd, tau_ff)
            records.append((qd.clone(), out.tau_computed.clone(), out.tau_applied.clone()))
            return out

        chain.compute = spy
        zero = torch.zeros(env.num_envs, env.action_manager.total_action_dim)
        for action in (zero, zero, torch.full_like(zero, 0.5), torch.full_like(zero, 0.5)):
            env.step(action)  # the target steps after 8 physics steps
        chain.compute = compute
        qd, tau_pd, applied = (torch.stack(r) for r in zip(*records, strict=True))  # (K, E, J)
        p = chain.params  # as the last step used them (the task's reset events may write gains)
        # the current loop's input: PD torque clipped to the envelope and cut at the speed limit, every step
        envelope = clip_torque_speed(tau_pd, qd, p.peak_torque, p.no_load_speed)
        ref = clip_velocity_limit(envelope, qd, p.velocity_limit)
        assert torch.equal(applied[:, 0], ref[:, 0])  # env 0, nominal: the ideal current loop applies it as it is
        # env 1: the current loop's state y[k] = ref[k] + β·(y[k−1] − ref[k]), β = exp(−2π·5·0.005) = 0.855 (no past
        # after the reset: y[0] = ref[0]); the torque reached is y clipped to the torque–speed envelope again
        beta = math.exp(-2 * math.pi * 5.0 * env.physics_dt)
        y = [ref[0, 1]]
        for k in range(1, len(ref)):
            y.append(ref[k, 1] + beta * (y[-1] - ref[k, 1]))
        expected = clip_torque_speed(torch.stack(y), qd[:, 1], p.peak_torque[1], p.no_load_speed[1])
        torch.testing.assert_close(applied[:, 1], expected, rtol=1e-4, atol=1e-3)
        assert float((applied[:, 1] - ref[:, 1]).abs().max()) > 50.0  # a lag of tens of N·m (139 N·m knees)
        # speed limit 0.5 × datasheet: where |q̇| passed it, torque pushing further was cut from the reference; some
        # of it was not zero, so the match above also shows the chain applied the cut (not only the current loop)
        cut = (qd[:, 1].abs() > p.velocity_limit[1]) & (tau_pd[:, 1] * qd[:, 1] > 0)
        assert bool(cut.any()) and bool((ref[:, 1][cut] == 0).all())
        assert bool((envelope[:, 1][cut] != 0).any())

        term.set_values({})  # back to nominal: the stages the chain was built with
        assert chain.stages == ChainStages()
