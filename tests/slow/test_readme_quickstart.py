"""Slow tier: every command of the README's quickstart runs, in order, as written but with tiny sizes, so the README
cannot drift from the code.

The commands are the fenced ``bash`` blocks of the README's "## Quickstart" section, one command per block. Each runs
in ``bash`` in a scratch folder holding links to the repository's ``scripts/`` and ``configs/`` (so ``runs/`` lands
there, not in the repository), after these substitutions, and nothing else:

- ``.venv/bin/realgap`` -> the ``realgap`` command installed beside the interpreter running the tests (the README's
  setup creates ``.venv``; a test session may run from another environment with the same install): the console
  script itself runs, as a user's would;
- ``--max_minutes M`` -> ``--max_iterations 1``; ``--max_iterations N`` -> ``--max_iterations 1``;
- ``--num_envs N`` and ``--eval_envs N`` -> 4; ``--episodes N`` -> 1;
- ``--episode_s 0.5`` appended to the scripts that take it (play, evaluate, compare_actions).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
REALGAP = Path(sys.executable).parent / "realgap"
"""The installed console script (``[project.scripts]``)."""
STEPS = ("realgap train", "realgap play", "realgap evaluate", "realgap compare", "realgap export", "realgap deploy")
"""What each quickstart command runs, in the README's order: train, play, evaluate, compare, export, robot."""
EPISODE_S = ("realgap play", "realgap evaluate", "realgap compare")


def quickstart_commands(readme: str) -> list[str]:
    """The fenced bash blocks of the README's quickstart section, one command each (continuation lines joined)."""
    section = readme.split("\n## Quickstart\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    commands = [block.replace("\\\n", " ").strip() for block in blocks]
    for command in commands:
        assert "\n" not in command, f"a quickstart block holds one command, got:\n{command}"
    return commands


def tiny(command: str) -> str:
    """``command`` with the substitutions of the module docstring."""
    command = command.replace(".venv/bin/realgap", shlex.quote(str(REALGAP)))
    command = re.sub(r"--max_minutes \S+", "--max_iterations 1", command)
    command = re.sub(r"--max_iterations \d+", "--max_iterations 1", command)
    command = re.sub(r"--(num_envs|eval_envs) \d+", r"--\1 4", command)
    command = re.sub(r"--episodes \d+", "--episodes 1", command)
    if any(script in command for script in EPISODE_S):
        command += " --episode_s 0.5"
    return command


def test_substitutions_touch_only_sizes() -> None:
    """The tiny form of a command keeps every other argument as written."""
    cmd = ".venv/bin/realgap compare --spaces a,b --max_iterations 200 --num_envs 256 --episodes 32"
    assert tiny(cmd) == (
        f"{shlex.quote(str(REALGAP))} compare --spaces a,b --max_iterations 1 --num_envs 4 --episodes 1 --episode_s 0.5"
    )


def test_readme_quickstart_runs_as_written(tmp_path: Path) -> None:
    if not REALGAP.is_file():  # fails, never skips: the README's commands are the installed command's
        pytest.fail(f"no realgap command at {REALGAP}: install the project (README 'Setup')")
    commands = quickstart_commands((REPO / "README.md").read_text())
    assert [next(s for s in STEPS if s in c) for c in commands] == list(STEPS), commands
    for name in ("scripts", "configs"):
        (tmp_path / name).symlink_to(REPO / name)
    for command in commands:
        proc = subprocess.run(
            ["bash", "-c", f"set -euo pipefail; {tiny(command)}"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        assert proc.returncode == 0, f"{tiny(command)}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"

    runs = tmp_path / "runs"
    (run,) = list((runs / "balance_g1").glob("*_quickstart"))
    from realgap.tasks import DEFAULT_TASK

    assert json.loads((run / "params" / "run.json").read_text())["task"] == DEFAULT_TASK  # the shipped recipe
    assert (runs / "quickstart_export" / "policy.onnx").is_file()
    assert (runs / "robustness" / "report.json").is_file()
    assert (runs / "compare" / "comparison.md").is_file()
