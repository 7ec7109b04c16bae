"""``dcnlab reproduce all``: one run, one report, every paper's headlines (no BMv2).

The run uses the hidden ``--smoke`` plan (a few points per part, about half a minute on two cores);
``--quick`` has the same code path with more rounds.
"""

from __future__ import annotations

import base64
import json
import re

import pytest

from dcnlab.emu import preflight
from dcnlab.report import write as report
from dcnlab.report import reproduce_all
from dcnlab.results import summary
from dcnlab.cli import main
from dcnlab.results.summary import VERDICTS

SEEDS = {"000", "001", "002", "003", "004"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("all") / "report"
    code = main(["reproduce", "all", "--smoke", "--emulate", "off", "--out", str(out), "--workers", "2"])
    return code, out


def test_exit_status_and_files(run):
    code, out = run
    assert code == 0
    for name in ("report.md", "report.html", "summary.json"):
        assert (out / name).stat().st_size > 0
    for m in reproduce_all.PARTS:
        assert (out / m / "summary.json").is_file()
        assert list((out / m).glob("*.png")), m
    assert (out / "aggregation" / "aggregation.json").is_file()
    assert (out / "multicast" / "multicast.json").is_file()
    assert (out / "congestion" / "results.json").is_file()
    assert (out / "cist" / "model.json").is_file()


def test_summary_has_every_paper_and_valid_verdicts(run):
    _, out = run
    s = summary.read(out / "summary.json")
    assert set(s.seeds) == SEEDS
    assert {h.seed for h in s.headlines} == SEEDS
    assert all(h.verdict in VERDICTS for h in s.headlines)
    assert any(h.verdict == "reproduced" for h in s.headlines)
    assert not s.emulation_ran and "--emulate off" in s.emulation_why
    for h in s.headlines:
        assert h.statement and h.tolerance
        if h.verdict == "not run":
            assert h.reading, h.statement      # the reason is given
        else:
            assert h.model is not None or h.emulation is not None
        if h.plot is not None:
            assert (out / h.plot).is_file(), h.plot
    data = json.loads((out / "summary.json").read_text())
    assert set(data["parts"]) == set(reproduce_all.PARTS)
    assert data["run"]["mode"] == "smoke"
    # each part's own summary.json has the same shape, with its own papers
    for m, seeds in report.SEEDS.items():
        part = summary.read(out / m / "summary.json")
        assert set(part.seeds) == set(seeds) and {h.seed for h in part.headlines} == set(seeds)
        assert part.extra and part.extra["mechanism"] == m


def test_report_md_states_the_rule_and_lists_every_plot(run):
    _, out = run
    md = (out / "report.md").read_text()
    assert summary.RULE in md
    assert "| paper | headline | paper's figure | model | BMv2 | unit |" in md
    heads = summary.read(out / "summary.json").headlines
    rows = [line for line in md.splitlines() if re.match(r"\| 00[0-4] \|", line)]
    assert len(rows) == len(heads)
    for m in reproduce_all.PARTS:
        assert report.TITLES[m] in md
        for png in (out / m).glob("*.png"):
            assert f"({m}/{png.name})" in md


def test_report_html_embeds_every_png(run):
    _, out = run
    page = (out / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "</html>" in page
    pngs = sorted(p for m in reproduce_all.PARTS for p in (out / m).glob("*.png"))
    uris = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", page)
    assert len(uris) == len(pngs)
    assert {base64.b64decode(u)[:8] for u in uris} == {b"\x89PNG\r\n\x1a\n"}
    assert not re.search(r"src=['\"](?!data:)", page)     # nothing loaded from elsewhere
    assert "Verdict rule" in page


def test_printed_table_fits_in_100_columns(run, capsys):
    heads = summary.read(run[1] / "summary.json").headlines
    lines = report.table_lines(heads)
    assert max(len(line) for line in lines) <= 100
    assert len(lines) == len(heads) + 2


def test_bad_emulate_value_is_one_line_exit_2(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        main(["reproduce", "all", "--emulate", "maybe", "--out", str(tmp_path / "x")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--emulate" in err and "maybe" in err
    assert not (tmp_path / "x").exists()


def test_emulate_on_without_bmv2_is_refused_up_front(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(preflight.Needs, "problems", lambda self: ["p4c not found on PATH", "not root"])
    assert main(["reproduce", "all", "--emulate", "on", "--out", str(tmp_path / "y")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "needs root and p4c: not root; p4c not found on PATH" in err
    assert not (tmp_path / "y").exists()


def test_emulate_auto_without_bmv2_says_why(monkeypatch):
    monkeypatch.setattr(preflight.Needs, "problems", lambda self: ["p4c not found on PATH"])
    ran, why = reproduce_all.emulation_plan("auto")
    assert not ran and "p4c not found" in why
    assert reproduce_all.emulation_plan("off") == (False, "not run: --emulate off")


def test_bad_out_is_refused_before_work(capsys, tmp_path):
    f = tmp_path / "file"
    f.write_text("")
    assert main(["reproduce", "all", "--emulate", "off", "--out", str(f)]) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_quick_plan_keeps_every_point_of_the_full_run():
    from dcnlab.reproduce.aggregation import run_plans as aggregation
    from dcnlab.reproduce.multicast import reproduction as multicast

    quick, full = aggregation.aggregation_plans("quick"), aggregation.aggregation_plans("full")
    for part in aggregation.QUICK_ROUNDS:
        assert quick[part].points == full[part].points
        assert quick[part].rounds <= full[part].rounds
    tasks = {(t.pattern, t.algo) for t in multicast.multicast_tasks("quick")}
    needed = {(p, "mr4lms") for p in ("100x50x26:ppn=4", "random:1000:ppn=4", "256x32x16:ppn=4",
                                      "128x32x32:ppn=4", "512x64", "181x181", "100x327")}
    assert needed <= tasks


def test_readings_tables_go_into_both_reports(run):
    from dcnlab.results.readings import Reading
    out = run[1]
    rs = [Reading("003 Steiner baseline on BCube(6,k)", "(a) KMB", "one tree per receiver", 47.24, 28.76, "%",
                  default=True),
          Reading("003 Steiner baseline on BCube(6,k)", "(d) one tree over all members", "Definition 3", 30.1, 28.76,
                  "%")]
    heads = summary.read(out / "summary.json").headlines
    runinfo = json.loads((out / "summary.json").read_text())["run"]
    md = report.report_md(out, [], heads, runinfo, rs)
    assert "## Readings of the headlines that deviate" in md and "(d) one tree over all members" in md
    assert "(a) KMB *" in md
    page = report.report_html(out, [], heads, runinfo, rs)
    assert "<h3>003: Shuffle aggregation on BCube (IRS/SRS), Guo et al.</h3><pre>" in page
    assert [r.holds for r in rs] == [False, True]


def test_report_judges_model_and_bmv2(run):
    """The verdict rule stated above the table, both figures' (model and BMv2) verdicts in it, the counts of the
    headlines'."""
    out = run[1]
    data = json.loads((out / "summary.json").read_text())
    heads = summary.read(out / "summary.json").headlines
    assert set(data["counts"]) == set(VERDICTS) and sum(data["counts"].values()) == len(heads)
    assert data["counts"] == summary.Summary(list(SEEDS), heads, False, "").counts()
    # BMv2 off: every headline BMv2 measures and the model ran says so, with the model's verdict
    marked = [h for h in heads if h.note == "BMv2 not run"]
    assert data["bmv2_not_run"] == len(marked) > 0
    assert all(h.verdict == h.model_verdict and h.emulation_verdict == "not run" for h in marked)
    md = (out / "report.md").read_text()
    header = md.index("| paper | headline | paper's figure |")
    assert md.index(summary.COMBINED_RULE) < header
    assert "| tolerance | model verdict | BMv2 verdict | verdict |" in md
    assert summary.counts_text(heads) in md
    assert "(BMv2 not run) |" in md
    page = (out / "report.html").read_text()
    assert "<th>model verdict</th><th>BMv2 verdict</th><th>verdict</th>" in page
    assert "<span class=note>BMv2 not run</span>" in page


def test_report_rows_of_model_only_and_bmv2_only(run):
    """A headline whose figures disagree shows both verdicts and counts under its own verdict."""
    out = run[1]
    runinfo = json.loads((out / "summary.json").read_text())["run"]
    fifo = summary.Headline("002", "Parking lot on one FIFO egress queue", 1.0, 1.0, emulation=2.08, kind="ratio",
                            unit="(A+B) / D")
    other = summary.Headline("002", "Theorem 1: 1:2 gives 2:1", 2.0, 1.5, emulation=2.1, kind="ratio", unit="ratio")
    md = report.report_md(out, [], [fifo, other], runinfo)
    assert "| ±10% | reproduced | deviates | **model only** |" in md
    assert "| ±10% | deviates | reproduced | **BMv2 only** |" in md
    assert ("2 headlines: 0 reproduced, 1 model only, 1 BMv2 only, 0 trend, 0 unstable, 0 flat, 0 deviates, "
            "0 inconsistent, 0 not run, 0 not judged.") in md
    page = report.report_html(out, [], [fifo, other], runinfo)
    assert "<td class='verdict model-only'>model only</td>" in page
    lines = report.table_lines([fifo, other])
    assert lines[2].split()[-6:] == ["1", "yes", "2.08", "no", "model", "only"]
    assert max(len(line) for line in lines) <= 100


def test_units_name_what_ran(run):
    """A headline's unit is the quantity's and names the points that ran (the smoke run has k = 2, 3
    on BCube(6,k)), not the full run's. A trend is the least-squares slope over every point, so
    its unit is per step of the sweep over the points that ran (it was the last point minus the first)."""
    heads = summary.read(run[1] / "summary.json").headlines
    units = {h.statement: h.unit for h in heads}
    assert units["Aggregation servers fall with k for unicast (Fig. 5(b))"] == "servers per k, slope over k = 2..3"
    assert units["The savings grow with m = n on BCube(8,5) (Fig. 5)"] == (
        "points per 100 of m = n, slope over m=n = 50..100")
    assert not [h.statement for h in heads if re.search(r"\bk ?= ?(\d+\.\.)?8\b", h.unit)]
    assert units["C-MR4LMS max EFI 69 on random patterns (1 ppn, §4.2)"] == "groups per link"
    assert units["CCT rate limit: IRD 20.48 µs limits one QP to 100 Mb/s (Fig. 4)"] == "Mb/s"
    assert not [h.statement for h in heads if h.unit in ("", "EFI", "TFI")]
