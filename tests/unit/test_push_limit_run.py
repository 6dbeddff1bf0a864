"""The push limit's library side (``envs/eval/push/limit_run.py``): its refusals before anything is built, and the
survival table and limit from hand-made counts (``limit.survival_table``, which the SRBD limit uses too)."""

from pathlib import Path

import pytest

from realgap.envs.eval.push.limit import survival_table
from realgap.envs.eval.push.limit_run import PushLimitRequest, check_request, limit_lines

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"engines": "isaac,bullet"}, "--engines: choose from isaac, mujoco"),
        ({"values": "0.2,-0.1"}, "--values must be >= 0 m/s"),
        ({"recover_s": 0.0}, "--recover_s > 0"),
    ],
)
def test_bad_inputs_are_refused_before_the_export_is_read(fields, message):
    with pytest.raises(ValueError, match=message):
        check_request(PushLimitRequest(policy="/nonexistent", **fields))


def test_a_grasp_export_is_refused():
    with pytest.raises(ValueError, match="the push limit is a balance measure"):
        check_request(PushLimitRequest(policy=str(REPO / "configs/policies/grasp_franka")))


def test_the_limit_is_the_largest_magnitude_survived_in_half_the_episodes():
    # 0.2: 8/8, 0.3: 4/8 (= 0.5, still held), 0.4: 3/8 -> limit 0.3; the zero action holds none
    table = survival_table([0.2, 0.3, 0.4], {"policy": [(8, 8), (4, 8), (3, 8)], "zero action": [(3, 8)] * 3})
    assert table["policy"]["limit_mps"] == 0.3 and table["zero action"]["limit_mps"] is None
    assert [r["survival"] for r in table["policy"]["rows"]] == [1.0, 0.5, 0.375]
    low, high = table["policy"]["rows"][1]["ci95"]
    assert low < 0.5 < high
    lines = limit_lines({"engines": {"mujoco": table}})
    assert lines[0].endswith("limit 0.3 m/s  | 0.2:1.00  0.3:0.50  0.4:0.38") and "limit — m/s" in lines[1]
