"""MkDocs hooks of dcnlab's documentation site (mkdocs.yml names this file).

* The command-line reference (``docs/reference/cli.md``) is generated from the argparse parsers themselves
  (:func:`dcnlab.cli.build_parser`): the page holds the marker ``<!-- cli-reference -->`` and every command's
  ``--help`` takes its place at build time, so the reference cannot drift from the parsers.
* The notebooks of ``examples/notebooks/`` become pages under ``notebooks/`` (mkdocs-jupyter renders them, without
  executing them: the tests execute them).
* The docstrings' Sphinx roles (``:class:`~dcnlab.api.Network```) read as code on the API page: ``Network``
  (with ``~``, as Sphinx shows it) or the whole dotted name.
* The pictures (``assets/live-view.png``, ``assets/report-figure.png``, ``assets/notebook-live-view.png``) are made from real runs by
  ``docs/hooks/pictures.py`` when ``DCNLAB_DOCS_PICTURES=1``, in a directory of their own, and replace the
  committed copies in the built site only; otherwise the committed copies (made by the same script) are used.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import tempfile
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "examples" / "notebooks"
MARKER = "<!-- cli-reference -->"
COLUMNS = "100"        # argparse wraps help at the terminal's width; a fixed one keeps the page the same everywhere
ROLE = re.compile(r":(?:class|mod|func|meth|data|attr|exc|obj):<code>(~?)([\w.]+)</code>")
"""A Sphinx cross-reference role left in a docstring (dcnlab's docstrings are reST), as mkdocstrings renders it."""
PICTURES = ("live-view.png", "report-figure.png", "notebook-live-view.png")


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            out += list(action.choices.items())
    return out


def cli_reference() -> str:
    """Markdown for every command of ``dcnlab``: its ``--help`` as argparse prints it, in the parsers' order."""
    from dcnlab.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = COLUMNS
    try:
        root = build_parser()
        parts = ["## dcnlab\n", "```text\n" + root.format_help().rstrip() + "\n```\n"]

        def walk(parser: argparse.ArgumentParser, words: list[str], level: int) -> None:
            for name, sub in _subcommands(parser):
                path = [*words, name]
                parts.append(f"{'#' * level} dcnlab {' '.join(path)}\n")
                parts.append("```text\n" + sub.format_help().rstrip() + "\n```\n")
                walk(sub, path, min(level + 1, 4))

        walk(root, [], 2)
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return "\n".join(parts)


_MADE: list[Path] = []
"""The directories this build made pictures in (removed when the site is written)."""


def on_post_build(config) -> None:
    while _MADE:
        shutil.rmtree(_MADE.pop(), ignore_errors=True)


def _pictures():
    """docs/hooks/pictures.py, loaded by its path (MkDocs loads this hook the same way, not as a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("dcnlab_docs_pictures", Path(__file__).with_name("pictures.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@event_priority(100)     # before mkdocs-jupyter's on_files, which turns the notebooks into pages
def on_files(files: Files, config) -> Files:
    site_dir = config["site_dir"]
    for nb in sorted(NOTEBOOKS.glob("*.ipynb")):
        files.append(File(f"notebooks/{nb.name}", src_dir=str(NOTEBOOKS.parent), dest_dir=site_dir,
                          use_directory_urls=config["use_directory_urls"]))
    if os.environ.get("DCNLAB_DOCS_PICTURES") == "1":
        pictures = _pictures()
        made = Path(tempfile.mkdtemp(prefix="dcnlab-docs-pictures-"))
        _MADE.append(made)
        pictures.make_all(made)
        for name in PICTURES:
            old = files.get_file_from_path(f"assets/{name}")
            if old is not None:
                files.remove(old)
            (made / "assets").mkdir(exist_ok=True)
            (made / name).replace(made / "assets" / name)
            files.append(File(f"assets/{name}", src_dir=str(made), dest_dir=site_dir,
                              use_directory_urls=config["use_directory_urls"]))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, cli_reference())
    return markdown


def on_page_content(html: str, page, config, files) -> str:
    return ROLE.sub(lambda m: f"<code>{m.group(2).rsplit('.', 1)[-1] if m.group(1) else m.group(2)}</code>", html)
