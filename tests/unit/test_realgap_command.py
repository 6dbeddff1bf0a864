"""The ``realgap`` command (envs/run/command.py): every job of scripts/ is a subcommand with its own ``--help``, flags
and refusals, found from the folder; an unknown job is refused with the list. The installed console script itself is
run by the README quickstart test and by .ci/wheel_check.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from realgap.envs.run.command import ALIASES, jobs, main, summary

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[2]


def test_every_script_is_a_job_and_every_alias_has_a_source() -> None:
    scripts = {p.stem for p in (REPO / "scripts").glob("*.py") if not p.stem.startswith("_")}
    table = jobs()
    assert scripts <= set(table) and set(ALIASES) <= set(table)
    assert {"train", "play", "evaluate", "compare", "export", "deploy", "identify", "benchmark"} <= set(table)
    for name, module in table.items():
        assert summary(module), f"{name}: {module} has no docstring to summarise"


def test_help_lists_the_jobs_and_an_unknown_job_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: realgap <job>") and all(f"\n  {name} " in out for name in jobs())
    assert main(["tran"]) == 2
    assert "error: unknown job 'tran'; the jobs are listed above" in capsys.readouterr().err
    assert main([]) == 2
    assert "error: no job given" in capsys.readouterr().err


# run_cli's exit flushes every open file found by isinstance over gc.get_objects(); torch's deprecated module
# attribute warns when that check touches it (in this test's process only: a real job exits right after)
@pytest.mark.filterwarnings("ignore:`torch.distributed.reduce_op` is deprecated:FutureWarning")
def test_a_job_parses_its_own_flags_under_the_command_name(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["play", "--help"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("usage: realgap play [-h]")
    with pytest.raises(SystemExit) as done:
        main(["play", "--episodes", "0"])  # the script's own range check and message, exit 2
    assert done.value.code == 2
    assert "error: --episodes must be >= 1, got 0 (see realgap play --help)" in capsys.readouterr().err


def test_version_and_a_job_missing_its_package(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from importlib.metadata import version

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"realgap {version('realgap')}\n"
    # a job whose import needs a package this install lacks (e.g. torch in a robot-side install): one clear message
    (tmp_path / "needs_missing.py").write_text('"""A job."""\nimport no_such_package_58  # noqa: F401\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr("realgap.envs.run.command.jobs", lambda: {"fake": "needs_missing"})
    assert main(["fake", "--help"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: realgap fake needs the package 'no_such_package_58', which is not installed here")
