"""Shared pytest fixtures.

Sim-tier tests build kitless Isaac Lab envs on the CPU with few envs. Only one env may be alive at a time in a process
(Isaac Lab's SimulationContext is a singleton): use :func:`build_env` as a context manager, which closes the env and
clears the simulation on exit, so the next test module can build its own.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, settings


@contextlib.contextmanager
def build_env(
    task: str, num_envs: int = 4, seed: int = 0, prepare: Callable[[Any], None] | None = None, **overrides: Any
) -> Iterator[Any]:
    """Build ``task`` on the CPU with ``num_envs`` envs; ``prepare(env_cfg)`` and ``overrides`` (``a__b=value``)
    edit the env cfg first."""
    from realgap.envs.run.factory import load_cfgs, make_env, simulation

    env_cfg, _ = load_cfgs(task, "cpu", num_envs, seed)
    if prepare is not None:
        prepare(env_cfg)
    for dotted, value in overrides.items():
        *parents, leaf = dotted.split("__")
        target = env_cfg
        for name in parents:
            target = getattr(target, name)
        setattr(target, leaf, value)
    with simulation(env_cfg):
        env = make_env(task, env_cfg)
        try:
            yield env
        finally:
            env.close()


@pytest.fixture(autouse=True)
def _scheduling_restored() -> Iterator[None]:
    """No test leaves its worker real-time. libfranka puts the thread that connects under SCHED_FIFO
    (``RealtimeConfig.Ignore`` still tries, and root succeeds), and every process the worker starts afterwards inherits
    the policy (the G1 DDS identification test, run after the in-process Franka tests in one worker, logged a knee
    kp of 160-179 instead of 228: it exposed the lockstep simulator's start race, since fixed). A test that wants a
    real-time process asks for it (tests/slow/test_g1_dds_identify.py)."""
    policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
    yield
    if os.sched_getscheduler(0) != policy:
        os.sched_setscheduler(0, policy, param)


SIGINT_IGNORED_AT_START: bool = False
"""Whether this test process started with SIGINT ignored. No test sets it: a process started with ``&`` by a
non-interactive shell (a CI script, a tool running the suite in the background) has SIGINT and SIGQUIT ignored (POSIX;
measured: ``bash -c 'grep SigIgn /proc/self/status & wait'`` gives 0x6), and an ignored signal stays ignored over
``exec`` in every process the tests start: a simulator or driver sent SIGINT then never stops."""


def sigint_ignored() -> bool:
    """Whether SIGINT is ignored in this process at the kernel level (``SigIgn`` of /proc/self/status, which also
    sees a C library's ``sigaction``; Python's ``signal.getsignal`` sees only its own handlers)."""
    import signal

    try:
        status = open("/proc/self/status").read()
    except OSError:
        return signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    mask = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigIgn:")), 16)
    return bool(mask & (1 << (signal.SIGINT - 1)))


def pytest_configure(config: pytest.Config) -> None:
    """Undo an inherited SIGINT ignore (see :data:`SIGINT_IGNORED_AT_START`): Python's own handler in this process,
    so every child starts with the default disposition, as from a terminal (a Ctrl-C test, a simulator stopped by
    SIGINT). In every xdist worker too (each loads this conftest)."""
    import signal

    global SIGINT_IGNORED_AT_START
    SIGINT_IGNORED_AT_START = sigint_ignored()
    if SIGINT_IGNORED_AT_START:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _sigint_restored(request: pytest.FixtureRequest) -> Iterator[None]:
    """No test leaves SIGINT ignored or handled for the next: a change is undone and reported, naming the test."""
    import signal
    import warnings

    handler, ignored = signal.getsignal(signal.SIGINT), sigint_ignored()
    yield
    if signal.getsignal(signal.SIGINT) != handler or sigint_ignored() != ignored:
        signal.signal(signal.SIGINT, handler if handler is not None else signal.default_int_handler)
        warnings.warn(f"{request.node.nodeid} changed SIGINT's disposition (restored)", stacklevel=1)


@pytest.fixture
def bridge_lock() -> Iterator[None]:
    """Run the two-process robot-bridge tests (DDS, libfranka) one at a time across pytest-xdist workers: their
    simulators pace against the wall clock, and the timing tests (watchdog, Ctrl-C) read that pace."""
    import fcntl
    import tempfile

    with open(os.path.join(tempfile.gettempdir(), "realgap-robot-bridge-tests.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture
def env_builder():
    """The :func:`build_env` context manager, for sim tests."""
    return build_env


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory: pytest.TempPathFactory):
    """The slow tier's shared balance run (:data:`shared_run.TINY_RUN_ARGS`), trained once per session — once across
    xdist workers too — on first request; read only: a test that writes into a run folder uses
    :func:`shared_run.copy_run`."""
    from shared_run import shared_tiny_run

    return shared_tiny_run(tmp_path_factory)


# Property tests (hypothesis). Where the CI environment variable is set (hosted CI runners set CI=true) every property
# test draws the same examples on every run: derandomize=True seeds each test from a hash of its source, so a red CI
# run is red again when rerun, and locally with HYPOTHESIS_PROFILE=ci. Derandomized runs keep no example database
# (hypothesis requires database=None with derandomize; said here, not left implicit). Locally ("dev") examples are
# random and the default example database (.hypothesis/examples, git-ignored) replays every failure first until it is
# fixed; print_blob prints a @reproduce_failure line for any failure in either profile. Each test's own @settings
# (max_examples, deadline) applies on top of the loaded profile. pytest's --hypothesis-profile NAME overrides both.
# Both derive from hypothesis' "default" profile explicitly: hypothesis itself loads its own "ci" profile at import
# when it detects CI, and a profile without a parent would inherit whatever is loaded then.
_DEFAULT = settings.get_profile("default")
settings.register_profile(
    "ci",
    _DEFAULT,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", _DEFAULT, derandomize=False, print_blob=True)


def hypothesis_profile(environ: Mapping[str, str] = os.environ) -> str:
    """The hypothesis profile to load: ``HYPOTHESIS_PROFILE`` if set, else ``ci`` when ``CI`` is set, else ``dev``."""
    if environ.get("HYPOTHESIS_PROFILE"):
        return environ["HYPOTHESIS_PROFILE"]
    return "ci" if environ.get("CI", "").strip().lower() not in ("", "0", "false", "no") else "dev"


settings.load_profile(hypothesis_profile())


def pytest_unconfigure(config: pytest.Config) -> None:
    """Freeze what the session leaves alive out of the garbage collector: the interpreter's teardown otherwise spends
    5-7 s collecting the objects torch, Isaac Lab, Newton and warp leave behind, in every xdist worker (as in
    :func:`realgap.envs.run.cli.run_cli`)."""
    import gc

    gc.freeze()


TIERS = ("unit", "sim", "slow", "gpu")
"""The tier markers (pyproject's ``markers``): every test carries one, so ``pytest -m unit`` skips none silently."""


def untiered(items: list[pytest.Item]) -> list[str]:
    """The node ids of ``items`` that carry no tier marker (:data:`TIERS`)."""
    return [item.nodeid for item in items if not any(item.get_closest_marker(tier) for tier in TIERS)]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse a test without a tier marker: the run stops at collection, naming each such test and the fix."""
    missing = untiered(items)
    if missing:
        listed = "\n  ".join(missing)
        raise pytest.UsageError(
            f"{len(missing)} test(s) carry no tier marker ({' / '.join(TIERS)}); add `pytestmark = pytest.mark.unit` "
            f"(or the tier its cost says) to the module:\n  {listed}"
        )


# --- GPU tier guard: a GPU that nvidia-smi or warp sees but torch cannot use fails every gpu test (never skips it).
# Without any GPU the gpu tests skip with the reason; with a usable one they run. It lives here, not in
# tests/gpu/conftest.py: a second conftest module would shadow this one for every `from conftest import build_env`.
@cache
def _unusable_reason() -> str | None:
    from realgap.envs.sim.device import probe, unusable_gpu_reason

    return unusable_gpu_reason(probe())


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # tryfirst: before the skipif marks, so "torch sees no CUDA" cannot turn an unusable GPU into a green skip
    if item.get_closest_marker("gpu") is not None:
        reason = _unusable_reason()
        if reason is not None:
            pytest.fail(reason, pytrace=False)
