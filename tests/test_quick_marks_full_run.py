"""Every quick ``dcnlab reproduce NAME``, not only ``reproduce all --quick``, marks the verdicts that differ from the
full run's: the runner (:func:`dcnlab.report.reproduce_all.run_one`) gives each headline ``full_run``,
the verdict of its statement in the pre-registered row of its paper's committed sensitivity table, in the command's
``summary.json`` and under its printed table. A fake reproduction of paper 002 runs through the real runner."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from dcnlab.cli import reproduce as reproduce_cli
from dcnlab.report import reproduce_all, search_tables
from dcnlab.reproduce.protocol import Finished, Reproduction, Task
from dcnlab.results import papers, summary
from dcnlab.results.summary import Headline


def _statements() -> tuple[str, str, str]:
    """Two statements of 002 the committed full run judges other than reproduced, one it judges reproduced."""
    full = {s: v for (p, s), v in search_tables.full_run_verdicts().items() if p == "002"}
    missed = [s for s, v in full.items() if v in ("deviates", "flat", "trend")]
    held = [s for s, v in full.items() if v == "reproduced"]
    assert len(missed) >= 2 and held, "the committed 002 table has statements on both sides"
    return missed[0], missed[1], held[0]


def _echo(arg: Any) -> Any:
    return arg


class Fake(Reproduction):
    """Paper 002 with every figure equal to the paper's (so each model verdict is ``reproduced``); its own printout
    (``text``) or the default table (None)."""

    name = "fakefullrun"
    title = "a fake reproduction of 002"
    papers = (papers.paper("002"),)
    user_code = True            # its results never come from (or go to) the task cache
    run_task = staticmethod(_echo)
    text: str | None = None

    def tasks(self, mode: str, seed: int | None) -> list[Task]:
        return [Task("echo", 1, 0.1)]

    def finish(self, out: Path, run: Any, tasks: Any, results: Any) -> Finished:
        return Finished(list(results))

    def headlines(self, out: Path | None, model: Any, emulation: Any, model_why: str = "") -> list[Headline]:
        return [Headline("002", s, 3.4, None if model is None else 3.4) for s in _statements()]

    def printed(self, done: Any, as_json: bool) -> tuple[str, int] | None:
        return None if self.text is None else (self.text, 0)


def test_a_quick_run_of_one_reproduction_marks_verdicts_that_differ_from_the_full_run(tmp_path):
    missed, missed2, held = _statements()
    full = search_tables.full_run_verdicts()
    done = reproduce_all.run_one(Fake(), tmp_path, "quick", "off", 1, None, None)
    assert done.run["differ_from_full_run"] == 2
    by = {h.statement: h for h in done.heads}
    assert [by[s].model_verdict for s in (missed, missed2, held)] == ["reproduced"] * 3
    assert (by[missed].full_run, by[held].full_run) == (full[("002", missed)], "reproduced")
    data = json.loads((tmp_path / "summary.json").read_text())     # the command's summary.json says the same
    assert data["differ_from_full_run"] == 2
    assert {h["statement"]: h["full_run"] for h in data["headlines"]} == {
        s: full[("002", s)] for s in (missed, missed2, held)}
    assert {h.statement: h.full_run for h in summary.read(tmp_path / "summary.json").headlines}[missed] == \
        full[("002", missed)]


def test_a_full_run_is_not_marked(tmp_path):
    done = reproduce_all.run_one(Fake(), tmp_path, "full", "off", 1, None, None)
    assert "differ_from_full_run" not in done.run and all(h.full_run is None for h in done.heads)


def _args(as_json: bool) -> argparse.Namespace:
    return argparse.Namespace(quick=True, emulate="off", workers=1, cluster=None, json=as_json, seed=None)


@pytest.mark.parametrize("text", [None, "the reproduction's own table"])
def test_the_command_prints_the_marks_under_its_table(tmp_path, capsys, text):
    missed, _, held = _statements()
    rep = Fake()
    rep.text = text
    assert reproduce_cli.run_alone(rep, _args(False), str(tmp_path), None) == 0
    out = capsys.readouterr().out
    full = search_tables.full_run_verdicts()[("002", missed)]
    assert "2 of 3 quick model verdicts differ from the full run's" in out
    mark = next(line for line in out.splitlines() if line.startswith(f"  002 {missed[:30]}"))
    assert mark.endswith(f": reproduced (full run: {full})") and len(mark) <= 100
    assert not any(line.startswith(f"  002 {held[:30]}") for line in out.splitlines())
    assert (text is None) or out.startswith(text)


def test_the_commands_json_lists_the_verdicts_that_differ(tmp_path, capsys):
    missed, missed2, _ = _statements()
    rep = Fake()
    rep.text = json.dumps({"model": 1})
    reproduce_cli.run_alone(rep, _args(True), str(tmp_path), None)
    got = json.loads(capsys.readouterr().out)
    assert got["model"] == 1
    assert [(d["statement"], d["verdict"]) for d in got["differ_from_full_run"]] == [
        (missed, "reproduced"), (missed2, "reproduced")]


def test_the_full_run_is_the_preregistered_row_not_the_one_chosen_by_counts(tmp_path):
    """An older table whose ``chosen`` row is the one under which the most statements hold: the comparison
    still reads the row at the pre-registered setting (002's Marking_Rate 0)."""
    from dcnlab.results.open_settings import preregistered

    pre = preregistered("002")["marking-rate"]
    other = next(v for v in ("1", "3", "7") if v != pre)

    def row(value: str, verdict: str) -> dict[str, Any]:
        return {"setting": {"marking-rate": value}, "random": False, "draws": 1, "holding": 0, "total": 1,
                "statements": [{"statement": "C→A at 3.4", "paper": 3.4, "values": [3.4], "median": 3.4,
                                "verdict": verdict}]}

    data = {"paper": "002", "quick": False, "draws": 1, "chosen": {"marking-rate": other},
            "settings": [{"name": "marking-rate"}], "candidates": [row(other, "reproduced"), row(pre, "deviates")]}
    (tmp_path / "002.json").write_text(json.dumps(data))
    assert search_tables.full_run_verdicts(tmp_path)[("002", "C→A at 3.4")] == "deviates"
    heads = [Headline("002", "C→A at 3.4", 3.4, 3.4)]
    assert search_tables.mark_full_run(heads, tmp_path) == 1 and heads[0].full_run == "deviates"


def test_reproduce_all_marks_each_parts_summary_by_the_same_code_path(tmp_path):
    """``reproduce all`` (:func:`reproduce_all.run`) marks every part's ``summary.json`` through
    :func:`reproduce_all.mark_quick`, as ``run_one`` does, a newer table in ``OUT/search`` before the committed one;
    the report's headlines are read back from those summaries (:func:`reproduce_all.collect`)."""
    from dcnlab.report.parts import PartRun

    missed, _, held = _statements()
    parts = []
    for name, statement in (("one", missed), ("two", held)):
        (tmp_path / name).mkdir()
        summary.write(tmp_path / name / "summary.json", ["002"], [Headline("002", statement, 3.4, 3.4)], False, "off")
        parts.append(PartRun(name, tmp_path / name))
    (tmp_path / "search").mkdir()
    newer = {"paper": "002", "quick": False, "draws": 1, "chosen": {}, "settings": [],
             "candidates": [{"setting": {}, "random": False, "draws": 1, "holding": 0, "total": 1,
                             "statements": [{"statement": held, "paper": 3.4, "values": [9], "median": 9,
                                             "verdict": "deviates"}]}]}
    (tmp_path / "search" / "002.json").write_text(json.dumps(newer))
    facts: dict[str, Any] = {}
    reproduce_all.mark_quick(parts, "full", facts, tmp_path / "search")
    assert facts == {}
    reproduce_all.mark_quick(parts, "quick", facts, tmp_path / "search")
    assert facts == {"differ_from_full_run": 1}         # the newer table knows only `held`, and says deviates
    heads = reproduce_all.collect(parts)
    assert [(h.statement, h.full_run) for h in heads] == [(missed, None), (held, "deviates")]


def test_a_paper_without_a_full_run_is_named_not_marked():
    """004 has no sensitivity table (its settings are pre-registered, nothing to search): its quick verdicts have
    no full run to compare with, and the command says so instead of marking nothing silently."""
    missed, _, _ = _statements()
    heads = [Headline("002", missed, 3.4, 3.4), Headline("004", "every instance has k CISTs", 100, 50)]
    assert search_tables.mark_full_run(heads) == 1 and heads[1].full_run is None
    done = reproduce_all.AllRun({"differ_from_full_run": 1}, heads, [], [], "here", 0.0, 0.0)
    lines = reproduce_cli.full_run_lines(done)
    assert lines[1].startswith("1 of 1 quick model verdicts differ") and lines[-1] == "no full run to compare with: 004"
