"""CI's packaging check: the wheel built from the tree, installed non-editable, holds every module and drives both
robots.

    <venv>/bin/python .ci/wheel_check.py --clone .       # the venv holds the wheel with [deploy,unitree,franka]

Run with the interpreter of a clean venv into which the built wheel was installed (not editable) with the
``deploy,unitree,franka`` extras; stdlib only, from a scratch folder so the clone can never shadow the install:

1. ``realgap`` resolves to that venv's site-packages, and the ``realgap`` console command is installed;
2. every Python file of the clone's package folders, and every file the package-data globs of pyproject.toml match, is
   in the install (a hand-written package list once dropped ``realgap.envs.deploy.drivers``);
3. every module imports, except those that need the training stack this venv does not hold (torch, Isaac Lab, ...):
   a module missing from ``realgap`` itself, or any failure under the robot-side packages, fails the check;
4. ``realgap deploy --robot unitree_g1`` runs an episode of the balance export against the project's DDS simulator
   (``realgap g1_dds_sim``) and ``--robot franka`` one of the grasp export against franky-sim, two processes each on
   loopback, as docs/robots.md prescribes for a robot computer.

Exits 1 with every failure listed; prints what it checked.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

TOP_LEVEL = ("actuators", "envs", "tasks", "configs", "scripts")
"""The clone's folders installed as ``realgap.<name>`` (setup.py)."""
ROBOT_SIDE = ("realgap.envs.deploy", "realgap.envs.format", "realgap.envs.run.deploy", "realgap.scripts.deploy")
"""Packages a robot computer runs (the runtime, the format, the ``realgap deploy`` command): every module below them
must import in this venv."""
DOMAIN = 99
"""DDS domain of the G1 run: off 0 (where a real robot on the network would listen) and below the test suite's."""


def check_install(clone: Path) -> list[str]:
    """Steps 1 and 2: where ``realgap`` comes from, the console command, and every file of the clone installed."""
    import realgap

    errors = []
    roots = [Path(p).resolve() for p in realgap.__path__]
    if any(not str(root).startswith(str(Path(sys.prefix).resolve())) for root in roots):
        errors.append(f"realgap resolves to {roots}, not to this venv ({sys.prefix}): the check would test the clone")
    if shutil.which("realgap", path=str(Path(sys.executable).parent)) is None:
        errors.append(f"no 'realgap' console command in {Path(sys.executable).parent}")
    installed = roots[0]
    data = tomllib.loads((clone / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    files = [p for top in TOP_LEVEL for p in (clone / top).rglob("*.py") if "__pycache__" not in p.parts]
    for package, globs in data.items():  # package-data: the globs pyproject.toml declares, e.g. configs/**/*.yaml
        folder = clone / package.removeprefix("realgap.").replace(".", "/")
        files += [p for pattern in globs for p in folder.glob(pattern) if p.is_file()]
    missing = sorted({str(p.relative_to(clone)) for p in files if not (installed / p.relative_to(clone)).is_file()})
    if missing:
        errors.append(f"{len(missing)} files of the clone are not in the install: {missing[:20]}")
    print(f"[wheel] realgap from {installed}; files missing from the install: {len(missing)}")
    return errors


def check_imports() -> list[str]:
    """Step 3: import every module; a failure is allowed only for a module outside :data:`ROBOT_SIDE` that needs a
    third-party package this venv does not hold."""
    import realgap

    errors, imported, stack = [], 0, set()
    names = sorted(m.name for m in pkgutil.walk_packages(realgap.__path__, "realgap.", onerror=lambda name: None))
    for name in names:
        try:
            importlib.import_module(name)
            imported += 1
        except ModuleNotFoundError as err:
            top = (err.name or "").split(".")[0]
            if top == "realgap" or name.startswith(ROBOT_SIDE):
                errors.append(f"{name}: {err}")
            else:
                stack.add(top)
        except Exception as err:  # noqa: BLE001 (any other failure of an import is a packaging or code defect)
            errors.append(f"{name}: {type(err).__name__}: {err}")
    print(f"[wheel] {imported} of {len(names)} modules imported; the rest need the training stack: {sorted(stack)}")
    return errors


def _run(cmd: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def check_unitree_g1(clone: Path, bin_dir: Path, tmp: Path) -> list[str]:
    """Step 4, the G1: ``realgap g1_dds_sim`` and ``realgap deploy --robot unitree_g1`` on one DDS domain."""
    policy, report = str(clone / "configs/policies/balance_g1"), tmp / "g1_sim.json"
    sim = subprocess.Popen(
        [
            str(bin_dir / "realgap"),
            "g1_dds_sim",
            "--policy",
            policy,
            "--domain",
            str(DOMAIN),
            "--duration_s",
            "5",
            "--report",
            str(report),
        ],
        cwd=tmp,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        drv = _run(
            [
                str(bin_dir / "realgap"),
                "deploy",
                "--policy",
                policy,
                "--robot",
                "unitree_g1",
                "--domain",
                str(DOMAIN),
                "--connect_timeout_s",
                "60",
                "--duration_s",
                "3",
            ],
            tmp,
            300,
        )
        sim_out, _ = sim.communicate(timeout=120)
    finally:
        if sim.poll() is None:
            sim.kill()
    errors = []
    if drv.returncode != 0:
        errors.append(f"--robot unitree_g1 exited {drv.returncode}:\n{drv.stdout[-1500:]}\n{drv.stderr[-1500:]}")
    if sim.returncode != 0 or not report.is_file():
        errors.append(f"g1_dds_sim exited {sim.returncode}:\n{sim_out[-1500:]}")
    else:
        rep = json.loads(report.read_text())
        if rep["commands"] < 500 or rep["crc_failures"] != 0:  # 3 s at 500 Hz of commands, all with a valid CRC
            errors.append(f"g1_dds_sim report: {rep}")
        print(f"[wheel] unitree_g1 over DDS: {rep['commands']} commands, {rep['crc_failures']} CRC failures")
    return errors


def check_franka(clone: Path, bin_dir: Path, tmp: Path) -> list[str]:
    """Step 4, the Franka: franky-sim (headless MuJoCo, libfranka's protocol) and ``realgap deploy --robot franka``."""
    sim = subprocess.Popen(
        [str(bin_dir / "franky-sim"), "-s", "mujoco", "--hostname", "127.0.0.1"],
        cwd=tmp,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        for line in sim.stdout:  # the server is up once it says so
            if "Connect to the server" in line or time.monotonic() > deadline:
                break
        report = tmp / "franka.json"
        drv = _run(
            [
                str(bin_dir / "realgap"),
                "deploy",
                "--policy",
                str(clone / "configs/policies/grasp_franka"),
                "--robot",
                "franka",
                "--hostname",
                "127.0.0.1",
                "--connect_timeout_s",
                "30",
                "--duration_s",
                "2",
                "--report",
                str(report),
            ],
            tmp,
            300,
        )
    finally:
        sim.kill()
        sim.wait(timeout=30)
    if drv.returncode != 0 or not report.is_file():
        return [f"--robot franka exited {drv.returncode}:\n{drv.stdout[-1500:]}\n{drv.stderr[-1500:]}"]
    rep = json.loads(report.read_text())
    print(f"[wheel] franka over libfranka: {rep['steps']} policy steps, fault {rep['fault']}")
    return [] if rep["steps"] == 100 and rep["fault"] is None else [f"franka report: {rep}"]  # 2 s at 50 Hz


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clone", type=Path, required=True, help="the repository the wheel was built from")
    p.add_argument("--no_robots", action="store_true", help="skip step 4 (the two robot runs)")
    args = p.parse_args()
    clone, bin_dir = args.clone.resolve(), Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)  # the clone is never on sys.path
        sys.path = [p for p in sys.path if Path(p or ".").resolve() != clone]
        errors = check_install(clone) + check_imports()
        if not args.no_robots:
            errors += check_unitree_g1(clone, bin_dir, Path(scratch))
            errors += check_franka(clone, bin_dir, Path(scratch))
    for error in errors:
        print(f"[wheel] FAIL {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
