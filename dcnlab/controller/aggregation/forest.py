"""A batch of BCube aggregation trees as flat numpy arrays (one row per tree node).

The fast algorithms (IRS, unicast, KMB) build many trees at once: a shuffle on BCube(8,5) with
1,500 receivers is 1,500 incast trees of about 4,000 servers each. A :class:`Forest` keeps them as
columns; rows ``0..B-1`` are the roots (the receivers, relabelled to 0, see
:mod:`dcnlab.controller.aggregation.labels`). Costs follow :mod:`dcnlab.controller.aggregation.cost`; they are
invariant under relabelling, so nothing is mapped back to real labels unless a tree is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dcnlab.controller.aggregation.labels import LabelSpace


class InvalidTree(RuntimeError):
    """An algorithm produced something that is not a valid aggregation tree (a bug, not bad input)."""


def run_starts(sorted_keys: np.ndarray) -> np.ndarray:
    """Boolean mask of the first element of every run of equal values in a sorted array."""
    starts = np.ones(sorted_keys.shape[0], dtype=bool)
    if sorted_keys.shape[0] > 1:
        np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=starts[1:])
    return starts


def bits_for(value: int) -> int:
    return max(int(value).bit_length(), 1)


@dataclass(frozen=True)
class Forest:
    """Trees towards ``receivers`` (original labels); node labels are relative to each tree's receiver."""

    space: LabelSpace
    receivers: np.ndarray
    node: np.ndarray
    tree: np.ndarray
    parent: np.ndarray
    level: np.ndarray
    sender: np.ndarray

    @property
    def trees(self) -> int:
        return int(self.receivers.shape[0])

    def sizes(self) -> np.ndarray:
        """Servers per tree, receiver included."""
        return np.bincount(self.tree, minlength=self.trees)

    # -- structure -------------------------------------------------------------
    def depth(self) -> np.ndarray:
        """Hops from every row to its root; :class:`InvalidTree` on a cycle or a dangling parent."""
        depth = np.zeros(self.node.shape[0], dtype=np.int32)
        cur = self.parent.copy()
        live = np.flatnonzero(cur >= 0)
        for _ in range(self.node.shape[0] + 1):
            if live.size == 0:
                return depth
            depth[live] += 1
            cur[live] = self.parent[cur[live]]
            live = live[cur[live] >= 0]
        raise InvalidTree("the parent pointers contain a cycle")

    def children_count(self) -> np.ndarray:
        p = self.parent[self.parent >= 0]
        return np.bincount(p, minlength=self.node.shape[0])

    # -- cost model ------------------------------------------------------------
    def flows(self, delta: float, depth: np.ndarray | None = None) -> np.ndarray:
        """Output flow size of every row (roots: what they would emit; unused)."""
        own = self.sender.astype(np.float64)
        rows = self.node.shape[0]
        if delta == 0.0:
            return np.where(self.parent >= 0, 1.0, 0.0)
        depth = self.depth() if depth is None else depth
        total = np.zeros(rows)
        top = np.zeros(rows)
        g = own.copy()
        for d in range(int(depth.max(initial=0)), 0, -1):
            at = np.flatnonzero(depth == d)
            g[at] = (1.0 - delta) * np.maximum(own[at], top[at]) + delta * (own[at] + total[at])
            p = self.parent[at]
            total += np.bincount(p, weights=g[at], minlength=rows)
            np.maximum.at(top, p, g[at])
        roots = self.parent < 0
        g[roots] = (1.0 - delta) * top[roots] + delta * total[roots]
        return g

    def costs(self, delta: float = 0.0, depth: np.ndarray | None = None) -> np.ndarray:
        """Traffic per tree: every server hop is 2 links carrying the child's flow."""
        if delta == 0.0:
            return 2.0 * (self.sizes() - 1)
        g = self.flows(delta, depth)
        hop = self.parent >= 0
        return 2.0 * np.bincount(self.tree[hop], weights=g[hop], minlength=self.trees)

    def root_output(self, delta: float, depth: np.ndarray | None = None) -> np.ndarray:
        """Size of the fully aggregated flow at each receiver (what 003's SRS forwards to a group member)."""
        if delta == 0.0:
            return np.ones(self.trees)
        return self.flows(delta, depth)[: self.trees]

    def receiver_input(self, delta: float = 0.0, depth: np.ndarray | None = None) -> np.ndarray:
        """Data arriving at each receiver: the sum of its children's flows."""
        g = self.flows(delta, depth)
        into_root = (self.parent >= 0) & (self.parent < self.trees)
        return np.bincount(self.tree[into_root], weights=g[into_root], minlength=self.trees)

    def aggregators(self) -> np.ndarray:
        """Non-root servers where at least two flows meet (children plus own data), per tree."""
        inputs = self.children_count() + self.sender
        agg = (inputs >= 2) & (self.parent >= 0)
        return np.bincount(self.tree[agg], minlength=self.trees)

    def links(self) -> np.ndarray:
        """Distinct physical links per tree: a hop x -> p at level d uses links (x, d) and (p, d)."""
        hop = np.flatnonzero(self.parent >= 0)
        if hop.size == 0:
            return np.zeros(self.trees, dtype=np.int64)
        K, N = self.space.K, self.space.N
        lv = self.level[hop].astype(np.int64)
        t = self.tree[hop].astype(np.int64)
        a = (t * N + self.node[hop]) * K + lv
        b = (t * N + self.node[self.parent[hop]]) * K + lv
        keys = np.sort(np.concatenate([a, b]))
        first = run_starts(keys)
        return np.bincount(keys[first] // (N * K), minlength=self.trees)

    # -- checks and views --------------------------------------------------------
    def validate(self, senders_per_tree: np.ndarray | None = None) -> None:
        """Raise :class:`InvalidTree` unless every tree is connected, acyclic and made of one-hop hops."""
        B = self.trees
        if not (np.all(self.parent[:B] == -1) and np.all(self.node[:B] == 0)
                and np.array_equal(self.tree[:B], np.arange(B))):
            raise InvalidTree("rows 0..B-1 must be the roots (relabelled receiver 0)")
        if np.any(self.parent[B:] < 0):
            raise InvalidTree("a non-root row has no parent")
        hop = np.flatnonzero(self.parent >= 0)
        if np.any(self.tree[self.parent[hop]] != self.tree[hop]):
            raise InvalidTree("a hop crosses trees")
        if np.any(self.space.hamming(self.node[hop], self.node[self.parent[hop]]) != 1):
            raise InvalidTree("a hop joins servers that are not one-hop neighbours")
        if np.any(self.space.differing_dim(self.node[hop], self.node[self.parent[hop]]) != self.level[hop]):
            raise InvalidTree("a hop's switch level is not the digit its servers differ in")
        keys = np.sort(self.tree.astype(np.int64) * self.space.N + self.node)
        if not np.all(run_starts(keys)):
            raise InvalidTree("a server appears twice in one tree")
        self.depth()  # raises on cycles
        if senders_per_tree is not None and not np.array_equal(
                np.bincount(self.tree[self.sender], minlength=B), senders_per_tree):
            raise InvalidTree("a sender is missing from its tree")

    def select(self, trees: np.ndarray) -> Forest:
        """Trees ``trees`` (indices, in that order) as a forest of their own, laid out as if built alone: their
        roots first, then each tree's other rows in their order here."""
        trees = np.asarray(trees, dtype=np.int64)
        B, T = self.trees, trees.shape[0]
        order = np.argsort(self.tree[B:], kind="stable") + B
        counts = np.bincount(self.tree[B:], minlength=B)
        starts = np.cumsum(counts) - counts
        take = counts[trees]
        off = np.cumsum(take) - take
        pos = np.repeat(starts[trees] - off, take) + np.arange(int(take.sum()), dtype=np.int64)
        rows = np.concatenate([trees, order[pos]])
        new = np.full(self.node.shape[0], -1, np.int64)
        new[rows] = np.arange(rows.shape[0], dtype=np.int64)
        p = self.parent[rows]
        return Forest(self.space, self.receivers[trees], self.node[rows],
                      np.concatenate([np.arange(T, dtype=np.int64), np.repeat(np.arange(T, dtype=np.int64), take)]),
                      np.where(p >= 0, new[np.maximum(p, 0)], -1), self.level[rows], self.sender[rows])

    def tree_rows(self, b: int) -> np.ndarray:
        return np.flatnonzero(self.tree == b)

    def parent_map(self, b: int) -> tuple[dict[int, int], dict[int, int], list[int]]:
        """Tree ``b`` in real labels: child -> parent, child -> switch level, senders."""
        rows = self.tree_rows(b)
        labels = self.space.unrelabel(self.node, int(self.receivers[b]))
        parent, level = {}, {}
        for r in rows:
            p = int(self.parent[r])
            if p >= 0:
                parent[int(labels[r])] = int(labels[p])
                level[int(labels[r])] = int(self.level[r])
        return parent, level, [int(labels[r]) for r in rows if self.sender[r]]


class ForestBuilder:
    """Accumulates rows (roots first) and their parent pointers, then freezes them into a :class:`Forest`."""

    def __init__(self, space: LabelSpace, receivers: np.ndarray) -> None:
        B = receivers.shape[0]
        self.space = space
        self.receivers = np.asarray(receivers, dtype=np.int64)
        self._node: list[np.ndarray] = [np.zeros(B, np.int64)]     # not list[ndarray[tuple[int]]] (numpy 2.2)
        self._tree: list[np.ndarray] = [np.arange(B, dtype=np.int64)]
        self._sender: list[np.ndarray] = [np.zeros(B, bool)]
        self._links: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.count = B

    def add(self, node: np.ndarray, tree: np.ndarray, sender: bool | np.ndarray) -> np.ndarray:
        """Append rows; returns their row indices."""
        m = node.shape[0]
        self._node.append(np.asarray(node, np.int64))
        self._tree.append(np.asarray(tree, np.int64))
        self._sender.append(np.broadcast_to(np.asarray(sender, bool), (m,)).copy())
        idx = np.arange(self.count, self.count + m)
        self.count += m
        return idx

    def link(self, rows: np.ndarray, parent_rows: np.ndarray, level: np.ndarray) -> None:
        """Set the parent (and the switch level of the hop) of ``rows``."""
        self._links.append((np.asarray(rows, np.int64), np.asarray(parent_rows, np.int64),
                            np.asarray(level, np.int64)))

    def finish(self) -> Forest:
        parent = np.full(self.count, -1, np.int64)
        level = np.full(self.count, -1, np.int8)
        for rows, par, lv in self._links:
            parent[rows] = par
            level[rows] = lv
        return Forest(self.space, self.receivers, np.concatenate(self._node), np.concatenate(self._tree),
                      parent, level, np.concatenate(self._sender))


def sort_index(keys: np.ndarray, key_max: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted ``keys`` and the permutation that sorts them (``0 <= keys <= key_max``).

    numpy's ``argsort`` is about ten times slower than ``sort`` on int64, so the index is packed
    into the low bits of the key and one plain sort does both when the bits fit."""
    m = keys.shape[0]
    ib = bits_for(max(m - 1, 1))
    if bits_for(key_max) + ib <= 63:
        packed = (keys.astype(np.int64) << ib) | np.arange(m, dtype=np.int64)
        packed.sort()
        return packed >> ib, packed & ((1 << ib) - 1)
    order = np.argsort(keys, kind="stable")
    return keys[order], order


def in_sorted(sorted_keys: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Membership of ``query`` values in the sorted array ``sorted_keys``."""
    if sorted_keys.shape[0] == 0:
        return np.zeros(query.shape[0], dtype=bool)
    if query.shape[0] > 4096:          # binary search is ~8x faster on sorted queries than on random ones
        q, order = sort_index(query, int(max(query.max(initial=0), 0)))
        idx = np.searchsorted(sorted_keys, q)
        np.minimum(idx, sorted_keys.shape[0] - 1, out=idx)
        out = np.empty(query.shape[0], dtype=bool)
        out[order] = sorted_keys[idx] == q
        return out
    idx = np.searchsorted(sorted_keys, query)
    np.minimum(idx, sorted_keys.shape[0] - 1, out=idx)
    return sorted_keys[idx] == query


def attach(fb: ForestBuilder, trees: int, l_keys: np.ndarray, l_rows: np.ndarray, rows: np.ndarray,
           targets: np.ndarray, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hang ``rows`` on the servers with keys ``targets`` (key = tree * N + relabelled label).

    The next stage is the existing rows ``l_keys``/``l_rows`` (sorted by key: the senders one hop
    closer, or the roots) plus a new row for every other distinct target. Returns the next stage's
    sorted keys and rows."""
    N = fb.space.N
    keys = np.sort(targets)
    new_keys = keys[run_starts(keys)]
    new_keys = new_keys[~in_sorted(l_keys, new_keys)]
    new_rows = fb.add(new_keys % N, new_keys // N, False)
    next_keys, order = sort_index(np.concatenate([l_keys, new_keys]), trees * N)
    next_rows = np.concatenate([l_rows, new_rows])[order]
    fb.link(rows, next_rows[np.searchsorted(next_keys, targets)], levels)
    return next_keys, next_rows


def stage_members(fb: ForestBuilder, trees: int, layer: int, s_layer: np.ndarray, s_keys: np.ndarray,
                  s_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted keys and rows of the senders at ``layer`` (the roots for layer 0)."""
    if layer == 0:
        return np.arange(trees, dtype=np.int64) * fb.space.N, np.arange(trees, dtype=np.int64)
    sel = s_layer == layer
    keys, order = sort_index(s_keys[sel], trees * fb.space.N)
    return keys, s_rows[sel][order]
