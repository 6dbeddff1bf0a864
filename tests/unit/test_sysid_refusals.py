"""mujoco.sysid beside realgap's identification (envs/identify/sysid_mujoco.py): logs it cannot use are refused
before any fitting starts, naming why. numpy only (the refusals come before mujoco.sysid is imported)."""

from pathlib import Path

import numpy as np
import pytest

from realgap.envs.deploy.log import LogError, LogRecorder
from realgap.envs.format.metadata import load_metadata
from realgap.envs.identify.sysid_mujoco import fit_plant

pytestmark = pytest.mark.unit
POLICY = Path(__file__).resolve().parents[2] / "configs" / "policies" / "balance_g1" / "policy.json"


def _log(tau_source="measured", fixed_base=True, excited=0):
    meta = load_metadata(POLICY)
    rec = LogRecorder(meta, 0.005, "position", tau_source, source="excitation", fixed_base=fixed_base)
    j = len(meta.joint_names)
    for k in range(40):
        rec.segment = excited if k >= 5 else -1
        rec.record(
            np.zeros(j),
            np.zeros(j),
            np.zeros(j),
            np.zeros(j),
            np.zeros(3),
            np.array([0, 0, -1.0]),
            np.zeros(meta.action_dim),
        )
    return rec.to_log()


def test_a_log_without_torque_is_refused():
    with pytest.raises(LogError, match="replays torques: this log has none"):
        fit_plant(_log(tau_source="none"))


def test_a_floating_base_log_is_refused():
    with pytest.raises(LogError, match="welded base"):
        fit_plant(_log(fixed_base=False))


def test_a_joint_the_log_did_not_excite_is_refused():
    log = _log(excited=0)
    other = log.joint_names[5]
    with pytest.raises(LogError, match=f"joint '{other}' was not excited"):
        fit_plant(log, [other])
