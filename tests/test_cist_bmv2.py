"""CIST broadcast on BMv2 (marker ``bmv2``; root, p4c and BMv2): ``reproduce cist``'s
experiment (broadcast over the CISTs of Dragonfly CISTs (Bian et al.) under failures) as assertions, short."""

from __future__ import annotations

import json
import time

import pytest

import netcheck

from dcnlab.controller.cist import plan_cists
from dcnlab.controller.cist.dataplane import BASELINE_TREE, BroadcastDataplane
from dcnlab.controller.cist.trees import build_trees
from dcnlab.emu.cleanup import leftovers
from dcnlab.emu.network import FabricNetwork, NetOptions
from dcnlab.reproduce.cist import bmv2 as exp
from dcnlab.topos.dragonfly import Dragonfly
from dcnlab.traffic import cist_agent as ca
from dcnlab.traffic.hostctl import call_all
from waiting import wait_until

pytestmark = pytest.mark.bmv2


@pytest.fixture(autouse=True)
def isolated_runs(tmp_path, monkeypatch):
    """Each test gets its own run root; afterwards none of its runs may have left anything (killed and
    restarted switches included)."""
    root = tmp_path / "runs"
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(root))
    links = netcheck.root_interfaces()
    yield
    if root.is_dir():
        assert leftovers(root) == []
    netcheck.assert_none_left(links)


# 12 of the 36 hosts send (every host receives): the fabric's 2 cores are shared, and a broadcast costs
# 3 trees x ~106 BMv2 pipeline runs; 12 broadcasts/s keep every queue short (measured: 36/s lose copies).
SHORT = exp.EmuConfig("dragonfly:p=1,a=4,h=2", rate_pps=1.0, during=4, inject_at=1.0, after=1, sources=12,
                      restored_check=False)


def test_broadcast_survives_k_minus_1_failures_and_matches_the_model(tmp_path):
    result = exp.run_experiment(SHORT)
    node = {h.name: h.node for h in Dragonfly(p=1, a=4, h=2).hosts()}
    k, pairs_all = result.k, 12 * 35
    assert (k, result.switches, result.hosts) == (2, 36, 36)
    assert result.checks() == {"exactly_once": True, "survives_k_minus_1": True, "agrees_with_model": True}, \
        "\n".join(result.summary_lines())
    names = [p.name for p in result.phases]
    assert names == ["none", "switch f=1", "switch f=2", "link f=1", "link f=2"]
    none = result.phases[0]
    per_pair = SHORT.during + SHORT.after
    # exactly once after dedup; every tree brought one copy of every broadcast, so k-1 duplicates each
    assert none.cist.pairs == pairs_all and none.cist.exact and none.single.exact
    assert none.cist.dups == pairs_all * per_pair * (k - 1) and none.single.dups == 0
    for p in result.phases:
        assert p.cist.extra == 0 and p.single.extra == 0            # no loops, no double replication
        assert p.cist.after_partial == 0 and p.single.after_partial == 0
        if p.f:
            # in place while the last broadcasts of the window are still being sent (senders are staggered
            # over one period)
            assert p.injected_at is not None and p.injected_at < (SHORT.during + 1) / SHORT.rate_pps
        if p.kind == "switch":
            senders = len([h for h in result.senders if node[h] not in p.failures])
            assert p.counted_hosts == 36 - p.f and p.cist.pairs == senders * (35 - p.f)
        if p.f == 1:   # one tree cut for the adversary's pair, failures injected mid-traffic: nothing lost
            assert p.cist.during_lost == 0 and p.cist.after_delivered == p.cist.pairs
        if p.f == 2:   # k failures: the adversary's pair is cut on both trees; loss = the model's, pair by pair
            assert p.cist.after_delivered == p.cist.model_delivered < p.cist.pairs
            assert p.cist.during_lost > 0
        assert p.single.after_delivered == p.single.model_delivered
    png, js = exp.write_outputs(result, tmp_path)
    assert png.stat().st_size > 10_000
    data = json.loads(js.read_text())
    assert data["ok"] is True and [p["name"] for p in data["phases"]] == names


def _broadcast(net, fabric, src: int, streams, count: int, mode: str = "copies", size: int = 200,
               delivered: bool = True) -> dict:
    """Every other host's record of ``src``'s broadcast. ``delivered``: the test expects every message at every
    host, so the records are taken once they are all there (a hang guard, not a fixed wait); otherwise
    (nothing may arrive) after half a second, which a busy machine can only make a weaker check."""
    hosts = list(net.agents)
    handles = [net.agent(h) for h in hosts]
    call_all(handles, [{"cmd": "cist.recv_start"}] * len(handles))
    h = fabric.host(src)
    a = net.agent(h.name)
    a.call(ca.send_request(a.host.iface, ca.broadcast_frame(h.mac, h.ip, size), streams, count, rate_pps=50,
                           mode=mode))
    expect = [[h.ip, f, count] for f, _ in streams]
    others = [x for name, x in zip(hosts, handles) if name != h.name]

    def all_there() -> bool:     # every message delivered; in copies mode, every tree's copy of it too
        reps = call_all(others, [{"cmd": "cist.recv_peek", "expect": expect}] * len(others))
        recs = [(rep["sources"].get(h.ip, {}).get(str(f), {}), trees) for rep in reps for f, trees in streams]
        return all(r.get("delivered", 0) >= count and (mode != "copies" or sum(r.get("per_tree", {}).values())
                                                        >= count * len(trees)) for r, trees in recs)

    if delivered:
        wait_until(all_there, f"{count} message(s) of each stream from {h.name} at every host")
    else:
        time.sleep(0.5)
    reps = call_all(handles, [{"cmd": "cist.recv_stop", "expect": expect}] * len(handles))
    return {name: rep["sources"].get(h.ip, {}) for name, rep in zip(hosts, reps) if name != h.name}


def test_replace_trees_striping_and_removal_on_a_live_fabric():
    fabric = Dragonfly(p=1, a=4, h=2)
    plan = plan_cists(fabric)
    alg3 = build_trees(plan.partition, plan.graph, "algorithm3")
    with FabricNetwork(fabric, NetOptions(routes=False)) as net:
        dp = BroadcastDataplane(net.controller, fabric, plan.graph)
        dp.install(plan.trees)
        # striping with parity over both trees, with a link of tree 0 down: every stripe rebuilt, none lost
        down = [plan.trees[0].edges[0]]
        exp.set_links(net, plan.graph, down, up=False)
        got = _broadcast(net, fabric, 5, [(9, [0, 1])], 10, mode="stripe")
        exp.set_links(net, plan.graph, down, up=True)
        assert all(r["9"]["delivered"] == 10 and r["9"]["missing"] == 0 and r["9"]["corrupt"] == 0
                   for r in got.values())
        assert sum(r["9"]["recovered"] > 0 for r in got.values()) > 0   # some hosts needed the parity

        # swap in the Algorithm-3 trees (make-before-break) plus the baseline: one copy per tree everywhere
        stats = dp.replace({t.tree_id: t for t in alg3} | {BASELINE_TREE: plan.trees[0]})
        assert stats.trees == (0, 1, BASELINE_TREE)
        got = _broadcast(net, fabric, 20, [(1, [0, 1, BASELINE_TREE])], 5)
        assert len(got) == 35
        assert all(r["1"]["delivered"] == 5 and r["1"]["per_tree"] == {"0": 5, "1": 5, "255": 5}
                   for r in got.values())

        dp.remove()   # tree packets now miss tree_replicate and are dropped
        got = _broadcast(net, fabric, 20, [(1, [0, 1])], 3, delivered=False)
        assert all(r["1"]["delivered"] == 0 and r["1"]["missing"] == 3 for r in got.values())
        assert all(not net.controller.read_table(sw, "DcnIngress.mcast.tree_replicate") for sw in ("s0_0", "s8_3"))
