"""Paper 002's figures that were "not run": recovery after departures (Fig. 5(a)), the CCT rate limit
(Fig. 4), and the parking lot on one FIFO queue (BMv2's arbitration) beside the paper's round robin."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from dcnlab.controller.congestion import scenarios as sc
from dcnlab.controller.congestion.fluid import ModelResult, simulate
from dcnlab.controller.congestion.params import CongestionParamError
from dcnlab.reproduce.congestion import plots as congestion_plots
from dcnlab.reproduce.congestion import model as congestion_model
from dcnlab.reproduce.congestion import headlines
from dcnlab.reproduce.congestion import readings as ib_cc_002


# -- Fig. 5(a): recovery after departures -----------------------------------------------------------------
@pytest.fixture(scope="module")
def recovery():
    s = sc.tenant_recovery(0.2)
    return s, s.run()


def test_recovery_after_departures_is_measured_and_slower_than_arrivals(recovery):
    s, r = recovery
    rec = sc.summarize_recovery(s, r)
    assert r.sample_s == pytest.approx(1e-3) and rec.fraction == 0.9
    assert [t.flow for t in rec.leaves] == ["F->B", "E->B"] and [t.flow for t in rec.joins] == ["E->B", "F->B"]
    first, second = rec.recovery_s
    assert first is not None and second is not None
    assert 0 < first < 0.05 and 0 < second < 0.05                  # milliseconds: the loop's time constants
    assert all(x is not None and 0 < x < 0.02 for x in rec.join_s)
    # the paper's ordering: "very fast" after arrivals, "relatively slowly" after departures
    assert rec.leave_over_join is not None and rec.leave_over_join > 1.5
    # the model recovers one CCT index per CCTI_Timer at most, and the 2nd departure needs more indices
    # than the 1st: so it cannot order the two recoveries 2 s : 1 s as the paper does
    for t in rec.leaves:
        assert t.seconds >= t.min_seconds > 0
        assert all(s_ > b for s_, b in zip(t.steady_bps, t.before_bps))        # the remaining flows speed up
    steps = [max(b - a for b, a in zip(t.ccti_before, t.ccti_after)) for t in rec.leaves]
    assert steps[1] > steps[0] > 10
    assert rec.first_over_second == pytest.approx(first / second)
    assert rec.first_over_second < 1.5 < sc.PAPER_RECOVERY_S[0] / sc.PAPER_RECOVERY_S[1]


def test_recovery_threshold_orders_the_times(recovery):
    s, r = recovery
    times = {f: sc.summarize_recovery(s, r, f).recovery_s for f in (0.8, 0.9, 0.95)}
    for i in range(2):
        assert times[0.8][i] <= times[0.9][i] <= times[0.95][i]
    with pytest.raises(CongestionParamError, match="fraction=1.0 is out of range"):
        sc.summarize_recovery(s, r, 1.0)


def _series(rates: list[list[float]], sample_s: float = 1e-3) -> ModelResult:
    thr = np.array(rates, dtype=float)
    n, k = thr.shape
    z = np.zeros((n, k))
    return ModelResult(tuple(f"f{i}" for i in range(k)), ("t",) * k, (0.0,) * k, (math.inf,) * k, sample_s,
                       (np.arange(n) + 1) * sample_s, thr, z.astype(np.int64), z, np.zeros(n), 10.0, np.zeros(k),
                       np.zeros(k))


def test_settle_time_comes_from_each_flows_side():
    # f0 speeds up from 2 to 10, f1 slows down from 20 to 10; the event is at t = 0
    r = _series([[2, 20], [8, 15], [9.5, 12], [9.2, 10.5], [10, 10]])
    got = sc.settle_time(r, 0.0, [0, 1], np.array([2.0, 20.0]), np.array([10.0, 10.0]))
    assert got == pytest.approx(0.004)      # 3rd sample: f0 at 9.5 >= 9 but f1 at 12 > 11; 4th: both within
    assert sc.settle_time(r, 0.0, [0], np.array([2.0]), np.array([10.0]), t_end=0.002) is None


# -- Fig. 4: CCT rate limit -------------------------------------------------------------------------------
@pytest.mark.parametrize("ird_us", sc.PAPER_FIG4_MBPS)
@pytest.mark.parametrize("aggregate", [4, 1])
def test_cct_pins_one_qp_to_packet_bits_per_ird(ird_us, aggregate):
    s = sc.cct_rate_limit(ird_us, aggregate)
    c = sc.summarize_cct(s, s.run())
    bits = aggregate * 1024 * 8
    want = min(bits / (ird_us * 1e-6), 8e9)                   # the NIC caps it at the 8 Gb/s link
    assert c.measured_bps == pytest.approx(want, rel=0.01)
    assert abs(c.error) <= 0.01
    assert c.paper_mbps == sc.PAPER_FIG4_MBPS[ird_us]
    assert c.paper_formula_bps == pytest.approx(1024 * 8 / (ird_us * 1e-6 * 4))        # the paper's arithmetic


def test_paper_fig4_arithmetic_is_not_algorithm_2():
    s = sc.cct_rate_limit(20.48)
    c = sc.summarize_cct(s, s.run())
    assert c.paper_formula_bps == pytest.approx(100e6)
    assert c.measured_bps == pytest.approx(16 * c.paper_formula_bps)     # 4 packets per IRD, not 1 per 4 IRDs
    with pytest.raises(CongestionParamError, match="ird_us=0"):
        sc.cct_rate_limit(0.0)


def test_cct_readings_measure_each_pacing():
    rows = {(r.headline, r.reading): r for r in ib_cc_002._cct_readings()}
    assert rows[("002-cct-20.48us", "aggregate-4")].value == pytest.approx(1600, rel=0.01)
    assert rows[("002-cct-20.48us", "aggregate-4")].default
    assert rows[("002-cct-20.48us", "per-packet")].value == pytest.approx(400, rel=0.01)
    assert rows[("002-cct-20.48us", "paper-formula")].value == pytest.approx(100, rel=0.01)
    assert rows[("002-cct-20.48us", "paper-formula")].holds and not rows[("002-cct-20.48us", "aggregate-4")].holds
    assert rows[("002-cct-204.8us", "paper-formula")].value == pytest.approx(10, rel=0.01)
    assert rows[("002-cct-2.048us", "aggregate-4")].value == pytest.approx(10000, rel=0.01)   # the 10 Gb/s link


def test_recovery_readings_from_runs():
    recs = {m: {"seconds": 1.0, "sample_s": 0.001, "phase_s": 0.2,
                "recovery": {f: [0.009 * f, 0.012 * f] for f in ib_cc_002.RECOVERY_FRACTIONS}}
            for m in ib_cc_002.TIMER_MODES}
    rows = ib_cc_002._recovery_readings(recs)
    assert {r.headline for r in rows} == {"002-recovery-1st", "002-recovery-2nd", "002-recovery-ratio"}
    assert sum(r.default for r in rows) == 3 and len(rows) == 12
    by = {(r.headline, r.reading): r for r in rows}
    assert by[("002-recovery-1st", "90%/reset")].value == pytest.approx(0.0081)
    assert by[("002-recovery-ratio", "90%/free")].value == pytest.approx(0.75)
    assert by[("002-recovery-2nd", "90%/reset")].paper == 1.0


# -- Fig. 3(a): round robin against one FIFO ---------------------------------------------------------------
@pytest.mark.parametrize("config, low, high", [
    (None, 0.9, 1.1),                                    # the paper's switch: A+B = D = E
    (sc.fifo_config(), 1.8, 2.2),                        # one FIFO, four line-rate inputs: 1:1:1:1
    (sc.fifo_config(shared_input=True), 0.9, 1.1),       # one FIFO, A and B on one NIC (BMv2): 1:1:1
])
def test_parking_lot_under_round_robin_and_fifo(config, low, high):
    cfg = dataclasses.replace(config or sc.ModelConfig(), sample_s=0.001)
    s = sc.fairness_incast(False, 0.01, cfg)
    ratio = sc.parking_ratio(s, s.run())
    assert low <= ratio <= high
    assert s.name == "fairness_cc_off" + sc.link_variant(cfg.link)


def test_shared_input_kernels_agree():
    s = sc.fairness_incast(False, 0.005, dataclasses.replace(sc.fifo_config(True), sample_s=0.001))
    a = simulate(s.flows, s.duration_s, s.config, kernel="python")
    b = simulate(s.flows, s.duration_s, s.config, kernel="numpy")
    np.testing.assert_allclose(a.throughput_bps, b.throughput_bps, rtol=1e-9, atol=1.0)


# -- the headlines and the table ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def model_summary():
    fine = sc.ModelConfig(sample_s=0.005)
    scenarios = [sc.fairness_incast(False, 0.02, fine), sc.fairness_incast(True, 0.02, fine),
                 sc.tenant_fair(0.05, "cc", config=fine), sc.tenant_fair(0.05, "meter", config=fine),
                 sc.proportional(2, 0.05, 0.02, fine), sc.proportional(3, 0.05, 0.02, fine),
                 sc.tenant_recovery(0.1)]
    scenarios += [s for s in congestion_model.build_scenarios(True) if s.name.startswith(("fairness_cc_off_",
                                                                                          "cct_limit_"))]
    results = {s.name: (s.run(), 0.0) for s in scenarios}
    rows = congestion_model.summarize(scenarios, results)
    rows["fairness_rates"] = congestion_model.fairness_rates(scenarios, results)
    return rows


def test_new_rows_of_the_checks_table(model_summary):
    checks = {c["label"]: c for c in model_summary["checks"]}
    assert checks["CC off, one FIFO, A, B on own inputs"]["ok"] and checks["CC off, one FIFO, A+B on one NIC (BMv2)"]["ok"]
    assert checks["measured vs 4 x l x 8 / IRD (<= link)"]["ok"]
    assert not checks["IRD 20.48 us, 4 x 1024 B per IRD"]["ok"]                   # 1600 against 100 Mb/s
    assert checks["IRD 20.48 us, 4 x 1024 B per IRD"]["verdict"] == "inconsistent"      # the headline's word
    assert checks["cc, after departures vs after arrivals"]["ok"]
    table = congestion_model.checks_table(model_summary["checks"])
    assert "(d) Fig. 4" in table and "1600" in table and max(map(len, table.splitlines())) <= 100


def test_headlines_compare_like_with_like(model_summary):
    emulation = {"fairness": {"off": {"rates_pps_4_active": {"A->C": 400.0, "B->C": 400.0, "D->C": 100.0,
                                                             "E->C": 90.0}},
                              "cc": {"rates_pps_4_active": {"A->C": 200.0, "B->C": 230.0, "D->C": 250.0,
                                                            "E->C": 240.0},
                                     "jain_of_mean_rates": 0.99, "model_jain_of_mean_rates": 0.995}},
                 "ratio": {"1:3 cc": {"measured": 2.8, "model": 2.9}}}
    heads = {h.statement: h for h in headlines.congestion(model_summary, emulation)}
    rr = heads["Parking lot with CC off: A→C + B→C = D→C = E→C (Fig. 3(a))"]
    fifo = heads["Parking lot on one FIFO egress queue (BMv2's arbitration)"]
    assert rr.emulation is None and rr.model == pytest.approx(1.0, abs=0.1)
    assert fifo.model == pytest.approx(1.0, abs=0.1) and fifo.emulation == pytest.approx(800 / 95)
    assert fifo.difference is not None and fifo.difference > 500 and "with A and B on inputs of their own" in fifo.reading
    theorem = heads["Theorem 1: CCTI_Increase 1:3 gives bandwidth 3:1"]
    assert "the model predicts a ratio of 2.900, BMv2 measured 2.800 (-3.4%" in theorem.reading
    rec = heads["After flows leave, tenant 2's remaining flows recover slowly, over 5–7 s and 7–8 s (Fig. 5(a))"]
    assert rec.kind == "trend" and rec.model > 1 and rec.verdict == "reproduced" and "0.00" in rec.reading
    order = heads["Recovery takes 2 s after the first departure (5–7 s), 1 s after the second (7–8 s) (Fig. 5(a))"]
    assert order.paper == 2.0 and order.verdict == "deviates"
    cct = heads["CCT rate limit: IRD 20.48 µs limits one QP to 100 Mb/s (Fig. 4)"]
    # Fig. 4 contradicts itself (4 x 1024 B per IRD against a formula of one packet per four IRDs): inconsistent,
    # the two sentences and the arithmetic shown
    assert cct.model == pytest.approx(1600) and cct.verdict == "inconsistent" and "400 Mb/s" in cct.reading
    assert "factor of 16" in cct.inconsistent


def test_headlines_without_results_say_not_run():
    heads = [h for h in headlines.congestion(None, None, "x") if "recover" in h.statement.lower()
             or "CCT rate" in h.statement or "FIFO" in h.statement]
    assert len(heads) == 4 and all(h.verdict == "not run" and h.reading.startswith("not run") for h in heads)


def test_recovery_plot_reads_well(recovery, tmp_path, monkeypatch):
    from dataclasses import asdict

    monkeypatch.setenv("DCNLAB_PLOTCHECK", "strict")          # a problem of the figure raises
    s, r = recovery
    path = congestion_plots.plot_recovery(r, asdict(sc.summarize_recovery(s, r)), tmp_path)
    assert path.name == "fig5_recovery.png" and path.stat().st_size > 10_000


def test_the_checks_table_and_the_headlines_give_one_verdict(model_summary):
    """No second tolerance: the 002 model table's paper rows carry the verdict of the report's rule."""
    checks = {c["label"]: c for c in model_summary["checks"]}
    heads = {h.statement: h for h in headlines.congestion(model_summary)}
    for r in (2, 3):
        assert (checks[f"CCTI_Increase 1:{r}"]["verdict"]
                == heads[f"Theorem 1: CCTI_Increase 1:{r} gives bandwidth {r}:1"].model_verdict)
    stated = {heads[f"BECNs at D→B fall as 1/{k} with {k} tenant-2 flows: the stated 1 : 1/2 : 1/3 (Fig. 5(b))"]
              .model_verdict for k in (2, 3)}
    assert checks["cc, D->B BECNs (1/2/3 T2), the stated 1:1/2:1/3"]["verdict"] in stated
    assert checks["cc, D->B BECNs (1/2/3 T2), the paper's counts"]["verdict"] == "inconsistent"
