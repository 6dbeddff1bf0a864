"""The wheel's package list is the tree: setup.py finds every package below the top-level folders, and no folder of
Python files can fall out of it for want of an ``__init__.py`` (find_packages skips such a folder; a hand-written list
once dropped ``realgap.envs.deploy.drivers``). CI builds the wheel and checks the install file by file
(.ci/wheel_check.py); this is the seconds-long check of the same rule."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[2]
TOP_LEVEL = ("actuators", "envs", "tasks", "configs", "scripts")


def _python_folders() -> set[Path]:
    return {p.parent for top in TOP_LEVEL for p in (REPO / top).rglob("*.py") if "__pycache__" not in p.parts}


def test_every_folder_of_python_files_is_a_package() -> None:
    missing = sorted(str(d.relative_to(REPO)) for d in _python_folders() if not (d / "__init__.py").is_file())
    assert missing == [], f"add an __init__.py (or the folder is left out of the wheel): {missing}"


def test_setup_finds_every_package_of_the_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    import runpy

    import setuptools

    given: dict = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: given.update(kwargs))  # what setup.py hands setuptools
    monkeypatch.chdir(REPO)  # setup.py finds packages relative to the working directory, as pip runs it
    runpy.run_path(str(REPO / "setup.py"))
    expected = {"realgap." + ".".join(d.relative_to(REPO).parts) for d in _python_folders()}
    assert set(given["packages"]) == expected
    assert {"realgap.envs.deploy.drivers", "realgap.envs.deploy.drivers.g1_dds_sim", "realgap.scripts"} <= expected
    assert given["package_dir"] == {f"realgap.{top}": top for top in TOP_LEVEL}
