"""realgap's own imports sit at the top of their module unless a measured cold start earns a deferred one (the rule
of :mod:`realgap.envs.eval.bench.imports`, the costs measured by ``realgap import_costs --out
docs/results/import_costs.json``). Read from the source: nothing is imported here but the rule itself.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from realgap.envs.eval.bench.imports import LAZY_THRESHOLD_MS, ImportGraph, unearned
from realgap.envs.run.command import jobs

REPO = Path(__file__).resolve().parents[2]
COSTS = REPO / "docs" / "results" / "import_costs.json"


def _costs() -> dict[str, float]:
    return json.loads(COSTS.read_text())["packages_ms"]


@pytest.mark.unit
def test_every_deferred_realgap_import_saves_a_measured_cold_start():
    found = [
        f"{d.module}:{d.line} {d.source} (adds {sorted(d.adds)})"
        for d in unearned(ImportGraph(REPO).deferred(), _costs())
    ]
    assert found == [], f"hoisting these costs < {LAZY_THRESHOLD_MS:.0f} ms: import at the top of the module"


@pytest.mark.unit
def test_every_module_a_deferred_import_spares_was_measured():
    spared = set().union(*(d.adds for d in ImportGraph(REPO).deferred()))
    assert spared - set(_costs()) == set(), "measure it: realgap import_costs --out docs/results/import_costs.json"


@pytest.mark.unit
def test_the_costs_were_measured_under_this_threshold():
    assert json.loads(COSTS.read_text())["threshold_ms"] == LAZY_THRESHOLD_MS


def _repo(tmp_path: Path, b_source: str) -> Path:
    (tmp_path / "envs").mkdir(parents=True)
    (tmp_path / "envs" / "__init__.py").write_text("")
    (tmp_path / "envs" / "a.py").write_text(
        "import numpy\n\n\ndef f():\n    from realgap.envs.b import x\n    return x\n"
    )
    (tmp_path / "envs" / "b.py").write_text(b_source)
    return tmp_path


@pytest.mark.unit
def test_the_rule_refuses_a_free_deferral_and_keeps_a_dear_one(tmp_path):
    costs = {"numpy": 130.0, "torch": 1600.0, "yaml": 27.0}
    free = _repo(tmp_path / "free", "import numpy\nimport yaml\nx = 1\n")
    (deferred,) = ImportGraph(free).deferred()
    assert (deferred.module, deferred.line, deferred.adds) == ("realgap.envs.a", 5, frozenset({"yaml"}))
    assert unearned([deferred], costs) == [deferred]
    dear = _repo(
        tmp_path / "dear", "from typing import TYPE_CHECKING\nimport torch\nif TYPE_CHECKING:\n    import yaml\nx = 1\n"
    )
    assert unearned(ImportGraph(dear).deferred(), costs) == []


@pytest.mark.unit
def test_the_rule_follows_the_parent_packages_a_hoisted_import_runs(tmp_path):
    repo = _repo(tmp_path, "x = 1\n")
    (repo / "envs" / "__init__.py").write_text("import torch\n")
    (deferred,) = ImportGraph(repo).deferred()
    assert deferred.adds == frozenset(), "envs/__init__ already runs (and loads torch) when envs.a is imported"


HEAVY = ("torch", "isaaclab.envs", "rsl_rl", "warp", "newton", "mujoco")
HELP_LOADS = {"record_grasp_states": "its --out default names the file of the Isaac Lab reverse-curriculum term"}
"""Jobs whose ``--help`` may load the training stack, each with its reason."""
_HELP = """
import json, runpy, sys
sys.argv = [{job!r}, "--help"]
try:
    runpy.run_module({module!r}, run_name="__main__")
except SystemExit:
    pass
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


@pytest.mark.unit
def test_every_jobs_help_loads_no_training_stack():
    loads = {}
    for job, module in jobs().items():
        code = _HELP.format(job=job, module=module, heavy=HEAVY)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
        assert out.returncode == 0, f"{job} --help failed:\n{out.stderr[-1500:]}"
        heavy = json.loads(out.stdout.strip().splitlines()[-1])
        if heavy:
            loads[job] = heavy
    assert set(loads) == set(HELP_LOADS), f"--help of these jobs loads the training stack: {loads}"
