"""The live view's newer data, without a browser: tenants' flows with their rates, drop counters as losses
per second, and a block opened into its members."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from dcnlab import view
from dcnlab.topos.spec import parse_spec
from dcnlab.view.flows import ViewFlow, ViewTenant, plan_flows, resolve_flows, shortest_path
from dcnlab.view.layout import topology
from dcnlab.view.server import ViewServer
from dcnlab.view.sources import PlanSource


# -- tenants' flows ------------------------------------------------------------------------------------
def _plan(model: bool = False, tenants=(("tenant1", 1.0, 1), ("tenant2", 1.0, 3))):
    from dcnlab.reproduce.congestion.plan import plan
    return plan(list(tenants), 8e9, 0.1, "reset", model)


def test_plan_flows_lie_on_the_bmv2_fabric_into_the_receiver_with_the_policys_rates():
    fabric = parse_spec("dragonfly:p=5,a=1,h=1")
    data = _plan()
    flows, tenants, neck, rate = plan_flows(fabric, data)
    assert [f.id for f in flows] == ["tenant1.f0", "tenant2.f0", "tenant2.f1", "tenant2.f2"]
    receiver = fabric.host_name(0)
    assert neck == (fabric.host_attachment(0)[0], receiver) and rate == 8e9
    assert [f.path[0] for f in flows] == [fabric.host_name(i) for i in (1, 2, 3, 4)]    # a sender per flow
    assert all(f.path[-1] == receiver and f.path[-2] == neck[0] for f in flows)
    # equal weights: tenant1's one flow gets half the bottleneck, tenant2's three a sixth each
    assert flows[0].rate_bps == pytest.approx(4e9) and flows[1].rate_bps == pytest.approx(8e9 / 6)
    assert flows[0].ccti < flows[1].ccti                # the faster flow paces at a smaller CCT index
    assert {f.ccti_increase for f in flows[1:]} == {data["tenants"][1]["ccti_increase"]}
    assert [t.meter_bps for t in tenants] == [pytest.approx(4e9), pytest.approx(4e9)]


def test_resolved_flows_cross_drawn_links_in_their_direction_and_tenants_sum_their_shares():
    fabric = parse_spec("fattree:k=4")
    topo = topology(fabric)
    path = shortest_path(fabric, "h0_0_0", "h0_1_0")
    assert path[0] == "h0_0_0" and path[-1] == "h0_1_0" and len(path) == 5      # host, edge, agg, edge, host
    flows = [ViewFlow("a.f0", "a", path, 3e9, 10, 1), ViewFlow("b.f0", "b", path[::-1], 1e9, 40, 3, 2e9),
             ViewFlow("b.f1", "b", path[::-1], 1e9, 40, 3, 2e9)]
    got = resolve_flows(flows, [ViewTenant("a", 1, 0.6), ViewTenant("b", 2, 0.4, 2e9)], topo,
                        ("e0_1", "h0_1_0"), 8e9)
    ends = {l["id"]: (l["a"], l["b"]) for l in topo["links"]}
    f0 = got["flows"][0]
    assert [(ends[i] if fwd else ends[i][::-1]) for i, fwd in f0["links"]] == list(zip(path, path[1:]))
    assert [[i, not fwd] for i, fwd in got["flows"][1]["links"]] == f0["links"][::-1]
    assert [t["colour"] for t in got["tenants"]] == [0, 1] and got["flows"][2]["colour"] == 1
    a, b = got["tenants"]
    assert (a["flows"], a["rate_bps"], a["share"]) == (1, 3e9, 0.375)
    assert (b["flows"], b["rate_bps"], b["share"], b["meter_bps"]) == (2, 2e9, 0.25, 2e9)
    assert got["bottleneck"]["link"] == f0["links"][-1][0] and got["missing"] == []


def test_flows_on_blocks_are_bundles_and_a_plan_source_serves_them_with_a_version():
    fabric = parse_spec("fattree:k=16")
    src = PlanSource(fabric, max_nodes=100)
    assert src.topology()["aggregated"]
    path = shortest_path(fabric, "h0_0_0", "h1_0_0")
    assert src.rates()["flows"] == 0
    src.set_flows([ViewFlow("t.f0", "t", path, 1e9)], [ViewTenant("t")], bottleneck_bps=1e9)
    got = src.flows()
    assert got["version"] == 1 and src.rates()["flows"] == 1
    names = {l["id"]: {l["a"], l["b"]} for l in src.topology()["links"]}
    drawn = [names[i] for i, _ in got["flows"][0]["links"]]
    assert drawn[0] == {"pod0/host", "pod0/edge"} and drawn[-1] == {"pod1/edge", "pod1/host"}
    assert got["tenants"][0]["share"] == 1.0


def test_plan_congestion_view_serves_the_tenants_flows(monkeypatch, capsys):
    from dcnlab.cli import main
    served = {}

    def fake_wait():
        url = capsys.readouterr().err.split("view: ")[1].split()[0]
        base, token = url.split("/?token=")
        with urllib.request.urlopen(f"{base}/api/flows?token={token}", timeout=30) as r:
            served["flows"] = json.loads(r.read())
    monkeypatch.setattr(view, "wait", fake_wait)
    assert main(["plan", "congestion", "--tenant", "x:1:1", "--tenant", "y:3:2", "--view"]) == 0
    got = served["flows"]
    assert [f["tenant"] for f in got["flows"]] == ["x", "y", "y"]
    assert [t["share"] for t in got["tenants"]] == [pytest.approx(0.25), pytest.approx(0.75)]
    assert all(f["links"] for f in got["flows"]) and got["bottleneck"]["link"] is not None


def test_a_view_server_answers_flows_behind_its_token():
    src = PlanSource(parse_spec("fattree:k=4"))
    with ViewServer(src) as srv:
        with urllib.request.urlopen(f"http://127.0.0.1:{srv.port}/api/flows?token={srv.token}", timeout=30) as r:
            assert json.loads(r.read())["flows"] == []


# -- a block opened ------------------------------------------------------------------------------------
def _wired(fabric, names):
    return sum(1 for n in names for p in range(fabric.node(n).ports) if fabric.peer(n, p) is not None)


def test_a_small_block_opens_into_its_members_with_every_link_once():
    from dcnlab.view.trees import ViewTree
    fabric = parse_spec("fattree:k=16")
    tree = ViewTree("t", "multicast", "t", (("h0_0_0", "e0_0"), ("e0_0", "a0_3"), ("a0_3", "c24")),
                    {"h0_0_0": "member", "e0_0": "root"})
    src = PlanSource(fabric, [tree], max_nodes=100)
    d = src.block("pod0/edge")
    assert d["members"] and sorted(n["id"] for n in d["nodes"]) == sorted(f"e0_{i}" for i in range(8))
    assert d["links"] == []                                  # edge switches of a pod are not wired together
    assert sum(e["count"] for e in d["external"]) == _wired(fabric, [f"e0_{i}" for i in range(8)]) == 128
    assert {"a": "e0_0", "chain": ["pod0/agg", "a0_3"], "count": 1} in d["external"]
    t = d["trees"]["t"]
    assert sorted(tuple(d["external"][i]["chain"]) for i in t["external"]) == [("pod0/agg", "a0_3"), ("pod0/host", "h0_0_0")]
    assert t["roles"] == {"e0_0": "root"} and t["links"] == []
    assert src.block("pod0/edge#1") is None and src.block("nowhere") is None     # no such block
    assert PlanSource(parse_spec("fattree:k=4")).block("pod0/edge") is None      # a drawing without blocks


def test_a_big_block_opens_into_sub_blocks_down_to_its_members(monkeypatch):
    from dcnlab.view import opening
    monkeypatch.setattr(opening, "MAX_OPEN", 5)
    fabric = parse_spec("fattree:k=16")
    src = PlanSource(fabric, max_nodes=100)
    d = src.block("pod0/host")                                 # 64 hosts: 8 sub-blocks of 8, each of 8 hosts
    assert not d["members"] and [n["count"] for n in d["nodes"]] == [8] * 8
    assert [n["id"] for n in d["nodes"]] == [f"pod0/host#{i}" for i in range(8)]
    assert sum(e["count"] for e in d["external"]) == 64 and all(len(e["chain"]) == 2 for e in d["external"])
    sub = src.block("pod0/host#3")
    assert not sub["members"] and sum(n["count"] for n in sub["nodes"]) == 8
    leaf = src.block(sub["nodes"][0]["id"])
    assert leaf["members"] and len(leaf["nodes"]) == 1
    (host,) = (n["id"] for n in leaf["nodes"])
    assert src._opener.chain(host) == ["pod0/host", "pod0/host#3", sub["nodes"][0]["id"], host]
    (e,) = leaf["external"]
    edge = fabric.peer(host, 0)[0]                            # its edge switch, in a sub-block of its own
    assert e["chain"] == src._opener.chain(edge) and e["chain"][0] == "pod0/edge" and len(e["chain"]) == 3
    # between sub-blocks of the agg block: internal bundles count each wired pair once
    agg = src.block("pod0/agg")                                # 8 agg switches: sub-blocks of one each
    assert agg["links"] == [] and sum(e["count"] for e in agg["external"]) == _wired(fabric, [f"a0_{i}" for i in range(8)])


def test_the_server_sends_one_blocks_detail_and_404_for_none():
    src = PlanSource(parse_spec("fattree:k=16"), max_nodes=100)
    with ViewServer(src) as srv:
        base = f"http://127.0.0.1:{srv.port}/api/block"
        with urllib.request.urlopen(f"{base}/pod2%2Fedge?token={srv.token}", timeout=30) as r:
            d = json.loads(r.read())
        assert d["block"] == "pod2/edge" and len(d["nodes"]) == 8
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"{base}/pod99%2Fedge?token={srv.token}", timeout=30)
        assert e.value.code == 404
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"{base}/pod2%2Fedge", timeout=30)
        assert e.value.code == 403


# -- lost packets where the program counts them ----------------------------------------------------------
class _Cell:
    def __init__(self, index, packets):
        self.index, self.packets = index, packets


def test_drop_counters_of_dcnlabs_program_and_of_a_labs_and_none():
    from dcnlab.view.drops import drop_counters
    ours = ["DcnIngress.port_in", "DcnIngress.tenant.tenant_packets", "DcnIngress.tenant.tenant_dropped",
            "DcnIngress.agg.agg_packets", "DcnIngress.agg.agg_port_in", "DcnEgress.ecn.ecn_marked"]
    assert drop_counters(ours) == {"DcnIngress.tenant.tenant_dropped": None,
                                   "DcnIngress.agg.agg_packets": {2: "duplicate", 3: "stale", 4: "malformed",
                                                                  8: "agg_drop"}}
    assert drop_counters(["MyIngress.queueDrops", "MyIngress.pkts"]) == {"MyIngress.queueDrops": None}
    assert drop_counters(["MyIngress.pkts"]) == {}


def test_drop_counters_become_losses_per_second_per_switch():
    from dcnlab.view.drops import losses, take_drops
    progs = {"s1": ["I.tenant.tenant_dropped", "I.agg.agg_packets"], "s2": ["I.tenant.tenant_dropped"],
             "s3": ["I.port_in"]}
    cells = {("s1", "I.tenant.tenant_dropped"): [_Cell(0, 100), _Cell(1, 7)],
             ("s1", "I.agg.agg_packets"): [_Cell(0, 5000), _Cell(3, 40)],           # 0: added, not a drop
             ("s2", "I.tenant.tenant_dropped"): [_Cell(0, 0)]}
    clock = iter([10.0, 12.0])
    read = lambda sw, c: cells[(sw, c)]     # noqa: E731
    before = take_drops(progs, progs.__getitem__, read, lambda: next(clock))
    cells[("s1", "I.tenant.tenant_dropped")] = [_Cell(0, 300), _Cell(1, 7)]
    cells[("s1", "I.agg.agg_packets")] = [_Cell(0, 9000), _Cell(3, 50)]
    after = take_drops(progs, progs.__getitem__, read, lambda: next(clock))
    got = losses(before, after)
    assert got["counted"] and got["dt"] == 2.0 and got["uncounted"] == ["s3"]
    s1 = got["switches"]["s1"]
    assert s1["pps"] == 105.0 and s1["total"] == 357          # (300-100)/2 + (50-40)/2; 300 + 7 + 50
    assert s1["cells"] == [["I.agg.agg_packets[stale]", 5.0, 50], ["I.tenant.tenant_dropped[tenant 0]", 100.0, 300],
                           ["I.tenant.tenant_dropped[tenant 1]", 0.0, 7]]
    assert "s2" not in got["switches"]                         # counts drops, lost none
    none = take_drops(["s3"], progs.__getitem__, read, lambda: 1.0)
    assert losses(None, none) == {"counted": False, "note": "this program counts no drops", "switches": {},
                                  "uncounted": ["s3"]}


def test_a_live_source_sends_its_losses_with_the_rates():
    import time

    from dcnlab.view.drops import DropSample
    from dcnlab.view.rates import Sample
    from dcnlab.view.sources import LiveSource
    fabric = parse_spec("fattree:k=4")
    ticks = iter(range(10**6))

    def drops():
        n = next(ticks)
        return DropSample(float(n), {"e0_0": {("I.tenant_dropped", 0): 50 * n}})
    src = LiveSource(fabric, "unused", take=lambda: Sample(time.monotonic(), {}), drops=drops, interval=0.05,
                     drop_interval=0.05)
    try:
        end = time.monotonic() + 60
        while not src.rates().get("drops", {}).get("switches") and time.monotonic() < end:
            time.sleep(0.05)
        d = src.rates()["drops"]
        assert d["counted"] and d["switches"]["e0_0"]["pps"] == 50.0
    finally:
        src.close()
    assert PlanSource(fabric).rates().get("drops") is None            # a plan has no traffic to lose


def test_an_experiments_published_flows_get_their_senders_link_rates(tmp_path):
    """What ``reproduce congestion --emulate`` publishes in its run directory, seen by ``dcnlab view RUN_DIR``:
    each flow's rate is its sender's host link over the flows that host sends."""
    import time

    from dcnlab.view.flows import PUBLISHED, published_flows
    from dcnlab.view.rates import Sample
    from dcnlab.view.sources import LiveSource
    fabric = parse_spec("dragonfly:p=5,a=1,h=1")
    h = [fabric.host_name(i) for i in range(5)]
    sw = fabric.host_attachment(0)[0]
    doc = {"flows": [{"id": "A", "tenant": "t1", "src": h[1], "dst": h[0], "ccti_increase": 1},
                     {"id": "B", "tenant": "t2", "src": h[2], "dst": h[0], "ccti_increase": 3},
                     {"id": "C", "tenant": "t2", "src": h[2], "dst": h[0], "ccti_increase": 3}],
           "tenants": [{"name": "t1", "weight": 1, "meter_bps": None}, {"name": "t2", "weight": 1, "meter_bps": 8e5}],
           "bottleneck": [sw, h[0]], "bottleneck_bps": 1.6e6, "note": "BMv2 test"}
    before = {(h[1], sw): (0, 0), (h[2], sw): (0, 0)}
    after = {(h[1], sw): (100_000, 500), (h[2], sw): (50_000, 250)}
    got = published_flows(doc, fabric, after, before, 1.0)
    assert [f.rate_bps for f in got["flows"]] == [8e5, 2e5, 2e5]          # B and C share their host's link
    assert got["flows"][0].path == (h[1], sw, h[0]) and got["bottleneck"] == (sw, h[0])
    (tmp_path / PUBLISHED).write_text(json.dumps(doc))
    t = iter(range(10**6))
    src = LiveSource(fabric, "unused", take=lambda: Sample(float(next(t)), {k: (v[0] * next(t), 0) for k, v in
                                                                             after.items()}),
                     interval=0.05, flows_file=tmp_path / PUBLISHED)
    try:
        end = time.monotonic() + 60
        while src.flows()["version"] < 2 and time.monotonic() < end:
            src.rates()
            time.sleep(0.05)
        f = src.flows()
        assert [x["id"] for x in f["flows"]] == ["A", "B", "C"] and f["note"].startswith("BMv2 test; rates: what each sender")
        assert f["sent"]
        assert f["flows"][0]["rate_bps"] > 0 and f["tenants"][1]["meter_bps"] == 8e5
        assert f["bottleneck"]["rate_bps"] == 1.6e6
    finally:
        src.close()
