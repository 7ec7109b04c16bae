"""Every headline of ``dcnlab reproduce all`` has a falsifier, and a test that runs it.

A falsifier is a deliberately wrong mechanism, input or model that, fed through the same pipeline and verdict rule
as the reproduction, must be judged ``deviates`` (or ``flat``): a check that cannot fail is a defect. Each
reproduction names its falsifiers in one phrase per headline (``Reproduction.falsifiers()``, its ``FALSIFIERS``
dict; the report lists them), and each paper's ``tests/test_falsifiers_<paper>.py`` feeds them through the
pipeline (those modules run in the same suite, so they are not run twice here).

This module is parametrized over every headline id of dcnlab's reproductions, and checks that those ids are
exactly the ones in ``summary.json`` of a smoke run of ``reproduce all`` (run once, in a module fixture): a
headline without a falsifier phrase, or whose paper has no falsifier test module pinning its phrases to its
headlines (a test comparing ``FALSIFIERS`` with the headlines, beside tests that judge the falsifiers), fails.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from dcnlab.report.write import falsifiers_of
from dcnlab.reproduce import registry

TESTS = Path(__file__).parent


def _own() -> list:
    return [registry.get(name) for name in registry.builtins()]


IDS = [f"{h.seed}: {h.statement}" for rep in _own() for h in rep.headlines(None, None, None, "not run")]
"""Every headline id of dcnlab's own reproductions (their records with nothing run), at collection."""
PHRASES = falsifiers_of(_own())


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> Path:
    """The output directory of ``dcnlab reproduce all --smoke --emulate off``."""
    from dcnlab.cli import main

    out = tmp_path_factory.mktemp("falsifiers") / "all"
    assert main(["reproduce", "all", "--smoke", "--emulate", "off", "--out", str(out), "--workers", "2"]) == 0
    return out


@pytest.fixture(scope="module")
def smoke_ids(smoke) -> set[str]:
    """The headline ids of the smoke run's summary.json, dcnlab's papers only (a user's installed reproduction
    plug-in has no test module here)."""
    out = smoke
    own = {p.id for rep in _own() for p in rep.papers}
    heads = json.loads((out / "summary.json").read_text())["headlines"]
    return {f"{h['seed']}: {h['statement']}" for h in heads if h["seed"] in own}


def test_the_parametrized_ids_are_the_smoke_runs_headlines(smoke_ids):
    assert len(IDS) == len(set(IDS)) > 0
    assert set(IDS) == smoke_ids, (sorted(set(IDS) - smoke_ids), sorted(smoke_ids - set(IDS)))


def _module_for(paper: str) -> Path | None:
    """``tests/test_falsifiers_<ids>.py`` whose ids (``000_003``) name ``paper``."""
    for path in sorted(TESTS.glob("test_falsifiers_*.py")):
        if paper in path.stem.removeprefix("test_falsifiers_").split("_"):
            return path
    return None


def _pins_and_judges(path: Path) -> tuple[list[str], list[str]]:
    """The module's test functions that compare ``FALSIFIERS`` with the headlines (an ``==`` beside the name), and
    its other test functions (those that judge the falsifiers)."""
    pins, judges = [], []
    for node in ast.parse(path.read_text()).body:
        if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test_")):
            continue
        names = {n.attr if isinstance(n, ast.Attribute) else n.id for n in ast.walk(node)
                 if isinstance(n, (ast.Attribute, ast.Name))}
        compares = any(isinstance(n, ast.Compare) and any(isinstance(o, ast.Eq) for o in n.ops)
                       for n in ast.walk(node))
        (pins if "FALSIFIERS" in names and compares else judges).append(node.name)
    return pins, judges


@pytest.mark.parametrize("hid", IDS)
def test_every_headline_has_a_falsifier_phrase_and_a_test_module(hid, smoke_ids):
    assert hid in smoke_ids, f"{hid!r} is not in the smoke run's summary.json"
    paper, _, statement = hid.partition(": ")
    phrase = PHRASES.get((paper, statement), "")
    assert phrase.strip() and "\n" not in phrase, f"no falsifier phrase for {hid!r} (Reproduction.falsifiers())"
    module = _module_for(paper)
    assert module is not None, f"no tests/test_falsifiers_<paper>.py names paper {paper}"
    pins, judges = _pins_and_judges(module)
    assert pins, f"{module.name}: no test compares FALSIFIERS with {paper}'s headlines"
    assert judges, f"{module.name}: no test judges a falsifier"


def test_a_headline_without_a_phrase_is_found():
    """The check above is not vacuous: a reproduction whose dict misses a headline leaves it without a phrase."""
    rep = _own()[0]
    phrases = falsifiers_of([rep])
    first = next(iter(phrases))
    assert phrases[first]

    class Missing(type(rep)):       # type: ignore[misc]
        def falsifiers(self) -> dict[str, str]:
            return {k: v for k, v in super().falsifiers().items() if k != first[1]}

    assert first not in falsifiers_of([Missing()])


def test_the_report_lists_each_falsifier_and_what_a_verdict_depends_on(smoke):
    """report.md and report.html: a falsifier column with each headline's phrase; a headline a reading flips says
    'depends on <setting>' beside its verdict with the readings; the printed table says it under the row."""
    import html

    from dcnlab.report.write import DEPENDS_MARK, depends_lines, table_lines
    from dcnlab.results import summary

    heads = summary.read(smoke / "summary.json").headlines
    md = (smoke / "report.md").read_text()
    page = (smoke / "report.html").read_text()
    assert "| model vs BMv2 | falsifier | tolerance |" in md and "<th>falsifier</th>" in page
    for h in heads:
        phrase = PHRASES[(h.seed, h.statement)].replace("|", "\\|")
        row = next(line for line in md.splitlines() if line.startswith(f"| {h.seed} | ") and f" {phrase} |" in line)
        assert row.count(f"| {h.seed} | ") == 1
        assert html.escape(PHRASES[(h.seed, h.statement)]) in page
    marked = [h for h in heads if h.depends_on]
    assert marked, "the smoke run marks no headline depends_on (the committed sensitivity tables flip some)"
    lines, notes = table_lines(heads), depends_lines(heads)
    assert max(len(line) for line in lines + notes) <= 100 and len(lines) == len(heads) + 2
    for h in marked:
        row = next(line for line in md.splitlines() if line.startswith(f"| {h.seed} | {h.statement} |"))
        assert "depends on " + h.depends_on.split(",")[0].split(" (")[0] in row, row
        assert "depends on " in page
    assert sum(line[4:].startswith(f"{DEPENDS_MARK} ") for line in lines) == len(marked)
    assert len(notes) == len(marked) + 1 and all(": depends on " in line for line in notes[1:])
