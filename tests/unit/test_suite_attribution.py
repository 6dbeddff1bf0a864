"""Unit tier: the error-group attribution pools suite runs per group and pairs them with the family as drawn."""

import csv
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit


def _run(root: Path, name: str, times: list[float]) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    with (folder / "episodes.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["family", "robot", "episode", "success", "time_s", "ended_by", "max_lift_m"])
        w.writeheader()
        for i, t in enumerate(times):
            w.writerow(
                dict(
                    family="worn", robot=i // 2, episode=i % 2, success=t == 10.0, time_s=t, ended_by="", max_lift_m=""
                )
            )


def test_groups_are_pooled_over_policies_and_paired_with_none(tmp_path: Path):
    from realgap.envs.eval.suite.attribution import attribution, write_attribution

    _run(tmp_path, "g_s1_none", [10.0, 2.0, 4.0, 10.0])
    _run(tmp_path, "g_s2_none", [3.0, 3.0, 10.0, 10.0])
    _run(tmp_path, "g_s1_drives", [10.0, 10.0, 6.0, 10.0])  # +8, +2 over s1's four episodes
    _run(tmp_path, "g_s2_drives", [3.0, 10.0, 10.0, 5.0])  # +7 and -5
    out = attribution(tmp_path)
    assert out["policies"] == ["g_s1", "g_s2"]
    none, drives = out["groups"]["none"], out["groups"]["drives"]
    assert (none["successes"], none["episodes"], drives["successes"]) == (4, 8, 5)
    assert drives["time_vs_none_s"] == pytest.approx((8 + 2 + 7 - 5) / 8)
    assert (drives["only_restored"], drives["only_none"]) == (2, 1)
    assert none["time_vs_none_s"] == 0.0
    path = write_attribution(tmp_path)
    assert json.loads(path.read_text())["groups"]["drives"]["rate"] == 5 / 8
    assert "| drives | 8 | 0.625" in (tmp_path / "attribution.md").read_text()


def test_a_missing_baseline_or_a_stray_folder_is_refused(tmp_path: Path):
    from realgap.envs.eval.suite.attribution import attribution

    _run(tmp_path, "g_s1_drives", [10.0])
    with pytest.raises(ValueError, match="no <policy>_none runs"):
        attribution(tmp_path)
    _run(tmp_path, "g_s1_none", [10.0])
    _run(tmp_path, "g_s1_gains", [10.0])
    with pytest.raises(ValueError, match="g_s1_gains: name it <policy>_<group>"):
        attribution(tmp_path)
