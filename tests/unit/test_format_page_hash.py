"""Unit tier: the description-hash shell command printed on docs/policy_format.md gives the hash the shipped G1
export records (a grep that missed ``<mesh name=… file=…>`` once gave another one)."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]


def test_the_documented_hash_command_gives_the_recorded_hash():
    if shutil.which("sha256sum") is None:
        pytest.skip("sha256sum (coreutils) is not installed")
    text = (REPO / "docs" / "policy_format.md").read_text()
    block = re.search(r"In a shell:\n\n```bash\n(.*?)```", text, re.S).group(1)
    command = "\n".join(line for line in block.splitlines() if not line.startswith("#"))
    recorded = json.loads((REPO / "configs/policies/balance_g1/policy.json").read_text())["robot"]["description"]
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }  # `python` = this one
    out = subprocess.run(["bash", "-ec", command], capture_output=True, text=True, check=True, timeout=60, env=env)
    assert out.stdout.split()[0] == recorded["sha256"]
    assert "= robot.description.sha256" in block and recorded["sha256"] in block
