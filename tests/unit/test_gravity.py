"""Batched torch g(q) (realgap.envs.sim.gravity) against pinocchio's computeGeneralizedGravity and a hand-computed
pendulum.

The Panda (revolute joints, two prismatic fingers, one of them along −y) and the G1 (29 revolute joints in a tree,
root fixed) on 50 random configurations inside the joint limits: float64 within 1e-6 and float32 within 1e-4 of the
largest torque of each configuration (‖g_torch − g_pin‖∞ / ‖g_pin‖∞).
"""

import importlib.metadata
import subprocess
import sys

import numpy as np
import pytest
import torch

from realgap.envs.sim.gravity import TorchGravity, urdf_model
from realgap.envs.sim2sim.dynamics import URDF_PATHS

pytestmark = pytest.mark.unit
PANDA_JOINTS = [f"joint{i}" for i in range(1, 8)] + ["finger_joint1", "finger_joint2"]


def _random_q(model, n: int, seed: int) -> np.ndarray:
    lo, hi = model.lowerPositionLimit, model.upperPositionLimit
    return lo + (hi - lo) * np.random.default_rng(seed).random((n, model.nq))


def _pinocchio_gravity(model, q: np.ndarray) -> np.ndarray:
    import pinocchio as pin

    data = model.createData()
    return np.stack([pin.computeGeneralizedGravity(model, data, qi) for qi in q])


def _relative_error(out: torch.Tensor, ref: np.ndarray) -> float:
    err = np.abs(out.double().numpy() - ref).max(axis=1) / np.abs(ref).max(axis=1)
    return float(err.max())


@pytest.mark.parametrize("robot", ["panda", "g1"])
def test_torch_gravity_matches_pinocchio(robot):
    model = urdf_model(URDF_PATHS[robot])
    names = [model.names[i] for i in range(1, model.njoints)]
    gravity = TorchGravity.from_pinocchio(model, names)
    q = _random_q(model, 50, seed=7)
    ref = _pinocchio_gravity(model, q)
    assert np.abs(ref).max() > 10.0  # N·m: loaded configurations, not a trivially zero comparison
    assert _relative_error(gravity(torch.tensor(q, dtype=torch.float64)), ref) < 1e-6
    assert _relative_error(gravity(torch.tensor(q, dtype=torch.float32)), ref) < 1e-4


def test_columns_in_simulator_order_and_names_without_prefix():
    # the simulator names the Panda's joints without the URDF's "panda_" prefix and may order or subset them
    model = urdf_model(URDF_PATHS["panda"])
    order = [3, 0, 8, 6, 1]  # model joints 4, 1, finger 2, 7, 2; the others stay at 0
    gravity = TorchGravity.from_pinocchio(model, [PANDA_JOINTS[i] for i in order], prefixes=("panda_",))
    q = _random_q(model, 20, seed=3)
    q[:, [i for i in range(9) if i not in order]] = 0.0
    ref = _pinocchio_gravity(model, q)[:, order]
    out = gravity(torch.tensor(q[:, order]))
    torch.testing.assert_close(out, torch.tensor(ref), rtol=0.0, atol=1e-9)


def test_pendulum_by_hand():
    # One hinge about world y at the origin, 2 kg at 0.5 m along its x axis, g = (0, 0, -9.81) m/s².
    # At angle θ the CoM is at 0.5·(cos θ, 0, -sin θ) m; g(θ) = ∂V/∂θ with V = m·9.81·z = -9.81·sin θ J,
    # so g(θ) = -9.81·cos θ N·m: -9.81 at θ = 0 (arm horizontal), 0 at θ = π/2 (hanging), +9.81 at θ = π.
    eye = np.eye(3)[None]
    gravity = TorchGravity(
        [-1],
        eye,
        np.zeros((1, 3)),
        [[0.0, 1.0, 0.0]],
        [False],
        [2.0],
        [[0.5, 0.0, 0.0]],
        [0.0, 0.0, -9.81],
        columns=[0],
    )
    q = torch.tensor([[0.0], [np.pi / 2], [np.pi]], dtype=torch.float64)
    torch.testing.assert_close(gravity(q), torch.tensor([[-9.81], [0.0], [9.81]], dtype=torch.float64))
    # a prismatic joint along world z carrying 3 kg holds 3 · 9.81 N whatever its position
    lift = TorchGravity(
        [-1], eye, np.zeros((1, 3)), [[0.0, 0.0, 1.0]], [True], [3.0], [[0.1, 0.2, 0.3]], [0.0, 0.0, -9.81], columns=[0]
    )
    torch.testing.assert_close(lift(torch.tensor([[0.0], [0.7]])), torch.full((2, 1), 29.43))


def test_unsupported_models_and_names_are_rejected():
    import pinocchio as pin

    with pytest.raises(ValueError, match=r"joints \['elbow'\] are not in the pinocchio model"):
        TorchGravity.from_pinocchio(urdf_model(URDF_PATHS["panda"]), ["elbow"], prefixes=("panda_",))
    urdf = importlib.metadata.distribution("example-robot-data").locate_file(URDF_PATHS["g1"])
    floating = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
    with pytest.raises(ValueError, match="is not 1-DoF revolute or prismatic"):
        TorchGravity.from_pinocchio(floating, [floating.names[2]])
    with pytest.raises(ValueError, match="every parent must precede its joint"):
        TorchGravity(
            [1, -1],
            np.tile(np.eye(3), (2, 1, 1)),
            np.zeros((2, 3)),
            np.eye(3)[:2],
            [False, False],
            [1.0, 1.0],
            np.zeros((2, 3)),
            [0.0, 0.0, -9.81],
            columns=[0],
        )


def test_gravity_module_loads_neither_pinocchio_nor_a_simulator():
    code = (
        "import sys, realgap.envs.sim.gravity\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pinocchio', 'isaaclab', 'newton', 'warp', 'mujoco'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
