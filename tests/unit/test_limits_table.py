"""Unit tier: docs/limits.md says what the code says. Every value its tables give for an actuator spec field or an MJCF
joint range equals the number in ``envs/robots/panda.py`` / ``envs/robots/g1.py`` or the robot's MJCF (read with
MuJoCo, no stepping), and every datasheet field of every spec group, and every joint's range, has a row.

A row names its number in its ``code`` cell: ``robot group field`` (the field of every spec whose group key matches the
regex ``group``; the value is the first number of the row's value cell), ``robot group`` (a table whose columns are
fields) or ``robot-mjcf joints range`` (the first two numbers of the cell).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
PAGE = Path(__file__).resolve().parents[2] / "docs" / "limits.md"
FIELDS = ("peak_torque", "continuous_torque", "velocity_limit", "no_load_speed")
COLUMN_FIELDS = {
    "peak torque (N·m)": "peak_torque",
    "continuous torque (N·m)": "continuous_torque",
    "velocity limit (rad/s)": "velocity_limit",
    "no-load speed (rad/s)": "no_load_speed",
}
"""Header of a column that holds a spec field, in a table whose rows name a group (``robot group``)."""
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def _numbers(cell: str) -> list[float]:
    return [float(v) for v in NUMBER.findall(cell.replace("−", "-").replace(",", " "))]


def _rows(text: str) -> list[dict[str, str]]:
    """The rows of every markdown table in ``text`` with a ``code`` column, as header -> cell."""
    rows, header = [], None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
        elif not set(line) <= set("|-: "):
            if "code" in header:
                rows.append(dict(zip(header, cells, strict=True)))
    return rows


def _code() -> dict[str, object]:
    from realgap.envs.robots.g1 import G1, G1_ACTUATORS
    from realgap.envs.robots.panda import PANDA, PANDA_ACTUATORS

    return {"panda": (PANDA, PANDA_ACTUATORS), "g1": (G1, G1_ACTUATORS)}


def _ranges(robot: object) -> dict[str, tuple[float, float]]:
    import mujoco

    m = mujoco.MjModel.from_xml_path(str(robot.mjcf_path()))
    return {j: tuple(float(v) for v in m.joint(j).range) for j in robot.joint_names}


def check_page(text: str) -> tuple[list[str], set[tuple[str, str, str]], set[tuple[str, str]]]:
    """Compare every ``code`` reference of ``text`` with the code; returns (mismatches, covered spec fields as
    (robot, group, field), covered joints as (robot, joint))."""
    code, problems = _code(), []
    fields, joints = set(), set()
    ranges = {name: _ranges(robot) for name, (robot, _) in code.items()}
    for row in _rows(text):
        for ref in re.findall(r"`([^`]+)`", row["code"]):
            parts = ref.split()
            robot, selector = parts[0], parts[1]
            if robot.endswith("-mjcf"):
                name = robot.removesuffix("-mjcf")
                want_pair = tuple(_numbers(row.get("value", row.get("range", "")))[:2])
                matched = [j for j in ranges[name] if re.fullmatch(selector, j)]
                problems += [f"{ref}: no joint matches"] if not matched else []
                for joint in matched:
                    joints.add((name, joint))
                    have = ranges[name][joint]
                    if len(want_pair) != 2 or not all(
                        math.isclose(a, b, abs_tol=1e-9) for a, b in zip(have, want_pair, strict=True)
                    ):
                        problems.append(f"{ref}: {joint} has range {ranges[name][joint]}, the page says {want_pair}")
                continue
            specs = code[robot][1]
            groups = [g for g in specs if re.fullmatch(selector, g)]
            problems += [f"{ref}: no spec group matches"] if not groups else []
            if len(parts) == 3:
                claims = {parts[2]: _numbers(row["value"])[0]}
            else:
                claims = {f: _numbers(row[h])[0] for h, f in COLUMN_FIELDS.items() if h in row}
            for group in groups:
                for field, value in claims.items():
                    fields.add((robot, group, field))
                    actual = getattr(specs[group], field)
                    if actual is None or not math.isclose(actual, value, rel_tol=1e-9):
                        problems.append(f"{ref}: {group}.{field} is {actual}, the page says {value}")
    return problems, fields, joints


def test_every_value_on_the_page_is_the_codes():
    problems, _, _ = check_page(PAGE.read_text())
    assert problems == []


def test_every_datasheet_field_and_joint_range_has_a_row():
    _, fields, joints = check_page(PAGE.read_text())
    want_fields, want_joints = set(), set()
    for name, (robot, specs) in _code().items():
        want_joints |= {(name, j) for j in robot.joint_names}
        for group, spec in specs.items():
            want_fields |= {(name, group, f) for f in FIELDS if getattr(spec, f) is not None}
    assert want_fields - fields == set()
    assert want_joints - joints == set()


def test_a_wrong_number_on_the_page_is_caught():
    text = PAGE.read_text()
    assert "| 0.05 m/s per finger" in text and "| 139 | 55.6 |" in text
    edited = text.replace("| 0.05 m/s per finger", "| 0.1 m/s per finger").replace("| 139 | 55.6 |", "| 120 | 55.6 |")
    problems, _, _ = check_page(edited)
    assert len(problems) == 2, problems
    assert "fingers.velocity_limit is 0.05, the page says 0.1" in problems[0]
    assert "hip_roll_knee.peak_torque is 139.0, the page says 120.0" in problems[1]
