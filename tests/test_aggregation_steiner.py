"""KMB on labels against networkx's steiner_tree(method="kou") on the server graph."""

from __future__ import annotations

import networkx as nx
import numpy as np
from networkx.algorithms.approximation import steiner_tree

from controller.aggregation.labels import LabelSpace
from controller.aggregation.optimal import bcube_hop_graph, solve
from controller.aggregation.steiner import ShuffleKMB, kmb_forest


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
        for _ in range(8):
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


def test_shuffle_kmb_reuses_the_senders_mst():
    space = LabelSpace(6, 3)
    rng = np.random.default_rng(4)
    pick = rng.choice(space.N, 90, replace=False)
    senders, receivers = pick[:60], pick[60:]
    kmb = ShuffleKMB(space, senders)
    for r in receivers[:10]:
        cost, _ = kmb.cost(int(r))
        f = kmb.forest(int(r))
        f.validate(np.array([60]))
        assert cost == f.costs()[0]
        # same quality as the dense construction (the MST weight is the same; ties may differ)
        assert abs(cost - kmb_forest(space, int(r), senders).costs()[0]) <= 0.1 * cost
