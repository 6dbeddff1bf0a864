"""MkDocs hook: links from a page to a file of the repository outside ``docs/`` (source, schema, a shipped export).

GitHub renders such a link from the Markdown file; the site has no copy of the target. Each one is checked here: a
target that exists in the repository is rendered as its repository path in code, a missing one is a warning, which
``mkdocs build --strict`` turns into a failed build, so a broken link to the code fails CI as a broken page link does.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.hooks.repo_links")
LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    docs = Path(config["docs_dir"]).resolve()
    repo = docs.parent
    here = (docs / page.file.src_uri).parent

    def rewrite(match: re.Match[str]) -> str:
        text, target = match.group(1), match.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            return match.group(0)
        path = (here / target.split("#", 1)[0]).resolve()
        if path.is_relative_to(docs) or not target:
            return match.group(0)
        if not path.is_relative_to(repo) or not path.exists():
            log.warning(f"{page.file.src_uri}: link '{target}' points to {path}, which is not in the repository")
            return match.group(0)
        rel = path.relative_to(repo).as_posix() + ("/" if path.is_dir() else "")
        return f"`{rel}`" if text.strip("`") in (rel, rel.rstrip("/")) else f"{text} (`{rel}`)"

    return LINK.sub(rewrite, markdown)
