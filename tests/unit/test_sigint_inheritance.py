"""A test run started in the background by a non-interactive shell inherits SIGINT ignored (POSIX: bash sets SIGINT and
SIGQUIT to SIG_IGN for ``&`` commands without job control), and every process its tests start inherits it over exec:
a simulator or driver sent SIGINT would never stop. conftest's ``pytest_configure`` undoes it; checked here in a
process started exactly that way."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
TESTS = Path(__file__).resolve().parents[1]

PROBE = """
import subprocess, sys
import conftest
before = conftest.sigint_ignored()
conftest.pytest_configure(None)
child = subprocess.run([sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT).__name__)"],
                       capture_output=True, text=True).stdout.strip()
print(before, conftest.SIGINT_IGNORED_AT_START, conftest.sigint_ignored(), child)
"""


def test_a_background_run_gets_sigint_back_for_itself_and_its_children(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    env = {**os.environ, "PYTHONPATH": str(TESTS)}  # the probe imports conftest (pytest's pythonpath is its own)
    out = subprocess.run(
        ["bash", "-c", f"'{sys.executable}' '{script}' & wait $!"],  # wait $!: the probe's own exit status
        capture_output=True,
        text=True,
        timeout=120,
        cwd=TESTS,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    # ignored at start (inherited from the shell's '&'), then handled here, and a child gets Python's default handler
    assert out.stdout.split() == ["True", "True", "False", "default_int_handler"], out.stdout
