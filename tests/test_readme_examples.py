"""Every ``dcnlab`` command line of the documentation (README.md and the docs site's pages, tests/docs_pages.py)
parses, and the model-backend ones run as written."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

import docs_pages
from dcnlab.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = ROOT / "examples" / "plugins"
EMULATING = re.compile(r"--emulate|^(run|clean|compile|lab|ptf)\b|^bench (emu|chaos)\b")
LONG = re.compile(r"^reproduce\b|^bench\b|--view\b")   # --view serves until Ctrl-C: tests/test_view*.py run it


def readme_commands() -> list[str]:
    """The ``dcnlab ...`` lines of the pages' ``sh`` blocks, without comments or the venv prefix."""
    out = []
    for block in docs_pages.blocks("sh"):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            line = re.sub(r"^(\./setup && )?(\.venv/bin/)?", "", line)
            if line.startswith("dcnlab "):
                out.append(line.removeprefix("dcnlab "))
    return out


COMMANDS = readme_commands()


def test_the_readme_has_examples():
    assert len(COMMANDS) >= 8 and "--version" in COMMANDS


@pytest.fixture
def example_plugins(tmp_path_factory, monkeypatch):
    """The tutorial "Your own algorithm" (docs/tutorials/own-algorithm.md) first runs ``pip install -e
    examples/plugins``: here the same entry points, declared the way that install declares them (a .dist-info made from the package's
    pyproject.toml), with the package importable."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib

    from dcnlab.controller import registry

    meta = tomllib.loads((PLUGINS / "pyproject.toml").read_text())["project"]
    site = tmp_path_factory.mktemp("site")
    dist = site / f"{meta['name'].replace('-', '_')}-{meta['version']}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {meta['name']}\nVersion: {meta['version']}\n")
    (dist / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items())
        for group, eps in meta["entry-points"].items()))
    monkeypatch.syspath_prepend(str(PLUGINS))
    monkeypatch.syspath_prepend(str(site))
    registry._entry_points.cache_clear()
    yield
    registry._entry_points.cache_clear()


@pytest.mark.parametrize("argv", COMMANDS)
def test_readme_example(argv, tmp_path, monkeypatch, capsys, example_plugins):
    words = shlex.split(argv)
    if argv == "--version" or words[-2:] in (["--algo", "list"], ["--policy", "list"]):
        with pytest.raises(SystemExit) as e:
            main(words)
        assert e.value.code == 0
        return
    args = build_parser().parse_args(words)
    if EMULATING.search(argv) or LONG.search(argv):
        assert callable(args.func)   # needs root and BMv2, or minutes: tests/test_*_bmv2.py run these
        return
    monkeypatch.chdir(tmp_path)
    assert main(words) == 0, capsys.readouterr().err
    assert "Traceback" not in capsys.readouterr().err


def test_the_pages_python_fragments_parse():
    """``python`` blocks are whole scripts (tests/test_api_bmv2.py runs them as written); ``py`` blocks are fragments
    (a test function for a file of yours, a directory of yours), which must at least be valid Python."""
    import ast

    fragments = docs_pages.blocks("py")
    assert fragments
    for code in fragments:
        ast.parse(code)
