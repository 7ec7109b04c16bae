"""The documentation site builds strictly, offline, with a command-line reference generated from the parsers; the
README stays a landing page; the script that makes the docs' pictures from real runs works.

``mkdocs build --strict`` fails on any warning: a broken link or anchor, a page left out of the navigation, an API
reference (mkdocstrings) that does not resolve. The site goes to a temporary directory; nothing is fetched (no web
fonts, no plugin that downloads).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import docs_pages

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / "docs" / "hooks"
GUARD = 900          # hang guard for the build (about 10-20 s on two cores)
SECTIONS = ("getting-started/index.md", "tutorials/index.md", "how-to/index.md", "reference/index.md",
            "explanation/index.md")
"""The docs sections the README links to, one link each."""


def _hooks():
    sys.path.insert(0, str(HOOKS))
    try:
        import dcnlab_docs
        import pictures
    finally:
        sys.path.remove(str(HOOKS))
    return dcnlab_docs, pictures


def _commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += [(*words, name), *_commands(sub, (*words, name))]
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("site")
    env = {k: v for k, v in os.environ.items() if k != "DCNLAB_DOCS_PICTURES"}
    env["NO_MKDOCS_2_WARNING"] = "1"       # Material's notice about MkDocs 2 (not a warning of the build)
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                        "-d", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=GUARD)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log[-4000:]
    return out, log


def test_the_site_builds_strictly_without_a_warning(site):
    out, log = site
    assert not re.search(r"^WARNING", log, flags=re.M), log
    for page in ("index.html", "getting-started/index.html", "tutorials/fabric/index.html",
                 "reference/api/index.html", "notebooks/model-sweep/index.html",
                 "notebooks/bmv2-experiment/index.html", "assets/live-view.png", "assets/report-figure.png"):
        assert (out / page).is_file(), page
    api = (out / "reference" / "api" / "index.html").read_text()
    assert "An emulated fabric for scripts" in api and "ptf_switch" in api     # the docstrings, resolved
    assert not re.search(r":(class|mod|func|meth):", api)       # their Sphinx roles read as code


def test_the_cli_reference_is_generated_from_every_parser(site):
    from dcnlab.cli import build_parser

    out, _ = site
    page = (out / "reference" / "cli" / "index.html").read_text()
    commands = _commands(build_parser())
    assert len(commands) >= 30
    for words in commands:
        assert re.search(rf'<h[2-4] id="dcnlab-{"-".join(words)}">dcnlab {" ".join(words)}<', page), words
    assert "usage: dcnlab reproduce all" in page and "--emulate" in page


def test_the_cli_reference_follows_the_parsers():
    """The hook's text is the parsers' own help: a parser's option and help text appear as argparse writes them."""
    from dcnlab.cli import build_parser

    dcnlab_docs, _ = _hooks()
    text = dcnlab_docs.cli_reference()
    run = next(sub for words, sub in _walk(build_parser()) if words == ("run",))
    for action in run._actions:
        for flag in action.option_strings:
            assert flag in text, flag
    assert "<!-- cli-reference -->" in (ROOT / "docs" / "reference" / "cli.md").read_text()


def _walk(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*words, name), sub
                yield from _walk(sub, (*words, name))


def test_the_build_fetches_nothing():
    """No web fonts (Material fetches Google Fonts unless theme.font is false) and only plugins that work offline."""
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert config["theme"]["font"] is False
    names = {next(iter(p)) if isinstance(p, dict) else p for p in config["plugins"]}
    assert names <= {"search", "mkdocs-jupyter", "mkdocstrings"}, names
    jupyter = next(p["mkdocs-jupyter"] for p in config["plugins"] if isinstance(p, dict) and "mkdocs-jupyter" in p)
    assert jupyter["execute"] is False         # the notebooks run in tests/test_docs_notebooks.py, not here


def test_the_readme_is_a_landing_page():
    readme = (ROOT / "README.md").read_text()
    lines = readme.splitlines()
    assert len(lines) <= 150, len(lines)
    assert "```sh\n./setup && .venv/bin/dcnlab reproduce all --quick\n```" in readme
    assert "```sh\n./setup && .venv/bin/python -m pytest\n```" in readme
    assert "./setup && .venv/bin/python -m pytest" in (ROOT / ".ci" / "run").read_text()
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", readme)
    for link in links:
        assert (ROOT / link).is_file(), link
    for section in SECTIONS:
        assert f"docs/{section}" in links, section
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme)
    assert pictures and all((ROOT / p).is_file() for p in pictures), pictures


def test_every_page_is_read_by_the_example_tests():
    """The pages the example tests read (tests/docs_pages.py) are the site's pages, README.md first."""
    pages = docs_pages.pages()
    assert pages[0].name == "README.md"
    assert {p.relative_to(ROOT / "docs").as_posix() for p in pages[1:]} >= {"index.md", *SECTIONS}


@pytest.mark.skipif(not (os.access("/usr/bin/chromium", os.X_OK) and os.access("/usr/bin/chromedriver", os.X_OK)),
                    reason="chromium or chromium-driver is not installed (apt-get install chromium chromium-driver)")
def test_the_live_view_picture_comes_from_a_real_view(tmp_path):
    """docs/hooks/pictures.py draws the live view of a plan in Chromium, the plan's tree picked (what
    ``DCNLAB_DOCS_PICTURES=1 mkdocs build`` puts on the landing and getting-started pages)."""
    pytest.importorskip("selenium", reason="selenium is not installed (.[test])")
    _, pictures = _hooks()
    png = pictures.live_view(tmp_path / "live-view.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert width >= 800 and height >= 400, (width, height)
