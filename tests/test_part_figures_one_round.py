"""A figure of the aggregation model from one round is a draw of a random model, not a figure without randomness:
its ``spread_of`` says ``1 round`` (no standard error), so the 3-seed rule still applies to it. In a smoke run
(one round per point) 000's "about 3%" and "about 19%" had an empty ``spread_of`` and were exempted."""

from __future__ import annotations

import pytest

from dcnlab.reproduce.aggregation import model as am
from dcnlab.reproduce.aggregation import part_figures
from dcnlab.reproduce.aggregation.headlines_000 import headlines_000
from dcnlab.results import summary
from dcnlab.results.summary import Headline


def _part(rounds: int) -> dict:
    plan = {"000-k": am.Plan("000-k", (2, 3), rounds)}
    done = am.run_tasks([("000-k", p, r, 1) for p in (2, 3) for r in range(rounds)], 1, progress=False)
    return am.collect(["000-k"], plan, done)["000-k"]


@pytest.fixture(scope="module")
def one_round() -> dict:
    return _part(1)


def test_spread_of_one_round_has_no_standard_error_but_says_1_round(one_round):
    assert one_round["rounds"] == 1 and one_round["overall_se"]["m2 vs irs"] is None
    assert part_figures.spread(one_round, "m2 vs irs") == {"spread_of": "1 round"}
    value, kw = part_figures.slope_over(one_round, "aggregators", "unicast")
    assert value is not None and kw == {"spread_of": "1 round"}
    assert part_figures.spread(None, "m2 vs irs") == {}


def test_more_rounds_keep_their_standard_error():
    two = _part(2)
    kw = part_figures.spread(two, "m2 vs irs")
    assert kw["spread_of"] == "2 rounds" and kw["spread"] == two["overall_se"]["m2 vs irs"] is not None


def test_000_about_3_percent_from_one_round_is_not_exempt_from_the_seeds_rule(one_round):
    heads = headlines_000(one_round, None, None, lambda part: f"{part} not run")
    h = next(h for h in heads if "about 3% less data" in h.statement)
    assert h.spread is None and h.spread_of == "1 round" and h.spread_n == 1
    assert not summary.deterministic(h.model, h.spread, None, h.spread_n)
    # a verdict a reading decides, at one seed: unstable (exempted, it kept its one-seed verdict)
    assert summary.verdict(h.kind, h.paper, h.model, h.direction, h.reference, h.spread, h.spread_n,
                           seeds={"1": h.model}, decided=True) == summary.UNSTABLE
    # a model without randomness stays exempt: no spread, no rounds
    det = Headline("002", "Theorem 1: 1:2 gives 2:1", 2.0, 1.9, kind="ratio", unit="ratio")
    assert summary.deterministic(det.model, det.spread, None, det.spread_n)
