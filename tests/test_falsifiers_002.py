"""Falsifiers of 002's headlines (Zhang et al., IB CC bandwidth partitioning): for every headline a deliberately wrong
mechanism or input, fed through the same pipeline (the fluid model's scenarios at the pre-registered setting, the
reproduction's summary, :func:`dcnlab.reproduce.congestion.headlines.congestion`) and the report's verdict rule, must
be judged ``deviates`` (or ``flat``); the phrases are ``headlines.FALSIFIERS``. The right mechanism is run beside
each wrong one, so a falsifier that fails because the pipeline broke is told apart."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from dcnlab.controller.congestion import scenarios as sc
from dcnlab.reproduce.congestion import headlines as hl
from dcnlab.reproduce.congestion import model as cm
from dcnlab.reproduce.congestion import search as s002
from dcnlab.results.summary import verdict

FAILS = ("deviates", "flat")
QUICK = True


@pytest.fixture(scope="module")
def base() -> dict[str, Any]:
    """The pre-registered setting's quick runs (name -> result), once for the module."""
    return {name: s.run() for name, s in s002.scenarios(QUICK).items()}


def judged(runs: dict[str, Any], **summary: Any) -> dict[str, Any]:
    """Statement -> headline from ``runs`` through the reproduction's summary (with ``summary``'s keys replaced)."""
    m = s002.model_summary(runs, cm.DEFAULT_SETTING_002, QUICK)
    m.update(summary)
    return {h.statement: h for h in hl.congestion(m)}


def ran(s: sc.Scenario, name: str) -> Any:
    """``s`` run, as the result of the reproduction's scenario ``name`` (a wrong mechanism in its place)."""
    return replace(s, name=name).run()


def by_start(name: str) -> str:
    return next(h for h in hl.FALSIFIERS if h.startswith(name))


def test_every_headline_has_a_falsifier_phrase() -> None:
    from dcnlab.reproduce.congestion.reproduction import REPRODUCTION

    ids = [i.split(": ", 1)[1] for i in REPRODUCTION.headline_ids()]
    assert ids and set(ids) == set(hl.FALSIFIERS)
    assert all(len(p.split()) >= 4 for p in hl.FALSIFIERS.values())


def test_right_mechanism_holds_where_the_falsifiers_fail(base) -> None:
    heads = judged(base)
    for start in ("Parking lot with CC off", "Parking lot on one FIFO", "With CC on", "Theorem 1: CCTI_Increase 1:2",
                  "Tenant 2 gets", "Inside tenant 2", "BECNs at D→B fall as 1/2", "BECNs at D→B fall as 1/3"):
        assert heads[by_start(start)].model_verdict == "reproduced", start


def test_parking_lot_fails_on_a_fifo_with_own_inputs(base) -> None:
    cfg = cm.model_config()
    phase = base["fairness_cc_off"].stops[0] / 5
    wrong = sc.fairness_incast(False, phase, sc.fifo_config(False, cfg))
    heads = judged(dict(base, fairness_cc_off=ran(wrong, "fairness_cc_off"),
                        fairness_cc_off_fifo_shared=base["fairness_cc_off_fifo"]))     # A, B on own inputs
    for start in ("Parking lot with CC off", "Parking lot on one FIFO"):
        h = heads[by_start(start)]
        assert h.model == pytest.approx(2.0, rel=0.05) and h.model_verdict in FAILS, start


def test_cc_fairness_fails_on_a_one_to_half_split(base) -> None:
    right = s002.scenarios(QUICK)["fairness_cc_on"]
    flows = tuple(replace(f, params=replace(f.params, ccti_increase=2)) if f.name == "E->C" else f
                  for f in right.flows)
    h = judged(dict(base, fairness_cc_on=replace(right, flows=flows).run()))[by_start("With CC on")]
    assert h.model < 0.8 and h.model_verdict in FAILS


def test_theorem_1_fails_in_the_null_case(base) -> None:
    wrong = {}
    for r in (2, 3):
        right = s002.scenarios(QUICK)[f"proportional_1_{r}"]
        flows = tuple(replace(f, params=replace(f.params, ccti_increase=1)) for f in right.flows)
        wrong[f"proportional_1_{r}"] = replace(right, flows=flows).run()
    heads = judged(dict(base, **wrong))
    for r in (2, 3):
        h = heads[by_start(f"Theorem 1: CCTI_Increase 1:{r}")]
        assert h.model == pytest.approx(1.0, abs=0.05) and h.model_verdict in FAILS


def test_tenant_headlines_fail_under_plain_per_flow_cc(base) -> None:
    """The pushes removed ("per-flow": every flow CCTI_Increase 1): C->A, tenant shares and the BECNs all fail."""
    right = s002.scenarios(QUICK)["tenant_fair_cc"]
    phase = right.meta["phase_s"]
    per_flow = cm.with_setting(sc.tenant_fair(phase, "cc", config=cm.model_config(), policy="per-flow"))
    assert all(c.params.ccti_increase == 1 for c in per_flow.changes)
    heads = judged(dict(base, tenant_fair_cc=ran(per_flow, "tenant_fair_cc")))
    c_a = heads[by_start("Tenant 1's flow C→A")]
    assert c_a.model_verdict in FAILS and c_a.worst_at is not None and "3 T2" in c_a.worst_at
    assert heads[by_start("Tenant 2 gets")].model_verdict in FAILS
    for k in (2, 3):
        h = heads[by_start(f"BECNs at D→B fall as 1/{k}")]
        assert h.model > 0.85 and h.model_verdict in FAILS
        paired = heads[by_start(f"BECNs at D→B with {k} vs 1")]
        assert paired.verdict == "inconsistent"                         # the paper's own pair, whatever the figure
        assert verdict(paired.kind, paired.paper, paired.model) in FAILS  # the figure itself is judged a miss


def test_equal_shares_inside_tenant_2_fail_on_a_one_to_half_split(base) -> None:
    right = s002.scenarios(QUICK)["tenant_fair_cc"]
    changes = tuple(replace(c, params=replace(c.params, ccti_increase=2 * c.params.ccti_increase))
                    if c.flow == "F->B" else c for c in right.changes)
    h = judged(dict(base, tenant_fair_cc=replace(right, changes=changes).run()))[by_start("Inside tenant 2")]
    assert h.model < 0.75 and h.model_verdict in FAILS
    # Jain's index, the old yardstick, would pass the split: 1 : 0.5 has Jain 0.9
    from dcnlab.controller.congestion.fluid import jain_index
    assert jain_index([1.0, 0.5]) == pytest.approx(0.9)
    split = [{"slowest_over_fastest_tenant2": 0.5, "tenant1_bps": 1.0, "tenant2_bps": 1.0, "tenant2_flows": 2,
              "tenant_ratio": 1.0}]
    h = {x.statement: x for x in hl.congestion({"tenants": {"cc": split}})}[by_start("Inside tenant 2")]
    assert h.model == 0.5 and h.model_verdict == "deviates"


def test_becn_count_fails_without_marking(base) -> None:
    right = s002.scenarios(QUICK)["tenant_fair_cc"]
    off = replace(right, config=replace(right.config, switch=replace(right.config.switch, threshold=0)))
    h = judged(dict(base, tenant_fair_cc=off.run()))[by_start("BECNs at D→B with one tenant-2 flow")]
    assert h.model == 0 and h.model_verdict in FAILS


def test_recovery_headlines_fail_in_the_null_case(base) -> None:
    m = s002.model_summary(base, cm.DEFAULT_SETTING_002, QUICK)
    rec = dict(m["recovery"], leave_over_join=1.0, first_over_second=1.0)
    heads = judged(base, recovery=rec)
    assert heads[by_start("After flows leave")].model_verdict in FAILS
    assert heads[by_start("Recovery takes 2 s")].model_verdict in FAILS


def test_cct_limit_figure_fails_with_a_pacer_ten_times_too_fast(base) -> None:
    fast = sc.cct_rate_limit(2.048, config=cm.model_config())
    got = sc.summarize_cct(fast, fast.run())
    cct = [dict(c) for c in s002.model_summary(base, cm.DEFAULT_SETTING_002, QUICK)["cct_limit"]]
    for c in cct:
        if c["ird_us"] == pytest.approx(20.48):
            c["measured_bps"] = got.measured_bps
    h = judged(base, cct_limit=cct)[by_start("CCT rate limit")]
    assert h.verdict == "inconsistent" and h.model > 1000
    assert verdict(h.kind, h.paper, h.model) in FAILS


def test_bmv2_becn_check_fails_under_plain_per_flow_cc() -> None:
    """The BMv2 check "BECNs at D->B fall as tenant 2's flows rise": a band on n_k x k around the model's prediction
    at BMv2's setting. Plain per-flow CC (the model's 1 : 0.951 : 0.949 at BMv2's setting) must miss it; the model's
    own prediction with the pushes meets it; at the old setting "1 > n2 > n3" alone did not tell them apart."""
    from importlib import import_module

    checks, config, plans = (import_module(f"dcnlab.reproduce.congestion.bmv2.{m}")    # bmv2 exports a plans()
                             for m in ("checks", "config", "plans"))
    cfg = config.quick()
    plan = plans.tenant_plan(cfg, "cc")
    nm = checks._becn_scaling(sc.summarize_tenants(plan, plans.predict(plan, cfg), plan.meta["settle_s"]))
    per_flow = replace(plan, changes=())
    ne = checks._becn_scaling(sc.summarize_tenants(per_flow, plans.predict(per_flow, cfg), plan.meta["settle_s"]))
    assert min(ne[1] * 2, ne[2] * 3) > 1.5                   # per-flow: no fall as 1/k (1.9-2.9 at the old setting)
    assert checks.becn_follows_model(nm, nm)
    assert not checks.becn_follows_model(ne, nm)
    assert not checks.becn_follows_model([1.0, 0.951, 0.949], [1.0, 0.52, 0.36])
