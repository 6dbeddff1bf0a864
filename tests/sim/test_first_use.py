"""A first use on an empty asset cache: the conversion says what it does and where its messages went, and prints
nothing that looks like an error (the converter's notes and USD's diagnostics land in the cache's convert.log)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.sim

SCRIPT = """
from realgap.envs.sim.assets import robot_usd
from realgap.envs.robots import G1
print(robot_usd(G1))
"""


def test_conversion_on_an_empty_cache_is_quiet(tmp_path):
    env = {**os.environ, "REALGAP_CACHE": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr
    text = out.stdout + out.stderr
    for alarming in ("Warning", "Could not open asset", "Error", "Traceback"):
        assert alarming not in text, text
    assert "first use of the g1 robot: converting g1.xml to USD" in out.stdout
    wrapper = out.stdout.strip().splitlines()[-1]
    log = os.path.join(os.path.dirname(wrapper), "convert.log")
    assert os.path.isfile(wrapper)
    assert f"messages (notes on MJCF elements USD does not carry, such as lights and sensors) are in {log}" in text
    assert "not supported" in open(log).read()  # the converter's notes were kept, not lost


def test_a_conversion_cut_short_by_a_full_disk_caches_nothing(tmp_path):
    """A file size limit stands in for a full disk: USD's writer truncates GeometryLibrary.usdc without an error, and
    a truncated cache entry failed every later run in Isaac Lab's loader. Each layer is read back before the rename."""
    import resource

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (2_000_000, 2_000_000))  # the G1's geometry layer is ~8 MB

    cache = tmp_path / "cache"
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "REALGAP_CACHE": str(cache)},
        preexec_fn=limited,
    )
    assert out.returncode != 0
    assert "the USD conversion wrote a corrupt layer" in out.stderr and "GeometryLibrary.usdc" in out.stderr
    assert [p.name for p in (cache / "assets").iterdir() if not p.name.startswith(".")] == []  # no entry, no temp
