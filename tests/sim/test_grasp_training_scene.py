"""Sim tier: training's side of the six answers of docs/policy_format.md ("The grasp scene: what the fields do not
say"), read from the task's env cfg and from the MuJoCo-Warp model of the live env (2 envs, CPU).

The runtime's side: tests/sim/test_grasp_scene_answers.py. Where they disagree the page says so; these tests pin
what training does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

pytestmark = pytest.mark.sim
TASK = "Realgap-Grasp-Franka-EEPoseDelta-v0"  # the shipped export's task
EXPORT = Path(__file__).resolve().parents[2] / "configs/policies/grasp_franka"


def box_inertia(mass: float, size: np.ndarray) -> np.ndarray:
    """Inertia of a solid box of ``mass`` (kg) and edges ``size`` (m) about its centre, box axes, kg·m²."""
    x, y, z = np.asarray(size, dtype=float) ** 2
    return mass / 12 * np.diag([y + z, x + z, x + y])


def _counted(func: object, name: str, calls: dict[str, int]) -> object:
    """``func`` that also counts its calls in ``calls[name]``."""

    def wrapper(*args: object, **kwargs: object) -> object:
        calls[name] = calls.get(name, 0) + 1
        return func(*args, **kwargs)

    return wrapper


@pytest.fixture(scope="module")
def scene():
    from realgap.envs.deploy import load_metadata

    return load_metadata(EXPORT / "policy.json").scene


def test_the_cfg_draws_friction_at_startup_and_judges_with_the_exported_numbers(scene):
    """5. + 4. Friction is a startup event (once per env) over the exported ranges; the drop, reflex and CoM numbers
    of the cfg are the export's; terminations are Isaac Lab terms, computed once per env step (decimation 4)."""
    from realgap.envs.robots.panda import PANDA_ACTUATORS
    from realgap.tasks.grasp.env_cfg import ARM_SPEED_LIMITS, grasp_env_cfg

    cfg = grasp_env_cfg("ee_pose_delta")
    ev = cfg.events
    draws = ((ev.pad_friction, ".*_finger", scene.pad_friction), (ev.object_friction, None, scene.object_friction))
    for term, body, rng in draws:
        assert term.mode == "startup" and term.params["asset_cfg"].body_names == body
        assert tuple(term.params["static_friction_range"]) == rng == tuple(term.params["dynamic_friction_range"])
    inertia = ev.reset_object.params["inertia"]
    assert tuple(map(tuple, inertia["com_shift_m"])) == scene.object_com_shift_m
    assert inertia["com_moved_fraction"] == scene.object_com_moved_fraction == 0.5
    assert cfg.terminations.object_dropped.params["minimum_height"] == pytest.approx(scene.drop_below_z_m)
    limits = cfg.terminations.joint_speed_reflex.params["limits_rad_s"]
    assert limits == ARM_SPEED_LIMITS and limits["(panda_)?joint1"] == PANDA_ACTUATORS["joint1"].velocity_limit
    assert not any("finger" in k for k in limits)  # the finger speed limit ends no episode
    assert cfg.decimation == 4


def test_the_live_model_keeps_the_equality_draws_friction_per_shape_and_keeps_the_box_inertia(env_builder, scene):
    """1. The finger equality reaches MuJoCo-Warp; 2. + 5. every finger shape draws its own sliding friction once;
    3. the object's CoM is the drawn offset, its inertia the full box's plus the shift term; 4. success, drop and
    reflex are computed once per env step; 6. margin 0, gap 0.01."""
    from isaaclab_newton.physics import NewtonManager

    with env_builder(TASK, num_envs=2, seed=0) as env:
        env.reset()
        env.step(torch.zeros(env.num_envs, env.action_manager.total_action_dim))  # model changes are synced here
        solver = NewtonManager._solver
        m, mw = solver.mj_model, solver.mjw_model

        # 1. mjEQ_JOINT (type 2) finger_joint1 = 0 + 1·finger_joint2, the MJCF's solref and solimp, active
        assert m.neq == 1 and int(m.eq_type[0]) == 2 and bool(m.eq_active0[0])
        names = [m.joint(int(j)).name.rsplit("_", 2)[-2:] for j in (m.eq_obj1id[0], m.eq_obj2id[0])]
        assert names == [["finger", "joint1"], ["finger", "joint2"]]
        np.testing.assert_allclose(m.eq_data[0, :5], [0, 1, 0, 0, 0])
        np.testing.assert_allclose(m.eq_solref[0], [0.005, 1.0], rtol=1e-6)
        np.testing.assert_allclose(m.eq_solimp[0], [0.95, 0.99, 0.001, 0.5, 2.0], rtol=1e-6)
        assert m.ntendon == 0  # the MJCF's "split" tendon went with the gripper actuator

        # 2. + 5. per env (world) and per finger shape, sliding only
        fingers = [g for g in range(m.ngeom) if "_finger/" in m.geom(g).name]
        obj = [g for g in range(m.ngeom) if "/Object/" in m.geom(g).name]
        assert len(fingers) == 12 and len(obj) == 1
        friction = mw.geom_friction.numpy()  # (worlds, geoms, 3)
        pads = friction[:, fingers]
        lo, hi = scene.pad_friction
        assert ((lo <= pads[..., 0]) & (pads[..., 0] <= hi)).all()
        assert all(len(set(np.round(w, 7))) == 12 for w in pads[..., 0])  # 12 independent draws per env
        np.testing.assert_allclose(pads[..., 1:], np.broadcast_to([0.005, 0.0001], pads[..., 1:].shape), rtol=1e-5)
        obj_mu = friction[:, obj[0], 0]
        assert ((scene.object_friction[0] <= obj_mu) & (obj_mu <= scene.object_friction[1])).all()
        assert obj_mu[0] != obj_mu[1]
        env.reset()  # a new episode: new object body, same friction (drawn at startup only)
        env.step(torch.zeros(env.num_envs, env.action_manager.total_action_dim))
        np.testing.assert_array_equal(mw.geom_friction.numpy(), friction)

        # 3. the CoM is the drawn offset; the inertia about it is I_box(m) + m(1 − f)/f·(|c|²·1 − c·cᵀ)
        body = next(b for b in range(m.nbody) if "Object" in m.body(b).name)
        sizes = env.event_manager.get_term_cfg("reset_object").func.size_m.cpu().numpy()
        f = scene.object_com_moved_fraction
        for w, size in enumerate(sizes):
            mass, c = float(mw.body_mass.numpy()[w, body]), mw.body_ipos.numpy()[w, body].astype(float)
            assert all(lo <= v <= hi for v, (lo, hi) in zip(c, scene.object_com_shift_m, strict=True))
            box = box_inertia(mass, size)
            want = np.linalg.eigvalsh(box + mass * (1 - f) / f * (c @ c * np.eye(3) - np.outer(c, c)))
            np.testing.assert_allclose(np.sort(mw.body_inertia.numpy()[w, body]), want, rtol=1e-5)

        # 4. success (the hold reward), drop and reflex: computed once per env step, after its 4 physics steps
        calls: dict[str, int] = {}
        tm, rm = env.termination_manager, env.reward_manager
        counted = [(tm.get_term_cfg(n), n) for n in ("object_dropped", "joint_speed_reflex")] + [
            (rm.get_term_cfg("hold"), "hold")
        ]
        originals = [cfg.func for cfg, _ in counted]
        for cfg, name in counted:
            cfg.func = _counted(cfg.func, name, calls)
        physics = env._sim_step_counter
        for _ in range(3):
            env.step(torch.zeros(env.num_envs, env.action_manager.total_action_dim))
        for (cfg, _), func in zip(counted, originals, strict=True):
            cfg.func = func  # the metrics term reads the hold term's instance at the next reset
        assert env._sim_step_counter - physics == 12 and calls == {
            "object_dropped": 3,
            "joint_speed_reflex": 3,
            "hold": 3,
        }

        # 6. the table and the object: margin 0, gap 0.01 m; the robot's geoms: both 0
        for g in range(m.ngeom):
            if m.geom_contype[g] or m.geom_conaffinity[g]:
                gap = 0.01 if ("/Object/" in m.geom(g).name or "/Table" in m.geom(g).name) else 0.0
                assert m.geom_margin[g] == 0.0 and m.geom_gap[g] == pytest.approx(gap), m.geom(g).name
