"""One-way layers: the pure modules never load a simulator, and the actuator math loads no torch (the
torch-free deploy runtime reuses it). Checked in a fresh interpreter, since this test process may have loaded anything.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SIMULATORS = ("isaaclab", "isaaclab_newton", "isaaclab_rl", "newton", "warp", "mujoco", "pxr", "isaacsim", "omni")


def _loaded_after_import(modules: list[str], forbidden: tuple[str, ...]) -> list[str]:
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({forbidden!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return eval(out.stdout.strip().splitlines()[-1])


@pytest.mark.unit
def test_actuator_math_rates_and_robot_facts_load_neither_torch_nor_a_simulator():
    modules = ["realgap.actuators", "realgap.actuators.chain", "realgap.envs.rates", "realgap.envs.robots"]
    assert _loaded_after_import(modules, (*SIMULATORS, "torch")) == []


@pytest.mark.unit
def test_randomization_and_contact_math_and_robot_facts_load_no_simulator():
    modules = [
        "realgap.envs.dr.inertia",
        "realgap.envs.dr.inertia_sampling",
        "realgap.envs.dr.profile",
        "realgap.envs.robots",
    ]
    assert _loaded_after_import(modules, SIMULATORS) == []


@pytest.mark.unit
def test_srbd_math_loads_neither_torch_nor_a_simulator():
    modules = ["realgap.envs.srbd.inertia", "realgap.envs.srbd.dynamics"]
    assert _loaded_after_import(modules, (*SIMULATORS, "torch")) == []


@pytest.mark.unit
def test_task_registration_loads_no_simulator():
    # `import realgap.tasks` runs on every CLI start (task-id validation) and must stay cheap.
    assert _loaded_after_import(["realgap.tasks"], SIMULATORS) == []


@pytest.mark.unit
def test_cli_validation_path_loads_no_simulator_nor_rl():
    # what a bad CLI input costs before its message: task registry, device and checkpoint checks, run folders
    modules = [
        "realgap.envs.run.cli",
        "realgap.envs.run.run_dir",
        "realgap.envs.run.training",
        "realgap.envs.run.factory",
    ]
    assert _loaded_after_import(modules, (*SIMULATORS, "rsl_rl")) == []


# --- one-way layers, read from the source (every import, including those inside functions) ----------------------

REPO = Path(__file__).resolve().parents[2]
PACKAGE_DIRS = {"actuators": "actuators", "envs": "envs", "tasks": "tasks", "configs": "configs"}
LOWER = ("realgap.envs.rates", "realgap.envs.robots", "realgap.envs.sim", "realgap.envs.dr", "realgap.envs.deploy",
         "realgap.envs.format",
         "realgap.envs.srbd")  # fmt: skip
UPPER = ("realgap.envs.run", "realgap.envs.eval", "realgap.envs.sim2sim", "realgap.envs.export")
# Top-level modules allowed loose in envs/ (everything else lives in a sub-package).
LOOSE = {"__init__.py", "rates.py"}


def _module_name(path: Path) -> str:
    rel = path.relative_to(REPO).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return "realgap." + ".".join(parts)


def _realgap_imports(path: Path) -> set[str]:
    """Every ``realgap.*`` module a file imports, at any depth (functions included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("realgap.")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("realgap"):
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _violations(importers: tuple[str, ...], forbidden: tuple[str, ...]) -> list[str]:
    out = []
    for folder in PACKAGE_DIRS.values():
        for path in sorted((REPO / folder).rglob("*.py")):
            name = _module_name(path)
            if _within(name, importers):
                out += [f"{name} imports {m}" for m in sorted(_realgap_imports(path)) if _within(m, forbidden)]
    return out


@pytest.mark.unit
def test_actuators_import_nothing_above_them():
    assert _violations(("realgap.actuators",), ("realgap.envs", "realgap.tasks")) == []


@pytest.mark.unit
def test_lower_envs_layers_import_neither_tasks_nor_upper_layers():
    assert _violations(LOWER, ("realgap.tasks", *UPPER)) == []


@pytest.mark.unit
def test_robot_facts_and_rates_import_only_each_other_and_the_actuator_math():
    allowed = ("realgap.envs.robots", "realgap.envs.rates", "realgap.actuators")
    bad = [
        v
        for v in _violations(("realgap.envs.robots", "realgap.envs.rates"), ("realgap",))
        if not _within(v.split()[-1], allowed)
    ]
    assert bad == []


@pytest.mark.unit
def test_tasks_import_no_upper_layer():
    assert _violations(("realgap.tasks",), UPPER) == []


@pytest.mark.unit
def test_envs_top_level_holds_only_a_few_loose_modules():
    loose = {p.name for p in (REPO / "envs").glob("*.py")}
    assert loose <= LOOSE, sorted(loose - LOOSE)


@pytest.mark.unit
def test_sub_package_inits_and_the_deploy_runtime_load_neither_torch_nor_a_simulator():
    modules = [f"realgap.envs.{p}" for p in ("sim", "dr", "run", "eval", "sim2sim", "export", "deploy")]
    assert _loaded_after_import(modules, (*SIMULATORS, "torch")) == []
