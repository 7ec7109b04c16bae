"""Every headline of 000 (M2, Fang et al.) and 003 (IRS/SRS, Guo et al.) can fail: for each, its falsifier
(``dcnlab.reproduce.aggregation.falsifiers.FALSIFIERS``, a deliberately wrong mechanism, input or model) is fed
through the same pipeline as the reproduction (real rounds of ``reproduce aggregation``'s parts at a small scale ->
``summarise`` -> ``headlines.aggregation`` -> the report's verdict rule) and judged ``deviates`` or ``flat``; the
null case of every comparison ("M2 saves more than IRS", "SRS fewest", "saves about 3%") fails when X is Y. 000's
waiting-time model rows are ``not judged (no model in the paper)``, whatever the model."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dcnlab.reproduce.aggregation import falsifiers as fz
from dcnlab.reproduce.aggregation import headlines
from dcnlab.reproduce.aggregation import model as am

FAILING = ("deviates", "flat")
POINTS = {"003-k": (2, 3, 4, 5, 6, 7, 8), "003-size": (50, 100, 150), "003-delta": (250, 1000),
          "000-k": (2, 3, 4, 5, 6, 7, 8), "000-size": (100, 200, 300)}
ROUNDS = {"003-k": 3, "003-size": 2, "003-delta": 1, "000-k": 3, "000-size": 2}
WAITING = {"points": True, "senders": [4, 8], "runs": 3, "spec": "bcube:n=4,k=1", "model_saving": 60.0,
           "saving": 74.5, "saving_sd": 1.0}
"""A BMv2 waiting-time result of the shape the experiment writes, its saving one the paper's 3/4 admits (full runs
measure about 70%, a trend), so that the falsifier's 0% is the only change."""
STATEMENTS = [h.statement for h in headlines.aggregation(None, sensitivity=False)]


@pytest.fixture(scope="module")
def inputs() -> tuple[dict[str, Any], dict[str, Any]]:
    rows = {part: [{"point": p, "round": r, "result": am._task(part, p, r, 1)[3]} for p in pts
                   for r in range(ROUNDS[part])] for part, pts in POINTS.items()}
    return rows, dict(headlines.bcube41_examples())


@pytest.fixture(scope="module")
def paper(inputs) -> dict[str, Any]:
    rows, worked = inputs
    return fz.judged(rows, POINTS, worked, {"waiting": WAITING})


def test_every_headline_has_a_falsifier_in_one_phrase():
    assert sorted(fz.FALSIFIERS) == sorted(STATEMENTS)
    assert all(phrase and "\n" not in phrase for phrase in fz.FALSIFIERS.values())
    for statement in STATEMENTS:     # a transform for each, but the two rows with no model to judge
        assert (fz.transform(statement) is None) == (fz.FALSIFIERS[statement] == fz.NO_FALSIFIER), statement


@pytest.mark.parametrize("statement", [s for s in STATEMENTS if fz.FALSIFIERS.get(s) != fz.NO_FALSIFIER])
def test_the_falsifier_of_each_headline_is_judged_deviates_or_flat(statement, inputs, paper):
    rows, worked = inputs
    rows, worked = copy.deepcopy(rows), copy.deepcopy(worked)
    h = fz.falsified(statement, rows, POINTS, worked, {"waiting": WAITING})
    assert h.verdict in FAILING, (statement, fz.FALSIFIERS[statement], h.model, h.emulation, h.verdict)
    before = paper[statement]
    got = h.emulation if before.model_verdict in (None, "not judged") else h.model
    was = before.emulation if before.model_verdict in (None, "not judged") else before.model
    assert got != was, (statement, "the falsifier changed nothing")


def test_the_paper_side_of_the_pipeline_holds_where_the_model_reproduces(paper):
    # the same small inputs through the same pipeline: the worked examples, Table 2 and the comparisons that hold
    # at every scale are reproduced, so a falsifier's failure is its own, not the inputs'
    for statement in STATEMENTS:
        if statement.startswith(("IRS tree costs", "SRS enters", "In-packet Bloom")):
            assert paper[statement].verdict == "reproduced", statement
    for prefix in ("SRS uses fewer links", "SRS cuts the input size", "All in-network schemes",
                   "Word-count incast on BMv2"):
        h = next(paper[s] for s in STATEMENTS if s.startswith(prefix))
        assert h.verdict == "reproduced", (prefix, h.model, h.emulation, h.verdict)


def test_the_null_case_of_each_comparison_fails():
    from dcnlab.results.summary import Headline

    # "M2 saves about 3%": 0% is not about 3% less, though 0 lies within 3 points of 3
    assert Headline("000", "x", 3.0, 0.0, kind="percent", direction="up", reference=0.0).verdict == "deviates"
    # "X uses the fewest" (M2 minus the best other): a tie is not the fewest
    assert Headline("000", "x", None, 0.0, kind="trend", direction="down", reference=0.0).verdict == "deviates"
    # "X uses fewer than Y" (X / Y): X = Y is not fewer
    assert Headline("003", "x", None, 1.0, kind="trend", direction="down", reference=1.0).verdict == "deviates"


def test_the_waiting_time_models_are_not_judged_under_any_model(inputs, paper):
    rows, worked = inputs
    waits = [s for s in STATEMENTS if fz.FALSIFIERS[s] == fz.NO_FALSIFIER]
    assert len(waits) == 2
    wrong = dict(rows, **{p: fz.same_as(rows[p], "m2", "none", fz.INCAST_KEYS) for p in ("000-k", "000-size")})
    for heads in (paper, fz.judged(wrong, POINTS, worked)):
        for s in waits:
            h = heads[s]
            assert h.verdict == h.model_verdict == "not judged", (s, h.verdict)
            assert h.reading.startswith("not judged (no model in the paper)") and h.points
    bmv2 = paper[next(s for s in STATEMENTS if s.startswith("Word-count incast on BMv2"))]
    assert bmv2.model_verdict == "not judged" and bmv2.emulation_verdict == "reproduced"


def test_a_headline_a_reading_flips_is_marked_depends_on_and_keeps_its_figure():
    from dcnlab.reproduce.aggregation import sensitivity
    from dcnlab.results.summary import Headline

    st = "M2 carries about 3% less data than IRS-based, across network sizes, BCube(6,k), 120 senders (abstract)"
    other = "M2 uses the fewest links (BCube(4,8), Fig. 6(b))"

    def cand(setting, v1, f1, v2):
        return {"setting": setting, "statements": [{"statement": st, "verdict": v1, "median": f1},
                                                   {"statement": other, "verdict": v2, "median": -3.0}]}
    pre = {"irs-baseline": "no-intra", "average": "mean-of-points"}
    table = {"preregistered": True, "chosen": pre,
             "candidates": [cand(pre, "trend", 12.3, "reproduced"),
                            cand(dict(pre, **{"irs-baseline": "intra"}), "unstable", 5.17, "reproduced"),
                            cand(dict(pre, average="pooled"), "trend", 13.8, "reproduced")]}
    assert sensitivity.flips(dict(table, preregistered=False)) == {}      # a search by counts flips nothing
    heads = [Headline("000", st, 3.0, 12.3, kind="percent", direction="up", reference=0.0, spread=0.2,
                      spread_of="100 rounds"),
             Headline("000", other, None, -3.0, kind="trend", direction="down", reference=0.0)]
    assert [h.verdict for h in heads] == ["trend", "reproduced"]
    marked = sensitivity.mark(heads, {"000": table, "003": None})
    assert marked[0].depends_on == "irs-baseline" and marked[0].model == 12.3
    assert "depends on irs-baseline (intra: unstable, 5.17)" in marked[0].reading
    assert marked[0].verdict == "unstable"          # a verdict a reading decides must hold at 3 seeds
    assert marked[1] is heads[1]
