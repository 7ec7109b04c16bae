"""The settings the papers leave open and their search: the data, the bookkeeping, the method, the defaults."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import pytest

from dcnlab.results import open_settings as os_
from dcnlab.report import search as ss
from dcnlab.report import search_tables as search_tables
from dcnlab.results.open_settings import OpenSetting
from dcnlab.results.summary import Headline

# -- the data -----------------------------------------------------------------------------------------------


def test_every_paper_lists_its_open_settings_each_with_its_sentence() -> None:
    for paper in os_.PAPERS:
        found = os_.settings(paper)
        assert found, paper
        for s in found:
            assert len(s.sentence.split()) >= 6, (paper, s.name)
            assert s.where.strip() and s.what.strip()
            assert s.default in s.values
            assert s.searched or s.note, (paper, s.name, "a setting left out of the search says why")
    names = [(s.paper, s.name) for s in os_.SETTINGS]
    assert len(names) == len(set(names))


def test_an_open_setting_without_its_sentence_or_with_a_stray_default_is_refused() -> None:
    with pytest.raises(ValueError, match="sentence"):
        OpenSetting("001", "x", "what", ("a", "b"), "a", " ", "§1")
    with pytest.raises(ValueError, match="default"):
        OpenSetting("001", "x", "what", ("a", "b"), "c", "a sentence of the paper", "§1")
    with pytest.raises(ValueError, match="paper"):
        OpenSetting("009", "x", "what", ("a",), "a", "a sentence of the paper", "report 009 §1")


# -- the bookkeeping, on a fake paper ---------------------------------------------------------------------------

FAKE = (OpenSetting("001", "size", "a size", ("small", "large"), "small", "its size is never given here",
                    "fake §1"),)


class FakeSearch:
    """Three statements; under ``small`` one holds, under ``large`` two (``values`` by (setting, draw))."""

    paper = "001"

    def __init__(self, values: Mapping[tuple[str, int], tuple[float, float, float]], random: bool = False) -> None:
        self.values, self.random = values, random

    def is_random(self, setting: Mapping[str, str]) -> bool:
        return self.random

    def tasks(self, setting: Mapping[str, str], draw: int, quick: bool) -> list[Hashable]:
        return [(setting["size"], draw)]

    def run(self, task: Hashable) -> Any:
        return self.values[task]        # type: ignore[index]

    def seconds(self, task: Hashable) -> float:
        return 0.0

    def headlines(self, setting: Mapping[str, str], draw: int, results: Mapping[Hashable, Any]) -> list[Headline]:
        a, b, c = self.values[(setting["size"], draw)]
        return [Headline("001", "A is 7", 7, a, kind="count"), Headline("001", "B is 10%", 10, b, kind="percent"),
                Headline("001", "C grows", None, c, kind="trend", direction="up", reference=0.0)]

    def extra(self, results: Mapping[Hashable, Any], quick: bool) -> dict[str, Any]:
        return {}


def _search(fake: FakeSearch, draws: int = 1) -> list[ss.Candidate]:
    results = {t: fake.run(t) for s in ss.candidates(FAKE) for d in range(1, draws + 1) for t in fake.tasks(s, d, False)}
    return ss.evaluate(fake, FAKE, results, draws)


def test_the_setting_under_which_most_statements_hold_at_once_is_chosen() -> None:
    fake = FakeSearch({("small", 1): (7, 30, -1), ("large", 1): (8, 11, 2)})
    cands = _search(fake)
    assert [c.holding for c in cands] == [1, 2]
    assert ss.choose(cands, FAKE).setting == {"size": "large"}


def test_a_tie_goes_to_the_earliest_value_even_when_the_other_lies_closer_to_the_papers_figures() -> None:
    # one statement each; large's misses lie much closer (8 for 7, 11 for 10%) than small's (30 for 10%): the
    # search never looks at how close a figure is, so the list order (the reading the text supports best) wins
    cands = _search(FakeSearch({("small", 1): (7, 30, -1), ("large", 1): (8, 11, -2)}))
    assert [c.holding for c in cands] == [1, 1]
    assert ss.choose(cands, FAKE).setting == {"size": "small"}
    assert not hasattr(ss, "miss")
    order = ss.ranked(cands, FAKE)
    assert [c.setting for c in order] == [{"size": "small"}, {"size": "large"}]      # chosen, runner-up


def test_a_tie_goes_to_the_list_order_before_the_deterministic_setting() -> None:
    a = ss.Candidate({"size": "small"}, True, [ss.Judged("s", 1, [1], 1, "reproduced")], 3)
    b = ss.Candidate({"size": "large"}, False, [ss.Judged("s", 1, [1], 1, "reproduced")], 1)
    assert ss.choose([a, b], FAKE) is a
    c = ss.Candidate({"size": "small"}, False, [ss.Judged("s", 1, [1], 1, "reproduced")], 1)
    assert ss.choose([a, c], FAKE) is c        # the same values: then the deterministic one


RULED = (OpenSetting("001", "size", "a size", ("small", "large", "huge"), "small", "its size is never given here",
                     "fake §1", contradicts=(("small", "§2", "The size is at least large."),)),)


def test_a_reading_that_contradicts_the_text_is_never_a_candidate_and_says_why() -> None:
    # small holds every statement, but the text rules it out: it is not searched, and the table names the sentence
    assert ss.candidates(RULED) == [{"size": "large"}, {"size": "huge"}]
    assert RULED[0].contradiction("small") == 'contradicts §2: "The size is at least large."'
    assert RULED[0].contradiction("large") is None
    fake = FakeSearch({("small", 1): (7, 10, 1), ("large", 1): (8, 30, -1), ("huge", 1): (8, 30, -1)})
    results = {t: fake.run(t) for s in ss.candidates(RULED) for t in fake.tasks(s, 1, False)}
    cands = ss.evaluate(fake, RULED, results, 1)
    assert [c.setting["size"] for c in cands] == ["large", "huge"]
    assert ss.choose(cands, RULED).setting == {"size": "large"}
    with pytest.raises(ValueError, match="contradicts the text"):
        ss.choose([ss.Candidate({"size": "small"}, False, [ss.Judged("s", 1, [1], 1, "reproduced")])], RULED)
    assert ss.dropped(RULED) == [{"name": "size", "value": "small",
                                  "why": 'contradicts §2: "The size is at least large."'}]
    with pytest.raises(ValueError, match="every value contradicts"):
        OpenSetting("001", "x", "what", ("a",), "a", "a sentence of the paper", "§1", contradicts=(("a", "§1", "No."),))


def test_the_papers_readings_the_text_rules_out_are_listed_with_their_sentences() -> None:
    steiner = next(o for o in os_.settings("003") if o.name == "steiner-baseline")
    assert "kmb-shuffle-tree" not in steiner.candidates and "kmb" in steiner.candidates
    assert "each aggregation tree results from the Steiner-tree algorithm" in (steiner.contradiction("kmb-shuffle-tree")
                                                                               or "")
    delta = next(o for o in os_.settings("003") if o.name == "delta-reading")
    assert "compared to the existing method" in (delta.contradiction("vs-srs-no-agg") or "")
    timer = next(o for o in os_.settings("002") if o.name == "ccti-timer")
    assert timer.candidates == ("reset",) and "Timer = 0" in (timer.contradiction("free") or "")
    for paper in ss.SEARCHABLE:       # no committed search chose a reading the text rules out
        stored = os_.stored_search(paper)
        assert stored is not None
        for o in os_.searched(paper):
            assert o.contradiction(stored["chosen"][o.name]) is None, (paper, o.name)
            assert all(o.contradiction(c["setting"][o.name]) is None for c in stored["candidates"]), (paper, o.name)


def test_a_random_setting_is_judged_on_its_median_over_the_draws() -> None:
    # A: 7, 9, 7 -> median 7 holds though one draw misses; B: 30, 10, 40 -> median 30 misses though one holds
    vals = {("small", 1): (7, 30, 1), ("small", 2): (9, 10, 1), ("small", 3): (7, 40, -1),
            ("large", 1): (1, 1, 1), ("large", 2): (1, 1, 1), ("large", 3): (1, 1, 1)}
    cands = _search(FakeSearch(vals, random=True), draws=3)
    small = cands[0]
    assert small.draws == 3
    assert [s.median for s in small.statements] == [7, 30, 1]
    assert [s.holds for s in small.statements] == [True, False, True]
    assert small.statements[1].range_text() == "10..40 (median 30)"
    assert ss.median([3, None, 1, 2]) == 2 and ss.median([1, 2, 3, 4]) == 2 and ss.median([None]) is None


def test_the_table_marks_the_chosen_setting_and_shows_the_statements_that_differ() -> None:
    fake = FakeSearch({("small", 1): (7, 30, -1), ("large", 1): (8, 11, 2)})
    cands = _search(fake)
    best = ss.choose(cands, FAKE)
    data = {"paper": "001", "draws": 1, "rule": ss.TIE_RULE, "chosen": best.setting,
            "settings": [{"name": "size"}],
            "candidates": [{"setting": c.setting, "random": c.random, "draws": c.draws, "holding": c.holding,
                            "total": len(c.statements),
                            "statements": [{"statement": s.statement, "paper": s.paper, "values": s.values,
                                            "median": s.median, "verdict": s.verdict} for s in c.statements]}
                           for c in cands]}
    text = search_tables.table_text(data)
    assert "* large" in text and "2/3" in text and "  small" in text and "1/3" in text
    assert "A is 7" in text and "B is 10%" in text and "C grows" in text
    assert all(len(line) <= 100 for line in text.splitlines())


# -- the reproductions follow the search ----------------------------------------------------------------------------


def test_the_default_of_each_searched_reproduction_is_the_chosen_setting() -> None:
    from dcnlab.reproduce.multicast import model as mm

    chosen = os_.chosen("001")
    assert chosen is not None, "001's search table is committed (dcnlab/results/search_tables/001.json)"
    assert mm.DEFAULT_SETTING == chosen
    for paper in ss.SEARCHABLE:         # each committed table chose by today's rule
        stored = os_.stored_search(paper)
        assert stored is not None
        assert ss.rechoose(stored, os_.searched(paper))["chosen"] == stored["chosen"]
        if stored.get("preregistered"):     # the text's setting, whatever holds (a sensitivity run)
            assert stored["chosen"] == {o.name: o.candidates[0] for o in os_.searched(paper)}
            continue
        best = max(c["holding"] for c in stored["candidates"])
        assert best == next(c["holding"] for c in stored["candidates"] if c["setting"] == stored["chosen"])


def test_001_join_order_changes_the_order_and_nothing_else() -> None:
    from dcnlab.controller.multicast.hierarchy import hierarchy_for
    from dcnlab.controller.multicast.planning import mapping_for
    from dcnlab.controller.multicast.workload import build_pattern, parse_pattern
    from dcnlab.topos.errors import UserError
    from dcnlab.topos.spec import parse_spec

    h = hierarchy_for(parse_spec("midplane:q=2,m=2,p=2,k=2,w=2,cns=4,terminals=2"))
    m = mapping_for(h, 4)
    base = build_pattern(h, "4x2x2", m)
    for text in ("4x2x2:order=zyx", "4x2x2:order=shuffle:seed=3"):
        wl = build_pattern(h, text, m)
        assert sorted((g.mgid, g.members) for g in wl.groups) == sorted((g.mgid, g.members) for g in base.groups)
    assert [g.label[0] for g in build_pattern(h, "4x2x2:order=zyx", m).groups][0] == "z"
    assert [g.label[0] for g in base.groups][0] == "x"
    for bad in ("4x2x2:order=xy", "4x2x2:seed=1", "random:10:order=zyx", "4x2:order=zyx"):
        with pytest.raises(UserError, match="pattern"):
            parse_pattern(bad)


def test_001_bound_of_the_dynamic_variant_under_the_papers_rule() -> None:
    """Under 'roots among the L3 switches of TN tnid' the dynamic variant cannot go below 2
    (64x32x16) and 3 (32x32x32); the group-wide reading can reach the paper's 1 and 1."""
    from dcnlab.reproduce.multicast.search import tfi_bound

    assert (tfi_bound("64x32x16", "tn"), tfi_bound("64x32x16", "group")) == (2, 1)
    assert (tfi_bound("32x32x32", "tn"), tfi_bound("32x32x32", "group")) == (3, 1)


def test_the_report_shows_each_papers_search_table_a_newer_run_first(tmp_path) -> None:
    from dcnlab.report import write as report

    data = {"paper": "001", "draws": 3, "rule": ss.TIE_RULE, "chosen": {"size": "large"}, "date": "today",
            "settings": [{"name": "size"}],
            "candidates": [{"setting": {"size": v}, "random": True, "draws": 3, "holding": n, "total": 2,
                            "statements": [{"statement": "A is 7", "paper": 7, "values": [7, 7, 7], "median": 7,
                                            "verdict": "reproduced" if n else "deviates"},
                                           {"statement": "B is 1", "paper": 1, "values": [1, 2, 1], "median": 1,
                                            "verdict": "reproduced"}]}
                           for v, n in (("small", 0), ("large", 1))]}
    (tmp_path / "search").mkdir()
    (tmp_path / "search" / "001.json").write_text(__import__("json").dumps(data))
    tables = search_tables.report_tables(tmp_path / "search")
    assert "* large" in tables["001"] and "today" in tables["001"]
    run = {"mode": "quick", "seed": None, "date": "today", "wall_seconds": 1.0, "workers": 1, "cluster": None,
           "cpus": 2, "model_seconds": 1.0, "emulate": "off", "emulation_why": "not run: --emulate off"}
    md = report.report_md(tmp_path, [], [], run)
    assert "## Settings the papers leave open" in md and "* large" in md
    assert "<h2>Settings the papers leave open</h2>" in report.report_html(tmp_path, [], [], run)


def test_reproduce_search_refuses_a_paper_without_a_search_in_one_line(capsys) -> None:
    from dcnlab.cli import main

    assert main(["reproduce", "search", "004\x1b[2J"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no search" in err[0] and "\x1b" not in err[0] and "valid: 000, 001, 002, 003" in err[0]
    assert main(["reproduce", "search", "004"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nothing to search" in err[0]


def test_000_sensitivity_judges_the_reproductions_rounds_and_its_default_is_the_preregistered_setting() -> None:
    from dcnlab.reproduce.aggregation import model as am
    from dcnlab.reproduce.aggregation import search_000

    plans = am.plans(False, None)
    assert search_000.plans(False) == {part: plans[part] for part in ("000-k", "000-size")}
    k_sweep = os_.chosen("000")["k-sweep"]      # the reproduction runs the chosen sweep's points
    assert plans["000-k"].points == (search_000.TABLE_1 if k_sweep == "2..6" else search_000.K_POINTS)
    pre = {o.name: o.candidates[0] for o in os_.searched("000")}     # fixed from the text, never by a count
    assert am.DEFAULT_SETTING_000 == os_.chosen("000") == pre
    assert os_.stored_search("000")["preregistered"] and search_000.Search000.preregistered


# -- 002, 003, 004 ---------------------------------------------------------------------------------------------


def test_002_default_is_the_chosen_setting_and_the_reproduction_runs_it() -> None:
    from dcnlab.controller.congestion import scenarios as sc
    from dcnlab.reproduce.congestion import model as congestion_model
    from dcnlab.reproduce.congestion import search as search_002
    from dcnlab.reproduce.congestion import readings as ib_cc_002

    chosen = os_.chosen("002")
    assert chosen is not None, "002's search table is committed (dcnlab/results/search_tables/002.json)"
    assert congestion_model.DEFAULT_SETTING_002 == chosen
    assert set(chosen) == {o.name for o in os_.searched("002")}
    built = [s for s in congestion_model.build_scenarios(True) if not s.name.startswith("large_")]
    assert built and all(f.params.timer_mode == chosen["ccti-timer"] for s in built for f in s.flows)
    assert all(c.params.timer_mode == chosen["ccti-timer"] for s in built for c in s.changes)
    # summarize() counts BECNs per 100 ms sample and recovery at RECOVERY_FRACTION: the chosen window and threshold
    assert chosen["becn-window"] == "per-100ms"
    assert search_002.FRACTIONS[chosen["recovery-threshold"]] == sc.RECOVERY_FRACTION
    assert ib_cc_002._timer() == chosen["ccti-timer"]


def test_002_windows_read_the_same_run_and_the_timer_is_set_both_ways() -> None:
    from dcnlab.controller.congestion import scenarios as sc
    from dcnlab.reproduce.congestion import model as congestion_model
    from dcnlab.reproduce.congestion import search as search_002

    s = sc.tenant_fair(0.2, "cc")
    r = s.run()
    per100, per1s, phase = (search_002.becn_window(s, r, w) for w in search_002.WINDOWS)
    summary = {p.tenant2_flows: p.becn_per_sample for p in sc.summarize_tenants(s, r)[:3]}
    assert per100 == pytest.approx(summary)                   # summarize()'s count is the per-100ms window
    assert all(per1s[n] == pytest.approx(10 * per100[n]) for n in (1, 2, 3))
    assert all(phase[n] > per100[n] for n in (1, 2, 3))       # a 0.2 s phase holds two 100 ms samples and more
    free = congestion_model.with_timer(s, "free")
    assert {f.params.timer_mode for f in free.flows} == {"free"} and free.name == s.name
    back = congestion_model.with_timer(free, "reset")
    assert {f.params.timer_mode for f in back.flows} == {"reset"}
    assert {c.params.timer_mode for c in back.changes} == {"reset"}


def test_003_search_runs_a_reading_only_where_it_differs_and_draws_only_the_random_ones() -> None:
    from dcnlab.reproduce.aggregation.search_003 import Search003

    s = Search003()
    base = {"steiner-baseline": "kmb", "delta-reading": "curve-mean", "average": "plain", "counting": "distinct"}
    plain = s.tasks(base, 1, True)
    assert {t[0] for t in plain} == {"std"}                 # the defaults are the reproduction's own rounds
    assert s.tasks(dict(base, average="by-traffic", counting="summed"), 1, True) == plain
    rnd = dict(base, **{"steiner-baseline": "kmb-random-order"})
    assert s.is_random(rnd) and not s.is_random(base)
    extra = [set(s.tasks(rnd, d, True)) - set(plain) for d in (1, 2)]
    assert extra[0] and extra[1] and not extra[0] & extra[1]       # each draw its own path orders
    det = dict(base, **{"steiner-baseline": "kmb-switch-graph"})
    assert s.tasks(det, 1, True) == s.tasks(det, 2, True)
    job = dict(base, **{"delta-reading": "per-job"})
    assert s.is_random(job) and s.tasks(job, 1, True) != s.tasks(job, 2, True)


def test_004_has_nothing_to_search_and_the_report_says_why() -> None:
    assert "004" not in ss.SEARCHABLE and os_.searched("004") == ()
    assert all(o.note for o in os_.settings("004"))
    text = search_tables.report_tables()["004"]
    assert "nothing to search: " + os_.NOTHING_TO_SEARCH["004"][:40] in text.replace("\n", " ")
    assert "no search yet" not in text


def test_003_default_is_the_chosen_setting_and_the_reproduction_runs_it() -> None:
    import numpy as np

    from dcnlab.controller.aggregation.steiner_readings import steiner_costs
    from dcnlab.reproduce.aggregation import model as am

    chosen = os_.chosen("003")
    assert chosen is not None, "003's search table is committed (dcnlab/results/search_tables/003.json)"
    assert am.DEFAULT_SETTING_003 == chosen == {o.name: o.candidates[0] for o in os_.searched("003")}
    assert os_.stored_search("003")["preregistered"]
    # the Steiner-based trees of the chosen reading, on the round's own members
    res = am._task("003-k", 2, 0, 1)[3]
    space, senders, receivers = __import__("dcnlab.reproduce.aggregation.search_003", fromlist=["x"])._members("003-k", 2, 0)
    want = steiner_costs(space, senders, receivers, chosen["steiner-baseline"], seed=0, detail=True)
    assert res["traffic"]["kmb"][0] == float(want.traffic.sum())
    assert res["aggregators"]["kmb"] == want.aggregator_servers
    kmb = am._task("003-k", 2, 0, 1, "kmb")[3]
    assert kmb["traffic"]["srs"] == res["traffic"]["srs"] and kmb["traffic"]["none"] == res["traffic"]["none"]
    # one averaging rule for the paper: Fig. 4(a) and Fig. 5 alike; the counting of aggregating servers
    base = {"steiner-baseline": "kmb", "delta-reading": "curve-mean", "average": "plain", "counting": "distinct"}
    for part, points in (("003-size", (50, 100)), ("003-k", (2, 3))):
        rows = [{"point": m, "round": r, "result": am._task(part, m, r, 1, "kmb")[3]} for m in points for r in (0, 1)]
        plain = am.summarise(part, rows, points, base)
        pooled = am.summarise(part, rows, points, dict(base, average="by-traffic"))
        pts = plain["points"].values()
        for mth in am.SHUFFLE_METHODS:
            assert plain["overall"][mth] == pytest.approx(np.mean([v["saving"][mth] for v in pts]))
            assert pooled["overall"][mth] == pytest.approx(
                100 * (1 - sum(v["traffic"][mth] for v in pts) / sum(v["traffic"]["none"] for v in pts)))
            assert plain["overall_se"][mth] is not None and plain["overall_se"][mth] >= 0
        assert am.summarise(part, rows, points)["setting"] == chosen
    summed = am.summarise("003-k", rows, (2, 3), dict(base, counting="summed"))
    for q, v in summed["points"].items():
        assert v["aggregators"]["srs"] == pytest.approx(np.mean(v["rounds"]["aggregators_summed"]["srs"]))
        assert v["aggregators"]["incast"] >= plain["points"][q]["aggregators"]["incast"]   # a server per tree
    drows = [{"point": 50, "round": 0, "result": am._task("003-delta", 50, 0, 1)[3]}]
    curve = am.summarise("003-delta", drows, (50,), base)["overall"]["srs@50"]
    vs_srs = am.summarise("003-delta", drows, (50,), dict(base, **{"delta-reading": "vs-srs-no-agg"}))["overall"]
    srs = drows[0]["result"]["traffic"]["srs"]
    assert vs_srs["srs@50"] == pytest.approx(100 * am._trapezoid(am.DELTAS, [1 - t / srs[-1] for t in srs]))
    assert vs_srs["srs@50"] > curve             # SRS at δ = 1 carries less than no aggregation
    with pytest.raises(ValueError, match="delta reading"):
        am.summarise("003-delta", drows, (50,), dict(base, **{"delta-reading": "per-node"}))


def test_a_statement_is_listed_once_per_value_of_the_settings_that_move_it() -> None:
    """003's 210 settings listed each statement 210 times (2,152 lines): now one line per value of the settings
    that move the statement's figure, named."""
    def cand(a: str, b: str, x: float) -> dict[str, Any]:
        return {"setting": {"a": a, "b": b}, "random": False, "draws": 1, "holding": int(x == 7), "total": 1,
                "statements": [{"statement": "A is 7", "paper": 7, "values": [x], "median": x,
                                "verdict": "reproduced" if x == 7 else "deviates"}]}

    cands = [cand(a, b, {"p": 7.0, "q": 9.0, "r": 9.0}[a]) for a in "pqr" for b in "uvw"]
    groups = search_tables.by_setting(cands, 0, ["a", "b"])
    assert [label for label, _ in groups] == ["a=p", "a=q", "a=r"]
    assert [len(g) for _, g in groups] == [3, 3, 3]
    data = {"paper": "001", "draws": 1, "rule": ss.TIE_RULE, "chosen": {"a": "p", "b": "u"},
            "settings": [{"name": "a"}, {"name": "b"}], "candidates": cands}
    text = search_tables.table_text(data)
    assert "* yes 7: a=p" in text and "no  9: a=q" in text and text.split("statements that hold under")[1].count("a=") == 3
    assert "chosen: a=p, b=u (1 of 1 statements hold)" in text
    assert search_tables.by_setting([cand("p", "u", 9.0), cand("q", "u", 9.0)], 0, ["a", "b"])[0][0] == "every setting"


def test_a_quick_verdict_that_differs_from_the_full_runs_is_marked(tmp_path) -> None:
    from dcnlab.report import write as report
    from dcnlab.reproduce.aggregation import reproduction as aggregation

    data = {"paper": "001", "quick": False, "draws": 1, "rule": ss.TIE_RULE, "chosen": {"size": "large"},
            "settings": [{"name": "size"}],
            "candidates": [{"setting": {"size": "large"}, "random": False, "draws": 1, "holding": 1, "total": 2,
                            "statements": [{"statement": "A is 7", "paper": 7, "values": [7], "median": 7,
                                            "verdict": "reproduced"},
                                           {"statement": "B is 1", "paper": 1, "values": [3], "median": 3,
                                            "verdict": "deviates"}]}]}
    (tmp_path / "search").mkdir()
    (tmp_path / "search" / "001.json").write_text(__import__("json").dumps(data))
    heads = [Headline("001", "A is 7", 7, 7.4, kind="count"), Headline("001", "B is 1", 1, 3, kind="count")]
    assert search_tables.mark_full_run(heads, tmp_path / "search") == 1
    assert (heads[0].full_run, heads[1].full_run) == ("reproduced", "deviates")
    assert report.verdict_text(heads[0]) == "deviates (full run: reproduced)"
    assert report.verdict_text(heads[1]) == "deviates"
    # the cheap parts run the full run's rounds in --quick: their figures and verdicts are the full run's
    quick, full = aggregation.aggregation_plans("quick"), aggregation.aggregation_plans("full")
    for part in ("003-k", "003-delta", "000-k"):
        assert quick[part].rounds == full[part].rounds
