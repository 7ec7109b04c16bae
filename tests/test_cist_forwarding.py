"""Per-switch broadcast port tables: flooding them through the fabric's wiring reaches every host once."""

from __future__ import annotations

from collections import Counter, deque

import pytest

from dcnlab.controller.cist import all_broadcast_ports, broadcast_ports, plan_cists, tree_ports
from dcnlab.topos.dragonfly import Dragonfly


def _flood(fabric, table, src_host: int) -> tuple[Counter, int]:
    """Follow the tables from a host's switch; return (copies per host, packets sent between switches)."""
    switch, port = fabric.host_attachment(src_host)
    got: Counter = Counter()
    hops = 0
    queue = deque([(switch, port)])
    while queue:
        sw, in_port = queue.popleft()
        for out in table[sw].get(in_port, ()):
            peer, peer_port = fabric.peer(sw, out)
            if fabric.node(peer).forwards:
                hops += 1
                queue.append((peer, peer_port))
            else:
                got[peer] += 1
        assert hops < 10_000
    return got, hops


@pytest.mark.parametrize("arrangement", ["relative", "absolute", "circulant"])
def test_flood_reaches_every_host_once_per_tree(arrangement):
    fabric = Dragonfly(p=2, a=4, h=2, arrangement=arrangement)
    plan = plan_cists(fabric)
    hosts = [fabric.host_name(i) for i in range(fabric.num_hosts())]
    tables = all_broadcast_ports(plan.graph, plan.trees)
    assert sorted(tables) == [0, 1]
    for src in (0, 17, 71):
        total: Counter = Counter()
        for tree in plan.trees:
            got, hops = _flood(fabric, tables[tree.tree_id], src)
            assert hops == len(plan.graph) - 1  # one copy per tree link
            assert set(got) == set(hosts) - {hosts[src]} and set(got.values()) == {1}
            total.update(got)
        assert set(total.values()) == {plan.k}  # k copies, deduplicated by (source, sequence) at the receiver


def test_table_shape():
    fabric = Dragonfly(p=1, a=4, h=2)
    plan = plan_cists(fabric)
    tree = plan.trees[0]
    table = broadcast_ports(plan.graph, tree)
    ports = tree_ports(plan.graph, tree)
    for name, entry in table.items():
        v = plan.graph.vertex(name)
        assert set(entry) == set(ports[name]) | set(plan.graph.host_ports[v])
        for in_port, outs in entry.items():
            assert in_port not in outs and set(outs) | {in_port} == set(entry)
    # a leaf of tree 0 (router 1 of group 0 is in V_1) has one tree port: it only delivers to its host
    assert len(ports["s0_1"]) == 1 and table["s0_1"] == {0: ports["s0_1"], ports["s0_1"][0]: (0,)}
    no_hosts = broadcast_ports(plan.graph, tree, hosts=False)
    assert all(0 not in entry for entry in no_hosts.values())
    assert sum(len(p) for p in ports.values()) == 2 * (len(plan.graph) - 1)
