"""In-network aggregation on BMv2 (marker ``bmv2``; root, p4c and BMv2): the aggregating data plane
under hostile input, and its incasts and shuffles against the model, as assertions.

One BCube(2,1) (4 servers, 4 switches) serves the whole module: a single aggregating slot attacked with
malformed, truncated, duplicate, stale, forged and overflowing chunks; an exact incast and shuffle whose
link bytes match the model; a lost stream recovered by retransmission. One fat-tree k=4 incast checks the
switch-centric case.
"""

from __future__ import annotations

import os
import time

import pytest

import netcheck

from dcnlab.controller.aggregation import incast_tree
from dcnlab.controller.aggregation.dataplane import (
    FORWARD,
    OUTCOMES,
    PACKETS_COUNTER,
    AggregationDataplane,
    RouteRule,
    SlotRange,
    compile_incast,
)
from dcnlab.controller.runtime import TableEntry
from dcnlab.emu.cleanup import leftovers
from dcnlab.emu.network import FabricNetwork, NetOptions
from dcnlab.reproduce.aggregation import bmv2 as exp
from dcnlab.topos import parse_spec
from dcnlab.traffic.aggregation_agent import (
    HEADER_OFFSET,
    MAX_VALUE,
    OVERFLOW,
    RESULT,
    chunk_frame,
    pack_chunk,
)
from waiting import wait_until

pytestmark = pytest.mark.bmv2

SPEC = "bcube:n=2,k=1"
CFG = exp.EmuConfig(specs=(SPEC,), keys=256, rate_pps=100, slots=16, rto=0.5, timeout=60)   # timeout: a hang guard
JOB = 900
SLOT_NODE = "v0"


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    """The module's fabric; afterwards nothing of it may be left."""
    root = tmp_path_factory.mktemp("aggregation-runs")
    old = os.environ.get("DCNLAB_RUN_ROOT")
    os.environ["DCNLAB_RUN_ROOT"] = str(root)
    links = netcheck.root_interfaces()
    fabric = parse_spec(SPEC)
    try:
        with FabricNetwork(fabric, NetOptions(queue_depth=1024)) as n:
            yield n
            n.check_switches()
    finally:
        if old is None:
            os.environ.pop("DCNLAB_RUN_ROOT", None)
        else:
            os.environ["DCNLAB_RUN_ROOT"] = old
    assert leftovers(root) == []
    netcheck.assert_none_left(links, (x.name for x in fabric.nodes()))


@pytest.fixture(scope="module")
def dp(net):
    from dcnlab.p4src.sizing import sizing_for
    return AggregationDataplane(net.fabric, net.controller, capacity=sizing_for(net.fabric).AGG_SLOTS)


def outcomes(net, node):
    cells = net.controller.read_counters(PACKETS_COUNTER, [node])[node]
    return {OUTCOMES[c.index]: c.packets for c in cells if c.index < len(OUTCOMES)}


def delta(a, b):
    return {k: b[k] - a.get(k, 0) for k in b if b[k] != a.get(k, 0)}


def register(net, name, index=None, attempts=4):
    """A register of the aggregating node over Thrift, retried: the CLI is a child forked while gRPC threads
    run, and such a fork now and then dies before it runs the CLI."""
    from dcnlab.controller.runtime.errors import ThriftError

    for attempt in range(attempts):
        try:
            return net.controller.thrift(SLOT_NODE).register_read(f"DcnIngress.agg.{name}", index)
        except ThriftError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.2)


def slots(net):
    """Every slot's (bitmap, tag) at the aggregating node. (The sums are one bit<512> cell per slot, which
    BMv2's Thrift register API, 64-bit, cannot return: they are checked through the aggregates.)"""
    return list(zip(register(net, "agg_bitmap"), register(net, "agg_tag")))


# -- one slot under attack ------------------------------------------------------------------------------------
def test_malformed_truncated_duplicate_stale_and_overflowing_chunks(net):
    """h0 sends chunks for job 900 to its own server v0, which aggregates contributors 0 and 1 and returns
    the result to h0 (a hairpin), so every case is one packet into one slot."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    fabric = net.fabric
    h0 = fabric.host(0)
    port = h0.node_port
    addr = net.addr(h0.name)
    rule = RouteRule(SLOT_NODE, JOB, 0, 0, port, port, SlotRange(0, 256), 0b11, 0, True)
    net.controller.write({SLOT_NODE: [+rule.entry()]})
    agent = net.agent(h0.name)
    agent.call({"cmd": "aggregation.recv", "job": JOB, "tree": 0, "length": 16 * 512, "host_inputs": 0,
                "window": 1, "rto": 60, "senders": []})
    # from h1's address: a host drops frames that claim its own address as their source
    template = bytearray(chunk_frame(addr.mac, addr.mac, fabric.host(1).ip, addr.ip))

    def frame(chunk, contributor, values, flags=0, count=None):
        f = bytearray(template)
        f[HEADER_OFFSET:] = pack_chunk(JOB, 0, chunk, contributor, values, flags)
        if count is not None:
            f[HEADER_OFFSET + 9] = count
        return bytes(f)

    def send(*frames):
        """The outcomes the frames had at the slot node, once each has had its one outcome ('saturated' is a
        flag beside 'emitted'), however long the switch took."""
        before = outcomes(net, SLOT_NODE)
        agent.call({"cmd": "aggregation.raw", "iface": addr.iface, "frames": [f.hex() for f in frames]})
        wait_until(lambda: sum(v for k, v in delta(before, outcomes(net, SLOT_NODE)).items() if k != "saturated")
                   >= len(frames), f"an outcome for each of {len(frames)} frame(s) at {SLOT_NODE}")
        return delta(before, outcomes(net, SLOT_NODE))

    a = [1000 * i + 7 for i in range(16)]
    big = [MAX_VALUE - 5] * 8 + [3] * 8
    # a first contribution waits in slot 5
    assert send(frame(5, 0, a)) == {"added": 1}
    state = slots(net)
    assert [i for i, (b, t) in enumerate(state) if b or t] == [5] and state[5] == (1, JOB << 48 | 5)
    # a duplicate (another payload, same contributor) is never added
    assert send(frame(5, 0, big)) == {"duplicate": 1}
    # malformed: truncated, wrong UDP length, count > 16, contributor not expected / beyond 32, IPv4 options
    truncated = frame(5, 1, big)[:60]
    long_udp = bytes(Ether(template[:14]) / IP(src=addr.ip, dst=addr.ip) / UDP(sport=1, dport=7702, chksum=0)
                     / (pack_chunk(JOB, 0, 5, 1, big) + b"\0" * 8))
    # IPv4 options whose first bytes read as UDP ports 7702: the base parser takes them for UDP, the guard not
    options = bytearray(frame(5, 1, big))
    options[34:34] = (7702).to_bytes(2, "big") * 2
    options[14] = 0x46
    options[16:18] = (len(options) - 14).to_bytes(2, "big")
    options = bytes(options)
    bad = [truncated, long_udp, options, frame(5, 1, big, count=17), frame(5, 2, big), frame(5, 40, big)]
    assert send(*bad) == {"malformed": len(bad)}
    # a forged result from a host goes nowhere
    assert send(frame(5, 1, big, flags=RESULT)) == {"unmatched": 1}
    # the switch lives, and no slot changed (slot 5's sums are checked in the aggregate below)
    assert net.switches[SLOT_NODE].proc.poll() is None
    assert slots(net) == state
    # the second contributor completes slot 5: lanes 0-7 saturate, the flag rides along, the slot is freed
    assert send(frame(5, 1, big)) == {"emitted": 1, "saturated": 1}
    assert register(net, "agg_bitmap", 5) == 0
    # chunk 5 + 256 takes slot 5 over; a late chunk 5 is then stale; a late copy of 261 after it completed
    # starts the slot again (an aggregate from it would be marked as a retransmission)
    assert send(frame(261, 0, a)) == {"added": 1}
    assert send(frame(5, 1, a)) == {"stale": 1}
    assert send(frame(261, 1, a)) == {"emitted": 1}
    assert send(frame(261, 1, a)) == {"added": 1}
    rep = agent.call({"cmd": "aggregation.stop", "job": JOB})["reports"][0]
    want5 = [min(x + y, MAX_VALUE) for x, y in zip(a, big)]
    assert rep["result"][5 * 16:6 * 16] == want5
    assert rep["result"][261 * 16:262 * 16] == [2 * x for x in a]
    assert rep["overflow_chunks"] == [5] and rep["duplicates"] == 0 and rep["stray"] == 0
    net.controller.write({SLOT_NODE: [-rule.entry()]})
    assert OVERFLOW == 0x40


# -- jobs -------------------------------------------------------------------------------------------------------
def test_incast_is_exact_and_link_bytes_are_the_models(net, dp):
    sc = exp.Scenario("incast", ("v0",), ("v1", "v2", "v3"), ("irs",))
    for algo in ("irs", "none"):
        r = exp.run_job(net, dp, sc, algo, CFG, lambda m: None)
        assert r.exact, r
        assert r.agrees(0.05) and r.stray_bytes == 0, r
        if r.recovery_bytes == 0:            # nothing was lost: every link carried exactly the model's bytes
            assert r.link_mismatches == 0 and r.measured_bytes == r.model_bytes
            assert r.host_bytes_measured == r.host_bytes_predicted
    assert dp.installed == {}


def test_shuffle_is_exact_for_every_receiver(net, dp):
    sc = exp.Scenario("shuffle", ("v0", "v1"), ("v2", "v3"), ("srs", "none"))
    results = {a: exp.run_job(net, dp, sc, a, CFG, lambda m: None) for a in ("srs", "m2", "none")}
    for r in results.values():
        assert r.exact and r.agrees(0.05) and r.stray_bytes == 0, r
    assert results["srs"].model_bytes < results["none"].model_bytes and results["m2"].model_bytes < results["none"].model_bytes


def test_a_lost_stream_is_retransmitted_and_added_once(net, dp):
    """Switch w2 drops the job's chunks for a second (its entry turned into agg_drop), then forwards again:
    the receiver asks, every sender resends, the bitmaps keep the already-added contributions out."""
    fabric = net.fabric
    tree = incast_tree(fabric, "v0", ["v1", "v2", "v3"], "irs")
    prog = compile_incast(fabric, tree, job=dp.new_job(), pool=dp.pool, slots=16)
    dp.install(prog)
    victim = next(r for r in prog.rules() if r.node.startswith("w") and r.slots is None)
    drop = TableEntry(victim.entry().table, victim.entry().match, "DcnIngress.agg.agg_drop")
    net.controller.write({victim.node: [~drop]})
    hosts = sorted(prog.trees[0].contributors)
    data = exp.word_counts(hosts, 1, 64, 5000, 3)
    start = time.time() + 0.2
    dst = net.addr("h0")
    net.agent("h0").call({"cmd": "aggregation.recv", "job": prog.job, "tree": 0, "length": 64, "host_inputs": 0,
                          "window": 16, "rto": 0.4, "start_at": start,
                          "senders": [net.addr(h).ip for h in hosts]})
    for h, cid in prog.trees[0].contributors.items():
        src = net.addr(h)
        net.agent(h).call({"cmd": "aggregation.send", "job": prog.job, "tree": 0, "contributor": cid,
                           "values": data[h], "window": 16, "rate_pps": 200, "iface": src.iface,
                           "frame": chunk_frame(src.mac, dst.mac, src.ip, dst.ip).hex(), "start_at": start})
    wait_until(lambda: outcomes(net, victim.node).get("dropped", 0) > 0, f"{victim.node} drops the job's chunks")
    net.controller.write({victim.node: [~victim.entry()]})
    # the timeout is a hang guard: the job completes in about a second once w2 forwards again
    assert net.agent("h0").call({"cmd": "aggregation.wait", "job": prog.job, "timeout": 120})["complete"]
    reports = {}
    for h in ["h0", *hosts]:
        for r in net.agent(h).call({"cmd": "aggregation.stop", "job": prog.job})["reports"]:
            reports[(h, r["role"])] = r
    dp.remove(prog.job)
    recv = reports[("h0", "receiver")]
    assert recv["requests"] >= 1
    assert recv["result"] == exp.saturating_sum([data[h] for h in hosts])[0]
    assert sum(reports[(h, "sender")]["retransmitted"] for h in hosts) > 0


def test_entries_are_removed_with_the_job(net, dp):
    before = {n: len(net.controller.read_table(n, "DcnIngress.agg.agg_route")) for n in net.switches}
    tree = incast_tree(net.fabric, "v3", ["v0", "v1"], "m2")
    job = dp.incast(tree, 16)
    during = {n: len(net.controller.read_table(n, "DcnIngress.agg.agg_route")) for n in net.switches}
    assert sum(during.values()) - sum(before.values()) == len(job.rules())
    assert {e.action for n in job.switches() for e in net.controller.read_table(n, "DcnIngress.agg.agg_route")} == \
        {FORWARD, "DcnIngress.agg.agg_aggregate"}
    dp.remove(job.job)
    assert {n: len(net.controller.read_table(n, "DcnIngress.agg.agg_route")) for n in net.switches} == before


# -- switch-centric ----------------------------------------------------------------------------------------------
def test_fattree_switches_aggregate_an_exact_incast(tmp_path, monkeypatch):
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(tmp_path / "runs"))
    cfg = exp.EmuConfig(specs=("fattree:k=4",), keys=128, rate_pps=100, slots=16, rto=0.5, timeout=60)
    fabric = parse_spec("fattree:k=4")
    sc = exp.Scenario("incast", ("h0_0_0",), ("h0_0_1", "h0_1_0", "h1_0_0", "h2_1_1", "h3_0_1"), ())
    with FabricNetwork(fabric, NetOptions(queue_depth=1024)) as n:
        dpl = AggregationDataplane(fabric, n.controller, capacity=256)
        up = exp.run_job(n, dpl, sc, "updown", cfg, lambda m: None)
        none = exp.run_job(n, dpl, sc, "none", cfg, lambda m: None)
    for r in (up, none):
        assert r.exact and r.agrees(0.05), r
    assert up.aggregators >= 3 and up.model_bytes < none.model_bytes
    assert leftovers(tmp_path / "runs") == []


def test_waiting_time_m2_against_none_matches_the_link_bound_model(tmp_path, monkeypatch):
    """000's waiting time on BMv2 (quick setting: BCube(4,1), 6 senders, 2 runs): M2 finishes sooner than no
    aggregation by the link-bound model's saving (within 10 points), every result is exact, and no loss-free
    completion beats the link-bound model by more than
    the shaper's burst (its token bucket lets the burst through at line rate, so a job of a few chunks per
    link beats the rate: 0.85 seen on a 0.24-s job). How much slower than the model a job is depends on the
    machine's load, so it is reported (summary_lines: measured against model), not asserted."""
    from dcnlab.reproduce.aggregation import waiting as aw

    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(tmp_path / "runs"))
    res = aw.run_waiting(aw.QUICK)
    assert res.ok, res.summary_lines()
    print("\n".join(res.summary_lines()))
    for j in res.jobs:
        assert j.completion_s is not None and j.model_s > 0
        if not j.resent:
            assert 0.75 * j.model_s <= j.completion_s, j
    p = res.point(6)
    assert p["saving"] > 20, p
    # with every sender starting on time, BMv2's saving is the link-bound model's. Measured on this
    # setting over 4 runs: 50.0, 70.6, 52.2, 52.2% against 50.0, 66.7, 50.0, 50.0% (0-4 points); on BCube(4,2)
    # single runs fell up to 21 points short (a BMv2 node the loaded machine did not schedule), so the mean of
    # two runs is held to 10 points
    assert abs(p["saving"] - p["model_saving"]) <= 10, p
    assert leftovers(tmp_path / "runs") == []
