"""Switch-centric aggregation on the fat-tree (which the papers leave to future work: Guo et al., §2.1;
Fang et al., §4.1): trees, costs, optimum, port plans."""

from __future__ import annotations

import numpy as np
import pytest

from dcnlab.controller.aggregation import incast_tree, shuffle_plan
from dcnlab.topos.spec import parse_spec

FT = parse_spec("fattree:k=4")
HOSTS = [h.name for h in FT.hosts()]


def _instances(count: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        m = int(rng.integers(1, 10))
        pick = rng.choice(len(HOSTS), m + 1, replace=False)
        yield HOSTS[pick[0]], [HOSTS[i] for i in pick[1:]]


def test_trees_follow_the_fabric_and_updown_is_optimal():
    for receiver, senders in _instances(12, 1):
        trees = {a: incast_tree(FT, receiver, senders, a) for a in ("updown", "unicast", "kmb", "optimal")}
        for t in trees.values():
            t.check_fabric(FT)
            assert all(FT.node(v).role.value == "switch" for v in t.aggregators)
            # switch-level links: every hop one link; at delta = 0 a tree of V nodes costs V - 1
            assert t.cost == len(t.nodes) - 1 == len(t.hops)
        assert trees["updown"].cost == trees["optimal"].cost
        assert trees["optimal"].cost <= min(trees["unicast"].cost, trees["kmb"].cost)


def test_hosts_never_relay_and_delta_one_is_no_aggregation():
    receiver, senders = "h0_0_0", ["h0_0_1", "h1_0_0", "h2_1_1", "h3_0_1"]
    for algo in ("updown", "unicast", "kmb"):
        t = incast_tree(FT, receiver, senders, algo, delta=1.0)
        relays = {h.parent for h in t.hops} - {receiver}
        assert all(not v.startswith("h") for v in relays)
    # at delta = 1 every flow is carried whole: cost = sum of up/down path lengths (2, 6, 6, 6 links)
    assert incast_tree(FT, receiver, senders, "unicast", 1.0).cost == 2 + 6 + 6 + 6
    opt = incast_tree(FT, receiver, senders, "optimal", 0.5)
    assert opt.cost <= incast_tree(FT, receiver, senders, "updown", 0.5).cost + 1e-6


def test_port_plan_for_the_data_plane():
    t = incast_tree(FT, "h0_0_0", ["h0_0_1", "h1_0_0", "h1_1_0"], "updown")
    plan = t.port_plan(FT)
    assert plan["h0_0_0"].role == "receiver"
    assert plan["e0_0"].role == "aggregate" and plan["e0_0"].expected == 2
    assert plan["e0_0"].out_ports == (0,)            # edge port 0 is host h0_0_0
    agg = [p for p in plan.values() if p.node.startswith("a1_")]
    assert len(agg) == 1 and agg[0].expected == 2     # both pod-1 flows meet at one aggregation switch
    for p in plan.values():
        for port in p.out_ports:
            assert FT.peer(p.node, port) is not None


def test_fattree_shuffle_and_errors():
    plan = shuffle_plan(FT, ["h0_0_0", "h2_0_0"], ["h1_0_0", "h3_1_1", "h0_1_0"], "updown")
    assert plan.cost == sum(t.cost for t in plan.trees.values())
    with pytest.raises(Exception, match="is not a host"):
        incast_tree(FT, "h0_0_0", ["v1"], "updown")
    with pytest.raises(Exception, match="does not apply to fattree"):
        incast_tree(FT, "h0_0_0", ["h1_0_0"], "irs")
