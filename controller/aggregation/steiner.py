"""Steiner-tree baseline: Kou-Markowsky-Berman (KMB), as 003 §5.1 describes its "Steiner-based" tree.

KMB: (1) the complete graph on the members (receiver and senders) weighted by shortest-path
distance; (2) its minimum spanning tree; (3) every MST edge replaced by a shortest path; (4) a
minimum spanning tree of that union; (5) non-member leaves pruned. Its ratio is 2(1 - 1/l).

* On **fat-trees** (and for cross-checks on small BCubes) this is networkx's
  ``steiner_tree(G, members, method="kou")`` on the hop graph, oriented towards the receiver.
* On **BCube** the same five steps run on labels: the distance between two servers is their Hamming
  distance (times 2 links), so step (1) needs no graph search; the MST is scipy's; a shortest path
  corrects the differing digits highest first (BCubeRouting's order); every hop has the same weight,
  so any spanning tree is minimal in step (4) and a breadth-first tree from the receiver is used.
  networkx would run one Dijkstra per member over all 262,144 servers of BCube(8,5): the very cost
  003 holds against Steiner heuristics. ``tests/test_aggregation_steiner.py`` checks both give trees
  of the same quality on small BCubes (ties among equal paths may differ).
* For a **shuffle**, the members' MST is the senders' MST plus one vertex: the MST of
  ``senders + {receiver}`` is the MST of (the senders' MST edges + the receiver's edges to every
  sender), a sparse graph of 2m edges per receiver instead of a dense one of m^2.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_array
from scipy.sparse.csgraph import breadth_first_order, minimum_spanning_tree

from controller.aggregation.forest import Forest, ForestBuilder, run_starts
from controller.aggregation.labels import LabelSpace


def _expand(space: LabelSpace, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hops (u, v) of the highest-digit-first shortest paths from every a[i] to b[i]."""
    us, vs = [], []
    cur = a.copy()
    for d in range(space.K - 1, -1, -1):
        dc, db = space.digit(cur, d), space.digit(b, d)
        move = dc != db
        nxt = cur + (db - dc) * space.pow[d]
        us.append(cur[move])
        vs.append(nxt[move])
        cur = np.where(move, nxt, cur)
    return np.concatenate(us), np.concatenate(vs)


def _mst_edges(weights: coo_array | np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    mst = minimum_spanning_tree(weights).tocoo()
    if mst.nnz != size - 1:
        raise RuntimeError("KMB: the member graph is not connected")
    return mst.row.astype(np.int64), mst.col.astype(np.int64)


def _tree_from_edges(space: LabelSpace, terminals: np.ndarray, u: np.ndarray, v: np.ndarray,
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Steps (4)-(5): spanning tree of the union of hops, rooted at 0, non-terminal leaves pruned.

    Returns (nodes, parent index per node; -1 for the root), nodes[0] == 0."""
    nodes = np.unique(np.concatenate([[0], terminals, u, v]))
    iu, iv = np.searchsorted(nodes, u), np.searchsorted(nodes, v)
    V = nodes.shape[0]
    graph = coo_array((np.ones(iu.shape[0]), (iu, iv)), shape=(V, V)).tocsr()
    order, pred = breadth_first_order(graph, 0, directed=False, return_predecessors=True)
    if order.shape[0] != V:
        raise RuntimeError("KMB: the expanded paths are not connected")
    parent = np.where(pred < 0, -1, pred).astype(np.int64)
    keep = np.ones(V, dtype=bool)
    is_term = np.isin(nodes, terminals)
    is_term[0] = True
    children = np.bincount(parent[parent >= 0], minlength=V)
    leaves = [i for i in range(V) if children[i] == 0 and not is_term[i]]
    while leaves:
        i = leaves.pop()
        keep[i] = False
        p = parent[i]
        children[p] -= 1
        if children[p] == 0 and not is_term[p]:
            leaves.append(p)
    index = np.cumsum(keep) - 1
    new_parent = np.where(parent[keep] >= 0, index[np.maximum(parent[keep], 0)], -1)
    return nodes[keep], new_parent


def kmb_forest(space: LabelSpace, receiver: int, senders: np.ndarray) -> Forest:
    """The KMB tree of one incast, on labels (see the module doc)."""
    rel = space.relabel(np.asarray(senders, dtype=np.int64), receiver)
    terms = np.concatenate([[0], rel])
    ham = space.hamming(terms[:, None], terms[None, :]).astype(np.float64)
    ra, rb = _mst_edges(ham, terms.shape[0])
    u, v = _expand(space, terms[ra], terms[rb])
    nodes, parent = _tree_from_edges(space, rel, u, v)
    return _forest(space, receiver, rel, nodes, parent)


def _forest(space: LabelSpace, receiver: int, rel: np.ndarray, nodes: np.ndarray, parent: np.ndarray) -> Forest:
    fb = ForestBuilder(space, np.array([receiver], dtype=np.int64))
    rows = fb.add(nodes[1:], np.zeros(nodes.shape[0] - 1, np.int64), np.isin(nodes[1:], rel))
    all_rows = np.r_[0, rows]
    fb.link(rows, all_rows[parent[1:]], space.differing_dim(nodes[1:], nodes[parent[1:]]))
    return fb.finish()


class ShuffleKMB:
    """KMB trees towards many receivers that share one sender set (see the module doc)."""

    def __init__(self, space: LabelSpace, senders: np.ndarray) -> None:
        self.space = space
        self.senders = np.asarray(senders, dtype=np.int64)
        m = self.senders.shape[0]
        if m > 1:
            ham = space.hamming(self.senders[:, None], self.senders[None, :]).astype(np.float64)
            a, b = _mst_edges(ham, m)
        else:
            a = b = np.zeros(0, np.int64)
        self.s_a, self.s_b = a + 1, b + 1        # member 0 is the receiver
        self.s_w = space.hamming(self.senders[a], self.senders[b]).astype(np.float64)

    def _edges(self, receiver: int) -> tuple[np.ndarray, np.ndarray]:
        m = self.senders.shape[0]
        w_r = self.space.hamming(receiver, self.senders).astype(np.float64)
        rows = np.concatenate([self.s_a, np.zeros(m, np.int64)])
        cols = np.concatenate([self.s_b, np.arange(1, m + 1)])
        graph = coo_array((np.concatenate([self.s_w, w_r]), (rows, cols)), shape=(m + 1, m + 1))
        ra, rb = _mst_edges(graph, m + 1)
        terms = np.concatenate([[receiver], self.senders])
        return terms[ra], terms[rb]

    def cost(self, receiver: int) -> tuple[float, bool]:
        """Cost at delta = 0 (2 links per tree server but the root) and whether it was a fast count."""
        a, b = self._edges(receiver)
        u, v = _expand(self.space, a, b)
        nodes = np.sort(np.concatenate([[receiver], self.senders, v]))
        n_nodes = int(run_starts(nodes).sum())
        lo, hi = np.minimum(u, v), np.maximum(u, v)
        e = np.sort(lo * self.space.N + hi)
        if int(run_starts(e).sum()) == n_nodes - 1:
            return 2.0 * (n_nodes - 1), True          # the union is already a tree: nothing to prune
        return float(self.forest(receiver).costs()[0]), False

    def forest(self, receiver: int) -> Forest:
        a, b = self._edges(receiver)
        rel_a, rel_b = self.space.relabel(a, receiver), self.space.relabel(b, receiver)
        rel = self.space.relabel(self.senders, receiver)
        u, v = _expand(self.space, rel_a, rel_b)
        nodes, parent = _tree_from_edges(self.space, rel, u, v)
        return _forest(self.space, receiver, rel, nodes, parent)
