"""A run of replications: the model sweep of the aggregation papers runs 3 seeds, a third of the rounds each,
its figures over the pooled rounds and each seed's figure judged beside them with its own interval; the random
patterns of multicast count each draw as a seed. A verdict near an edge, or one a reading decides, holds only
when every seed gives it."""

from __future__ import annotations

import pytest

from dcnlab.results import summary
from dcnlab.results.summary import Headline


def _h(model, spread, n_rounds, depends_on="", **kw):
    return Headline("000", "M2 about 19% below IRS", 19.0, model, kind="percent", spread=spread,
                    spread_of=f"{n_rounds} rounds", depends_on=depends_on, **kw)


def test_every_seed_gives_the_verdict_then_it_holds():
    pooled = _h(19.5, 0.05, 30, depends_on="average")
    per = {"1": [_h(19.4, 0.09, 10)], "2": [_h(19.6, 0.09, 10)], "3": [_h(19.5, 0.09, 10)]}
    (h,) = summary.over_seeds([pooled], per)
    assert h.seeds == {"1": 19.4, "2": 19.6, "3": 19.5}
    assert h.seed_spreads == {"1": 0.09, "2": 0.09, "3": 0.09} and h.seed_spread_n == 10
    assert h.verdict == "reproduced" and not h.stability


def test_one_seed_across_an_edge_makes_it_unstable_and_names_the_seed():
    # pooled 21.9 +- 0.03 lies inside 19 +- 3 (edge 22.0), a reading decides it; seed 2 alone is 22.1 +- 0.05
    pooled = _h(21.9, 0.03, 30, depends_on="average")
    per = {"1": [_h(21.8, 0.05, 10)], "2": [_h(22.1, 0.05, 10)], "3": [_h(21.8, 0.05, 10)]}
    (h,) = summary.over_seeds([pooled], per)
    assert h.verdict == "unstable"
    assert "seed 2: 22.1" in h.stability and "over the pooled seeds" in h.stability


def test_each_seed_is_judged_with_its_own_interval_not_the_pooled_one():
    # every seed's figure is inside the band, but seed 3's own interval (+-t*0.4 over 10 rounds) crosses 22.0,
    # while the pooled spread (0.05) would have kept it inside: the pooled spread must not be used for a seed
    pooled = _h(21.0, 0.05, 30, depends_on="average")
    per = {"1": [_h(21.0, 0.05, 10)], "2": [_h(21.0, 0.05, 10)], "3": [_h(21.3, 0.4, 10)]}
    (h,) = summary.over_seeds([pooled], per)
    assert summary.verdict("percent", 19.0, 21.3, spread=0.05, n=30) == "reproduced"
    assert h.verdict == "unstable"
    # the null case: the same seeds with small spreads hold
    per["3"] = [_h(21.3, 0.05, 10)]
    (h,) = summary.over_seeds([pooled], per)
    assert h.verdict == "reproduced"


def test_far_from_every_edge_and_no_reading_deciding_one_run_is_enough():
    pooled = _h(40.0, 0.05, 30)
    per = {"1": [_h(39.0, 0.05, 10)], "2": [_h(41.0, 0.05, 10)], "3": [_h(40.0, 0.05, 10)]}
    (h,) = summary.over_seeds([pooled], per)
    assert h.verdict == "deviates"


def test_not_judged_and_inconsistent_are_left_as_they_are():
    nj = Headline("000", "wait", None, 95.0, kind="percent", model_verdict="not judged")
    inc = Headline("002", "pair", 0.61, 0.51, kind="ratio", inconsistent="480/790 against its own rule")
    per = {s: [Headline("000", "wait", None, 90.0 + i, kind="percent", model_verdict="not judged"),
               Headline("002", "pair", 0.61, 0.5 + i / 100, kind="ratio")] for i, s in enumerate("123")}
    a, b = summary.over_seeds([nj, inc], per)
    assert a is nj and b is inc and a.seeds is None and b.verdict == "inconsistent"


def test_a_seed_without_its_spread_falls_back_to_the_headlines():
    assert summary.verdict("percent", 19.0, 21.0, spread=0.6, n=30, seeds={"1": 21.0, "2": 21.1, "3": 20.9},
                           decided=True) == "unstable"     # 21 + 2.05*0.6 crosses 22 at every seed
    assert summary.verdict("percent", 19.0, 21.0, spread=0.6, n=30, seeds={"1": 21.0, "2": 21.1, "3": 20.9},
                           decided=True, seed_spreads={"1": 0.1, "2": 0.1, "3": 0.1}, seed_n=10) == "unstable"
    # (the pooled figure's own interval already crosses the edge: unstable whatever the seeds)
    assert summary.verdict("percent", 19.0, 21.0, spread=0.1, n=30, seeds={"1": 21.0, "2": 21.1, "3": 20.9},
                           decided=True, seed_spreads={"1": 0.1, "2": 0.1, "3": 0.1}, seed_n=10) == "reproduced"


def test_the_aggregation_run_shares_its_rounds_among_three_seeds(tmp_path):
    import argparse

    from dcnlab.report.reproduce_all import run_one
    from dcnlab.reproduce import registry
    from dcnlab.reproduce.aggregation import run_plans

    assert run_plans.split(100) == [34, 33, 33] and run_plans.split(5) == [2, 2, 1]
    assert run_plans.split(2) == [1, 1] and run_plans.split(1) == [1] and sum(run_plans.split(20)) == 20
    rep = registry.get("aggregation")
    tasks = rep.tasks("quick", 5)
    plans = run_plans.aggregation_plans("quick")
    for part, plan in plans.items():        # the plan's rounds in all, no more (the seeds cost nothing)
        got = [t for t in tasks if t.arg[0] == part]
        assert len(got) == len(plan.points) * plan.rounds
        assert {t.arg[3] for t in got} == set(range(5, 5 + min(3, plan.rounds)))

    args = argparse.Namespace(only=["000-k"], rounds=3, algo=None, topo=None, seed=None)
    done = run_one(rep.configure(args), tmp_path, "quick", "off", 1, None, None)
    model = done.outcome.model
    assert sorted(model.by_seed) == ["1", "2", "3"] and model["000-k"]["rounds"] == 3
    assert all(m["000-k"]["rounds"] == 1 for m in model.by_seed.values())
    random = [h for h in done.heads if h.model is not None and h.spread_of.endswith("rounds")
              and h.model_verdict != "not judged"]
    assert random and all(sorted(h.seeds or {}) == ["1", "2", "3"] for h in random)
    for h in random:        # the pooled figure lies within its seeds' (it is their rounds' mean), for a mean
        if h.points is None and h.kind == "percent":
            lo, hi = min(h.seeds.values()), max(h.seeds.values())
            assert lo - 1e-9 <= h.model <= hi + 1e-9, h.statement


def test_multicast_draws_are_its_seeds():
    from dcnlab.reproduce.multicast import headlines as mh

    base = Headline("001", "MR4LMS never merges with 1 ppn", 1, 1.0, kind="count", depends_on="join-order")
    grids = Headline("001", "MR4LMS never merges with 1 ppn", 1, 1.0, kind="count", reading="grids only")
    h = mh._over_draws([base, base, base], grids, [1, 2, 3])
    assert h.seeds == {"1": 1.0, "2": 1.0, "3": 1.0} and h.verdict == "reproduced"
    two = mh._over_draws([base, base], grids, [1, 2])
    assert two.verdict == "unstable"        # a reading decides it: 2 draws are not 3 seeds
    off = Headline("001", "MR4LMS never merges with 1 ppn", 1, 2.0, kind="count", depends_on="join-order")
    assert mh._over_draws([base, off, base], grids, [1, 2, 3]).verdict == "deviates"


def test_003_starred_delta_reading_is_the_headlines_figure(monkeypatch):
    """The starred reading of "SRS saves 28.78% with delta uniform on [0,1]" runs reproduce all's points, rounds and
    seeds, so it is the headline's figure (it ran 3 rounds of its own at one seed against the headline's 20)."""
    from dcnlab.reproduce.aggregation import model as am
    from dcnlab.reproduce.aggregation import readings_003 as r3
    from dcnlab.reproduce.aggregation import run_plans

    small = {"003-delta": am.Plan("003-delta", (60,), 3)}
    monkeypatch.setattr(run_plans, "aggregation_plans", lambda mode: small)
    r3._delta.cache_clear()
    try:
        got = r3._delta(True, 1)
    finally:
        r3._delta.cache_clear()
    starred = 100 * sum(got[60]["saving"]["curve-mean"]) / len(got[60]["saving"]["curve-mean"])
    done = am.run_tasks([("003-delta", 60, r, sd) for sd, each in run_plans.seed_rounds(r3.SEED, 3)
                         for r in range(each)], 1, progress=False)
    part = am.collect(["003-delta"], small, done)["003-delta"]
    assert got[60]["rounds"] == 3 and starred == pytest.approx(part["overall"]["srs@60"], abs=1e-9)
