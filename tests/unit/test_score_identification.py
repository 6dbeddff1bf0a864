"""Unit tier: the committed identification proof (docs/results/identify/) scores as the README says against the hidden
robot's truth, and a file that is not an identified spec is refused by name."""

import importlib.util
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[2]

SPEC = str(REPO / "configs/identified/g1_hidden_seed3.yaml")
ARGS = ["--spec", SPEC, "--policy", str(REPO / "configs/policies/balance_g1"), "--hidden_seed", "3"]


def _main():
    spec = importlib.util.spec_from_file_location("score_identification", REPO / "scripts/score_identification.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def test_the_committed_spec_recovers_the_hidden_drives(capsys):
    assert _main()(ARGS) == 0
    out = capsys.readouterr().out
    assert "exact" in out.splitlines()[0]
    errors = [float(e) for e in re.findall(r"\| ([0-9.]+) % \|$", out, flags=re.M)]
    assert len(errors) >= 12 and max(errors) < 1.0
    assert out.count("not identifiable") == 2  # knee and shoulder never saturated


def test_a_file_that_is_not_a_spec_is_refused(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("format: something_else\n")
    with pytest.raises(ValueError, match="not an identified spec"):
        _main()(["--spec", str(bad), *ARGS[2:]])
