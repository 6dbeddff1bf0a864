"""Unit tier: the balance protocol's numbers are written once, in ``envs/format/protocol.py``. Every other module
reads :data:`~realgap.envs.format.protocol.BALANCE_PROTOCOL` (or an export's protocol); a copy of the push range, the
push interval or the fall rule typed anywhere else in the package or the scripts fails here.

Read from the syntax tree (code only: comments and docstrings may quote the numbers), so an unrelated 0.45 (a push
magnitude in a sweep, a torque) passes: what is refused is the protocol's shape — the pair ``(0.2, 0.4)`` or
``(3.0, 5.0)``, their command-line text, ``0.45`` compared with or bound to a fall, ``1.0`` bound to a tilt.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "envs" / "format" / "protocol.py"
SCANNED = ("actuators", "envs", "tasks", "scripts")

PAIRS = {(0.2, 0.4): "the push range", (3.0, 5.0): "the push interval"}
TEXTS = {"0.2,0.4", "0.2, 0.4", "3,5", "3.0,5.0", "3, 5"}
FALL_HEIGHT, FALL_TILT = 0.45, 1.0
HEIGHT_NAMES = ("fall_height", "minimum_height", "root_height_below")
TILT_NAMES = ("fall_tilt", "limit_angle", "tilt_above")
PUSH_NAMES = ("push_mps", "magnitude_mps", "push_interval", "interval_range_s")


def _number(node: ast.AST) -> float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return float(node.value)
    return None


def _bound_to(name: str, value: ast.AST) -> str | None:
    """What is wrong with binding ``value`` to ``name`` (a keyword, a default, a dict key, an assignment)."""
    low, v = name.lower(), _number(value)
    if any(n in low for n in HEIGHT_NAMES) and v == FALL_HEIGHT:
        return f"{name} = {FALL_HEIGHT} (the fall height)"
    if any(n in low for n in TILT_NAMES) and v == FALL_TILT:
        return f"{name} = {FALL_TILT} (the fall tilt)"
    if any(n in low for n in PUSH_NAMES) and isinstance(value, ast.Constant) and value.value in TEXTS:
        return f"{name} = {value.value!r} (a push range as text)"
    return None


def protocol_literals(source: str) -> list[str]:
    """Every copy of a protocol number in ``source``, as ``"line N: what"``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Tuple | ast.List) and len(node.elts) == 2:
            pair = tuple(_number(e) for e in node.elts)
            if pair in PAIRS:
                found.append((line, f"{pair} ({PAIRS[pair]})"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in TEXTS:
            found.append((line, f"{node.value!r} (a protocol range as text)"))
        elif isinstance(node, ast.Compare):
            numbers = [_number(x) for x in (node.left, *node.comparators)]
            if FALL_HEIGHT in numbers:
                found.append((line, f"a comparison with {FALL_HEIGHT} (the fall height)"))
        elif isinstance(node, ast.Call):
            numbers = [_number(a) for a in node.args]
            if any(a == FALL_HEIGHT and b == FALL_TILT for a, b in zip(numbers, numbers[1:], strict=False)):
                found.append((line, f"arguments {FALL_HEIGHT}, {FALL_TILT} (the fall rule)"))
            found += [(line, w) for k in node.keywords if k.arg and (w := _bound_to(k.arg, k.value))]
            flag = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
            if isinstance(flag, str) and flag.startswith("--"):  # add_argument("--fall_height", default=0.45)
                found += [(line, w) for k in node.keywords if k.arg == "default" and (w := _bound_to(flag, k.value))]
        elif isinstance(node, ast.arguments):
            args = [*node.posonlyargs, *node.args]
            pairs = list(zip(args[len(args) - len(node.defaults) :], node.defaults, strict=True))
            pairs += [(a, d) for a, d in zip(node.kwonlyargs, node.kw_defaults, strict=True) if d is not None]
            found += [(d.lineno, w) for a, d in pairs if (w := _bound_to(a.arg, d))]
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=True):
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and (w := _bound_to(k.value, v)):
                    found.append((line, w))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                name = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else None
                if name and node.value is not None and (w := _bound_to(name, node.value)):
                    found.append((line, w))
    return [f"line {n}: {what}" for n, what in sorted(set(found))]


# What the modules said before the protocol had one source (each line was in the package), and one unrelated 0.45.
REMOVED = """
PUSH_MPS = (0.2, 0.4)
FALL_HEIGHT_M = 0.45
push = EventTerm(func=push_robot, interval_range_s=(3.0, 5.0), params={"magnitude_mps": PUSH_MPS})
fall_height = DoneTerm(func=mdp.root_height_below_minimum, params={"minimum_height": 0.45})
fall_tilt = DoneTerm(func=mdp.bad_orientation, params={"limit_angle": 1.0})
def survival(meta, push_mps=(0.2, 0.4), fall_height: float = 0.45, fall_tilt: float = 1.0): ...
fell = robot.tilt() > 1.0 or robot.root_height() < 0.45
results = [run_episode(runner, robot, s, duration_s, 0.45, 1.0) for s in plan]
p.add_argument("--push_mps", default="0.2,0.4")
p.add_argument("--push_interval_s", default="3,5")
p.add_argument("--fall_height", type=float, default=0.45)
robot = UnitreeG1Robot(meta, fall_tilt=1.0)
"""
UNRELATED = """
PUSH_LIMIT_MPS = (0.3, 0.35, 0.4, 0.45, 0.5)
sweep = {"push_mps": (0.0, 0.2, 0.4, 0.6), "joint_torque": 0.45}
scale = max(0.45, gain) * 1.0
"""


def test_the_scan_finds_every_literal_the_protocol_replaced_and_nothing_unrelated():
    found = protocol_literals(REMOVED)
    lines = {int(f.split(":")[0].split()[1]) for f in found}
    assert lines == set(range(2, 14)), found  # each of the 12 lines is caught
    assert protocol_literals(UNRELATED) == []


def test_no_protocol_literal_outside_its_source():
    hits = []
    for folder in SCANNED:
        for path in sorted((REPO / folder).rglob("*.py")):
            if path != SOURCE:
                hits += [f"{path.relative_to(REPO)} {h}" for h in protocol_literals(path.read_text())]
    assert hits == [], "read realgap.envs.format.protocol.BALANCE_PROTOCOL (or the export's protocol) instead:\n" + (
        "\n".join(hits)
    )
    assert protocol_literals(SOURCE.read_text()) != []  # the one place they are written
