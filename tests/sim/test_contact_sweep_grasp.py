"""Sim tier: the contact solref factors on the grasp, whose finger pads share priority 0 with the object.

Each swept env's finger colliders carry its solref and the dominant solmix in MuJoCo-Warp's per-world geom arrays (so
the pad-object pair takes the pads' solref: the mixing rule is checked in MuJoCo C in tests/unit/test_contact.py);
every other geom, and the nominal env, keep the task's values.
"""

import numpy as np
import pytest
import torch

pytestmark = pytest.mark.sim


def test_finger_solref_written_per_world_and_dominant():
    from conftest import build_env

    from realgap.envs.contact.params import DOMINANT_SOLMIX
    from realgap.envs.eval.robustness.apply import pin_term
    from realgap.envs.eval.robustness.prepare import prepare_env_cfg

    with build_env("Realgap-Grasp-Franka-Play-v0", 4, prepare=lambda cfg: prepare_env_cfg(cfg, episode_s=2.0)) as env:
        term = pin_term(env)
        nominal = term.nominal_values()
        assert (nominal["contact_timeconst_s"], nominal["contact_dampratio"]) == (0.02, 1.0)
        timeconst, dampratio = torch.tensor([0.02, 0.01, 0.08, 0.02]), torch.tensor([1.0, 1.0, 1.0, 0.25])
        term.set_values({"contact_timeconst_s": timeconst, "contact_dampratio": dampratio})
        env.reset()
        env.step(torch.zeros(env.action_space.shape))  # Newton applies shape-property changes at the next step
        model = env.sim.physics_manager._solver.mjw_model
        solmix, solref = model.geom_solmix.numpy(), model.geom_solref.numpy()
        fingers = len(term.contact_shapes)
        assert fingers >= 2
        assert not (solmix[0] > 1.0).any()  # the nominal env: the task's solmix
        for w in range(1, 4):
            dominant = solmix[w] == np.float32(DOMINANT_SOLMIX)
            assert int(dominant.sum()) == fingers, f"world {w}"
            np.testing.assert_allclose(solref[w][dominant], [[timeconst[w], dampratio[w]]] * fingers, rtol=1e-6)
            np.testing.assert_allclose(solref[w][~dominant], [[0.02, 1.0]] * int((~dominant).sum()), rtol=1e-6)
        # back to the nominal point: every env is the task's again
        term.set_values({"contact_timeconst_s": torch.full((4,), 0.02), "contact_dampratio": torch.ones(4)})
        env.step(torch.zeros(env.action_space.shape))
        assert not (model.geom_solmix.numpy() > 1.0).any()
        np.testing.assert_allclose(model.geom_solref.numpy(), np.broadcast_to([0.02, 1.0], solref.shape), rtol=1e-6)
