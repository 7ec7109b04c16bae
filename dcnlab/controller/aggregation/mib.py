"""MIB-, MC- and M2-based incast trees on BCube: M2 (Fang et al.), §3.2-3.4 (Algorithms 1-2, the M2 steps).

All three build shortest-path trees: layer ``l`` holds the servers at Hamming distance ``l`` from the
receiver, and every hop corrects one digit towards the receiver's, so the cost is decided only by
how many relay servers are added. Labels are relative to the receiver (receiver = 0,
:mod:`dcnlab.controller.aggregation.labels`); ``NR(x)`` is the set of digits where ``x`` is non-zero.

* **Related senders (Def. 2).** A higher sender ``X`` is related to a lower sender ``A`` when ``A``
  lies on a shortest path from ``X`` to the receiver: ``ham(X, A) = layer(X) - layer(A)``.
* **MIB-based (minimal incast branches, Alg. 1, Cor. 1).** Every sender with related lower
  senders hangs on the *nearest* one (highest layer). 000 leaves open which one owns a sender related
  to several (its ambiguity 2): ties go to the candidate with the most related senders (the branch
  with most to share), then the smallest label. This is what puts 322 and 323 under 300 in 000's
  example. A branch is then built by Corollary 1: its members are clustered *relative to the branch
  root* (below), so members sharing digit values meet at the deepest common server before the root.
  The recursive split into "minimal branches" (000's 7 groups -> 8 branches, not reproducible without
  the figure; ambiguity 3) is the nearest-owner forest itself: a branch nested in another branch is
  the sub-branch of its own root. Senders left without a related lower sender (roots) at layer >= 2
  go straight to the receiver, correcting their highest digit first.
* **MC-based (minimal clustering, Alg. 2).** Top-down: for ``t = k .. 1``, among the pending
  servers at layer >= ``t + 1``, groups sharing the same non-receiver values on ``t`` digits meet
  at the layer-``t`` server that has those values and the receiver's elsewhere. The greedy picks the
  group with the most members first (Alg. 2's maximum degree; ties: the first digit subset in
  ``itertools.combinations`` order, then the smallest shared values), recounting groups as members
  are taken. Meeting servers join the later rounds (ambiguity 8); the last round, 1 shared digit,
  makes layer-1 meeting servers (ambiguity 7). Whatever is still pending at the end goes straight to
  the receiver. MC-based alone applies this to all senders.
* **M2-based (§2.4).** MIB for the related senders, then MC over the roots at layer >= 2, then the
  layer-1 roots connect to the receiver.
* **Routing and merging (ambiguities 4, 5).** A server routed to a meeting point corrects its
  highest differing digit first. A route stops at the first server already in the tree (a sender, a
  relay made by an earlier route, a meeting point): merging there is free and keeps every path
  shortest, since all hops go down one layer.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable

import numpy as np

from dcnlab.controller.aggregation import mib_kernels
from dcnlab.controller.aggregation.forest import Forest, ForestBuilder
from dcnlab.controller.aggregation.labels import LabelSpace

ALGORITHMS = ("mib", "mc", "m2")
ORDERS = ("highest", "shared")
"""How servers left unclustered are routed (000 leaves it open, its ambiguity 4): ``highest``: each corrects its
highest differing digit first (the default); ``shared``: IRS-like, the servers farthest from the target move
together, one digit at a time, along the digit that merges the most of them (:meth:`_Builder.route_shared`)."""


class _Builder:
    """A shortest-path tree towards 0 grown by routes that stop at the first server already present."""

    def __init__(self, space: LabelSpace, senders: Iterable[int], order: str = "highest") -> None:
        if order not in ORDERS:
            raise ValueError(f"M2 routing order {order!r}; valid: {', '.join(ORDERS)}")
        self.order = order
        self.space = space
        self.senders = set(senders)
        self.pw = [int(p) for p in space.pow]
        self.parent: dict[int, int] = {}
        self.level: dict[int, int] = {}
        self.pending: set[int] = set(self.senders)     # in the tree, not routed yet, owned by someone
        self.nodes: set[int] = set(self.pending) | {0}

    def copy(self) -> _Builder:
        """An independent builder in the same state."""
        c = object.__new__(_Builder)
        c.order, c.space, c.senders, c.pw = self.order, self.space, self.senders, self.pw
        c.parent, c.level = dict(self.parent), dict(self.level)
        c.pending, c.nodes = set(self.pending), set(self.nodes)
        return c

    def digit(self, x: int, d: int) -> int:
        return (x // self.pw[d]) % self.space.n

    def route(self, x: int, target: int) -> None:
        """Send ``x`` towards ``target`` (a server on a shortest path from ``x`` to 0).

        Each hop corrects one digit in which the current server differs from ``target``: one whose
        next server is already in the tree if there is such a digit (the route ends there), else the
        highest."""
        self.pending.discard(x)
        pw, n, nodes, parent, level = self.pw, self.space.n, self.nodes, self.parent, self.level
        want = [(target // p) % n for p in pw]
        top = self.space.K - 1
        cur = x
        while cur != target:
            first: tuple[int, int] | None = None
            move: tuple[int, int] | None = None
            for d in range(top, -1, -1):      # the highest differing digit, or one into the tree
                p = pw[d]
                have = (cur // p) % n
                if have != want[d]:
                    v = cur + (want[d] - have) * p
                    if v in nodes:
                        move = (d, v)
                        break
                    if first is None:
                        first = (d, v)
            d, nxt = move or first      # type: ignore[misc]
            parent[cur] = nxt
            level[cur] = d
            if nxt in nodes:
                return
            nodes.add(nxt)
            cur = nxt

    def route_all(self, xs: Iterable[int], target: int) -> None:
        """Route every server of ``xs`` to ``target`` in this builder's order (:data:`ORDERS`)."""
        if self.order == "shared":
            self.route_shared(xs, target)
        else:
            for x in sorted(xs):
                self.route(x, target)

    def route_shared(self, xs: Iterable[int], target: int) -> None:
        """IRS-like routing of ``xs`` to ``target``: the routes farthest from it advance together, one hop each,
        along the digit under which the most of them meet a server already in the tree or each other (the fewest
        new relays; ties: the most routes moved, then the highest digit), until every route has merged."""
        K = self.space.K
        cur = {x: x for x in sorted(set(xs))}
        for x in cur:
            self.pending.discard(x)

        def dist(v: int) -> int:
            return sum(self.digit(v, d) != self.digit(target, d) for d in range(K))

        cur = {x: c for x, c in cur.items() if c != target}
        while cur:
            far = max(dist(c) for c in cur.values())
            group = [x for x, c in cur.items() if dist(c) == far]
            while group:
                best: tuple[tuple[int, int, int], int, list[int]] | None = None
                for d in range(K - 1, -1, -1):
                    movers = [x for x in group if self.digit(cur[x], d) != self.digit(target, d)]
                    if not movers:
                        continue
                    hops = {cur[x] + (self.digit(target, d) - self.digit(cur[x], d)) * self.pw[d] for x in movers}
                    new = sum(v not in self.nodes for v in hops)
                    score = (len(movers) - new, len(movers), d)
                    if best is None or score > best[0]:
                        best = (score, d, movers)
                assert best is not None
                _, d, movers = best
                for x in movers:
                    c = cur[x]
                    nxt = c + (self.digit(target, d) - self.digit(c, d)) * self.pw[d]
                    self.parent[c], self.level[c] = nxt, d
                    group.remove(x)
                    if nxt in self.nodes or nxt == target:
                        self.nodes.add(nxt)
                        del cur[x]
                    else:
                        self.nodes.add(nxt)
                        cur[x] = nxt

    def forest(self, receiver: int) -> Forest:
        fb = ForestBuilder(self.space, np.array([receiver], dtype=np.int64))
        order = sorted(self.parent)
        senders = self.senders
        rows = fb.add(np.array(order, dtype=np.int64), np.zeros(len(order), np.int64),
                      np.array([v in senders for v in order], dtype=bool))
        index = {v: int(r) for v, r in zip(order, rows)}
        index[0] = 0
        fb.link(rows, np.array([index[self.parent[v]] for v in order], dtype=np.int64),
                np.array([self.level[v] for v in order], dtype=np.int64))
        return fb.finish()


def related_senders(space: LabelSpace, rel: np.ndarray) -> list[list[int]]:
    """For each sender (relabelled), the indices of the higher senders related to it (Def. 2).

    ``A`` is on a shortest path from ``X`` exactly when ``A`` is ``X`` with some of its non-zero
    digits zeroed, so every digit subset is tried once over all senders (2^(k+1) vector steps)."""
    K = space.K
    dig = space.digits(rel)
    nz = dig != 0
    order = np.argsort(rel, kind="stable")
    srt = rel[order]
    out: list[list[int]] = [[] for _ in range(rel.shape[0])]
    for mask in range(1, 1 << K):
        dims = [d for d in range(K) if mask >> d & 1]
        x = np.flatnonzero(nz[:, dims].all(axis=1))
        if x.shape[0] == 0:
            continue
        cols = np.array(dims, dtype=np.int64)
        y = rel[x] - (dig[np.ix_(x, cols)] * space.pow[cols]).sum(axis=1)
        pos = np.minimum(np.searchsorted(srt, y), srt.shape[0] - 1)
        hit = (srt[pos] == y) & (y != 0)
        for a, xi in zip(order[pos[hit]].tolist(), x[hit].tolist()):
            out[a].append(xi)
    for lst in out:
        lst.sort()
    return out


_LAST_OWNER: list[tuple[tuple[int, int, bytes], list[int]]] = []
"""The last :func:`branch_owner` (M2 and MIB ask it for the same incast, one after the other)."""


def branch_owner(space: LabelSpace, rel: np.ndarray) -> list[int]:
    """Index of the related lower sender each sender hangs on (-1: a root). See the module doc."""
    key = (space.n, space.k, np.asarray(rel, dtype=np.int64).tobytes())
    if _LAST_OWNER and _LAST_OWNER[0][0] == key:
        return list(_LAST_OWNER[0][1])
    owner = _branch_owner(space, rel)
    _LAST_OWNER[:] = [(key, list(owner))]
    return owner


def _branch_owner(space: LabelSpace, rel: np.ndarray) -> list[int]:
    rel = np.asarray(rel, dtype=np.int64)
    return mib_kernels.branch_owner(rel, space.digits(rel), space.pow).tolist()


def _cluster_merge(b: _Builder, members: Iterable[int], root: int) -> None:
    """Corollary 1 / Algorithm 2: merge ``members`` top-down by shared digit values, then reach ``root``."""
    space = b.space
    active = set(members)
    if len(active) < 2:         # nothing to merge: straight to the root
        b.route_all(active, root)
        return
    root_dig = np.array([b.digit(root, d) for d in range(space.K)], dtype=np.int64)
    xs = np.fromiter(active, np.int64, len(active))
    rl = dict(zip(xs.tolist(), mib_kernels.differing(xs, root_dig, space.pow, space.n).tolist()))
    for t in range(max(rl.values()) - 1, 0, -1):
        cand = sorted(x for x in active if rl[x] >= t + 1)
        if len(cand) < 2:
            continue
        for grp, dims in _greedy_groups(space, np.array(cand, dtype=np.int64), root_dig, t):
            first = cand[grp[0]]
            meet = root + sum((b.digit(first, d) - b.digit(root, d)) * b.pw[d] for d in dims)
            for i in grp:
                active.discard(cand[i])
            b.route_all([cand[i] for i in grp], meet)
            if meet in b.nodes and meet not in b.parent and meet not in b.pending:
                b.pending.add(meet)
                active.add(meet)
                rl[meet] = t
    b.route_all(active, root)


_COMBOS: dict[tuple[int, int], np.ndarray] = {}
"""The ``t``-digit subsets of ``K`` digits in ``itertools.combinations`` order, per ``(K, t)``."""


def _greedy_groups(space: LabelSpace, cand: np.ndarray, root_dig: np.ndarray,
                   t: int) -> list[tuple[list[int], tuple[int, ...]]]:
    """Disjoint groups of ``cand`` sharing non-root values on ``t`` digits, largest first (Alg. 2).

    Returns (member positions, shared digits) per group. Keys are (digit subset, values); the compiled
    :func:`.mib_kernels.greedy_groups` sorts them once over all subsets and recounts a key, in a lazy heap, when
    members were taken."""
    combos = _COMBOS.get((space.K, t))
    if combos is None:
        combos = _COMBOS[(space.K, t)] = np.array(list(itertools.combinations(range(space.K), t)), dtype=np.int64)
    members, offsets, subsets = mib_kernels.greedy_groups(cand, space.pow, root_dig, combos, space.n)
    mem, off = members.tolist(), offsets.tolist()
    return [(mem[off[g]:off[g + 1]], tuple(combos[s].tolist())) for g, s in enumerate(subsets.tolist())]


def m2_family(space: LabelSpace, receiver: int, senders: np.ndarray, algorithm: str, order: str = "highest"
              ) -> Forest:
    """The MIB-, MC- or M2-based tree (``algorithm`` in :data:`ALGORITHMS`) towards ``receiver``; ``order``: how
    unclustered servers are routed (:data:`ORDERS`)."""
    return m2_family_timed(space, receiver, senders, (algorithm,), order)[algorithm][0]


def m2_family_timed(space: LabelSpace, receiver: int, senders: np.ndarray, algorithms: Iterable[str] = ALGORITHMS,
                    order: str = "highest") -> dict[str, tuple[Forest, float]]:
    """Several of :func:`m2_family`'s trees towards one receiver, each with the seconds it takes alone. M2 and MIB
    share their first step (MIB's branches, the same servers and hops in both): it is built once and copied, and
    its seconds count in both."""
    rel = space.relabel(np.asarray(senders, dtype=np.int64), receiver)
    out: dict[str, tuple[Forest, float]] = {}
    shared: tuple[_Builder, list[int], float] | None = None
    for algorithm in algorithms:
        t0 = time.perf_counter()
        if algorithm == "mc":
            b = _Builder(space, rel.tolist(), order)
            _cluster_merge(b, rel.tolist(), 0)
            out[algorithm] = (b.forest(receiver), time.perf_counter() - t0)
            continue
        if shared is None:
            b, roots = _mib_branches(space, rel, order)
            shared = (b, roots, time.perf_counter() - t0)
            t0 = time.perf_counter()
        b0, roots, before = shared
        b = b0.copy()
        if algorithm == "m2":
            _cluster_merge(b, roots, 0)
        else:
            b.route_all(roots, 0)
        out[algorithm] = (b.forest(receiver), before + time.perf_counter() - t0)
    return out


def _mib_branches(space: LabelSpace, rel: np.ndarray, order: str) -> tuple[_Builder, list[int]]:
    """MIB's branches (every related sender under its owner, Corollary 1) and the roots left (their labels)."""
    b = _Builder(space, rel.tolist(), order)
    layer = space.layer(rel)
    owner = branch_owner(space, rel)
    members: dict[int, list[int]] = {}
    for x, a in enumerate(owner):
        if a >= 0:
            members.setdefault(a, []).append(int(rel[x]))
    for a in sorted(members, key=lambda i: (int(layer[i]), int(rel[i]))):
        _cluster_merge(b, members[a], int(rel[a]))
    return b, [int(rel[i]) for i in range(rel.shape[0]) if owner[i] < 0]
