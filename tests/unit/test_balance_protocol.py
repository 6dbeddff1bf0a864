"""Unit tier: the balance protocol (pushes, fall rule, episode length) is one validated record, the task's push term
and fall terminations are built from it, the export carries it and reads it back, and an export written before it
runs under the protocol recorded for the shipped G1 exports (any other without one is refused)."""

from __future__ import annotations

import argparse
import copy
import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from realgap.envs.format.protocol import BALANCE_PROTOCOL, BalanceProtocol, ProtocolError, parse_range

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
BALANCE = ROOT / "configs/policies/balance_g1"
GRASP = ROOT / "configs/policies/grasp_franka"


def test_the_default_is_the_balance_tasks_protocol():
    from realgap.envs.export.scene import balance_protocol
    from realgap.tasks.balance.env_cfg import balance_env_cfg

    assert BALANCE_PROTOCOL == BalanceProtocol((0.2, 0.4), (3.0, 5.0), 0.45, 1.0, 10.0)
    for crouch in (False, True):
        assert balance_protocol(balance_env_cfg(crouch=crouch)) == BALANCE_PROTOCOL  # read from the live config


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("push_mps", (0.4, 0.2), r"protocol.push_mps needs 0 <= LO <= HI, got 0.4,0.2"),
        ("push_mps", (-0.1, 0.2), r"protocol.push_mps needs 0 <= LO <= HI, got -0.1,0.2"),
        ("push_mps", (0.2, math.inf), r"protocol.push_mps needs two finite numbers"),
        ("push_mps", "fast", r"protocol.push_mps takes two numbers LO,HI, got 'fast'"),
        ("push_mps", (0.1, 0.2, 0.3), r"protocol.push_mps takes two numbers"),
        ("push_interval_s", (0.0, 1.0), r"protocol.push_interval_s needs LO > 0 s"),
        ("fall_height_m", -1.0, r"protocol.fall_height_m must be a finite number >= 0"),
        ("fall_tilt_rad", 0.0, r"protocol.fall_tilt_rad must be a finite number > 0 and <= 3.14159"),
        ("fall_tilt_rad", 4.0, r"protocol.fall_tilt_rad must be .* <= 3.14159"),
        ("episode_s", math.nan, r"protocol.episode_s must be a finite number > 0"),
        ("episode_s", "long", r"protocol.episode_s must be a number, got 'long'"),
    ],
)
def test_bad_values_are_refused_at_construction_by_name(field, value, message):
    with pytest.raises(ProtocolError, match=message):
        BALANCE_PROTOCOL.with_changes(**{field: value})


def test_ranges_read_text_and_pairs_alike():
    assert parse_range("0.1,0.3", "--push_mps") == (0.1, 0.3)
    assert parse_range([0.3, 0.3], "--push_mps") == (0.3, 0.3)  # a single magnitude
    assert BALANCE_PROTOCOL.with_changes(push_mps=[0, 0]).pushes is False and BALANCE_PROTOCOL.pushes


def test_the_fall_rule():
    # below 0.45 m or beyond 1 rad, both strict: at the thresholds the robot still stands
    assert not BALANCE_PROTOCOL.fell(0.45, 1.0)
    assert BALANCE_PROTOCOL.fell(0.449, 0.0) and BALANCE_PROTOCOL.fell(0.757, 1.01)
    no_height = BALANCE_PROTOCOL.with_changes(fall_height_m=0.0)  # 0: no height test (tilt alone, as over DDS)
    assert not no_height.fell(0.01, 0.5)


def test_round_trip_and_missing_fields():
    p = BALANCE_PROTOCOL.with_changes(push_mps=(0.1, 0.5), episode_s=20.0, fall_tilt_rad=None)
    assert (p.push_mps, p.episode_s, p.fall_tilt_rad) == ((0.1, 0.5), 20.0, 1.0)  # None keeps the value
    assert BalanceProtocol.from_dict(json.loads(json.dumps(p.to_dict()))) == p
    d = p.to_dict()
    del d["fall"]["tilt_above_rad"]
    with pytest.raises(ProtocolError, match="protocol: missing or malformed field 'tilt_above_rad'"):
        BalanceProtocol.from_dict(d)


def _data(folder: Path) -> dict:
    return json.loads((folder / "policy.json").read_text())


def test_shipped_balance_exports_without_a_protocol_run_under_the_default():
    from realgap.envs.format import load_policy

    meta, _ = load_policy(BALANCE)  # verified: digest and SHA256SUMS unchanged, the schema accepts it without one
    assert "protocol" not in _data(BALANCE)
    assert meta.protocol is None and meta.balance_protocol is BALANCE_PROTOCOL


def test_a_balance_export_without_a_protocol_and_not_shipped_before_the_field_is_refused():
    from realgap.envs.format.metadata import MetadataError, PolicyMetadata
    from realgap.envs.format.protocol import PROTOCOL_BEFORE_THE_FIELD

    data = _data(BALANCE)
    assert PROTOCOL_BEFORE_THE_FIELD[(data["task"], data["robot"]["description"]["sha256"])] is BALANCE_PROTOCOL
    data["robot"]["description"]["sha256"] = "cd" * 32  # another robot description: its numbers are unknown
    meta = PolicyMetadata.from_dict(data, "policy.json")
    with pytest.raises(MetadataError, match=r"has no 'protocol' .* export it again"):
        _ = meta.balance_protocol
    data["protocol"] = BALANCE_PROTOCOL.with_changes(fall_height_m=0.3).to_dict()  # recorded: read, whatever robot
    assert PolicyMetadata.from_dict(data, "policy.json").balance_protocol.fall_height_m == 0.3


def test_the_metadata_carries_a_protocol_and_reads_it_back():
    from realgap.envs.format.metadata import PolicyMetadata

    data = _data(BALANCE)
    changed = BALANCE_PROTOCOL.with_changes(push_mps=(0.3, 0.6), episode_s=20.0)
    data["protocol"] = changed.to_dict()
    meta = PolicyMetadata.from_dict(data, "policy.json")
    assert meta.protocol == changed and meta.balance_protocol == changed
    assert PolicyMetadata.from_dict(json.loads(meta.to_json())) == meta  # what the exporter's checked_json asserts
    assert json.loads(meta.to_json())["protocol"]["push"]["magnitude_mps"] == [0.3, 0.6]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["push"].update(magnitude_mps=[0.4, 0.2]), r"protocol.push_mps needs 0 <= LO <= HI"),
        (lambda d: d["push"].update(magnitude_mps=[-0.1, 0.2]), r"protocol.push.magnitude_mps"),  # the schema
        (lambda d: d["fall"].pop("root_height_below_m"), r"root_height_below_m"),
        (lambda d: d.update(extra=1), r"extra"),
    ],
)
def test_a_bad_protocol_in_an_export_is_refused_by_name(edit, message):
    from realgap.envs.format.metadata import MetadataError, PolicyMetadata

    data = _data(BALANCE)
    data["protocol"] = copy.deepcopy(BALANCE_PROTOCOL.to_dict())
    edit(data["protocol"])
    with pytest.raises(MetadataError, match=message):
        PolicyMetadata.from_dict(data, "policy.json")


def test_a_manipulation_export_has_no_balance_protocol():
    from realgap.envs.format.metadata import MetadataError, PolicyMetadata, load_metadata

    with pytest.raises(MetadataError, match="not a balance export"):
        _ = load_metadata(GRASP).balance_protocol
    data = _data(GRASP)
    data["protocol"] = BALANCE_PROTOCOL.to_dict()
    with pytest.raises(MetadataError, match="a balance protocol .* on a fixed-base or manipulation export"):
        PolicyMetadata.from_dict(data, "policy.json")


def test_the_protocol_flags_are_declared_once_and_read_by_one_parser():
    from realgap.envs.deploy.flags import add_protocol_flags, protocol_from_flags

    p = argparse.ArgumentParser()
    add_protocol_flags(p)
    args = p.parse_args(["--push_mps", "0.3,0.5", "--fall_tilt", "0.8"])
    got = protocol_from_flags(args, BALANCE_PROTOCOL, duration_s=4.0)
    assert got == BALANCE_PROTOCOL.with_changes(push_mps=(0.3, 0.5), fall_tilt_rad=0.8, episode_s=4.0)
    assert protocol_from_flags(p.parse_args([]), BALANCE_PROTOCOL) == BALANCE_PROTOCOL  # nothing given: the base
    for argv, message in (
        (["--push_mps", "0.5,0.3"], r"--push_mps needs 0 <= LO <= HI, got 0.5,0.3"),
        (["--push_interval_s", "0,1"], r"--push_interval_s needs LO > 0 s"),
        (["--fall_height", "nan"], r"--fall_height must be a finite number"),
    ):
        with pytest.raises(ProtocolError, match=message):
            protocol_from_flags(p.parse_args(argv), BALANCE_PROTOCOL)
    with pytest.raises(ProtocolError, match=r"--duration_s must be a finite number > 0"):
        protocol_from_flags(p.parse_args([]), BALANCE_PROTOCOL, duration_s=0.0)


def test_two_commands_name_a_push_range_starting_with_a_minus_the_same_way():
    # argparse reads "-1,0.2" as a flag ("expected one argument"); a parser with the protocol flags joins it to its flag
    import runpy

    from realgap.envs.run.deploy import main as deploy

    hidden_compare = runpy.run_path(str(ROOT / "scripts/hidden_compare.py"))["main"]
    message = "^" + re.escape("--push_mps needs 0 <= LO <= HI, got -1,0.2") + "$"
    with pytest.raises(ProtocolError, match=message):
        deploy(["--policy", str(BALANCE), "--robot", "mujoco", "--push_mps", "-1,0.2"])
    with pytest.raises(ProtocolError, match=message):
        hidden_compare(["--policy", str(BALANCE), "--against", str(BALANCE), "--push_mps", "-1,0.2"])


def test_the_push_term_is_found_by_its_type_whatever_its_name():
    from realgap.envs.dr.push import find_push, push_robot
    from realgap.tasks.balance.env_cfg import balance_env_cfg

    events = balance_env_cfg().events
    shove, events.push = events.push, None  # renamed: the name no longer says what it is
    events.shove = shove
    assert find_push(events) == ("shove", shove)
    events.another = SimpleNamespace(func=push_robot, params={})
    with pytest.raises(ValueError, match=r"more than one push term \(\['shove', 'another'\]\)"):
        find_push(events)
    events.shove = events.another = None  # switched off
    assert find_push(events) is None
