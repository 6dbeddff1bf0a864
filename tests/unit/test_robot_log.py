"""Robot log format (realgap.robot_log/1): a round trip, and every bad input refused with a message naming it.
Also the identification's "not identifiable" rules on hand-made samples. numpy only: no simulator."""

from pathlib import Path

import numpy as np
import pytest

from realgap.envs.deploy.log import LogError, LogRecorder, load_log, metadata_sha256
from realgap.envs.format.metadata import load_metadata
from realgap.envs.identify.fit import Estimate, JointFit, _plant

pytestmark = pytest.mark.unit
POLICY = Path(__file__).resolve().parents[2] / "configs" / "policies" / "balance_g1" / "policy.json"


@pytest.fixture(scope="module")
def meta():
    return load_metadata(POLICY)


def _log(meta, n=20, tau_source="measured"):
    rec = LogRecorder(meta, 0.005, "position", tau_source, source="excitation", fixed_base=True, root_pos_w=[0, 0, 1])
    j = len(meta.joint_names)
    for k in range(n):
        q = np.full(j, 0.01 * k)
        rec.record(q + 0.1, q, np.ones(j), np.zeros(j), np.zeros(3), np.array([0, 0, -1.0]), np.zeros(meta.action_dim))
    return rec.to_log()


def _rewrite(src: Path, dst: Path, **changes) -> Path:
    data = dict(np.load(src))
    for key, value in changes.items():
        if value is None:
            data.pop(key)
        else:
            data[key] = value
    np.savez(dst, **data)
    return dst


def test_round_trip_keeps_every_channel(meta, tmp_path):
    path = _log(meta).save(tmp_path / "a.npz")
    log = load_log(path, joint_names=meta.joint_names, metadata_hash=metadata_sha256(meta))
    assert log.num_samples == 20 and log.tau_source == "measured" and log.fixed_base
    assert np.allclose(log.t[1], 0.005) and np.allclose(log.q_target - log.q, 0.1)  # 0.1 rad offset written above
    assert log.metadata().joint_names == meta.joint_names


def test_another_robot_and_another_export_are_refused(meta, tmp_path):
    path = _log(meta).save(tmp_path / "a.npz")
    with pytest.raises(LogError, match="joints of another robot"):
        load_log(path, joint_names=("panda_joint1",) * 29)
    with pytest.raises(LogError, match="joint order differs"):
        load_log(path, joint_names=tuple(reversed(meta.joint_names)))
    with pytest.raises(LogError, match="metadata sha256 .* another policy export"):
        load_log(path, metadata_hash="0" * 64)


@pytest.mark.parametrize("channel", ["qd", "q_target", "tau", "metadata_json"])
def test_a_missing_channel_is_named(meta, tmp_path, channel):
    path = _rewrite(_log(meta).save(tmp_path / "a.npz"), tmp_path / "b.npz", **{channel: None})
    with pytest.raises(LogError, match=f"missing channels.*{channel}"):
        load_log(path)


def test_non_finite_samples_are_located(meta, tmp_path):
    log = _log(meta)
    q = log.q.copy()
    q[7, 3] = np.nan
    path = _rewrite(log.save(tmp_path / "a.npz"), tmp_path / "b.npz", q=q)
    with pytest.raises(LogError, match=r"'q' has 1 non-finite values at samples \[7\] \(columns \[3\]\)"):
        load_log(path)


def test_short_irregular_and_edited_logs_are_refused(meta, tmp_path):
    with pytest.raises(LogError, match="only 5 samples"):
        load_log(_log(meta, n=5).save(tmp_path / "short.npz"))
    log = _log(meta)
    t = log.t.copy()
    t[10:] += 0.005  # a dropped sample
    with pytest.raises(LogError, match="not sampled every control_dt .* after sample 9"):
        load_log(_rewrite(log.save(tmp_path / "a.npz"), tmp_path / "t.npz", t=t))
    with pytest.raises(LogError, match="does not hash to metadata_sha256"):
        load_log(_rewrite(tmp_path / "a.npz", tmp_path / "h.npz", metadata_sha256=np.array("f" * 64)))
    with pytest.raises(LogError, match="format"):
        load_log(_rewrite(tmp_path / "a.npz", tmp_path / "f.npz", format=np.array("other/1")))


def test_friction_without_velocity_reversal_is_not_identifiable(meta):
    # q̇ > 0 throughout: τ − τ_rb = a·q̈ + f_c + f_v·q̇ cannot separate f_c from a constant offset.
    log = _log(meta, n=200)
    t = np.arange(200) * 0.005
    qd = 1.0 + 0.5 * np.sin(8 * t)  # 0.5 .. 1.5 rad/s, never reverses
    qdd = np.r_[np.diff(qd) / 0.005, 0.0]
    tau = 0.02 * qdd + 0.4 + 0.1 * np.r_[qd[1:], qd[-1]]  # a = 0.02 kg·m², f_c = 0.4 N·m, f_v = 0.1 N·m·s/rad
    qd_all, tau_all = np.tile(qd[:, None], (1, 29)), np.tile(tau[:, None], (1, 29))
    import dataclasses

    log = dataclasses.replace(log, qd=qd_all, tau=tau_all)
    fit = JointFit("left_knee_joint", 3, np.arange(200))
    _plant(fit, log, np.zeros_like(tau_all))
    assert not fit.estimates["coulomb"].identifiable and "one direction only" in fit.estimates["coulomb"].reason
    assert isinstance(fit.estimates["armature"], Estimate)
