"""Which of realgap's own imports sit inside functions, and what each would cost at the top
(``scripts/import_costs.py``).

Rule: a ``realgap`` import goes at the top of its module unless moving it there would load, on that module's cold
start, a third-party package the module does not load already and whose measured cold import costs at least
``LAZY_THRESHOLD_MS``. Why: a top-level import shows the dependency graph to the reader and to the layering tests; a
deferred one is worth that loss only where it keeps a command's start (``realgap --help``, a CLI refusal, the
robot-side runtime without torch or Isaac Lab) measurably faster.

The analysis reads the source (no import): a module's top-level imports, those under ``if TYPE_CHECKING`` excepted,
closed over realgap's modules and their parent packages; the costs come from :func:`measure_costs`, a fresh
interpreter per package.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import json
import platform
import statistics
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

LAZY_THRESHOLD_MS = 100.0
"""The smallest measured cold-import cost that earns a deferred import (a tenth of a second, felt at a prompt)."""

SOURCE_DIRS = ("actuators", "envs", "tasks", "configs", "scripts")
"""The folders installed as ``realgap.<folder>``: the library and the scripts."""


@dataclasses.dataclass(frozen=True)
class Deferred:
    """One realgap import inside a function, and the third-party names hoisting it would add to the module's start."""

    module: str
    line: int
    source: str
    adds: frozenset[str]

    def cost_ms(self, costs: dict[str, float]) -> float:
        """The dearest added module's measured cost, an upper bound of what hoisting adds (that module's cost counts
        the dependencies the importer may load already); a name not measured counts as free
        (``tests/unit/test_deferred_imports.py`` asks every spared name to be measured)."""
        return max((costs.get(p, 0.0) for p in self.adds), default=0.0)


def module_name(repo: Path, path: Path) -> str:
    parts = [p for p in path.relative_to(repo).with_suffix("").parts if p != "__init__"]
    return "realgap." + ".".join(parts)


def source_files(repo: Path) -> dict[str, Path]:
    """Every realgap module by name, read from ``repo``."""
    return {module_name(repo, p): p for d in SOURCE_DIRS for p in sorted((repo / d).rglob("*.py"))}


_STDLIB = sys.stdlib_module_names  # __future__ included


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" or getattr(test, "attr", None) == "TYPE_CHECKING"
    )


class ImportGraph:
    """Top-level imports of every realgap module (realgap modules and third-party top names) and their deferred ones."""

    def __init__(self, repo: Path) -> None:
        self.files = source_files(repo)
        self.top: dict[str, tuple[set[str], set[str]]] = {}
        self.inner: dict[str, list[tuple[int, str, set[str], set[str]]]] = {}
        self.top_count = 0
        """Top-level import statements naming a realgap module."""
        for name, path in self.files.items():
            self._read(name, path)

    def _module_of(self, dotted: str) -> str | None:
        parts = dotted.split(".")
        while len(parts) > 1 and ".".join(parts) not in self.files:
            parts = parts[:-1]
        return ".".join(parts) if len(parts) > 1 else None

    def with_parents(self, module: str) -> set[str]:
        """``module`` and the packages above it: importing it runs their ``__init__`` first."""
        parts = module.split(".")
        return {".".join(parts[:i]) for i in range(2, len(parts) + 1)} & self.files.keys()

    def _targets(self, node: ast.Import | ast.ImportFrom, package: str) -> tuple[set[str], set[str]]:
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            base = node.module or ""
            if node.level:
                stem = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*stem, base] if base else stem)
            # ``from a import b``: ``b`` may be a module of its own (``from isaaclab import sim``); both are kept
            # and only what proves importable is measured
            names = [f"{base}.{a.name}" for a in node.names] + ([] if base.startswith("realgap") else [base])
        own = {m for n in names if n.startswith("realgap") for m in self.with_parents(self._module_of(n) or "")}
        third = {n for n in names if not n.startswith("realgap") and n.split(".")[0] not in _STDLIB}
        return own, third

    def _read(self, name: str, path: Path) -> None:
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        own: set[str] = set()
        third: set[str] = set()
        inner: list[tuple[int, str, set[str], set[str]]] = []

        def walk(node: ast.AST, deferred: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if _is_type_checking(child):
                    continue
                in_function = deferred or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    o, t = self._targets(child, package)
                    if in_function:
                        inner.append((child.lineno, ast.unparse(child), o, t))
                    else:
                        self.top_count += bool(o)
                        own.update(o)
                        third.update(t)
                walk(child, in_function)

        walk(ast.parse(path.read_text()), False)
        self.top[name] = (own - {name}, third)
        self.inner[name] = inner

    def loads(self, module: str) -> set[str]:
        """The third-party packages ``module``'s top-level imports load, through every realgap module they import."""
        seen: set[str] = set()
        found: set[str] = set()
        todo = list(self.with_parents(module))
        while todo:
            m = todo.pop()
            if m in seen or m not in self.top:
                continue
            seen.add(m)
            own, third = self.top[m]
            found |= third
            todo += [p for o in own for p in self.with_parents(o)]
        return found

    def deferred(self) -> Iterator[Deferred]:
        """Every deferred import naming a realgap module, with what hoisting it would add."""
        for name, items in sorted(self.inner.items()):
            base = self.loads(name)
            for line, source, own, third in items:
                if own:
                    added = set(third).union(*(self.loads(o) for o in own)) - base
                    yield Deferred(name, line, source, frozenset(added))


def unearned(deferred: Iterable[Deferred], costs: dict[str, float]) -> list[Deferred]:
    """The deferred imports whose hoisting would cost less than the threshold: they belong at the top."""
    return [d for d in deferred if d.cost_ms(costs) < LAZY_THRESHOLD_MS]


_TIMER = "import importlib, time; t = time.perf_counter(); {}; print(time.perf_counter() - t)"


def is_module(name: str) -> bool:
    """Whether ``name`` is an importable module here (not a class or function imported from one)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError, AttributeError):
        return False


def _statement(name: str) -> str | None:
    """The code that loads ``name`` as an import statement would: the module, or its parent and the attribute (Isaac
    Lab's packages load their contents lazily, on first attribute access); None where neither exists here."""
    if is_module(name):
        return f"importlib.import_module({name!r})"
    parent, _, attr = name.rpartition(".")
    return f"getattr(importlib.import_module({parent!r}), {attr!r})" if parent and is_module(parent) else None


def cold_import_ms(name: str, repeats: int = 5, python: str = sys.executable) -> float:
    """Median wall time of loading ``name`` (a module, or a module's attribute) in a fresh interpreter, its own
    dependencies included, in ms."""
    statement = _statement(name)
    if statement is None:
        raise ValueError(f"{name} is neither a module nor a module's attribute here")
    times = []
    for _ in range(repeats):
        out = subprocess.run([python, "-c", _TIMER.format(statement)], capture_output=True, text=True, timeout=300)
        if out.returncode != 0:
            raise RuntimeError(f"loading {name} failed in a fresh interpreter:\n{out.stderr[-2000:]}")
        times.append(float(out.stdout.strip().splitlines()[-1]) * 1000.0)
    return statistics.median(times)


def measure_costs(names: Iterable[str], repeats: int = 5) -> dict[str, float]:
    """Cold-load cost of every name of ``names`` that exists here; one that does not is left out."""
    return {n: round(cold_import_ms(n, repeats), 1) for n in sorted(names) if _statement(n) is not None}


ENTRY_MODULES = ("realgap.tasks", "realgap.envs.run.command", "realgap.envs.run.cli", "realgap.envs.deploy")
"""Modules whose cold start a user waits on: task registration, the ``realgap`` command, its flags, the runtime."""


def import_report(repo: Path, out: Path | None, repeats: int = 5) -> list[str]:
    """Measure every third-party name a deferred import spares and the entry modules; write the costs to ``out`` (JSON);
    return the report's lines: the costs, and the deferred imports with the rule's verdict."""
    graph = ImportGraph(repo)
    deferred = list(graph.deferred())
    costs = measure_costs(set().union(*(d.adds for d in deferred)), repeats)
    entries = {m: round(cold_import_ms(m, repeats), 1) for m in ENTRY_MODULES}
    bad = unearned(deferred, costs)
    if out is not None:
        facts = {"python": platform.python_version(), "machine": platform.machine(), "repeats": repeats}
        record = {"threshold_ms": LAZY_THRESHOLD_MS, "measured_on": facts, "packages_ms": costs, "entries_ms": entries}
        out.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    total = graph.top_count + len(deferred)
    lines = [f"cold import, median of {repeats} fresh interpreters (ms):"]
    lines += [f"  {p:<24}{ms:>9.1f}" for p, ms in sorted(costs.items(), key=lambda kv: -kv[1])]
    lines += [f"  {m:<24}{ms:>9.1f}  (entry)" for m, ms in entries.items()]
    lines += [
        f"realgap imports: {total}, inside functions {len(deferred)} ({100 * len(deferred) / max(total, 1):.1f} %), "
        f"of which {len(bad)} would cost < {LAZY_THRESHOLD_MS:.0f} ms at the top"
    ]
    lines += [f"  {d.module}:{d.line}  {d.source}  (adds {sorted(d.adds) or 'nothing'})" for d in bad]
    return lines
