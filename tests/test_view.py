"""The live view's data (layout, rates, trees) and its server (token, loopback only), without a browser."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

from dcnlab import view
from dcnlab.emu.counters import link_counters, parse_link_stats, parse_qdiscs
from dcnlab.topos.spec import parse_spec
from dcnlab.view import layout
from dcnlab.view.rates import Sample, rates
from dcnlab.view.server import ViewServer
from dcnlab.view.sources import LiveSource, PlanSource, read_switch
from dcnlab.view.trees import aggregation_trees, cist_trees, multicast_trees, resolve


def _pos(topo):
    return {n["id"]: (n["x"], n["y"]) for n in topo["nodes"]}


# -- layout ------------------------------------------------------------------------------------------
def test_fattree_layers_top_down_and_pods_side_by_side():
    topo = layout.topology(parse_spec("fattree:k=4"))
    assert not topo["aggregated"] and len(topo["nodes"]) == 36 and len(topo["links"]) == 48
    pos = _pos(topo)
    assert pos["c0"][1] < pos["a0_0"][1] < pos["e0_0"][1] < pos["h0_0_0"][1]
    for layer in ("a{}_1", "e{}_1", "h{}_1_1"):          # pod p's nodes all left of pod p+1's
        for p in range(3):
            assert pos[layer.format(p)][0] < pos[layer.replace("_1", "_0", 1).format(p + 1)][0]
    assert all(0 <= x <= topo["width"] and 0 <= y <= topo["height"] for x, y in pos.values())


def test_bcube_levels_above_servers_and_dragonfly_groups_on_a_circle():
    pos = _pos(layout.topology(parse_spec("bcube:n=4,k=1")))
    assert pos["w4"][1] < pos["w0"][1] < pos["v0"][1] < pos["h0"][1]     # level1, level0, servers, hosts
    topo = layout.topology(parse_spec("dragonfly:p=1,a=4,h=2"))
    pos = _pos(topo)
    centre = [sum(pos[f"s{g}_{r}"][i] for r in range(4)) / 4 for g in range(9) for i in (0, 1)]
    centres = list(zip(centre[::2], centre[1::2]))
    mid = (sum(x for x, _ in centres) / 9, sum(y for _, y in centres) / 9)
    radii = [((x - mid[0]) ** 2 + (y - mid[1]) ** 2) ** 0.5 for x, y in centres]
    assert max(radii) - min(radii) < 0.05 * max(radii)                      # group centres on one circle
    d = lambda a, b: ((pos[a][0] - pos[b][0]) ** 2 + (pos[a][1] - pos[b][1]) ** 2) ** 0.5  # noqa: E731
    assert d("s0_0", "s0_2") < d("s0_0", "s1_0")                            # routers of a group together


def test_a_users_topology_file_gets_a_general_layout(tmp_path):
    from dcnlab.topos.files import load_topology
    f = tmp_path / "topology.json"
    f.write_text(json.dumps({"hosts": {"h1": {"ip": "10.0.1.1/24", "mac": "08:00:00:00:01:11"},
                                       "h2": {"ip": "10.0.2.2/24", "mac": "08:00:00:00:02:22"}},
                             "switches": {"s1": {}, "s2": {}, "s3": {}},
                             "links": [["h1", "s1-p1"], ["h2", "s2-p1"], ["s1-p2", "s2-p2"], ["s1-p3", "s3-p1"],
                                       ["s2-p3", "s3-p2"]]}))
    fabric = load_topology(str(f))
    topo = layout.topology(fabric)
    pos = _pos(topo)
    assert set(pos) == {"h1", "h2", "s1", "s2", "s3"} and len(topo["links"]) == 5
    assert len(set(pos.values())) == 5
    assert all(0 <= x <= topo["width"] and 0 <= y <= topo["height"] for x, y in pos.values())


def test_a_big_fabric_is_drawn_as_blocks_that_keep_every_link():
    fabric = parse_spec("fattree:k=24")
    topo = layout.topology(fabric)
    assert topo["aggregated"]
    blocks = {n["id"]: n for n in topo["nodes"]}
    assert blocks["pod0/edge"]["count"] == 12 and blocks["pod0/host"]["count"] == 144
    assert sum(n["count"] for n in topo["nodes"]) == topo["nodes_total"] == 720 + 3456
    assert sum(l["count"] for l in topo["links"]) == fabric.num_links()
    assert len(topo["nodes"]) == 24 * 3 + 12


# -- rates and link state ------------------------------------------------------------------------------
IP_JSON = json.dumps([
    {"ifname": "e0_0-eth0", "flags": ["BROADCAST", "UP"], "stats64": {"rx": {"bytes": 1000, "packets": 10},
                                                                      "tx": {"bytes": 500, "packets": 5}}},
    {"ifname": "e0_0-eth2", "flags": ["BROADCAST"], "stats64": {"rx": {"bytes": 7, "packets": 1},
                                                                "tx": {"bytes": 9000, "packets": 9}}},
])


def test_counters_parse_iproute2_json_and_count_host_links_at_the_switch_end():
    fabric = parse_spec("fattree:k=4")
    stats = parse_link_stats(IP_JSON)
    assert stats["e0_0-eth0"]["up"] and not stats["e0_0-eth2"]["up"]
    b = link_counters(fabric, stats, "bytes")
    peer = fabric.peer("e0_0", 0)[0]                 # a host: what it sent is the switch end's RX
    assert b[(peer, "e0_0")] == 1000 and b[("e0_0", peer)] == 500
    assert parse_qdiscs(json.dumps([{"kind": "pfifo", "dev": "a-eth1", "root": True, "options": {"limit": 0}},
                                    {"kind": "tbf", "dev": "b-eth1", "root": True, "options": {}},
                                    {"kind": "noqueue", "dev": "c-eth1", "root": True}])) == {
        "a-eth1": "cut", "b-eth1": "shaped"}


def test_rates_from_two_samples_each_direction_and_a_counter_reset_is_zero():
    topo = layout.topology(parse_spec("fattree:k=4"))
    l0, l1 = topo["links"][0], topo["links"][1]
    a, b = (l0["a"], l0["b"]), (l0["b"], l0["a"])
    before = Sample(10.0, {a: (1000, 10), b: (0, 0), (l1["a"], l1["b"]): (5000, 50)})
    after = Sample(12.0, {a: (5000, 30), b: (200, 2), (l1["a"], l1["b"]): (100, 1)}, {(l1["a"], l1["b"]): "cut"})
    r = rates(topo, before, after)
    assert r["dt"] == 2.0
    assert r["links"] == {str(l0["id"]): [2000.0, 100.0, 10.0, 1.0]}      # l1 went backwards: not listed
    assert r["state"] == {str(l1["id"]): "cut"} and r["max"] == 2000.0
    assert rates(topo, None, after)["links"] == {}


def test_a_switch_that_forwards_less_than_it_gets_shows_the_difference():
    topo = layout.topology(parse_spec("fattree:k=4"))
    before = Sample(0.0, {("h0_0_0", "e0_0"): (0, 0), ("e0_0", "a0_0"): (0, 0), ("a0_0", "c0"): (0, 0)})
    after = Sample(2.0, {("h0_0_0", "e0_0"): (0, 200), ("e0_0", "a0_0"): (0, 200), ("a0_0", "c0"): (0, 120)})
    nodes = rates(topo, before, after)["nodes"]
    assert nodes["e0_0"] == [100.0, 100.0] and nodes["a0_0"] == [100.0, 60.0]      # a0_0 lost 40 pkt/s
    assert nodes["h0_0_0"] == [0.0, 100.0] and nodes["c0"] == [60.0, 0.0] and "e0_1" not in nodes


def test_rates_on_blocks_sum_their_links():
    fabric = parse_spec("fattree:k=24")
    topo = layout.topology(fabric)
    links = [l for l in fabric.links() if l.a.startswith("e0_") and l.b.startswith("h0_")][:3]
    before = Sample(0.0, {(l.b, l.a): (0, 0) for l in links})
    after = Sample(1.0, {(l.b, l.a): (100, 1) for l in links})
    r = rates(topo, before, after)
    (i, v), = r["links"].items()
    bundle = topo["links"][int(i)]
    assert {bundle["a"], bundle["b"]} == {"pod0/edge", "pod0/host"} and sorted(v) == [0, 0, 3, 300]


# -- trees ------------------------------------------------------------------------------------------------
def test_cists_are_spanning_trees_of_drawn_links_and_a_failed_link_is_cut():
    from dcnlab.controller.cist import plan_cists
    fabric = parse_spec("dragonfly:p=1,a=4,h=2")
    plan = plan_cists(fabric)
    topo = layout.topology(fabric)
    got = resolve(cist_trees(plan), topo)["trees"]
    assert len(got) == plan.k >= 2
    for t in got:
        assert len(t["links"]) == 36 - 1 and not t["missing"] and list(t["roles"].values()) == ["root"]
    assert not set(got[0]["links"]) & set(got[1]["links"])            # independent: no shared link
    src = PlanSource(fabric, cist_trees(plan), cut=[("s0_2", "s0_0")])
    (cut_id, state), = src.rates()["state"].items()
    link = topo["links"][int(cut_id)]
    assert {link["a"], link["b"]} == {"s0_0", "s0_2"} and state == "cut"


def test_aggregation_tree_links_cross_bcube_switches_and_mark_aggregators():
    from dcnlab.controller import aggregation as agg
    fabric = parse_spec("bcube:n=4,k=1")
    tree = agg.incast_tree(fabric, "v0", ["v2", "v5", "v9", "v10", "v11", "v14"], "irs")
    (t,) = resolve(aggregation_trees(tree), layout.topology(fabric))["trees"]
    assert not t["missing"] and len(t["links"]) == tree.links
    assert t["roles"]["v0"] == "receiver" and all(t["roles"][a] in ("aggregator", "receiver") for a in tree.aggregators)
    assert any(n.startswith("w") for l in tree.hops for n in l.path)   # hops go through switches, drawn too


def test_multicast_groups_trees_from_the_plan_result():
    from dcnlab.controller.multicast.hierarchy import hierarchy_for
    from dcnlab.controller.multicast.planning import mapping_for, plan
    from dcnlab.controller.multicast.workload import build_pattern, parse_pattern
    h = hierarchy_for(parse_spec("fattree:k=4"))
    wl = build_pattern(h, parse_pattern("random:5:seed=1"), mapping_for(h, 4, False))
    result = plan(h, wl, "cmr4lms-fixed", 4)
    got = resolve(multicast_trees(h, result), layout.topology(h.fabric))["trees"]
    assert len(got) == len(result.groups) == 5
    for g, t in zip(result.groups, got):
        assert not t["missing"] and len(t["links"]) == len(result.tree(g.tree).links)
        members = {h.host_name(x) for x in g.members}
        assert {n for n, r in t["roles"].items() if r == "member"} == members
        assert list(t["roles"].values()).count("root") == 1


def test_a_running_multicast_data_planes_groups_become_trees_and_the_page_hears_of_new_ones():
    from dcnlab.controller.multicast.dataplane import MulticastDataplane
    from dcnlab.controller.multicast.hierarchy import hierarchy_for
    from dcnlab.view.trees import dataplane_trees

    class Nothing:
        def write(self, updates):
            pass
    h = hierarchy_for(parse_spec("fattree:k=4"))
    src = PlanSource(h.fabric)
    assert src.trees()["version"] == src.rates()["trees"] == 0
    for dual in (False, True):
        dp = MulticastDataplane(Nothing(), h, 2, dual=dual)
        dp.add_group(5, ["h0_0_0", "h1_0_0", "h3_0_1"])
        dp.add_group(6, ["h2_0_0", "h2_1_1"])
        src.set_trees(dataplane_trees(dp))
        got = {t["id"]: t for t in src.trees()["trees"]}
        assert set(got) == ({"mc5", "mc6", "mc5b", "mc6b"} if dual else {"mc5", "mc6"})
        index = layout.link_index(src.topology())
        for k, tree in enumerate(dp.group_trees(5)):
            t = got["mc5" + ("b" if k else "")]
            assert t["links"] == sorted(index[frozenset(p)] for p in tree.directed_links(h)) and not t["missing"]
            assert {n for n, r in t["roles"].items() if r == "member"} == {"h0_0_0", "h1_0_0", "h3_0_1"}
            assert t["roles"][tree.root(h)] == "root"
    assert src.rates()["trees"] == src.trees()["version"] == 2        # the page reloads on a new version


def test_trees_on_blocks_count_the_links_each_bundle_carries():
    from dcnlab.controller import aggregation as agg
    fabric = parse_spec("fattree:k=24")
    tree = agg.incast_tree(fabric, "h0_0_0", ["h1_0_0", "h2_3_4", "h5_1_1"], "updown")
    (t,) = resolve(aggregation_trees(tree), layout.topology(fabric))["trees"]
    assert sum(t["bundles"].values()) == tree.links and t["roles"]["pod0/host"] == "receiver"
    assert sum(sum(c.values()) for c in t["members"].values()) == len(aggregation_trees(tree)[0].roles)
    assert t["members"]["pod0/host"] == {"receiver": 1}


def test_bcube_blocks_are_fans_whose_bundles_run_under_no_other_block():
    topo = layout.topology(parse_spec("bcube:n=4,k=5"))
    assert topo["aggregated"]
    pos = {n["id"]: (n["x"], n["y"]) for n in topo["nodes"]}
    labels = {n["id"]: n["label"] for n in topo["nodes"]}
    assert labels["group1/level3"] == "L3" and labels["group1/server"] == "group1" and labels["level5"] == "level5"

    def dist(p, a, b):            # from point p to the segment a-b
        (px, py), (ax, ay), (bx, by) = p, a, b
        t = max(0.0, min(1.0, ((px - ax) * (bx - ax) + (py - ay) * (by - ay)) / ((bx - ax) ** 2 + (by - ay) ** 2)))
        return ((px - ax - t * (bx - ax)) ** 2 + (py - ay - t * (by - ay)) ** 2) ** 0.5
    for l in topo["links"]:
        for n, p in pos.items():
            if n not in (l["a"], l["b"]):
                assert dist(p, pos[l["a"]], pos[l["b"]]) > 20, (l, n)
    assert all(0 <= x <= topo["width"] and 0 <= y <= topo["height"] for x, y in pos.values())


# -- switch read-back -------------------------------------------------------------------------------------
class _Info:
    tables = {"ingress.fwd": None}
    externs = {"counter": {"ingress.hits": None}, "register": {"ingress.r": None}}


class _Cell:
    def __init__(self, i, p, b):
        self.index, self.packets, self.bytes = i, p, b


def test_read_switch_lists_entries_nonzero_cells_and_a_failing_part_says_why():
    out = read_switch("s1", _Info(), lambda t: ["entry a", "entry b"], lambda c: [_Cell(0, 0, 0), _Cell(3, 2, 128)],
                      lambda names: {"ingress.r": [0, 7, 0]})
    assert out["tables"]["ingress.fwd"] == {"count": 2, "entries": ["entry a", "entry b"]}
    assert out["counters"]["ingress.hits"] == {"nonzero": 1, "cells": [[3, 2, 128]]}
    assert out["registers"]["ingress.r"] == {"size": 3, "nonzero": 1, "cells": [[1, 7]]}

    def boom(_):
        raise RuntimeError("UNAVAILABLE")
    out = read_switch("s1", _Info(), boom, boom, boom)
    assert "UNAVAILABLE" in out["tables"]["ingress.fwd"]["error"] and "UNAVAILABLE" in out["registers"]["ingress.r"]["error"]


def test_a_slow_read_back_times_out_and_says_so_while_rates_still_answer():
    release = threading.Event()
    fabric = parse_spec("fattree:k=4")
    src = LiveSource(fabric, "unused", reader=lambda name: release.wait(60) and {}, read_timeout=0.2,
                     take=lambda: Sample(time.monotonic(), {}))
    try:
        assert "timed out after 0.2 s" in src.switch("e0_0")["error"]
        assert "links" in src.rates()
    finally:
        release.set()
        src.close()


# -- server -----------------------------------------------------------------------------------------------
@pytest.fixture
def server():
    with ViewServer(PlanSource(parse_spec("fattree:k=4"))) as s:
        yield s


def _get(url: str, host: str | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _wrong_tokens(token: str) -> tuple[str, ...]:
    """Tokens that differ from ``token`` whatever it is: its last character changed to one it is not (a
    fixed "x" was the token itself for the one token in 64 that ends in "x"), cut short by one, one longer."""
    return token[:-1] + ("y" if token.endswith("x") else "x"), token[:-1], token + "x"


@pytest.mark.parametrize("last", [None, "x"], ids=["random-token", "token-ending-in-x"])
def test_without_the_token_the_server_answers_403(server, last):
    if last is not None:                 # the handler reads server.token on each request
        server.token = server.token[:-1] + last
    base = f"http://127.0.0.1:{server.port}"
    for path in ("/", "/api/topology", "/api/rates", "/api/switch/e0_0", "/static/view.js", "/nothing"):
        assert _get(base + path)[0] == 403, path
        for wrong in _wrong_tokens(server.token):
            assert wrong != server.token and _get(base + path + "?token=" + wrong)[0] == 403, (path, wrong)
    assert _get(server.url)[0] == 200                 # and the token itself is let in
    # the right token through another Host (a page elsewhere, DNS rebinding) gets nothing either
    assert _get(server.url, host=f"evil.example:{server.port}")[0] == 403


def test_with_the_token_page_and_api_answer_and_nothing_writes(server):
    t = f"?token={server.token}"
    base = f"http://127.0.0.1:{server.port}"
    status, page = _get(server.url)
    assert status == 200 and b"view.js" in page and server.token.encode() in page
    topo = json.loads(_get(base + "/api/topology" + t)[1])
    assert len(topo["nodes"]) == 36 and topo["live"] is False
    assert _get(base + "/static/view.js" + t)[0] == 200
    assert json.loads(_get(base + "/api/trees" + t)[1]) == {"trees": [], "version": 0}
    assert _get(base + "/api/switch/nope" + t)[0] == 404
    assert _get(base + "/api/link/e0_0/c0" + t)[0] == 404              # no such link
    assert _get(base + "/api/link/e0_0/a0_0" + t)[0] == 200
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.request("POST", "/api/topology" + t, body=b"{}")
    assert conn.getresponse().status == 501                              # read-only: no other method
    conn.close()


def _listeners(pid: int) -> list[str]:
    out = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True).stdout
    return [line.split()[3] for line in out.splitlines() if f"pid={pid}," in line]


def test_the_server_listens_on_loopback_only():
    before = _listeners(os.getpid())
    with ViewServer(PlanSource(parse_spec("fattree:k=4"))) as s:
        new = sorted(set(_listeners(os.getpid())) - set(before))
        assert new == [f"127.0.0.1:{s.port}"], new
        assert s.url.startswith(f"http://127.0.0.1:{s.port}/?token=")
    assert f"127.0.0.1:{s.port}" not in _listeners(os.getpid())


def test_plan_view_serves_the_plans_trees(monkeypatch, capsys):
    """``dcnlab plan cist ... --view``: the plan printed, then its trees served with the failed link cut."""
    from dcnlab.cli import main
    seen = {}

    def fetch_then_stop():
        url = capsys.readouterr().err.split("view: ", 1)[1].split()[0]
        base, token = url.split("/?token=")
        seen["trees"] = json.loads(_get(f"{base}/api/trees?token={token}")[1])["trees"]
        seen["rates"] = json.loads(_get(f"{base}/api/rates?token={token}")[1])
        raise KeyboardInterrupt
    monkeypatch.setattr(view, "wait", fetch_then_stop)
    assert main(["plan", "cist", "--topo", "dragonfly:p=1,a=4,h=2", "--fail", "s1_0-s2_3", "--view"]) == 130
    assert len(seen["trees"]) >= 2 and all(t["kind"] == "cist" for t in seen["trees"])
    assert list(seen["rates"]["state"].values()) == ["cut"]


def test_view_port_and_network_view_are_checked_in_one_line():
    import dcnlab
    with pytest.raises(dcnlab.UserError, match="view='yes'; valid: True"):
        dcnlab.Network("fattree:k=4", view="yes")
    with pytest.raises(dcnlab.UserError, match="valid: True"):
        dcnlab.Network("fattree:k=4", view=80)


def test_view_of_a_path_that_cannot_be_read_is_one_line(capsys):
    """Found by the hostile campaign: a 300-character name ended in OSError (File name too long)."""
    from dcnlab.cli import main
    assert main(["view", "x" * 300]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot be read (File name too long)" in err and "Traceback" not in err
