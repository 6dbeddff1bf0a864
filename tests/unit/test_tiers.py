"""Every test carries a tier marker: the conftest hook stops collection at a test without one, naming it."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
TESTS = Path(__file__).resolve().parents[1]
INI = "[pytest]\nmarkers =\n    unit: u\n    sim: s\n    slow: l\n    gpu: g\n"


def collect(folder: Path) -> subprocess.CompletedProcess:
    shutil.copy(TESTS / "conftest.py", folder / "conftest.py")
    (folder / "pytest.ini").write_text(INI)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "--collect-only",
            "-q",
            str(folder),
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_an_unmarked_test_is_refused_by_name(tmp_path):
    (tmp_path / "test_mixed.py").write_text(
        "import pytest\n\n@pytest.mark.unit\ndef test_marked():\n    pass\n\ndef test_forgotten():\n    pass\n"
    )
    out = collect(tmp_path)
    assert out.returncode != 0, out.stdout[-2000:]
    text = out.stdout + out.stderr
    assert "test_mixed.py::test_forgotten" in text and "carry no tier marker" in text
    assert "test_mixed.py::test_marked" not in text.split("carry no tier marker")[1]


def test_a_module_marker_is_enough(tmp_path):
    (tmp_path / "test_ok.py").write_text("import pytest\n\npytestmark = pytest.mark.sim\n\ndef test_a():\n    pass\n")
    out = collect(tmp_path)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "test_ok.py::test_a" in out.stdout
