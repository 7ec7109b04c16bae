"""Multicast level model, spanning trees (Theorem 1) and the MGID mapping, against independent oracles.

The oracle helpers here (tree tracing through ``fabric.peer`` and the invariant checker) are shared by
the other ``test_multicast_*`` files.
"""

from __future__ import annotations

import itertools

import networkx as nx
import pytest

from dcnlab.controller.multicast.hierarchy import hierarchy_for
from dcnlab.controller.multicast.mapping import SptMapping, dual_mappings
from dcnlab.controller.multicast.spanning import spanning_trees, spt_links
from dcnlab.controller.multicast.tree import TreeRecord, port_tables
from dcnlab.topos import parse_spec
from dcnlab.topos.errors import UserError

SMALL_MID = "midplane:q=2,m=2,p=2,k=2,w=2,cns=4,terminals=2"
SPECS = [SMALL_MID, "midplane:q=3,m=2,p=1,k=3,w=2,cns=5,terminals=1", "midplane:q=2,m=4,p=3,k=4,w=2,cns=8,terminals=2",
         "fattree:k=4", "fattree:k=6"]


# -- oracles ------------------------------------------------------------------------------
def up_chain(f, host: str, tnid: int, x: int) -> list[str]:
    """Nodes from ``host`` up to the top of the spanning tree (tnid, x), by walking ``fabric.peer`` with the
    port plan of topos/midplane.py and topos/fattree.py (not the code under test)."""
    node, _ = f.peer(host, 0)
    chain = [host, node]
    if f.kind == "midplane":
        g, u = divmod(tnid, f.p)
        ports = {"l0": f.terminals + g, "l1": f.q + u, "l2": f.w + x}
    else:
        g, u = divmod(tnid, f.half)
        ports = {"e": f.half + g, "a": f.half + u}
    while True:
        kind = node[:2] if f.kind == "midplane" else node[0]
        if kind not in ports:
            return chain
        node, _ = f.peer(node, ports[kind])
        chain.append(node)


def oracle_links(f, hosts: list[str], tnid: int, x: int) -> set[tuple[str, str]]:
    """(parent, child) links of the union of the members' up-paths, cut at their lowest common node."""
    chains = [up_chain(f, hname, tnid, x) for hname in hosts]
    common = set(chains[0][1:]).intersection(*(set(c[1:]) for c in chains[1:]))
    links = set()
    for c in chains:
        for child, parent in zip(c, c[1:]):
            links.add((parent, child))
            if parent in common:
                break
    return links


def check_invariants(h, planner, colors: int) -> list[TreeRecord]:
    """The invariants on a planner's state: same-color trees share no link, every member is on its group's
    tree, each tree is the union of its members' up-paths to its root, and at most C entries per port."""
    f = h.fabric
    trees = planner.trees()
    by_id = {(t.plane, t.tid): t for t in trees}
    seen: dict[tuple[int, int, int], int] = {}
    for t in trees:
        assert 0 <= t.color < colors
        for lk in t.links:
            key = (t.plane, lk, t.color)
            assert key not in seen, f"trees {seen[key]} and {t.tid} share link {h.link_ends(lk)} in color {t.color}"
            seen[key] = t.tid
        links = set(t.directed_links(h))
        g = nx.DiGraph(list(links))
        assert nx.is_arborescence(g), f"tree {t.tid} is not a rooted tree"
        root = next(n for n, d in g.in_degree() if d == 0)
        if g.number_of_nodes() > 2 or t.level > 0:
            assert root == t.root(h)
        members = [h.host_name(x) for x in range(h.num_hosts) if x in t.links]
        assert links == oracle_links(f, members, t.tnid, t.x)
    groups = planner.groups()
    for mgid, members in groups.items():
        t = by_id[(getattr(planner, "plane", 0), planner.tree_id(mgid))]
        assert mgid in t.groups
        assert set(members) <= {lk for lk in t.links if lk < h.num_hosts}
    per_port: dict[tuple[str, int], set[int]] = {}
    for sw, tab in port_tables(h, trees).items():
        for (port, color), out in tab.items():
            per_port.setdefault((sw, port), set()).add(color)
            assert port not in out
    assert all(len(cs) <= colors for cs in per_port.values())
    return trees


# -- level model ------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", SPECS)
def test_link_ids_match_fabric_wiring(spec):
    f = parse_spec(spec)
    h = hierarchy_for(f)
    assert h.num_links == f.num_links()
    ends = {(a, ap, b, bp) for a, ap, b, bp in (h.link_ends(lk) for lk in range(h.num_links))}
    wired = {(l.a, l.a_port, l.b, l.b_port) for l in f.links()} | {(l.b, l.b_port, l.a, l.a_port) for l in f.links()}
    assert ends <= wired and len(ends) == h.num_links
    for node in f.forwarding_nodes():
        for port, lk in h.port_links(node.name):
            up, upp, down, downp = h.link_ends(lk)
            assert (node.name, port) in ((up, upp), (down, downp))
            assert f.peer(node.name, port) in ((up, upp), (down, downp))
    for x in range(h.num_hosts):
        assert h.host_index(f.host_name(x)) == x
        assert h.link_ends(x)[2] == f.host_name(x)


@pytest.mark.parametrize("spec", SPECS)
def test_uplinks_follow_the_port_plan(spec):
    f = parse_spec(spec)
    h = hierarchy_for(f)
    for tnid, x in itertools.product(range(h.num_tns), range(h.w)):
        for host in range(0, h.num_hosts, max(1, h.num_hosts // 7)):
            chain = up_chain(f, f.host_name(host), tnid, x)
            for lv in range(h.top):
                up, _, down, _ = h.link_ends(h.uplink(lv, h.key(lv, host) if lv else host // h.t, tnid, x))
                assert (down, up) == (chain[lv + 1], chain[lv + 2])
            assert chain[-1] == h.node_name(h.top, 0, tnid, x)


def test_unknown_member_and_fabric_errors():
    h = hierarchy_for(parse_spec(SMALL_MID))
    with pytest.raises(UserError, match="unknown member 'h9_0_0'"):
        h.host_index("h9_0_0")
    with pytest.raises(UserError, match="is a switch"):
        h.host_index("l0_0_0")
    with pytest.raises(UserError, match="not a fat-tree"):
        hierarchy_for(parse_spec("bcube:n=4,k=1"))


# -- Theorem 1 and the mapping ------------------------------------------------------------------
@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("colors", [1, 3])
def test_theorem1_conflict_free_spanning_trees(spec, colors):
    h = hierarchy_for(parse_spec(spec))
    mapping = SptMapping(colors, h.m, h.p)
    spts = spanning_trees(h, mapping)
    assert len(spts) == colors * h.m                      # Corollary 1
    assert len({(s.color, s.tnid) for s in spts}) == len(spts)
    inside_cn = set(range(h.link_base[1], h.link_base[2]))  # L0-L1 links
    for color in range(colors):
        same = [s for s in spts if s.color == color]
        assert len(same) == h.m
        for a, b in itertools.combinations(same, 2):
            assert not a.links & b.links
        # maximality: the m trees of a color use every link inside the CNs
        assert set().union(*(s.links for s in same)) >= inside_cn
        # every tree reaches every L0 switch
        for s in same:
            assert len(s.links & inside_cn) == h.num_hosts // h.t


@pytest.mark.parametrize("spec", SPECS)
def test_spanning_tree_identity_is_color_and_tn(spec):
    """Another TN of the same TN group still shares the L0-L1 links (the paper's 'same tree')."""
    h = hierarchy_for(parse_spec(spec))
    if h.p > 1:
        assert spt_links(h, 0) & spt_links(h, 1)
    if h.m > 1:
        assert not spt_links(h, 0) & spt_links(h, h.p)


def test_mapping_formulas():
    m = SptMapping(32, 16, 6)
    assert m.num_spts == 512
    for mgid in range(0, 3000, 7):
        color, tnid = m.color_tnid(mgid)
        s = mgid % 512
        assert (color, tnid) == (s // 16, (s % 16) * 6 + color % 6)
        assert m.color_tnid(mgid + 512) == (color, tnid)
    for color, idx, rnd in itertools.product(range(32), range(16), range(3)):
        assert m.color_group(m.mgid_for(color, idx, rnd)) == (color, idx)
    a, b = dual_mappings(32, 16, 6)
    assert a.num_spts == b.num_spts == 256
    for mgid in range(600):
        (ca, ta), (cb, tb) = a.color_tnid(mgid), b.color_tnid(mgid)
        assert ca == cb and ta // 6 < 8 <= tb // 6 and tb // 6 - ta // 6 == 8
    with pytest.raises(UserError, match="m >= 2"):
        SptMapping(4, 1, 2, 0)
    with pytest.raises(UserError, match="colors"):
        SptMapping(0, 4, 2)
