"""002's pre-registered setting and its sensitivity run: the pre-registered reading is the setting whatever holds,
every other reading runs alone, and a headline whose verdict a reading flips carries ``depends_on`` with those
readings (Zhang et al., IB CC bandwidth partitioning)."""

from __future__ import annotations

from typing import Any

import pytest

from dcnlab.report import search as ss
from dcnlab.reproduce.congestion import headlines as hl
from dcnlab.reproduce.congestion import model as cm
from dcnlab.reproduce.congestion import search as s002
from dcnlab.results import open_settings as os_


def test_every_002_setting_is_preregistered_with_its_sentence_and_argument() -> None:
    names = {o.name for o in os_.settings("002")}
    assert {"marking-rate", "becn-every", "threshold", "cct-denominator", "link-rate", "ccti-timer",
            "ccti-timer-value"} <= names
    for o in os_.settings("002"):
        assert o.note.startswith("Pre-registered"), o.name           # the argument, or "the simplest reading"
        assert o.default == o.candidates[0], o.name
    pre = os_.preregistered("002")
    assert (pre["marking-rate"], pre["becn-every"], pre["threshold"], pre["cct-denominator"], pre["link-rate"]) == \
        ("0", "1", "15", "11236", "10")
    assert cm.DEFAULT_SETTING_002 == {k: v for k, v in pre.items() if k in {o.name for o in os_.searched("002")}}


def test_the_model_runs_the_preregistered_setting() -> None:
    cfg = cm.model_config()
    assert cfg.link.rate_bps == 10e9 and cfg.switch.threshold == 15 and cfg.switch.marking_rate == 0
    assert cfg.receiver.becn_every == 1 and cfg.cct.delays[127] * 1e6 == pytest.approx(14 * 127 ** 2 / 11236)
    built = cm.build_scenarios(True, large=False)
    assert all(s.config.link.rate_bps == 10e9 for s in built)
    assert all(f.params.ccti_timer == 150 and f.params.timer_mode == "reset" for s in built for f in s.flows)
    large = [s for s in cm.build_scenarios(True) if s.name.startswith("large_")]
    assert large and all(s.config.link.rate_bps == 10e9 and f.params.ccti_limit < len(s.config.cct)
                         for s in large for f in s.flows)          # the exploration keeps its 4096-entry CCT
    other = cm.build_scenarios(True, setting={"cct-denominator": "1062", "ccti-timer-value": "150us"}, large=False)
    assert all(s.config.cct.delays[127] * 1e6 == pytest.approx(14 * 127 ** 2 / 1062) for s in other if len(s.config.cct) > 200)
    assert all(f.params.ccti_timer == 146 for s in other for f in s.flows)


def test_the_sensitivity_run_is_one_setting_at_a_time_from_the_preregistered_one() -> None:
    options = os_.searched("002")
    runs = ss.settings_to_run(s002.Search002(), options)
    assert runs[0] == cm.DEFAULT_SETTING_002
    assert len(runs) == 1 + sum(len(o.candidates) - 1 for o in options)
    assert all(sum(r[k] != runs[0][k] for k in r) == 1 for r in runs[1:])
    assert all(r["ccti-timer"] == "reset" for r in runs)          # free contradicts Algorithm 1: never run


def _table(verdicts: dict[str, list[str]]) -> dict[str, Any]:
    base = {"marking-rate": "0", "threshold": "15"}
    settings = [base, dict(base, **{"marking-rate": "1"}), dict(base, threshold="12")]
    return {"chosen": base, "preregistered": True,
            "candidates": [{"setting": st, "statements": [{"statement": s, "verdict": v[i]} for s, v in verdicts.items()]}
                           for i, st in enumerate(settings)]}


def test_depends_names_the_setting_and_the_readings_that_flip_a_verdict() -> None:
    table = _table({"A": ["reproduced", "reproduced", "deviates"], "B": ["deviates", "deviates", "deviates"],
                    "C": ["deviates", "reproduced", "reproduced"]})
    got = s002.depends(table)
    assert got == {"A": "threshold (12: deviates)", "C": "marking-rate (1: reproduced); threshold (12: reproduced)"}


def test_the_committed_table_is_preregistered_and_marks_the_headlines_it_flips() -> None:
    stored = os_.stored_search("002")
    assert stored is not None and stored["preregistered"] and stored["runner_up"] is None
    assert stored["chosen"] == cm.DEFAULT_SETTING_002
    assert ss.rechoose(stored, os_.searched("002"))["chosen"] == stored["chosen"]   # never re-chosen by a count
    dep = s002.depends()
    statements = {h.statement for h in hl.congestion(None)}
    assert dep and set(dep) <= statements
    theorem = "Theorem 1: CCTI_Increase 1:3 gives bandwidth 3:1"
    assert "cct-denominator (1062" in dep[theorem]
    h = next(x for x in hl.congestion({"proportional": [{"ratio": 3, "measured": 2.76}]}, depends=dep)
             if x.statement == theorem)
    assert h.depends_on == dep[theorem]
    # the fluid model is deterministic: the same figure at every seed, so the 3-seed rule holds it by construction
    # (summary.deterministic) and the verdict is the figure's own; depends_on still tells the reader a reading flips it
    assert h.model_verdict == "reproduced" and not h.stability
    free = next(x for x in hl.congestion({"proportional": [{"ratio": 3, "measured": 2.76}]}) if x.statement == theorem)
    assert free.model_verdict == "reproduced" and not free.depends_on
