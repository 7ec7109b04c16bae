"""The sensitivity runs of 000 and 003 (``dcnlab reproduce search 000 003``) draw their rounds at the seeds
``reproduce all`` gives them (each part's rounds shared out among seeds 1, 2 and 3) and judge over the pooled rounds
beside each seed's figure, as the headlines are: the pre-registered row of every headline is the headline's
figure, its spread and its seeds (same setting, seeds, points and rounds)."""

from __future__ import annotations

import argparse
import math

import pytest

from dcnlab.report import search as ss
from dcnlab.reproduce import registry
from dcnlab.reproduce.aggregation import run_plans, search_000, search_003
from dcnlab.reproduce.protocol import Run
from dcnlab.results.open_settings import searched

ROUNDS = 5
"""Rounds per point of the small run: 2 + 2 + 1 over the seeds 1-3 (each seed its own figure, two with a spread)."""


def _reproduction(tmp_path, parts):
    """``reproduce aggregation --quick --rounds 5 --only PARTS`` as the runner runs it: its plans and headlines."""
    rep = registry.get("aggregation").configure(argparse.Namespace(only=list(parts), rounds=ROUNDS, algo=None,
                                                                   topo=None, seed=None))
    tasks = rep.tasks("quick", None)
    results = [rep.run_task(t.arg) for t in tasks]
    fin = rep.finish(tmp_path, Run("quick"), tasks, results)
    return rep.plans("quick"), rep.headlines(tmp_path, fin.model, None)


def _same(a, b):
    return (a is None and b is None) or (a is not None and b is not None and a == b)


def _preregistered_rows(searcher, paper):
    pre = {o.name: o.candidates[0] for o in searched(paper)}
    results = {t: searcher.run(t) for t in searcher.tasks(pre, 1, True)}
    heads = searcher.headlines(pre, 1, results)
    return heads, {j.statement: j for j in ss.judge([heads])}      # the table's row, as run_search judges it


@pytest.mark.parametrize("paper, module, cls", [("000", search_000, "Search000"), ("003", search_003, "Search003")])
def test_the_preregistered_row_is_the_headlines_figure(tmp_path, monkeypatch, paper, module, cls):
    plans, reproduced = _reproduction(tmp_path, module.PARTS)
    monkeypatch.setattr(module, "plans", lambda quick: {p: plans[p] for p in module.PARTS})
    heads, rows = _preregistered_rows(getattr(module, cls)(), paper)
    want = {h.statement: h for h in reproduced if h.seed == paper and not h.emulated}
    assert set(rows) == set(want) and len(rows) >= 8
    judged = 0
    for h in heads:
        w, row = want[h.statement], rows[h.statement]
        assert _same(row.median, w.model), (h.statement, row.median, w.model)
        assert _same(row.spread, w.spread) and h.spread_of == w.spread_of, h.statement
        assert h.seeds == w.seeds and h.seed_spreads == w.seed_spreads, h.statement
        assert h.points == w.points, h.statement
        if not w.depends_on:        # a headline a reading decides is judged again by the mark; the figure is the same
            assert row.verdict == w.model_verdict, h.statement
        judged += w.seeds is not None
    assert judged >= 5      # the random figures are judged beside their 3 seeds


def test_the_searches_run_reproduce_alls_plans_and_seeds():
    for mode in ("full", "quick"):
        pl = run_plans.aggregation_plans(mode)
        assert search_000.plans(mode == "quick") == {p: pl[p] for p in search_000.PARTS}
        assert search_003.plans(mode == "quick") == {p: pl[p] for p in search_003.PARTS}
    pre = {o.name: o.candidates[0] for o in searched("000")}
    tasks = search_000.Search000().tasks(pre, 1, False)
    full = run_plans.aggregation_plans("full")
    for part in search_000.PARTS:
        mine = [t for t in tasks if t[0] == part]
        assert len(mine) == len(full[part].points) * full[part].rounds    # the plan's rounds in all, no more
        per_seed = {sd: sum(1 for t in mine if t[3] == sd) // len(full[part].points) for sd in (1, 2, 3)}
        assert list(per_seed.values()) == run_plans.split(full[part].rounds)
    # 003's own readings' rounds are shared out the same way: 20 Steiner rounds per k are 7 + 7 + 6, 3 δ rounds 1 each
    base = dict(search_003.BASE, **{"steiner-baseline": "kmb-switch-graph", "delta-reading": "per-receiver"})
    extra = [t for t in search_003.Search003().tasks(base, 1, False) if t[0] != "std"]
    k2 = [t[4] for t in extra if t[:3] == ("steiner", "003-k", 2)]
    assert [k2.count(sd) for sd in (1, 2, 3)] == [7, 7, 6]
    assert {t[4] for t in extra if t[:2] == ("steiner", "003-size")} == {1}         # one round: seed 1's
    assert sorted(t[3] for t in extra if t[:2] == ("delta", 1000)) == [1, 2, 3]


def test_003_readings_of_their_own_rounds_are_judged_over_the_seeds(monkeypatch):
    from dcnlab.reproduce.aggregation.model import Plan

    small = {"003-k": Plan("003-k", (2, 3, 4), 21), "003-size": Plan("003-size", (50, 100), 3),
             "003-delta": Plan("003-delta", (60,), 3)}
    monkeypatch.setattr(search_003, "plans", lambda quick: small)
    s = search_003.Search003()
    setting = dict(search_003.BASE, **{"steiner-baseline": "kmb-switch-graph"})
    results = {t: s.run(t) for t in s.tasks(setting, 1, False)}
    heads = {h.statement: h for h in s.headlines(setting, 1, results)}
    fewer = heads["Steiner-based uses fewer aggregating servers than SRS (§6)"]      # 20 Steiner rounds: 7 + 7 + 6
    assert sorted(fewer.seeds or {}) == ["1", "2", "3"] and math.isfinite(fewer.model)
    assert all(math.isfinite(x) for x in fewer.seeds.values()) and fewer.spread is not None
    size = next(h for st, h in heads.items() if st.startswith("Steiner-based (KMB) saves 44.89%"))
    assert size.model is not None and size.seeds is None     # one Steiner round per point: seed 1's alone
    srs = next(h for st, h in heads.items() if st.startswith("SRS saves 55.33%"))
    assert sorted(srs.seeds or {}) == ["1", "2", "3"]       # the reproduction's rounds keep their seeds
    delta = dict(search_003.BASE, **{"delta-reading": "per-receiver"})
    results = {t: s.run(t) for t in s.tasks(delta, 1, False)}
    pooled = s._summaries(delta, 1, results)["003-delta"]
    assert pooled["rounds"] == 3 and math.isfinite(pooled["overall"]["srs@60"])
    each = [s._summaries(delta, 1, results, sd)["003-delta"] for sd in (1, 2, 3)]
    assert [e["rounds"] for e in each] == [1, 1, 1]         # 3 δ rounds: one a seed
    assert pooled["overall"]["srs@60"] == pytest.approx(sum(e["overall"]["srs@60"] for e in each) / 3)
