"""Per-step constants are built once per (values, dtype, device) and shared: no host-to-device copy per step."""

import ast
from pathlib import Path

import pytest
import torch

from realgap.envs.sim.constants import device_constant

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[2]


def test_same_values_give_the_same_tensor_object():
    a = device_constant((1.0, 0.0, 0.0), torch.float32, "cpu")
    assert device_constant([1, 0, 0], torch.float32, torch.device("cpu")) is a  # lists and ints normalise
    assert torch.equal(a, torch.tensor([1.0, 0.0, 0.0]))


def test_nested_points_keep_their_shape_and_dtype_separates_entries():
    pts = ((0.1, 0.02, -0.03), (-0.05, 0.02, -0.03))
    a = device_constant(pts, torch.float32)
    assert a.shape == (2, 3) and device_constant(pts, torch.float64) is not a


@pytest.mark.parametrize(
    ("path", "functions"),
    [("tasks/balance/mdp.py", {"heading_w", "_sole_points_3d"}), ("tasks/grasp/mdp.py", {"tcp_pos_w"})],
)
def test_per_step_terms_build_no_tensor_from_host_values(path, functions):
    # the per-step helpers named in issue #46 must not call torch.tensor (a host-to-device copy on CUDA)
    tree = ast.parse((REPO / path).read_text())
    seen = set()
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name in functions):
        seen.add(fn.name)
        calls = [c for c in ast.walk(fn) if isinstance(c, ast.Call) and ast.unparse(c.func) == "torch.tensor"]
        assert not calls, f"{path}:{fn.name} builds torch.tensor per step"
    assert seen == functions


def test_mirror_layout_moves_once_and_keeps_its_maps():
    # the mirror index/sign go to the training device once (MirrorLayout.to), not per PPO mini-batch
    from test_g1_mirror import _layout

    layout = _layout()
    moved = layout.to("cpu")
    assert moved.groups.keys() == layout.groups.keys()
    for a, b in [(layout.actions, moved.actions), *((layout.groups[k], moved.groups[k]) for k in layout.groups)]:
        assert torch.equal(a.index, b.index) and torch.equal(a.sign, b.sign)


def test_batched_latency_rule_equals_the_scalar_rule():
    # the robustness sweep's per-env Python loop became one tensor op; it must round exactly as latency_to_steps
    from realgap.actuators.delay import latency_to_steps, latency_to_steps_batch

    dt = 0.005
    lat = torch.tensor([0.0, 0.002, 0.0025, 0.0075, 0.015, 0.0349, 0.04, float("nan")], dtype=torch.float32)
    want = [latency_to_steps(float(s), dt) if s == s else 0 for s in lat]  # 7.5 ms at 5 ms is 2 steps (ties up)
    assert latency_to_steps_batch(lat, dt).tolist() == want
