"""The BMv2 aggregation experiment's pieces that need no switch: scenarios, data, counters to link bytes,
results, checks, the benchmark's arithmetic, arguments."""

from __future__ import annotations

import argparse
import json

import pytest

from dcnlab.reproduce.aggregation import bmv2 as exp
from dcnlab.reproduce.aggregation import bench as exp_bench
from dcnlab.reproduce.aggregation import reproduce as exp_reproduce
from dcnlab.topos import parse_spec
from dcnlab.topos.errors import UserError
from dcnlab.traffic.aggregation_agent import MAX_VALUE


def test_scenarios_are_the_papers_example_on_bcube41_and_seeded_elsewhere():
    inc, shu = exp.scenarios(parse_spec("bcube:n=4,k=1"), exp.EmuConfig())
    assert inc.receivers == ("v0",) and inc.senders == exp.PAPER_SENDERS
    assert shu.receivers == ("v0", "v3", "v8") and shu.algorithms == ("srs", "incast", "m2", "unicast", "none")
    cfg = exp.EmuConfig()
    a = exp.scenarios(parse_spec("bcube:n=3,k=2"), cfg)
    assert a == exp.scenarios(parse_spec("bcube:n=3,k=2"), cfg)
    assert len(a[0].senders) == cfg.incast_senders and not set(a[0].senders) & set(a[0].receivers)
    assert not set(a[1].senders) & set(a[1].receivers) and len(a[1].receivers) == cfg.shuffle_receivers
    ft = exp.scenarios(parse_spec("fattree:k=4"), cfg)
    assert ft[0].algorithms == ("updown", "unicast", "kmb", "none") and ft[0].receivers[0].startswith("h")
    with pytest.raises(UserError, match="the scenarios need"):
        exp.scenarios(parse_spec("bcube:n=2,k=1"), cfg)


def test_word_counts_are_seeded_per_sender_and_partitioned():
    a = exp.word_counts(["h1", "h2"], 3, 64, 5000, seed=7)
    assert a == exp.word_counts(["h1", "h2"], 3, 64, 5000, seed=7)
    assert len(a["h1"]) == 192 and a["h1"] != a["h2"] and sum(a["h1"]) <= 5000
    result, over = exp.saturating_sum([[MAX_VALUE - 1] + [1] * 31, [5] + [2] * 31])
    assert result == [MAX_VALUE] + [3] * 31 and over == [0]


def test_link_bytes_come_from_the_sending_switch_or_the_receiving_one_for_hosts():
    fabric = parse_spec("bcube:n=2,k=0")     # h0 - v0 - w0 - v1 - h1
    out = {("v0", 2 * 0 + 0): 1180, ("v0", 2 * 0 + 1): 118, ("w0", 2 * 1 + 0): 1180}
    inn = {("v0", 2 * 1 + 0): 2360, ("w0", 2 * 0 + 0): 1062}
    first = exp.directed_bytes(fabric, inn, out, 0)
    assert first[("h0", "v0")] == 2360 and first[("v0", "w0")] == 1180 and first[("w0", "v1")] == 1180
    assert exp.directed_bytes(fabric, inn, out, 1)[("v0", "w0")] == 118
    assert exp.fabric_losses(fabric, inn, out, 118) == (1180 + 118 - 1062) // 118 + 1180 // 118


def job(algorithm, kind="incast", measured=1000, model=1000, recovery=0, exact=True, stray=0):
    return exp.JobResult("bcube:n=4,k=1", kind, algorithm, ("v0",), ("v1",), 8, exact, model / 944, model, measured,
                         recovery, 0, 0, 0, stray, 0, 0, 1.25, "v1->w1", 944, 8, 0, 0, 0, 3, 1)


def test_summary_checks_and_json():
    f = exp.FabricResult("bcube:n=4,k=1", 24, 16, 3.0, (job("irs", measured=600, model=600),
                                                         job("none", measured=1000, model=1000)))
    assert f.savings(f.jobs[0]) == pytest.approx((0.4, 0.4))
    good = exp.EmuResult(exp.EmuConfig(), (f,), 10.0)
    assert good.ok and good.checks() == {"exact": True, "bytes_agree": True, "no_stray_bytes": True}
    text = "\n".join(good.summary_lines())
    assert "irs" in text and "40.0 (40.0)" in text and "checks: exact ok" in text
    js = json.loads(json.dumps(good.to_json(), default=str))
    assert js["fabrics"][0]["jobs"][0]["saving_model"] == pytest.approx(0.4)
    off = exp.FabricResult("bcube:n=4,k=1", 24, 16, 3.0, (job("irs", measured=660, model=600),
                                                          job("none", exact=False)))
    bad = exp.EmuResult(exp.EmuConfig(), (off,), 10.0)
    assert bad.checks() == {"exact": False, "bytes_agree": False, "no_stray_bytes": True} and not bad.ok
    assert "off by more than 5%" in "\n".join(bad.summary_lines())


def test_benchmark_rates_are_frames_per_cpu_second():
    phases = (exp_bench.PhaseCost("plain forwarding", 0, 6000, 0, 300.0), exp_bench.PhaseCost("aggregation, fan-in 2", 2, 6000, 3000,
                                                                                  500.0))
    r = exp_bench.BenchResult("bcube:n=2,k=0", "v0", 118, 6000, 1500, 3, phases, ((2, 0.6),))
    assert phases[0].capacity_pps == pytest.approx(1e6 / 300) and r.ratio(2) == 0.6 and r.goal_met
    text = "\n".join(r.summary_lines())
    assert "3333 packets/s forwarded" in text and "2000 chunks/s aggregated (fan-in 2), 0.60 x forwarding" in text
    slow = exp_bench.BenchResult("bcube:n=2,k=0", "v0", 118, 6000, 1500, 3, phases, ((2, 0.4),))
    assert not slow.goal_met and "MISS (goal >= 0.5 x at every fan-in)" in "\n".join(slow.summary_lines())
    assert json.loads(json.dumps(r.to_json()))["capacity_pps"]["plain forwarding"] == pytest.approx(3333.3, 0.01)
    with pytest.raises(UserError, match="fan_ins"):
        exp_bench.bench_dataplane(fan_ins=(0,))
    with pytest.raises(UserError, match="frames=5"):
        exp_bench.bench_dataplane(frames=5)


def test_config_from_arguments_and_validation():
    cfg = exp_reproduce.config_from_args(argparse.Namespace(quick=True, seed=5, out="results/aggregation"))
    assert cfg.specs == ("bcube:n=4,k=1",) and cfg.seed == 5
    assert exp_reproduce.config_from_args(argparse.Namespace(topo="fattree:k=4")).specs == ("fattree:k=4",)
    for bad, msg in ((dict(keys=8), "keys=8"), (dict(slots=24), "slots=24"), (dict(rate_pps=-1), "rate_pps")):
        with pytest.raises(UserError, match=msg):
            exp.EmuConfig(**bad).validate()
