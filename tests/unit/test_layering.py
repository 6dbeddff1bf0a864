"""One-way layers (STYLE.md 1): the pure modules never load a simulator, and the actuator math loads no torch (the
torch-free deploy runtime reuses it). Checked in a fresh interpreter, since this test process may have loaded anything.
"""

import subprocess
import sys

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
def test_actuator_math_and_rates_load_neither_torch_nor_a_simulator():
    modules = ["realgap.actuators", "realgap.actuators.chain", "realgap.actuators.datasheets", "realgap.envs.rates"]
    assert _loaded_after_import(modules, (*SIMULATORS, "torch")) == []


@pytest.mark.unit
def test_randomization_and_contact_math_and_robot_facts_load_no_simulator():
    modules = [
        "realgap.envs.inertia",
        "realgap.envs.inertia_sampling",
        "realgap.envs.dr_profile",
        "realgap.envs.robots",
    ]
    assert _loaded_after_import(modules, SIMULATORS) == []


@pytest.mark.unit
def test_task_registration_loads_no_simulator():
    # `import realgap.tasks` runs on every CLI start (task-id validation) and must stay cheap.
    assert _loaded_after_import(["realgap.tasks"], SIMULATORS) == []


@pytest.mark.unit
def test_cli_validation_path_loads_no_simulator_nor_rl():
    # what a bad CLI input costs before its message: task registry, device and checkpoint checks, run folders
    modules = ["realgap.envs.cli", "realgap.envs.run_dir", "realgap.envs.training", "realgap.envs.factory"]
    assert _loaded_after_import(modules, (*SIMULATORS, "rsl_rl")) == []
