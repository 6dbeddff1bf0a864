"""Unit tier: the host-read audit (realgap.envs.sim.sync_audit) attributes each read by the call stack: realgap's when
realgap code runs below a library frame (a term Isaac Lab calls) or with no library frame at all, a library's when
the library reads on its own; reads of host copies (host_side) are nobody's."""

import pytest
import torch

from realgap.envs.sim.sync_audit import HostReadAudit, frame_kind, owner

pytestmark = pytest.mark.unit


def _module(name: str, source: str) -> dict:
    """Functions defined as if in module ``name`` (frames carry the module name the audit reads)."""
    scope = {"__name__": name, "torch": torch}
    exec(compile(source, f"<{name}>", "exec"), scope)
    return scope


TERM = _module("realgap.tasks.fake", "def term(x):\n    return float(x.sum())\n\ndef clean(x):\n    return x * 2\n")
LIB = _module("isaaclab.envs.fake", "def step(fn, x):\n    fn(x)\n    return x.nonzero()\n")
WRAPPER = _module("realgap.envs.fake", "def wrapped(x):\n    LIB['step'](TERM['clean'], x)\n    return x.tolist()\n")
WRAPPER.update(LIB=LIB, TERM=TERM)


@pytest.mark.parametrize(
    ("module", "kind"),
    [
        ("realgap.tasks.balance.mdp", "realgap"),
        ("isaaclab.envs.manager_based_rl_env", "library"),
        ("isaaclab_newton.physics", "library"),
        ("rsl_rl.runners", "library"),
        ("mujoco_warp._src.io", "library"),
        ("torch.nn.modules", "other"),
        ("test_x", "other"),
        ("realgap.envs.sim.sync_audit", "other"),
    ],
)
def test_frame_kinds_by_module(module, kind):
    assert frame_kind(module) == kind


@pytest.mark.parametrize(
    ("kinds", "who"),
    [
        (["other", "realgap", "library", "library", "realgap"], "realgap"),  # a term Isaac Lab calls
        (["other", "realgap", "library", "library"], "library"),  # Isaac Lab's own nonzero inside the wrapper's step
        (["other", "realgap"], "realgap"),  # the wrapper's own lines
        (["other", "library", "realgap", "library"], "realgap"),  # a term calling a library helper that syncs
        (["other", "library"], "library"),
        (["other", "other"], "other"),
    ],
)
def test_owner_by_stack(kinds, who):
    assert owner(kinds) == who


def test_audit_attributes_reads_and_passes_values_through():
    x = torch.tensor([0.0, 2.0, 3.0])
    with HostReadAudit() as audit:
        assert LIB["step"](TERM["term"], x).tolist() == [[1], [2]]  # the results are untouched
        assert WRAPPER["wrapped"](x) == [0.0, 2.0, 3.0]
        y = x[x > 1]  # the test's own boolean-mask index: nobody's sync to remove
    mine = [(r.op, r.where.split()[-1]) for r in audit.mine()]
    assert mine == [("__float__", "term"), ("tolist", "wrapped")], audit.reads
    assert {r.op for r in audit.reads if r.owner == "library"} == {"nonzero"}
    assert [r.owner for r in audit.reads if r.op == "__getitem__[bool mask]"] == ["other"] and y.numel() == 2
