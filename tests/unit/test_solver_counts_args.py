"""scripts/solver_counts.py's argument checks: parsing only (the counts themselves are a measurement, run by hand)."""

import runpy
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[2]


def test_solver_counts_parses_and_refuses_a_zero_count(capsys):
    parse_args = runpy.run_path(str(REPO / "scripts/solver_counts.py"))["parse_args"]
    args = parse_args(["--task", "Realgap-Grasp-Franka-v0"])
    assert (args.num_envs, args.steps, args.no_box) == (16, 240, False)
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--steps", "0"])
    assert exit_info.value.code == 2 and "--steps" in capsys.readouterr().err
