"""KMB on labels: its tie rules, networkx's steiner_tree(method="kou") as a quality yardstick, shuffles."""

from __future__ import annotations

import networkx as nx
import numpy as np
from networkx.algorithms.approximation import steiner_tree

from dcnlab.controller.aggregation.labels import LabelSpace
from dcnlab.controller.aggregation.optimal import bcube_hop_graph, solve
from dcnlab.controller.aggregation.steiner import kmb_forest, kmb_reference, kmb_shuffle_costs


def _server_graph(n: int, k: int) -> nx.Graph:
    g = bcube_hop_graph(n, k)
    G = nx.Graph()
    G.add_edges_from(zip(g.tail.tolist(), g.head.tolist()), weight=2)
    return G


def test_label_kmb_matches_networkx_quality():
    rng = np.random.default_rng(11)
    ours, theirs = [], []
    for n, k, m in ((4, 1, 6), (4, 2, 10), (3, 3, 12), (2, 5, 10)):
        space, G = LabelSpace(n, k), _server_graph(n, k)
        for _ in range(5):
            pick = rng.choice(space.N, m + 1, replace=False)
            r, s = int(pick[0]), pick[1:]
            t = steiner_tree(G, pick.tolist(), weight="weight", method="kou")
            theirs.append(2 * (t.number_of_nodes() - 1))
            f = kmb_forest(space, r, s)
            f.validate(np.array([m]))
            ours.append(f.costs()[0])
            opt = solve(bcube_hop_graph(n, k), r, s.tolist()).cost
            assert opt <= ours[-1] <= 2 * opt and opt <= theirs[-1] <= 2 * opt
    assert abs(np.mean(ours) - np.mean(theirs)) <= 0.05 * np.mean(theirs)


def test_reference_tree_is_a_pruned_steiner_tree():
    """Every sender reaches the receiver, every leaf is a sender, paths are one-hop hops."""
    rng = np.random.default_rng(5)
    for n, k, m in ((4, 1, 5), (3, 2, 9), (5, 2, 20), (2, 4, 7)):
        space = LabelSpace(n, k)
        for _ in range(10):
            pick = rng.choice(space.N, m + 1, replace=False)
            r, s = int(pick[0]), sorted(pick[1:].tolist())
            parent = kmb_reference(space, r, np.array(s))
            assert r not in parent
            for child, par in parent.items():
                assert int(space.hamming(child, par)) == 1
            leaves = set(parent) - set(parent.values())
            assert leaves <= set(s)
            for x in s:
                seen = {x}
                while x != r:
                    x = parent[x]
                    assert x not in seen
                    seen.add(x)


def test_paper_example_tie_rule():
    """BCube(4,1), receiver v0, senders v2 v5 v9 v10 v11 v14: Kruskal in (distance, member) order."""
    space = LabelSpace(4, 1)
    parent = kmb_reference(space, 0, np.array([2, 5, 9, 10, 11, 14]))
    # v2 is v0's one-hop neighbour: the receiver's edges come first among equal distances
    assert parent[2] == 0
    assert 2 * len(parent) == kmb_forest(space, 0, np.array([2, 5, 9, 10, 11, 14])).costs()[0]


def test_shuffle_costs_share_the_senders_mst():
    """One Kruskal pass per receiver over the senders' MST + its own edges gives the dense construction."""
    space = LabelSpace(6, 3)
    rng = np.random.default_rng(4)
    pick = rng.choice(space.N, 90, replace=False)
    senders, receivers = pick[:60], pick[60:]
    costs = kmb_shuffle_costs(space, senders, receivers)
    for r, c in zip(receivers.tolist(), costs.tolist()):
        assert c == 2 * len(kmb_reference(space, r, senders))
