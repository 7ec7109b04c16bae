"""The headline records and the verdict rule (dcnlab.results.summary): every figure of ours against the paper's."""

from __future__ import annotations

import json

import pytest

from dcnlab.reproduce.aggregation import headlines as aggregation_headlines
from dcnlab.reproduce.cist import headlines as cist_headlines
from dcnlab.reproduce.congestion import headlines as congestion_headlines
from dcnlab.reproduce.multicast import headlines as multicast_headlines
from dcnlab.results import summary
from dcnlab.results.summary import FIGURE_VERDICTS, VERDICTS, Headline, combine, difference, verdict


@pytest.mark.parametrize(("kind", "paper", "ours", "expected"), [
    ("percent", 28.76, 30.0, "reproduced"),        # 1.24 points
    ("percent", 28.76, 32.0, "deviates"),          # 3.24 points
    ("percent", 30.0, 28.76, "reproduced"),
    ("percent", 30.0, 33.0, "reproduced"),         # exactly 3 points
    ("percent", 30.0, 26.99, "deviates"),
    ("ratio", 0.61, 0.50, "deviates"),             # 18% below
    ("ratio", 0.61, 0.56, "reproduced"),           # 8% below
    ("ratio", 2.0, 2.2, "reproduced"),             # exactly 10%
    ("ratio", 2.0, 1.79, "deviates"),
    ("count", 7, 7, "reproduced"),
    ("count", 7, 7.0, "reproduced"),
    ("count", 7, 6, "deviates"),
    ("count", 1, 2, "deviates"),
    ("percent", 45.05, None, "not run"),
    ("count", 32, float("nan"), "not run"),
])
def test_verdict_rule(kind, paper, ours, expected):
    assert verdict(kind, paper, ours) == expected


@pytest.mark.parametrize(("direction", "reference", "ours", "expected"), [
    ("up", 0.0, 5.97, "reproduced"),
    ("up", 0.0, -0.5, "deviates"),
    ("up", 0.0, 0.0, "deviates"),                  # no growth is not growth
    ("down", 1.0, 0.82, "reproduced"),
    ("down", 1.0, 1.06, "deviates"),
    ("at least", 512, 512, "reproduced"),
    ("at least", 512, 511, "deviates"),
    ("at most", 0.0, 0.0, "reproduced"),
    ("at most", 0.0, 2.0, "deviates"),
])
def test_trend_in_the_stated_direction(direction, reference, ours, expected):
    assert verdict("trend", None, ours, direction, reference) == expected


def test_a_trend_without_reference_compares_with_the_paper():
    assert verdict("trend", 35.0, 1.6, "down") == "reproduced"
    assert verdict("trend", 35.0, 40.0, "down") == "deviates"


def test_a_figure_off_its_tolerance_in_the_stated_direction_is_a_trend():
    # 000: "M2 saves about 19% of IRS's data"; ours 10.56%: out of +-3 points, but M2 does save
    assert verdict("percent", 19.0, 10.56, "up", 0.0) == "trend"
    assert verdict("percent", 19.0, -2.0, "up", 0.0) == "deviates"
    assert verdict("percent", 19.0, 20.0, "up", 0.0) == "reproduced"
    assert verdict("ratio", 3.4, 3.79, "up", 0.0) == "trend"


def test_bad_declarations_are_errors():
    with pytest.raises(ValueError):
        verdict("share", 1.0, 1.0)
    with pytest.raises(ValueError):
        verdict("trend", None, 1.0)                 # a trend needs its direction
    with pytest.raises(ValueError):
        verdict("percent", None, 1.0)               # a percent needs the paper's figure
    with pytest.raises(ValueError):
        verdict("trend", None, 1.0, "sideways")
    with pytest.raises(ValueError):
        Headline("003", "x", 1.0, 1.0, verdict="maybe")


def test_headline_computes_tolerance_verdict_and_difference():
    h = Headline("003", "SRS saves 32.87%", 32.87, 35.75, kind="percent", unit="%")
    assert (h.tolerance, h.verdict, h.basis, h.difference) == ("±3 points", "reproduced", "model", None)
    h = Headline("002", "1:2 gives 2:1", 2.0, 1.98, emulation=2.05, kind="ratio")
    assert h.tolerance == "±10%" and h.verdict == "reproduced"
    assert h.difference == pytest.approx(100 * (2.05 - 1.98) / 1.98)
    assert Headline("001", "c", 7, 7, kind="count").tolerance == "exact"
    assert Headline("001", "t", 512, 600, kind="trend", direction="at least").tolerance == "at least"
    assert Headline("003", "t", None, 0.8, kind="trend", direction="down", reference=1.0).tolerance == "below 1"


def test_without_a_model_figure_the_emulation_is_judged():
    h = Headline("000", "wait 2/3 shorter", 66.7, None, emulation=51.0, kind="percent", direction="up", reference=0.0)
    assert (h.basis, h.verdict) == ("emulation", "trend")
    assert (h.model_verdict, h.emulation_verdict, h.note) == ("not run", "trend", "model not run")
    h = Headline("000", "wait 3/4 shorter", 75.0, None, kind="percent")
    assert (h.basis, h.verdict) == (None, "not run")


def test_difference():
    assert difference(10.0, 10.4) == pytest.approx(4.0)
    assert difference(10.0, None) is None
    assert difference(0.0, 0.0) == 0.0
    assert difference(0.0, 1.0) is None
    assert difference(-2.0, -1.0) == pytest.approx(50.0)


def test_summary_json_round_trip(tmp_path):
    heads = [Headline("003", "SRS saves 32.87%", 32.87, 35.75, unit="%", kind="percent", reading="mean over k",
                      plot="003-k-saving.png"),
             Headline("002", "BECNs 2 vs 1: 0.61", 0.61, 0.50, emulation=0.55, unit="ratio", kind="ratio",
                      paper_text="0.61 (target 1/2)"),
             Headline("001", "keeps >= 512", 512, None, kind="trend", direction="at least", reading="not run: quick"),
             Headline("004", "CISTs", None, 100.0, unit="% of instances", kind="trend", direction="at least",
                      reference=100.0)]
    path = summary.write(tmp_path / "summary.json", ["003", "002", "001", "004", "003"], heads, False,
                         "not run: --emulate off", mechanism="test", quick=True)
    data = json.loads(path.read_text())
    assert data["seed"] == ["001", "002", "003", "004"]
    assert data["emulation"] == {"ran": False, "why": "not run: --emulate off"}
    assert data["mechanism"] == "test" and data["quick"] is True
    rec = data["headlines"][1]
    for key in ("seed", "statement", "paper", "model", "emulation", "unit", "tolerance", "verdict", "reading", "plot"):
        assert key in rec
    # the model's 0.50 is 18% off, BMv2's 0.55 within 10%
    assert (rec["model_verdict"], rec["emulation_verdict"], rec["verdict"]) == ("deviates", "reproduced", "BMv2 only")
    assert rec["emulation"] == 0.55 and rec["emulated"] is True
    none = {"unstable": 0, "flat": 0, "inconsistent": 0, "not judged": 0}
    assert data["counts"] == {"reproduced": 2, "model only": 0, "BMv2 only": 1, "trend": 0, "deviates": 0,
                              "not run": 1, **none}
    assert data["figure_counts"]["model"] == {"reproduced": 2, "trend": 0, "deviates": 1, "not run": 1, **none}
    assert data["figure_counts"]["BMv2"] == {"reproduced": 1, "trend": 0, "deviates": 0, "not run": 0, **none}
    assert data["bmv2_not_run"] == 0
    back = summary.read(path)
    assert back.headlines == heads
    assert back.seeds == ["001", "002", "003", "004"] and not back.emulation_ran
    assert back.counts() == data["counts"]
    assert back.extra == {"mechanism": "test", "quick": True}         # the counts are derived, not extra


def test_read_refuses_other_json(tmp_path):
    p = tmp_path / "results.json"
    p.write_text(json.dumps({"rows": []}))
    with pytest.raises(ValueError, match="not a summary.json"):
        summary.read(p)


def test_a_summary_json_of_before_the_two_verdicts_is_judged_again(tmp_path):
    """A record with one verdict (written before the figures had verdicts of their own) is read under today's rule."""
    old = Headline("002", "Parking lot on one FIFO egress queue", 1.0, 1.0, emulation=2.08, kind="ratio").to_json()
    for key in ("model_verdict", "emulation_verdict", "emulated"):
        del old[key]
    old.update(verdict="reproduced", basis="model")
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"seed": ["002"], "headlines": [old], "emulation": {"ran": True, "why": "ran"}}))
    h = summary.read(path).headlines[0]
    assert (h.model_verdict, h.emulation_verdict, h.verdict, h.basis) == ("reproduced", "deviates", "model only",
                                                                           "both")


def test_builders_emit_every_headline_without_results():
    """A command that computed nothing still lists its paper's headlines, each 'not run' with a reason."""
    heads = (aggregation_headlines.aggregation(None, why="x") + multicast_headlines.multicast(None, "x") + congestion_headlines.congestion(None)
             + cist_headlines.cist(None))
    assert {h.seed for h in heads} == {"000", "001", "002", "003", "004"}
    closed_form = [h for h in heads if "Bloom filter" in h.statement]     # formula (3): needs no run
    assert [h.verdict for h in closed_form] == ["reproduced"] * 3
    assert all(h.verdict == "not run" and h.reading for h in heads if h not in closed_form)
    assert all(h.verdict in VERDICTS for h in heads)


def test_worked_example_of_report_003():
    ex = aggregation_headlines.bcube41_examples()
    assert [(t["cost"], t["links"]) for t in ex["trees"]] == [(16, 12), (14, 11), (14, 11), (12, 9)]
    assert ex["entry_costs"] == [46, 48, 42]


# -- the verdict judges BMv2 too --------------------------------------------------------------------------------

@pytest.mark.parametrize(("model", "bmv2", "expected"), [
    ("reproduced", "reproduced", "reproduced"),
    ("reproduced", "deviates", "model only"),
    ("reproduced", "trend", "model only"),
    ("deviates", "reproduced", "BMv2 only"),
    ("trend", "reproduced", "BMv2 only"),
    ("trend", "trend", "trend"),
    ("trend", "deviates", "deviates"),
    ("deviates", "trend", "deviates"),
    ("deviates", "deviates", "deviates"),
    ("reproduced", None, "reproduced"),            # BMv2 does not measure it: the model's verdict
    ("trend", "not run", "trend"),                 # BMv2 did not run: the model's verdict (marked)
    ("not run", "deviates", "deviates"),
    ("not run", "not run", "not run"),
    ("not run", None, "not run"),
])
def test_combined_verdict(model, bmv2, expected):
    assert combine(model, bmv2) == expected
    assert expected in VERDICTS


def test_combine_refuses_a_headline_verdict_as_a_figure_verdict():
    with pytest.raises(ValueError, match="figure verdict 'model only'"):
        combine("model only", "reproduced")
    assert set(FIGURE_VERDICTS) < set(VERDICTS)


def _pair(model, bmv2, emulated=True):
    return Headline("002", "x", 1.0, model, emulation=bmv2, kind="ratio", unit="(A+B) / D", emulated=emulated)


def test_model_holds_bmv2_does_not():
    h = _pair(1.0, 1.5)
    assert (h.model_verdict, h.emulation_verdict, h.verdict, h.basis, h.note) == (
        "reproduced", "deviates", "model only", "both", "")


def test_bmv2_holds_model_does_not():
    h = _pair(1.5, 1.05)
    assert (h.model_verdict, h.emulation_verdict, h.verdict) == ("deviates", "reproduced", "BMv2 only")


def test_both_hold():
    h = _pair(0.97, 1.04)
    assert (h.model_verdict, h.emulation_verdict, h.verdict) == ("reproduced", "reproduced", "reproduced")


def test_bmv2_absent():
    """No BMv2 measurement of this quantity: the model's verdict, no BMv2 verdict, no mark."""
    h = _pair(1.0, None, emulated=False)
    assert (h.model_verdict, h.emulation_verdict, h.verdict, h.basis, h.note) == (
        "reproduced", None, "reproduced", "model", "")


def test_bmv2_not_run():
    """BMv2 measures it but did not run: the model's verdict, marked 'BMv2 not run', and counted so."""
    h = _pair(1.5, None)
    assert (h.model_verdict, h.emulation_verdict, h.verdict, h.note) == ("deviates", "not run", "deviates",
                                                                         "BMv2 not run")
    c = summary.counts([h, _pair(1.0, None, emulated=False)])
    assert c["bmv2_not_run"] == 1 and c["figure_counts"]["BMv2"]["not run"] == 1
    assert "BMv2 did not run on 1 headline it measures" in summary.counts_text([h])


def _fifo_and_fair_share():
    """002's rows with a BMv2 figure through the builder (so with the code's own kinds and tolerances)."""
    model = {"fairness_rates": {"cc_off_fifo_shared": {"A->C": 2.0, "B->C": 2.0, "D->C": 4.0, "E->C": 4.0},
                                "cc_on": {"A->C": 0.994, "B->C": 1.0, "D->C": 1.0, "E->C": 1.0}}}
    bmv2 = {"fairness": {"off": {"rates_pps_4_active": {"A->C": 1.04, "B->C": 1.04, "D->C": 1.0, "E->C": 1.0}},
                         "cc": {"rates_pps_4_active": {"A->C": 0.886, "B->C": 1.0, "D->C": 1.0, "E->C": 1.0}}}}
    heads = congestion_headlines.congestion(model, bmv2)
    return (next(h for h in heads if h.statement.startswith("Parking lot on one FIFO")),
            next(h for h in heads if h.statement.startswith("With CC on the four flows share fairly")))


def test_the_002_rows_judged_on_bmv2_too_are_model_only_and_000s_word_count_row_is_bmv2s():
    """002's FIFO and fair-share rows: the model holds, BMv2 does not (model only). 000's word-count row: its model
    figure is the link-bound model of the waiting time, which 000 never gives, so it is 'not judged' (the rule for
    a figure with nothing in the paper to judge it by, goals.NOT_JUDGED); BMv2's measured completion is judged
    alone, and the headline's verdict is BMv2's (37.10% shorter, not about 3/4: trend)."""
    fifo, fair = _fifo_and_fair_share()
    assert (fifo.paper, fifo.model, round(fifo.emulation, 2)) == (1.0, 1.0, 2.08)
    assert (fair.paper, round(fair.model, 3), round(fair.emulation, 3)) == (1.0, 0.994, 0.886)
    waiting = {"points": {"3": {}}, "model_saving": 69.27, "saving": 37.10, "saving_sd": 3.0, "spec": "bcube:n=4,k=2",
               "senders": [3], "runs": 5}
    word = next(h for h in aggregation_headlines.aggregation(None, {"waiting": waiting}, why="x")
                if h.statement.startswith("Word-count incast on BMv2"))
    assert (round(word.paper, 2), word.model, word.emulation) == (75.0, 69.27, 37.10)
    for h in (fifo, fair):
        assert h.model_verdict == "reproduced", h.statement
        assert h.emulation_verdict in ("deviates", "trend"), h.statement
        assert h.verdict == "model only", h.statement
    assert word.model_verdict == "not judged" and "no model in the paper" in word.reading
    assert word.emulation_verdict == "trend"            # 37.10% is shorter, but not about 3/4 shorter
    assert (word.verdict, word.basis, word.note) == ("trend", "both", "")


def test_builders_mark_what_bmv2_measures():
    """Without BMv2 results, the headlines BMv2 measures say 'BMv2 not run'; the others have no BMv2 verdict."""
    heads = congestion_headlines.congestion({"fairness_rates": {"cc_on": {"A->C": 1.0, "B->C": 1.0, "D->C": 1.0, "E->C": 1.0}}})
    fair = next(h for h in heads if h.statement.startswith("With CC on the four flows share fairly"))
    assert (fair.verdict, fair.emulation_verdict, fair.note) == ("reproduced", "not run", "BMv2 not run")
    tenant1 = next(h for h in heads if h.statement.startswith("Tenant 1's flow"))
    assert tenant1.emulation_verdict is None and not tenant1.emulated
    assert sum(h.emulated for h in heads) >= 6


# -- noise, every point, inconsistent statements (verdicts no reader can call fitted) -------------------------


def test_a_figure_whose_interval_straddles_its_tolerance_edge_is_unstable():
    # 003 Fig. 4(a): 2.9 points above the paper's 32.87, at the edge of ±3: reproduced on the figure alone
    assert verdict("percent", 32.87, 35.77) == "reproduced"
    assert verdict("percent", 32.87, 35.77, spread=0.2) == "unstable"        # 35.38..36.16 crosses 35.87
    assert verdict("percent", 32.87, 35.77, spread=0.01) == "reproduced"     # the whole interval inside
    assert verdict("percent", 32.87, 40.0, spread=0.5) == "deviates"          # the whole interval outside
    assert verdict("percent", 19.0, 22.3, "up", 0.0, spread=0.5) == "unstable"
    assert verdict("ratio", 2.0, 2.21, spread=0.02) == "unstable"
    assert verdict("count", 7, 7, spread=0.4) == "unstable"


def test_a_trend_within_its_noise_is_flat():
    # 000 Fig. 5(b): unicast's aggregating servers "fall with k": -0.16 over k = 2..6, standard error about 0.42
    assert verdict("trend", None, -0.16, "down", 0.0) == "reproduced"         # on the figure alone
    assert verdict("trend", None, -0.16, "down", 0.0, spread=0.42) == "flat"
    assert verdict("trend", None, -2.0, "down", 0.0, spread=0.42) == "reproduced"
    assert verdict("trend", None, 2.0, "down", 0.0, spread=0.42) == "deviates"
    assert verdict("trend", None, 0.99, "down", 1.0, spread=0.02) == "flat"
    # a miss judged by its direction: within the noise of 0 it shows no direction either
    assert verdict("percent", 19.0, 0.5, "up", 0.0, spread=1.0) == "flat"
    assert verdict("percent", 19.0, 10.0, "up", 0.0, spread=1.0) == "trend"


def test_a_statement_about_every_point_is_judged_at_its_worst_point_the_mean_beside():
    # 000 "M2 uses the fewest links": M2 minus the best other, per k; the mean over k is below 0, k=3 is not
    per_k = {"2": -4.0, "3": 15.1, "4": -6.0, "5": -8.0, "6": -9.0}
    h = Headline("000", "M2 uses the fewest links", None, None, kind="trend", direction="at most", reference=0.0,
                 points=per_k, point_spreads={"3": 1.0}, over="k")
    assert (h.worst_at, h.model, h.spread) == ("3", 15.1, 1.0)
    assert h.mean == pytest.approx(sum(per_k.values()) / 5) and h.mean < 0
    assert h.verdict == "deviates"
    assert Headline("000", "x", None, None, kind="trend", direction="at most", reference=0.0,
                    points={k: -v for k, v in per_k.items() if k != "3"}).verdict == "deviates"
    ok = Headline("000", "x", None, None, kind="trend", direction="at most", reference=0.0,
                  points={k: v for k, v in per_k.items() if k != "3"})
    assert ok.verdict == "reproduced" and ok.worst_at == "2"
    # the noise counts: a point just below 0 but within its noise is the worst, and flat
    noisy = Headline("000", "x", None, None, kind="trend", direction="at most", reference=0.0,
                     points={"2": -5.0, "3": -0.5}, point_spreads={"2": 0.1, "3": 1.0})
    assert (noisy.worst_at, noisy.verdict) == ("3", "flat")
    # a percentage at every point (every model of a quantity the paper gives no model for)
    models = Headline("000", "wait 2/3 shorter", 66.7, None, kind="percent", direction="up", reference=0.0,
                      points={"link-bound": 95.2, "link-bound-ecmp": 80.2, "reduce-bound": 68.0}, over="model")
    assert (models.worst_at, models.model, models.verdict) == ("link-bound", 95.2, "trend")


def test_statements_the_papers_rules_make_impossible_together_are_inconsistent():
    why = "no reading of IRS gives both 3% and 19%"
    h = Headline("000", "M2 about 3% below IRS", 3.0, 2.28, kind="percent", direction="up", reference=0.0,
                 inconsistent=why)
    assert (h.model_verdict, h.verdict, h.inconsistent) == ("inconsistent", "inconsistent", why)
    assert Headline("000", "x", 3.0, None, kind="percent", inconsistent=why).verdict == "not run"
    assert combine("inconsistent", "reproduced") == "inconsistent"
    assert combine("unstable", "deviates") == "unstable" and combine("flat", "trend") == "flat"
    assert combine("reproduced", "unstable") == "model only"


def test_000_pair_and_003_every_delta_are_judged_not_inconsistent():
    """'inconsistent' is for the paper's own contradictions only: 000's 3% / 19% pair (two sweeps, no sentence
    against another) and 003's "below for every δ" (§5.4 itself says δ = 1 brings no gain) are judged."""
    from dcnlab.reproduce.aggregation import headlines_000

    def part(vs_intra: float, vs_nointra: float) -> dict:
        return {"overall": {"m2 vs irs/intra": vs_intra, "m2 vs irs/no-intra": vs_nointra, "m2 vs irs": vs_nointra},
                "overall_se": {"m2 vs irs/intra": 0.3, "m2 vs irs/no-intra": 0.3, "m2 vs irs": 0.3},
                "rounds": 3, "points": {"2": {"traffic": {"m2": 89.0, "irs": 100.0, "unicast": 120.0, "none": 200.0},
                                              "new_servers": {"m2": 1.0, "irs": 2.0, "unicast": 3.0},
                                              "links": {"m2": 1.0, "irs": 2.0, "unicast": 3.0},
                                              "aggregators": {"m2": 1.0, "irs": 2.0, "unicast": 3.0}}}}

    # 3% holds only with the intra-stage step, 19% only without it: shown as a pair that deviates
    pair = headlines_000.pair_000(part(2.3, 11.0), part(12.1, 22.0))
    assert "no reading reproduces both" in pair and "2.30% (reproduced)" in pair and "22.00%" in pair
    assert "no reading" not in headlines_000.pair_000(part(2.3, 11.0), part(19.5, 22.0))     # intra gives both
    heads = headlines_000.headlines_000(part(2.3, 11.0), part(12.1, 22.0), None, lambda name: "absent")
    k, size = heads[0], heads[1]
    assert k.verdict != "inconsistent" and size.verdict != "inconsistent" and not k.inconsistent
    assert k.verdict == "trend"             # 11.0 ± 0.3, 3 rounds: outside 3 ± 3, M2 below IRS
    assert "the pair 3% / 19%" in k.reading
    # 003 Fig. 6: judged over δ < 1; SRS reaches the existing method at δ = 0.5 (the crossing, stated)
    deltas = [0.0, 0.5, 1.0]
    pd = {"points": {"250": {"deltas": deltas, "traffic": {"srs": [50.0, 100.5, 106.3], "unicast": [70, 110, 100.0],
                                                           "none": [100.0, 100.0, 100.0]}}}}
    h = aggregation_headlines._every_delta_003(pd, lambda name: "absent")
    assert (h.verdict, h.worst_at, h.inconsistent) == ("deviates", "m=n=250, δ=0.5", "")
    assert "from δ = 0.5" in h.reading and "δ = 1 left out" in h.reading and "δ=1" not in (h.points or {}).get("", "")
    assert all("δ=1" != key.split(", ")[1] for key in h.points)
    # below at every δ < 1, above only at δ = 1 (where §5.4 says there is no gain): reproduced
    pd["points"]["250"]["traffic"]["srs"] = [50.0, 80.0, 106.3]
    h = aggregation_headlines._every_delta_003(pd, lambda name: "absent")
    assert h.verdict == "reproduced" and "at no δ < 1" in h.reading


def test_001_dynamic_max_tfi_1_deviates_with_the_bound_of_our_readings_shown():
    """The bound rests on our readings (wiring, formulas (1) and (5)), not on the paper's text alone: deviates."""
    heads = multicast_headlines.multicast([
        {"pattern": "64x32x16", "algo": "cmr4lms-dynamic", "ppn": 1, "tfi_max": 2, "tfi_avg": 1.0, "efi_max": 3,
         "efi_avg": 1.0, "trees": 10, "groups_in": 10, "refused": 0, "seconds": 0.1}])
    h = next(h for h in heads if h.statement.startswith("C-MR4LMS-dynamic max TFI 1 on 64×32×16"))
    assert h.verdict == "deviates" and not h.inconsistent and "at least 2" in h.reading


def test_summary_json_carries_every_spread_and_interval(tmp_path):
    heads = [Headline("003", "SRS saves 32.87%", 32.87, 35.77, unit="%", kind="percent", spread=0.2,
                      spread_of="100 rounds"),
             Headline("000", "fewest", None, None, kind="trend", direction="at most", reference=0.0,
                      points={"2": -1.0, "3": 2.0}, point_spreads={"2": 0.5, "3": 0.4}, over="k")]
    data = json.loads(summary.write(tmp_path / "summary.json", ["003", "000"], heads, False, "off").read_text())
    rec = data["headlines"][0]
    assert rec["spread"] == 0.2 and rec["spread_of"] == "100 rounds"
    # 100 rounds: Student's t with 99 degrees of freedom, 1.984 standard errors (not 1.96)
    assert rec["spread_n"] == 100 and summary.quantile(100) == pytest.approx(1.984, abs=1e-3)
    assert rec["interval"] == pytest.approx([35.77 - 1.984 * 0.2, 35.77 + 1.984 * 0.2], abs=1e-3)
    assert rec["verdict"] == "unstable" and data["counts"]["unstable"] == 1
    rec = data["headlines"][1]
    assert (rec["worst_at"], rec["model"], rec["spread"], rec["mean"]) == ("3", 2.0, 0.4, 0.5)
    assert rec["points"] == {"2": -1.0, "3": 2.0}
    assert summary.read(tmp_path / "summary.json").headlines == heads


def test_the_verdict_vocabulary_is_one_place_and_the_legend_explains_each():
    from dcnlab.results import goals

    assert summary.VERDICTS is goals.VERDICTS and summary.FIGURE_VERDICTS is goals.FIGURE_VERDICTS
    assert set(goals.LEGEND) == set(goals.VERDICTS)
    assert {"unstable", "flat", "inconsistent"} <= set(goals.FIGURE_VERDICTS)
    assert len(goals.legend_lines()) == len(goals.VERDICTS)


@pytest.mark.parametrize("config, says", [({}, "Algorithm 1's timer (reset on every BECN), CCTI_Timer 30"),
                                          ({"timer_mode": "free", "ccti_timer": 20},
                                           "free-running timer, a reading that contradicts Algorithm 1's")])
def test_002s_bmv2_rows_name_the_timer_the_experiment_ran(config, says):
    """BMv2's rows of 002 said 'free-running timer, CCTI_Timer 20' whatever the experiment ran; they name the
    timer of its own configuration, and label the free-running one as the reading Algorithm 1 rules out."""
    model = {"proportional": [{"ratio": 2, "measured": 2.0}]}
    bmv2 = {"ratio": {"1:2 cc": {"model": 1.95, "measured": 1.9}}, "config": config}
    row = next(h for h in congestion_headlines.congestion(model, bmv2) if h.statement.startswith("Theorem 1: CCTI_Increase 1:2"))
    assert says in row.reading


def test_a_figure_with_no_randomness_is_not_made_unstable_by_the_seeds_rule():
    """A deterministic figure (no spread: 002's fluid model, 004's counts) is the same at every seed, so it holds at
    3 seeds by construction: a reading that decides it marks it depends_on, and its verdict is its figure's own."""
    from dcnlab.results.summary import deterministic

    # 002's Theorem 1 1:2 at the pre-registered setting: 1.903 against 2 (±10%), decided by cct-denominator
    h = Headline("002", "Theorem 1: CCTI_Increase 1:2 gives bandwidth 2:1", 2.0, 1.903, kind="ratio",
                 depends_on="cct-denominator (1062: deviates)")
    assert h.verdict == "reproduced" and h.depends_on and not h.stability
    assert verdict("ratio", 2.0, 1.903, decided=True) == "reproduced"
    assert verdict("ratio", 3.4, 4.185, "at least", 0.0, decided=True) == "trend"    # misses, by its own verdict
    assert deterministic(1.903, None) and deterministic(1.903, None, {"1": 1.903, "2": 1.903, "3": 1.903})
    # not exempt: a figure with a spread, or one whose seeds differ (one round of a random model)
    assert not deterministic(1.903, 0.01) and not deterministic(1.903, None, {"1": 1.903, "2": 1.95})
    assert verdict("ratio", 2.0, 1.903, spread=0.01, n=20, decided=True) == "unstable"
    assert verdict("ratio", 2.0, 1.903, decided=True, seeds={"1": 1.903, "2": 1.95}) == "unstable"
    random = Headline("002", "x", 2.0, 1.903, kind="ratio", depends_on="threshold", seeds={"1": 1.903, "2": 1.95})
    assert random.verdict == "unstable" and "threshold" in random.stability
    # one round of a random model has no spread either, but it is a draw: not exempt
    assert not deterministic(8.45, None, n=1)
    assert verdict("percent", 3.0, 8.45, "up", 0.0, n=1, decided=True) == "unstable"
