"""The independent validator accepts CISTs and rejects every kind of bad input."""

from __future__ import annotations

import networkx as nx
import pytest

from dcnlab.controller.cist import check_cists, check_partition, check_paths, check_trees, plan_cists
from dcnlab.controller.cist.graph import SwitchGraph
from dcnlab.topos.dragonfly import Dragonfly


@pytest.fixture(scope="module")
def d42():
    return plan_cists(Dragonfly(p=1, a=4, h=2))


@pytest.fixture(scope="module")
def d63():
    return plan_cists(Dragonfly(p=0, a=6, h=3, arrangement="absolute"))


def _trees(plan):
    return [list(t.edges) for t in plan.trees]


def test_accepts_constructed(d42, d63):
    for plan in (d42, d63):
        result = check_cists(plan.graph, plan.parts, _trees(plan))
        assert result.ok and result.problems == ()
        assert "internal in at most one tree (Hasunuma)" in result.checks
        assert "B(V_s,V_t) has no tree component" in result.checks


# -- trees ------------------------------------------------------------------------------------------------
def test_rejects_non_spanning(d42):
    trees = _trees(d42)
    trees[1] = trees[1][:-1]  # drop a leaf edge: that leaf is no longer in tree 1
    result = check_trees(d42.graph, trees)
    assert not result.ok and "tree 1 does not span" in result.problems[0]


def test_rejects_cycle_with_right_edge_count(d42):
    """N-1 edges that cover every switch but contain a cycle (so the tree is disconnected)."""
    G = d42.graph.to_networkx()
    trees = _trees(d42)
    T = nx.Graph(trees[0])
    leaf_edge = next(e for e in trees[0] if T.degree(e[1]) == 1 and T.degree(e[0]) > 1)
    hub, leaf = leaf_edge
    # replace a skeleton edge by a chord between two tree switches that closes a cycle
    skeleton = [e for e in trees[0] if T.degree(e[0]) > 1 and T.degree(e[1]) > 1]
    cut = skeleton[-1]
    T.remove_edge(*cut)
    side = nx.node_connected_component(T, cut[0])
    chord = next((u, v) for u, v in G.edges() if u in side and v in side and not T.has_edge(u, v))
    trees[0] = [e for e in trees[0] if e != cut] + [chord]
    result = check_trees(d42.graph, trees)
    assert not result.ok
    assert any("tree 0 is not a spanning tree" in p for p in result.problems), result.problems


def test_rejects_shared_edge(d42):
    trees = _trees(d42)
    shared = trees[1][0]
    trees[0] = trees[0] + [shared]
    result = check_trees(d42.graph, trees)
    assert any("share edge" in p for p in result.problems), result.problems


def test_rejects_vertex_internal_in_two_trees(d42):
    """Re-hang a leaf of tree 0 on another leaf of tree 0 (a V_1 router, internal in tree 1)."""
    trees = _trees(d42)
    T0 = nx.Graph(trees[0])
    # group 0: routers 1 and 2 are leaves of tree 0 (V_0 = {0, 3}); link s0_1-s0_2 is a skeleton edge of tree 1
    assert T0.degree("s0_1") == 1 and T0.degree("s0_2") == 1
    old = next(e for e in trees[0] if "s0_2" in e)
    trees[0] = [e for e in trees[0] if e != old] + [("s0_1", "s0_2")]
    result = check_trees(d42.graph, trees)
    assert any("s0_1 is internal in trees 0 and 1" in p or "s0_1 is internal in trees 1 and 0" in p
               for p in result.problems), result.problems
    # the pairwise definition agrees: some pair's paths now meet
    assert not check_paths(d42.graph, trees).ok


def test_rejects_non_link(d42):
    trees = _trees(d42)
    trees[0] = trees[0][:-1] + [("s0_0", "s5_0")]
    result = check_trees(d42.graph, trees)
    assert any("not a link" in p for p in result.problems)


def test_rejects_duplicate_edge(d42):
    trees = _trees(d42)
    trees[0] = trees[0] + [tuple(reversed(trees[0][0]))]
    assert any("listed twice" in p for p in check_trees(d42.graph, trees).problems)


def test_internal_outside_part(d42):
    """Trees that are fine but do not match the partition (parts swapped)."""
    result = check_cists(d42.graph, d42.parts[::-1], _trees(d42))
    assert any("internal switch(es) outside part" in p for p in result.problems)


def test_problem_list_is_bounded(d63):
    trees = [list(d63.trees[0].edges)] * 3
    result = check_trees(d63.graph, trees)
    assert len(result.problems) == 20 and result.truncated


# -- partitions --------------------------------------------------------------------------------------------
def test_partition_overlap_missing_unknown(d42):
    parts = [list(d42.parts[0]) + ["s0_1"], list(d42.parts[1])]
    assert any("in parts 0 and 1" in p for p in check_partition(d42.graph, parts).problems)
    parts = [list(d42.parts[0]), list(d42.parts[1])[1:]]
    assert any("in no part" in p for p in check_partition(d42.graph, parts).problems)
    parts = [list(d42.parts[0]) + ["nope"], list(d42.parts[1])]
    assert any("not a switch" in p for p in check_partition(d42.graph, parts).problems)
    assert check_partition(d42.graph, []).problems


def test_partition_disconnected_part(d42):
    """Swap the pairs of group 4: routers 1, 2 of group 4 have global links only into the other part."""
    swap = {"s4_0", "s4_3", "s4_1", "s4_2"}
    a = [v for v in d42.parts[0] if v not in swap] + ["s4_1", "s4_2"]
    b = [v for v in d42.parts[1] if v not in swap] + ["s4_0", "s4_3"]
    result = check_partition(d42.graph, [a, b])
    assert any("G[V_0] is disconnected: 2 components" in p for p in result.problems), result.problems


@pytest.mark.parametrize("n,parts", [
    (4, [[0, 1], [2, 3]]),              # path 0-1-2-3: B has one edge and two isolated vertices
    (6, [[0, 1, 2], [3, 4, 5]]),        # cycle C6 (below): B is two single edges (trees)
])
def test_partition_tree_component(n, parts):
    G = nx.path_graph(n) if n == 4 else nx.cycle_graph(n)
    G = nx.relabel_nodes(G, str)
    result = check_partition(G, [[str(v) for v in p] for p in parts])
    assert not result.ok and any("tree component" in p for p in result.problems), result.problems


def test_k4_has_two_cists():
    """K4 with parts {0,1}, {2,3}: B is a 4-cycle; the two trees of Hasunuma's construction are CISTs."""
    G = nx.relabel_nodes(nx.complete_graph(4), str)
    assert check_partition(G, [["0", "1"], ["2", "3"]]).ok
    t1 = [("0", "1"), ("0", "2"), ("1", "3")]
    t2 = [("2", "3"), ("2", "1"), ("3", "0")]
    assert check_cists(G, [["0", "1"], ["2", "3"]], [t1, t2]).ok
    assert check_paths(G, [t1, t2]).ok
    # C4 cannot have two: every 2-partition into connected parts leaves tree components
    C = nx.relabel_nodes(nx.cycle_graph(4), str)
    assert not check_partition(C, [["0", "1"], ["2", "3"]]).ok


def test_validator_matches_definition_on_random_trees():
    """On small random graphs, Hasunuma's condition (check_trees) agrees with the pairwise definition."""
    import random
    rng = random.Random(3)
    agree = 0
    for _ in range(60):
        G = nx.relabel_nodes(nx.gnp_random_graph(7, 0.8, seed=rng.randrange(10**6)), str)
        if not nx.is_connected(G):
            continue
        trees = []
        for _ in range(2):
            H = G.copy()
            for u, v in H.edges():
                H[u][v]["weight"] = rng.random()
            trees.append(list(nx.minimum_spanning_tree(H).edges()))
        assert check_trees(G, trees).ok == check_paths(G, trees).ok
        agree += 1
    assert agree > 30


def test_switch_graph_from_fabric():
    f = Dragonfly(p=2, a=4, h=2)
    g = SwitchGraph.from_fabric(f)
    assert len(g) == 36 and g.num_edges() == 9 * 6 + 36
    assert g.host_ports[g.vertex("s3_1")] == (0, 1)
    u, v = g.vertex("s0_0"), g.vertex("s0_3")
    assert f.peer("s0_0", g.port[(u, v)]) == ("s0_3", g.port[(v, u)])
    with pytest.raises(KeyError, match="no switch named"):
        g.vertex("h0_0_0")
