"""scripts/benchmark.py's argument checks: parsing only, so the unit tier (moved from the slow tier)."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[2]


def test_benchmark_refuses_an_unknown_ppo_layout(capsys):
    import runpy

    parse_args = runpy.run_path(str(REPO / "scripts/benchmark.py"))["parse_args"]
    assert parse_args([]).ppo_layouts == ["one_process", "two_processes", "two_processes_double_envs"]
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--ppo_layouts", "one_process,three_processes"])
    assert exit_info.value.code == 2
    assert "unknown --ppo_layouts ['three_processes']; known: one_process" in capsys.readouterr().err
