"""The docs site's getting-started page gives the README's quickstart commands, the same and in the same order (the
README's are run by tests/slow/test_readme_quickstart.py, so the page cannot drift either)."""

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def _quickstart_blocks(text: str) -> list[str]:
    section = text.split("\n## Quickstart\n", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S)]


def test_getting_started_gives_the_readme_quickstart() -> None:
    readme = _quickstart_blocks((ROOT / "README.md").read_text())
    page = _quickstart_blocks((ROOT / "docs" / "getting_started.md").read_text())
    assert len(readme) == 6 and page == readme
