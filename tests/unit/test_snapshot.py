"""The env-state snapshot behind exact resume: every tensor, generator, counter and buffer below the roots is captured
and written back in place (buffers a term re-assigns as it runs too), and a simulator array of another shape is
refused with its path. Plain dataclasses stand in for the env's terms here; the sim-level proof is the slow tier's
``test_resume_is_exact``."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np
import pytest
import torch
import warp as wp

from realgap.envs.run.snapshot import SnapshotError, capture, restore

pytestmark = pytest.mark.unit


@dataclass(frozen=True)
class Counter:
    count: int = 0


@dataclass
class Term:
    buffer: torch.Tensor = field(default_factory=lambda: torch.zeros(3))
    grown: torch.Tensor = field(default_factory=lambda: torch.zeros(()))
    generator: torch.Generator = field(default_factory=torch.Generator)
    history: deque = field(default_factory=lambda: deque(maxlen=4))
    timers: list = field(default_factory=lambda: [torch.ones(2)])
    logs: dict = field(default_factory=dict)
    counter: Counter = field(default_factory=Counter)
    rate: float = float("nan")
    sim: object = None


def _run(term: Term) -> list[float]:
    """What the term would do next: draw from its generator and read its state."""
    return [*torch.rand(2, generator=term.generator).tolist(), float(term.buffer.sum()), term.counter.count]


def test_capture_then_restore_continues_exactly():
    wp.init()
    term = Term(sim=None)
    term.generator.manual_seed(3)
    term.buffer += 1.0
    torch.rand(5, generator=term.generator)
    term.history.extend([1.0, 2.0])
    term.logs["a"] = 2.0
    roots = {"term": term, "arr": {"q": wp.array(np.arange(6.0, dtype=np.float32).reshape(3, 2), device="cpu")}}
    saved = capture(roots)
    expected = _run(term)

    # the term runs on: in-place updates, re-assigned buffers (another shape), a frozen counter replaced, logs added
    term.buffer.mul_(7.0)
    term.grown = torch.zeros(4)
    term.counter = Counter(9)
    term.history.append(5.0)
    term.timers[0].zero_()
    term.rate = 0.5
    term.logs["b"] = 1.0
    roots["arr"]["q"].fill_(-1.0)

    assert restore(roots, saved) > 8
    assert _run(term) == expected  # the generator and the buffers are back
    assert term.grown.shape == () and list(term.history) == [1.0, 2.0] and term.timers[0].tolist() == [1.0, 1.0]
    assert term.counter.count == 0 and np.isnan(term.rate) and term.logs["a"] == 2.0
    assert roots["arr"]["q"].numpy().ravel().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_a_simulator_array_of_another_shape_is_refused_with_its_path():
    wp.init()
    saved = capture({"sim": {"joint_q": wp.zeros(8, dtype=wp.float32, device="cpu")}})
    with pytest.raises(SnapshotError, match=r"sim\.joint_q.*does not fit"):
        restore({"sim": {"joint_q": wp.zeros(16, dtype=wp.float32, device="cpu")}}, saved)


class FakeTermCfg:
    """Stands in for an Isaac Lab manager term config: a config (never walked) holding its class-based term."""

    def __init__(self, func: object) -> None:
        self.func = func
        self.params = {"start": torch.zeros(2)}  # a config's own values: set once, not state


def test_a_class_based_term_kept_only_in_its_config_is_restored():
    """Isaac Lab keeps a class-based curriculum or event term only in its config's ``func``: its level and generator
    come back, the config's own values are left alone."""
    term = Term()
    term.generator.manual_seed(11)
    term.rate = 0.5
    cfg = FakeTermCfg(term)
    manager = {"_term_cfgs": [cfg], "_class_term_cfgs": [cfg]}  # one term reached twice: captured once
    saved = capture({"curriculum": manager, "fn": {"_term_cfgs": [FakeTermCfg(torch.rand)]}})
    assert "curriculum._term_cfgs.0.func.rate" in saved and not any(".params" in k for k in saved)
    expected = _run(term)
    term.rate = 0.0
    torch.rand(3, generator=term.generator)
    cfg.params["start"] += 1.0
    restore({"curriculum": manager}, saved)
    assert term.rate == 0.5 and _run(term) == expected
    assert cfg.params["start"].tolist() == [1.0, 1.0]
