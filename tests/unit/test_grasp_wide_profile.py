"""Unit tier: the grasp task's wide DR profile (configs/dr/grasp_wide.yaml) against its nominal profile -- every range
of ``grasp_nominal`` lies inside ``grasp_wide``'s, the gains stay inside the explicit-PD bound, every inertial sample is
a physical body (no simulator)."""

import dataclasses
import re
from collections.abc import Iterator
from typing import Any

import pytest
import torch
import yaml

from realgap.actuators.models import explicit_pd_stability_margin
from realgap.envs.dr.inertia import BodyInertia, box_inertia_c, consistency_mask
from realgap.envs.dr.inertia_sampling import sample_inertia
from realgap.envs.dr.profile import DRProfile, load_dr_profile, parse_dr_profile
from realgap.envs.rates import load_rate_profile
from realgap.envs.robots.panda import PANDA_ACTUATORS, PANDA_ARM_JOINTS, PANDA_FINGER_JOINTS

pytestmark = pytest.mark.unit

RANGE_KINDS = ("scale", "nonneg", "real", "positive")  # the range kinds of profile_schema's field metadata
KEY_KINDS = ("name", "regex")  # fields that identify a group: asset and body / joint selectors


def _ranges(obj: Any, path: str) -> Iterator[tuple[str, tuple[float, float]]]:
    """Every ``[lo, hi]`` range of a profile dataclass, by path (vec3 ranges per axis; fields left out skipped)."""
    for f in dataclasses.fields(obj):
        kind, value = f.metadata["kind"], getattr(obj, f.name)
        if value is None:
            continue
        if kind.startswith("vec3:"):
            yield from ((f"{path}.{f.name}.{axis}", r) for axis, r in zip("xyz", value, strict=True))
        elif kind in RANGE_KINDS:
            yield f"{path}.{f.name}", value


def _key(group: Any) -> tuple:
    """What identifies a group across profiles: its asset and selectors."""
    return tuple(getattr(group, f.name) for f in dataclasses.fields(group) if f.metadata["kind"] in KEY_KINDS)


def _sections(profile: DRProfile) -> dict[str, dict[tuple, Any]]:
    """Group sections by name -> {group key: group}; the profile's own top-level ranges under the key ``()``."""
    out: dict[str, dict[tuple, Any]] = {"": {(): profile}}
    for f in dataclasses.fields(DRProfile):
        if f.metadata["kind"] == "groups":
            groups = getattr(profile, f.name)
            out[f.name] = {_key(g): g for g in groups}
            assert len(out[f.name]) == len(groups), f"{profile.name}.{f.name}: two groups share a selector"
    return out


def test_grasp_wide_loads_for_the_grasp_task_and_round_trips():
    wide = load_dr_profile("grasp_wide")
    assert (wide.name, wide.task, wide.actuator_model, wide.push) == ("grasp_wide", "grasp", "chain", None)
    assert parse_dr_profile(yaml.safe_load(yaml.safe_dump(wide.to_dict()))) == wide  # the run folder's copy


def test_every_grasp_nominal_range_lies_inside_grasp_wide_and_each_section_widens():
    nominal, wide = _sections(load_dr_profile("grasp_nominal")), _sections(load_dr_profile("grasp_wide"))
    assert {s: set(g) for s, g in wide.items()} == {s: set(g) for s, g in nominal.items()}  # same sections and groups
    checked = 0
    for section, groups in nominal.items():
        widened = False
        for key, group in groups.items():
            wide_ranges = dict(_ranges(wide[section][key], f"{section}{list(key)}"))
            for path, (lo, hi) in _ranges(group, f"{section}{list(key)}"):
                w_lo, w_hi = wide_ranges[path]
                assert w_lo <= lo and hi <= w_hi, f"{path}: wide [{w_lo}, {w_hi}] does not contain [{lo}, {hi}]"
                widened |= (w_lo, w_hi) != (lo, hi)
                checked += 1
        assert widened or not groups, f"section {section or 'top level'}: no range of grasp_wide is wider"
    # every range was compared: payload 2 groups and link inertia 1 of 13 ranges each (3 scalars, 3 vec3 of 3, the
    # payload mass), joint friction 2, actuator 2 groups of 3, the delay, contact friction 2 x 1, geometry 1, pose 3 + 1
    assert checked == 2 * 13 + 13 + 2 + 2 * 3 + 1 + 2 + 1 + 4


def test_grasp_wide_gains_stay_inside_the_explicit_pd_bound_and_torque_limits_never_rise():
    dt = load_rate_profile("default").control_dt  # the grasp task's servo period (5 ms)
    joints = PANDA_ARM_JOINTS + PANDA_FINGER_JOINTS
    covered = set()
    for group in load_dr_profile("grasp_wide").actuator:
        assert group.torque_limit_scale[1] <= 1.0, group  # a datasheet limit is an upper bound
        names = [j for j in joints if any(re.fullmatch(p, j) for p in group.joints)]
        for spec in PANDA_ACTUATORS.values():
            for name in (n for n in names if any(re.fullmatch(p, n) for p in spec.joint_names_expr)):
                kp, kd = spec.kp * group.kp_scale[1], spec.kd * group.kd_scale[1]
                margin = explicit_pd_stability_margin(kp, kd, spec.total_inertia, dt)
                assert margin < 0.95, (name, margin)  # 0.653 at the datasheet gains; 1 diverges
                covered.add(name)
    assert covered == set(joints)


def test_grasp_wide_inertia_groups_sample_physical_bodies():
    # Stand-ins: the task's smallest and largest block (4 and 5 cm at 800 kg/m³) and a 0.7 kg hand-sized box.
    boxes = [(0.04, 0.04, 0.04, 800 * 0.04**3), (0.05, 0.05, 0.05, 800 * 0.05**3), (0.08, 0.2, 0.06, 0.7)]
    profile = load_dr_profile("grasp_wide")
    for *edges, m in boxes:
        mass = torch.full((512,), m, dtype=torch.float64)
        size = torch.tensor(edges, dtype=torch.float64).expand(512, 3)
        body = BodyInertia(mass, torch.zeros(512, 3, dtype=torch.float64), box_inertia_c(mass, size))
        for group in profile.payload + profile.link_inertia:
            sample = sample_inertia(body, group.randomization(), torch.Generator().manual_seed(0))
            assert bool(consistency_mask(sample, rtol=0.0).all()), (edges, group)
    # the object's CoM shift moves a lump f·m by Δ/f per axis: it must stay inside the smallest (4 cm) block
    block = next(g for g in profile.payload if g.asset == "object")
    assert max(max(-lo, hi) for lo, hi in block.com_shift_m) / block.com_moved_fraction <= 0.04 / 2
