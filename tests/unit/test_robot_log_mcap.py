"""Robot logs as MCAP (envs/deploy/log_mcap.py): a round trip equal to the .npz one, a viewer-readable layout, the
one-command conversion, and every bad MCAP refused naming what is wrong. numpy + mcap only: no simulator."""

import json
from pathlib import Path

import numpy as np
import pytest
from mcap.reader import make_reader
from mcap.writer import Writer

from realgap.envs.deploy.log import LogError, LogRecorder, load_log, metadata_sha256
from realgap.envs.deploy.log_mcap import main
from realgap.envs.deploy.mcap_codec import METADATA_NAME, SCHEMAS
from realgap.envs.format.metadata import load_metadata

pytestmark = pytest.mark.unit
POLICY = Path(__file__).resolve().parents[2] / "configs" / "policies" / "balance_g1" / "policy.json"


@pytest.fixture(scope="module")
def meta():
    return load_metadata(POLICY)


def _log(meta, n=25, tau_source="measured"):
    rec = LogRecorder(meta, 0.02, "position", tau_source, source="policy")
    rec.kp = np.linspace(50.0, 300.0, len(meta.joint_names))
    rng = np.random.default_rng(0)
    j = len(meta.joint_names)
    for k in range(n):
        rec.segment = k % 3 - 1
        rec.record(
            rng.normal(size=j),
            rng.normal(size=j),
            rng.normal(size=j),
            rng.normal(size=j),
            rng.normal(size=3),
            np.array([0.0, 0.1, -0.99]),
            rng.normal(size=meta.action_dim),
        )
    return rec.to_log()


FIELDS = (
    "t",
    "q_target",
    "q",
    "qd",
    "tau",
    "imu_ang_vel_b",
    "imu_projected_gravity_b",
    "action",
    "segment",
    "kp",
    "kd",
)


@pytest.mark.parametrize("tau_source", ["measured", "none"])
def test_mcap_round_trip_equals_the_npz_round_trip(meta, tmp_path, tau_source):
    log = _log(meta, tau_source=tau_source)
    a = load_log(log.save(tmp_path / "a.npz"), joint_names=meta.joint_names, metadata_hash=metadata_sha256(meta))
    b = load_log(log.save(tmp_path / "a.mcap"), joint_names=meta.joint_names, metadata_hash=metadata_sha256(meta))
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            np.testing.assert_allclose(y, x, rtol=0, atol=1e-12, err_msg=name)
    for name in (
        "joint_names",
        "control_dt",
        "physics_dt",
        "command_mode",
        "tau_source",
        "source",
        "fixed_base",
        "metadata_sha256",
        "metadata_json",
    ):
        assert getattr(a, name) == getattr(b, name), name
    assert np.isnan(b.root_pos_w).all()


def test_layout_is_what_a_viewer_reads(meta, tmp_path):
    path = _log(meta).save(tmp_path / "a.mcap")
    with path.open("rb") as fh:
        reader = make_reader(fh)
        summary = reader.get_summary()
        topics = {c.topic: c.message_encoding for c in summary.channels.values()}
        schemas = {s.name: s.encoding for s in summary.schemas.values()}
        first = next(reader.iter_messages(topics=["/joint_states"]))
    assert topics == {t: "json" for t in SCHEMAS}
    assert schemas == {name: "jsonschema" for name, _ in SCHEMAS.values()}
    msg = json.loads(first[2].data)
    assert msg["name"] == list(meta.joint_names) and len(msg["position"]) == len(meta.joint_names)
    assert summary.statistics.message_count == 25 * len(SCHEMAS)


def test_conversion_command_both_ways(meta, tmp_path, capsys):
    src = _log(meta).save(tmp_path / "a.npz")
    assert main([str(src), str(tmp_path / "b.mcap")]) == 0
    assert main([str(tmp_path / "b.mcap"), str(tmp_path / "c.npz")]) == 0
    np.testing.assert_array_equal(load_log(tmp_path / "c.npz").q, load_log(src).q)
    assert main([str(tmp_path / "missing.mcap"), str(tmp_path / "d.npz")]) == 2
    assert "no robot log" in capsys.readouterr().err


def _write(path, metadata=None, topics=SCHEMAS, rows=3, nan_row=None, schema_name=None):
    with path.open("wb") as fh:
        w = Writer(fh)
        w.start()
        ids = {}
        for topic, (name, schema) in topics.items():
            sid = w.register_schema(schema_name or name, "jsonschema", json.dumps(schema).encode())
            ids[topic] = w.register_channel(topic, "json", sid)
        if metadata is not None:
            w.add_metadata(METADATA_NAME, metadata)
        for k in range(rows):
            for cid in ids.values():
                body = {"position": [None if k == nan_row else 0.0], "velocity": [0.0], "name": ["j"]}
                w.add_message(cid, k * 10_000_000, json.dumps(body).encode(), k * 10_000_000)
        w.finish()
    return path


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.write_bytes(b""), "empty file"),
        (lambda p: p.write_bytes(b"not an mcap at all"), "not a readable MCAP file"),
        (lambda p: _write(p, metadata=None), "no 'realgap.robot_log' metadata record"),
        (lambda p: _write(p, metadata={"x": "1"}, schema_name="sensor_msgs/JointState"), "another schema"),
        (
            lambda p: _write(p, metadata={"x": "1"}, topics={"/joint_states": SCHEMAS["/joint_states"]}),
            "channels without messages",
        ),
        (lambda p: _write(p, metadata={"format": "realgap.robot_log/1"}), "messages lack a field"),
    ],
    ids=["empty", "garbage", "no-metadata", "other-schema", "missing-channel", "incomplete-metadata"],
)
def test_bad_mcap_is_refused_naming_the_problem(tmp_path, make, message):
    path = tmp_path / "bad.mcap"
    make(path)
    with pytest.raises(LogError, match=message):
        load_log(path)


def test_nan_samples_in_an_mcap_are_refused_with_their_index(meta, tmp_path):
    log = _log(meta)
    log.q[7, 3] = np.nan
    path = log.save(tmp_path / "nan.mcap")
    with pytest.raises(LogError, match=r"'q' has 1 non-finite values at samples \[7\]"):
        load_log(path)
