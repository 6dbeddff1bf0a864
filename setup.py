"""Package discovery for setuptools: every package under the repository's top-level folders, found from the tree.

realgap's sub-packages live at the top of the repository (``actuators/``, ``envs/``, ``tasks/``, ``configs/``, and
``scripts/``, the jobs behind the ``realgap`` command) and install as ``realgap.<folder>``. ``pyproject.toml`` cannot
map a discovered tree onto another name, so this file does: every folder below them holding an ``__init__.py`` is a
package of the wheel, and a new one can never be left out (a hand-written list once dropped
``realgap.envs.deploy.drivers``). The project's metadata and dependencies stay in ``pyproject.toml``.
"""

from setuptools import find_packages, setup

TOP_LEVEL = ("actuators", "envs", "tasks", "configs", "scripts")
"""Repository folders installed as ``realgap.<name>``, each with every package below it."""

setup(
    packages=[f"realgap.{name}" for name in find_packages(include=[*TOP_LEVEL, *(f"{t}.*" for t in TOP_LEVEL)])],
    package_dir={f"realgap.{name}": name for name in TOP_LEVEL},
)
