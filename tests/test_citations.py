"""The papers are cited as a reader would look them up, and nothing points at what a reader cannot open.

* Every paper has a reference with its authors and title (or, where its text prints none, what it
  presents), and the fields its text does not print are exactly the ones :mod:`dcnlab.results.papers`
  says are missing; the report names every paper by its full reference.
* No file of the package, the README, the docs site, the examples or the tests cites a path outside the repository, the
  development machine's internal reports ("report 001 §6.1") or notes ("anchors §C2"), or the project's
  issue numbers ("issue 9 §8"); a test says what it guards against, or cites the paper.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from dcnlab.report import write as report
from dcnlab.results import papers

ROOT = Path(__file__).resolve().parent.parent

FORBIDDEN = {
    "a path outside the repository": re.compile(r"\.\./shared|shared/(papers|seeds|anchors)|/work/"),
    "an internal report": re.compile(r"\breports? (00[0-4]\b|§)|\breports in\b|\banchors §", re.IGNORECASE),
    "an internal issue number": re.compile(r"\bissues? #?\d+", re.IGNORECASE),
}
"""What a reader of the code, its help or its report cannot open."""

EXCEPTIONS: dict[str, str] = {
    "tests/test_citations.py": "its own patterns and the strings they must catch",
}
"""Files not yet rewritten, and why: each is removed when its rewrite lands (the list only shrinks). This file
stays: its patterns and examples are what they must catch."""

SUFFIXES = {".py", ".p4", ".md", ".json", ".toml", ".txt", ".html", ".js", ".css", ".cfg", ".sh", ".yaml", ".yml",
            ".ipynb"}


def _files() -> list[Path]:
    found = [ROOT / "README.md", ROOT / "mkdocs.yml"]
    for top in ("dcnlab", "docs", "examples", "tests"):
        found += [p for p in (ROOT / top).rglob("*") if p.is_file() and p.suffix in SUFFIXES
                  and "__pycache__" not in p.parts and not any(part.endswith(".egg-info") for part in p.parts)]
    return sorted(found)


def test_no_file_cites_what_a_reader_cannot_open() -> None:
    found = []
    for path in _files():
        rel = path.relative_to(ROOT).as_posix()
        if rel in EXCEPTIONS:
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for what, pattern in FORBIDDEN.items():
                m = pattern.search(line)
                if m:
                    found.append(f"{rel}:{n}: {what}: {m.group(0)!r} in {line.strip()[:100]!r}")
    assert not found, f"{len(found)} citations a reader cannot follow:\n" + "\n".join(found)


def test_the_exceptions_are_few_and_still_needed() -> None:
    """An exception whose file is clean (or gone) is dropped from the list, so that it only shrinks."""
    assert len(EXCEPTIONS) <= 10
    for rel in EXCEPTIONS:
        path = ROOT / rel
        if not path.exists():
            continue
        text = path.read_text(errors="replace")
        assert any(p.search(text) for p in FORBIDDEN.values()), f"{rel} is clean now: remove it from EXCEPTIONS"


def test_the_pattern_catches_what_it_should() -> None:
    bad = ["(report 001 §6.1)", "the reports in ``/work/shared/papers``", "(issue 9 §8: small", "Issue 11 §3;",
           "../shared/seeds/004.txt", "report ``shared/papers/002-ib-cc-bandwidth-partition.md``", "(report §7.2)",
           "(anchors §C2)"]
    ok = ["C-MR4LMS (Chen et al.), §4.2", "the report of reproduce all", "report.md", "a tissue 3",
          "reported 0.3 s"]
    assert all(any(p.search(s) for p in FORBIDDEN.values()) for s in bad)
    assert not any(p.search(s) for s in ok for p in FORBIDDEN.values())


@pytest.mark.parametrize("pid", sorted(papers.PAPERS))
def test_each_paper_has_authors_title_and_says_what_its_text_lacks(pid: str) -> None:
    p = papers.paper(pid)
    assert p.id == pid and p.name and p.label
    assert p.authors and all(a.strip() for a in p.authors)
    assert len(p.authors_original) in (0, len(p.authors))
    assert p.title or p.title_en or p.subject
    ref = p.reference()
    assert p.authors[0] in ref and p.title_text() in ref
    if p.journal or p.journal_en:
        assert p.year and p.pages, "a journal printed with its year and pages"
        assert str(p.year) in ref and p.pages in ref and (p.journal or "") in ref
    else:
        assert "not printed in the text" in ref
    if p.title is None and p.title_en is None:
        assert "title not printed in the text" in ref
    assert p.short().startswith(p.first_author_family())
    assert p.cite("§3.1").startswith(f"{p.label} (") and p.cite("§3.1").endswith(", §3.1")


def test_what_the_texts_print() -> None:
    """The fields the papers' texts (or a record of the same article) give: journal, year and pages for
    002 and 004, titles for all but 001, and the journal's own citation line for 004."""
    have_journal = {pid for pid, p in papers.PAPERS.items() if p.journal and p.year and p.pages}
    assert have_journal == {"002", "004"}
    assert {pid for pid, p in papers.PAPERS.items() if p.title} == {"000", "002", "003", "004"}
    assert papers.reference("004") == (
        "BIAN Qing-rong, CHENG Bao-lei, FAN Jian-xi, PAN Zhi-yong (卞庆荣, 程宝雷, 樊建席, 潘志勇). "
        "蜻蜓网络上完全独立生成树的构造算法 [Construction Algorithm of Completely Independent Spanning Tree in "
        "Dragonfly Network]. 计算机科学 (Computer Science), 2022, 49(11): 284-292.")
    assert papers.short("004") == "Bian et al., 2022" and papers.short("003") == "Guo et al."
    assert papers.cite("001", "§4.2") == "C-MR4LMS (Chen et al.), §4.2"
    assert papers.cite("002") == "IB CC partitioning (Zhang et al., Chinese Journal of Computers 2012)"
    with pytest.raises(KeyError, match="the papers are 000, 001, 002, 003, 004"):
        papers.paper("005")


RUN = {"mode": "quick", "seed": None, "date": "today", "wall_seconds": 1.0, "workers": 1, "cluster": None,
       "cpus": 2, "model_seconds": 1.0, "emulate": "off", "emulation_why": "not run: --emulate off"}


def test_report_names_every_paper_by_its_full_reference(tmp_path: Path) -> None:
    md = report.report_md(tmp_path, [], [], RUN)
    page = report.report_html(tmp_path, [], [], RUN)
    for pid, p in papers.PAPERS.items():
        assert p.title_text() in md and html.escape(p.title_text()) in page, pid
        assert p.reference() in md and html.escape(p.reference()) in page, pid
        assert f"- **{pid}** {p.name}: " in md
        assert p.record is None or p.record in md, "where the fields the text lacks were read"
    for mechanism, ids in report.SEEDS.items():
        assert all(papers.short(i) in report.TITLES[mechanism] for i in ids)


def test_the_docs_list_every_reference() -> None:
    """The docs page on the mechanisms and the papers cites each paper in full."""
    page = (ROOT / "docs" / "explanation" / "mechanisms.md").read_text()
    for pid, p in papers.PAPERS.items():
        assert f"- `{pid}` {p.name}: {p.reference()}" in page, pid


def test_summary_json_carries_the_references(tmp_path: Path) -> None:
    """``summary.json``'s ``papers``: each paper of the run with its fields and formatted reference."""
    import json

    from dcnlab.report.parts import PartRun

    part = PartRun("cist", tmp_path / "cist", seconds=1.0, emulation_why="not run: --emulate off")
    (tmp_path / "cist").mkdir()
    report.write_report(tmp_path, [part], [], RUN)
    data = json.loads((tmp_path / "summary.json").read_text())
    assert set(data["papers"]) == {"004"}
    assert data["papers"]["004"]["reference"] == papers.reference("004")
    assert data["papers"]["004"]["journal_en"] == "Computer Science" and data["papers"]["004"]["year"] == 2022
