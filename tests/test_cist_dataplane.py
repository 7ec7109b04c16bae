"""CIST broadcast state for the P4 program: compiled entities, simulated packet by packet, and its installer."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Mapping

import pytest
from fake_switches import FakeSwitches

from dcnlab.controller.cist import plan_cists, single_tree
from dcnlab.controller.cist.dataplane import (BASELINE_TREE, GROUP_BANK, GROUP_BASE, BroadcastDataplane, compile_broadcast,
                                       replace_rounds, tree_ids)
from dcnlab.controller.cist.trees import build_trees
from dcnlab.controller.replication import HOST_PORT_TABLE, KIND_BROADCAST, REPLICATE_TABLE, SwitchReplication
from dcnlab.controller.runtime.entities import MulticastGroup, TableEntry, UpdateType
from dcnlab.topos.dragonfly import Dragonfly


class Switches:
    """Entities per switch with the data plane's semantics: replicate by (in port, kind, tree) through PRE
    groups, rewrite at host ports. Independent of the compiler under test."""

    def __init__(self, state: Mapping[str, Mapping[tuple, object]]) -> None:
        self.state = state

    def forward(self, switch: str, in_port: int, kind: int, tree: int) -> list[tuple[int, tuple | None]]:
        ents = self.state[switch]
        match = tuple(sorted({"std.ingress_port": in_port, "hdr.tree.kind": kind, "hdr.tree.tree": tree}.items()))
        entry = ents.get(("table", REPLICATE_TABLE, match, 0, False))
        if entry is None:
            return []   # default action: drop
        assert isinstance(entry, TableEntry)
        group = ents[("mcast", dict(entry.params)["mcast_grp"])]
        assert isinstance(group, MulticastGroup)
        out = []
        for port, _ in group.replicas:
            hp = ents.get(("table", HOST_PORT_TABLE, (("std.egress_port", port),), 0, False))
            out.append((port, tuple(sorted(dict(hp.params).items())) if isinstance(hp, TableEntry) else None))
        return out


def flood(fabric, switches: Switches, src_host: int, tree: int) -> tuple[Counter, int]:
    """(copies per receiving host, packets between switches) for one broadcast from ``src_host`` on ``tree``."""
    sw, port = fabric.host_attachment(src_host)
    queue = deque([(sw, port)])
    got: Counter = Counter()
    hops = 0
    while queue:
        sw, in_port = queue.popleft()
        for out, rewrite in switches.forward(sw, in_port, KIND_BROADCAST, tree):
            peer, peer_port = fabric.peer(sw, out)
            if fabric.node(peer).forwards:
                assert rewrite is None
                hops += 1
                queue.append((peer, peer_port))
            else:
                info = next(h for h in fabric.hosts() if h.name == peer)
                assert rewrite == (("ip", info.ip), ("mac", info.mac)), "copy to a host keeps foreign addresses"
                got[peer] += 1
        assert hops < 100_000
    return got, hops


def as_state(reps: Mapping[str, SwitchReplication]) -> dict[str, dict[tuple, object]]:
    return {sw: {e.key(): e for e in [*r.groups, *r.entries, *r.host_ports]} for sw, r in reps.items()}


@pytest.mark.parametrize("spec", [dict(p=1, a=4, h=2), dict(p=2, a=4, h=2, arrangement="absolute"),
                                  dict(p=1, a=5, h=2, arrangement="circulant")])
def test_compiled_state_floods_every_tree_to_every_host_once(spec):
    fabric = Dragonfly(**spec)
    plan = plan_cists(fabric)
    trees = {t.tree_id: t for t in plan.trees} | {BASELINE_TREE: single_tree(plan.graph)}
    reps = compile_broadcast(fabric, plan.graph, trees)
    switches = Switches(as_state(reps))
    hosts = {h.name for h in fabric.hosts()}
    for src in range(0, fabric.num_hosts(), 7):
        me = fabric.host_name(src)
        for tid in trees:
            got, hops = flood(fabric, switches, src, tid)
            assert hops == len(plan.graph) - 1                 # one copy per tree link, no loops
            assert set(got) == hosts - {me} and set(got.values()) == {1}
        assert switches.forward(fabric.host_attachment(src)[0], 0, KIND_BROADCAST, 7) == []  # no such tree
        assert switches.forward(fabric.host_attachment(src)[0], 0, 1, 0) == []   # multicast kind: not ours


def test_entities_and_group_ids():
    fabric = Dragonfly(p=1, a=4, h=2)
    plan = plan_cists(fabric)
    reps = compile_broadcast(fabric, plan.graph, plan.trees)
    for sw, rep in reps.items():
        v = plan.graph.vertex(sw)
        degree_on = [sum(sw in e for e in t.edges) for t in plan.trees]
        # one entry per (in port, tree): the switch's tree ports plus its host port, for every tree
        assert len(rep.entries) == sum(d + 1 for d in degree_on)
        assert len(rep.host_ports) == 1 and dict(rep.host_ports[0].match) == {"std.egress_port": 0}
        ids = [g.mgid for g in rep.groups]
        assert ids == list(range(GROUP_BASE, GROUP_BASE + len(ids)))
        assert len({frozenset(p for p, _ in g.replicas) for g in rep.groups}) == len(ids)  # shared per port set
        for e in rep.entries:
            m = dict(e.match)
            assert m["hdr.tree.kind"] == KIND_BROADCAST and m["hdr.tree.tree"] in (0, 1)
            g = next(g for g in rep.groups if g.mgid == dict(e.params)["mcast_grp"])
            assert m["std.ingress_port"] not in {p for p, _ in g.replicas}
        assert plan.graph.host_ports[v] == (0,)


def test_tree_ids_are_checked():
    plan = plan_cists(Dragonfly(p=1, a=4, h=2))
    t0 = plan.trees[0]
    assert sorted(tree_ids(plan.trees)) == [0, 1]
    assert sorted(tree_ids({5: t0, BASELINE_TREE: t0})) == [5, 255]
    with pytest.raises(ValueError, match="0..255"):
        tree_ids({256: t0})
    with pytest.raises(ValueError, match="given twice"):
        tree_ids([t0, t0])


def test_install_replace_remove():
    fabric = Dragonfly(p=1, a=6, h=2)
    plan = plan_cists(fabric)
    alg3 = build_trees(plan.partition, plan.graph, "algorithm3")
    assert [t.edges for t in alg3] != [t.edges for t in plan.trees]
    fake = FakeSwitches()
    dp = BroadcastDataplane(fake, fabric, plan.graph)
    stats = dp.install(plan.trees)
    assert (stats.trees, stats.switches, len(fake.writes)) == ((0, 1, 2), len(plan.graph), 1)
    assert fake.state == as_state(compile_broadcast(fabric, plan.graph, plan.trees, GROUP_BASE))
    with pytest.raises(RuntimeError, match="already installed"):
        dp.install(plan.trees)

    new = {t.tree_id: t for t in alg3[:2]} | {BASELINE_TREE: single_tree(plan.graph)}   # tree 2 goes away
    stats = dp.replace(new)
    assert len(fake.writes) == 4 and stats.trees == (0, 1, BASELINE_TREE)
    assert fake.state == as_state(compile_broadcast(fabric, plan.graph, new, GROUP_BASE + GROUP_BANK))
    switches = Switches(fake.state)
    for tid in new:
        got, _ = flood(fabric, switches, 3, tid)
        assert set(got.values()) == {1} and len(got) == fabric.num_hosts() - 1
    assert flood(fabric, switches, 3, 2)[0] == Counter()

    dp.replace(plan.trees)                                      # back to bank 0
    assert fake.state == as_state(compile_broadcast(fabric, plan.graph, plan.trees, GROUP_BASE))
    dp.remove()
    assert all(not ents for ents in fake.state.values()) and not dp.installed


def test_replace_rounds_refuse_shared_groups():
    fabric = Dragonfly(p=1, a=4, h=2)
    plan = plan_cists(fabric)
    a = compile_broadcast(fabric, plan.graph, plan.trees)
    with pytest.raises(ValueError, match="share PRE group ids"):
        replace_rounds(a, a)
    rounds = replace_rounds(a, compile_broadcast(fabric, plan.graph, plan.trees, GROUP_BASE + GROUP_BANK))
    kinds = [{u.type for ups in r.values() for u in ups} for r in rounds]
    # same trees in the other bank: insert groups, modify every entry, delete old groups
    assert kinds == [{UpdateType.INSERT}, {UpdateType.MODIFY}, {UpdateType.DELETE}]
