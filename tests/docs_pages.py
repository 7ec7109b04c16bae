"""The documentation's pages as the tests read them: README.md (the landing page) and every page of the docs site
(``docs/**/*.md``, built by ``mkdocs build --strict`` in tests/test_docs_build.py). The tests that run the examples
(tests/test_readme_examples.py, the ``python`` blocks in tests/test_api_bmv2.py) and check what the pages say
(tests/test_citations.py, tests/test_python_versions.py) read them all, so an example that moves between pages
stays tested."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def pages() -> list[Path]:
    """README.md, then the docs site's Markdown pages in path order."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def blocks(lang: str) -> list[str]:
    """The fenced blocks of ``lang`` (```sh, ```python, ```py ...) of every page, in page order."""
    return [b for p in pages() for b in re.findall(rf"```{re.escape(lang)}\n(.*?)```", p.read_text(), flags=re.S)]


def text() -> str:
    """Every page's text, lines joined as Markdown joins them (one space for any run of whitespace)."""
    return " ".join(" ".join(p.read_text().split()) for p in pages())
