"""Readings of 003's Steiner-based baseline: KMB trees built and charged the ways 003's text allows.

IRS/SRS (Guo et al.), §5.1, describes the Steiner-based shuffle subgraph in one paragraph: "similar to
the incast-based one but each aggregation tree results from the Steiner-tree algorithm ... [27]. At
first, a virtual complete graph is generated upon the incast members. Then, a minimum spanning tree
is calculated on the virtual complete graph. Finally, the virtual link ... is replaced by the shortest
path between any two incast members in the original topology, with unnecessary links deleted." It
reports the result *behind* IRS/SRS (28.76% saving on BCube(6,k), 44.89% on BCube(8,5)), and that
Steiner-based trees use "a similar number of active links but fewer aggregating servers" than
IRS/SRS (§5.2). The paragraph leaves choices open (which graph the paths run on, which of the
shortest paths, which servers aggregate); each :class:`SteinerReading` fixes them one way, and the
reproduction runs the reading 003's open settings pre-register (``kmb``, :mod:`dcnlab.results.open_settings`),
the others as sensitivity readings:

``graph``
    ``"servers"``: the virtual links become shortest server-to-server paths (every hop through one
    switch, 2 links), as in :mod:`.steiner`. ``"servers+switches"``: 003's graph G = (V, E) has the
    switches as vertices too (§3.1), so the paths, the spanning tree of their union and the pruning
    run on links; a switch may join branches but "cannot aggregate" (it forwards the sum of what comes
    in), a server aggregates.
``order``
    ``"digits"``: each path corrects the differing digits highest first (BCubeRouting's order, the
    default of :mod:`.steiner`). ``"random"``: a shortest path of random digit order, drawn per
    virtual link (003 does not say which shortest path; "the" shortest path is not unique in BCube).
``members``
    ``"incast"``: one tree per receiver over its incast members (the receiver and the senders; the
    default, "each aggregation tree results from the Steiner-tree algorithm"). ``"shuffle"``: one KMB
    tree over all ``m + n`` shuffle members (003 Definition 3's subgraph "spanning all shuffle
    members"); each receiver's flows use the part of that tree that joins the senders to it.
``aggregate``
    ``"all"``: every server of the tree aggregates (003's cost model, the default). ``"members"``:
    only incast members merge flows (senders and the receiver); the Steiner servers that KMB adds
    forward the sum of what they receive (003 notes Steiner-based uses fewer aggregating servers).
``paths``
    ``"union"``: the virtual links' paths are merged and pruned into one tree (KMB's last step,
    the default). ``"overlay"``: every MST edge stays its own path from a member to its MST parent,
    carrying that member's aggregated flow (a tree of members only, as on 003's overlay testbed
    "we omit all of switches"); traffic is 2 x the edge's Hamming distance per unit.
``bundle``
    How a node that does not aggregate passes flows on. ``False`` (the default, and 003's cost
    model): it forwards the flows it receives unmerged, and the next aggregating node merges them
    one by one (at ``delta = 0`` two 1-unit flows merge into 1 unit wherever they meet an
    aggregator). ``True``: the forwarded bundle counts as *one* flow of their summed size, so the next
    aggregator's ``max`` is the bundle's size (two 1-unit flows stay 2 units). Not a reading of 003;
    it is how the first check of reading (b) was charged (about 37% on BCube(6,k)), kept to show
    where that figure came from.

:data:`READINGS` names the combinations the reproduction measures; ``"kmb"`` (all defaults) builds
exactly the trees of :func:`.steiner.kmb_reference` and the engine (same MST, same paths, same
spanning tree, same pruning; ``tests/test_readings.py`` checks it), so it is the headline's figure.

Costs follow :mod:`.cost`: a node that aggregates emits ``max f + delta (sum f - max f)``, any other
node the sum of its inputs; each hop between servers is 2 links carrying the child's flow; in the
server-and-switch graph each link carries its lower end's flow. Trees are built per receiver in
plain numpy plus one numba kernel (:func:`_tree_flows`): the MST comes from the engine's kernels
(same tie rules), the path expansion and the label compaction from numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from dcnlab.controller.aggregation import engine
from dcnlab.controller.aggregation.engine import _find   # union-find of the KMB kernel, shared
from dcnlab.controller.aggregation.labels import LabelSpace


@dataclass(frozen=True)
class SteinerReading:
    """One way of building and charging 003's Steiner-based trees (see the module doc)."""

    name: str
    description: str
    graph: str = "servers"          # "servers" | "servers+switches"
    order: str = "digits"           # "digits" | "random"
    members: str = "incast"         # "incast" | "shuffle"
    aggregate: str = "all"          # "all" | "members"
    paths: str = "union"            # "union" | "overlay"
    bundle: bool = False            # a forwarder's flows count as one flow at the next merge


READINGS: dict[str, SteinerReading] = {r.name: r for r in (
    SteinerReading("kmb", "(a) KMB on the server graph, every server aggregates (default)"),
    SteinerReading("kmb-member-agg", "(b) KMB trees; only members aggregate, added Steiner servers forward",
                   aggregate="members"),
    SteinerReading("kmb-member-agg-bundled", "(b') as (b), a forwarded bundle charged as one flow",
                   aggregate="members", bundle=True),
    SteinerReading("kmb-switch-graph", "(c) KMB on servers+switches; switches forward sums",
                   graph="servers+switches"),
    SteinerReading("kmb-switch-graph-member-agg", "(c+b) servers+switches graph; only members aggregate",
                   graph="servers+switches", aggregate="members"),
    SteinerReading("kmb-shuffle-tree", "(d) one KMB tree over all m+n shuffle members", members="shuffle"),
    SteinerReading("kmb-shuffle-tree-member-agg", "(d+b) one tree over all members; only members aggregate",
                   members="shuffle", aggregate="members"),
    SteinerReading("kmb-random-order", "(e) KMB with shortest paths in random digit order", order="random"),
    SteinerReading("kmb-random-order-member-agg", "(e+b) random digit order; only members aggregate",
                   order="random", aggregate="members"),
    SteinerReading("mst-overlay", "(f) MST of members as an overlay: one path per MST edge, no merging",
                   aggregate="members", paths="overlay"),
)}
"""The readings measured by ``dcnlab.report.readings``; ``"kmb"`` is today's baseline."""

DEFAULT = "kmb"


def check_reading(reading: SteinerReading) -> SteinerReading:
    for field, value, valid in (("graph", reading.graph, ("servers", "servers+switches")),
                                ("order", reading.order, ("digits", "random")),
                                ("members", reading.members, ("incast", "shuffle")),
                                ("aggregate", reading.aggregate, ("all", "members")),
                                ("paths", reading.paths, ("union", "overlay"))):
        if value not in valid:
            raise ValueError(f"Steiner reading {reading.name}: {field}={value!r}; valid: {', '.join(valid)}")
    if reading.paths == "overlay" and (reading.graph != "servers" or reading.members != "incast"):
        raise ValueError(f"Steiner reading {reading.name}: the overlay reading is per incast, on servers")
    return reading


# -- the per-tree kernel ------------------------------------------------------------------------------

@njit(cache=True)
def _tree_flows(ea, eb, ew, nn, root, terminal, sender, agg, is_server, delta, bundle):
    """KMB steps 4-5 and the cost of one tree.

    Edges ``(ea, eb)`` with link weights ``ew`` are taken in order, each kept when it joins two
    components (a spanning tree of their union); non-terminal leaves are pruned until none is left;
    the tree is oriented from ``root``; flows are folded bottom-up (``agg`` nodes merge, the others
    forward the flows they receive, unmerged: their output counts as the sum of its flows, and the
    next aggregating node merges those flows one by one, so its ``max`` is over single flows). Returns (traffic, servers in the tree, aggregating non-root servers, parent,
    parent-edge weight, alive); ``parent`` is -1 at the root and at pruned nodes."""
    E = ea.shape[0]
    uf = np.arange(nn)
    keep = np.zeros(E, np.bool_)
    deg = np.zeros(nn, np.int64)
    for e in range(E):
        a = _find(uf, ea[e])
        b = _find(uf, eb[e])
        if a != b:
            uf[a] = b
            keep[e] = True
            deg[ea[e]] += 1
            deg[eb[e]] += 1
    start = np.zeros(nn + 1, np.int64)
    for v in range(nn):
        start[v + 1] = start[v] + deg[v]
    fill = start[:-1].copy()
    adj = np.empty(start[nn], np.int64)
    adjw = np.empty(start[nn], np.float64)
    for e in range(E):
        if keep[e]:
            a, b = ea[e], eb[e]
            adj[fill[a]] = b
            adjw[fill[a]] = ew[e]
            fill[a] += 1
            adj[fill[b]] = a
            adjw[fill[b]] = ew[e]
            fill[b] += 1
    alive = np.ones(nn, np.bool_)
    stack = np.empty(nn, np.int64)
    top = 0
    for v in range(nn):
        if deg[v] <= 1 and not terminal[v]:
            stack[top] = v
            top += 1
    while top > 0:
        top -= 1
        v = stack[top]
        if not alive[v]:
            continue
        alive[v] = False
        for t in range(start[v], start[v + 1]):
            u = adj[t]
            if alive[u]:
                deg[u] -= 1
                if deg[u] <= 1 and not terminal[u]:
                    stack[top] = u
                    top += 1
    parent = np.full(nn, -1, np.int64)
    pw = np.zeros(nn, np.float64)
    order = np.empty(nn, np.int64)
    seen = np.zeros(nn, np.bool_)
    order[0] = root
    seen[root] = True
    head, tail = 0, 1
    while head < tail:
        v = order[head]
        head += 1
        for t in range(start[v], start[v + 1]):
            u = adj[t]
            if alive[u] and not seen[u]:
                seen[u] = True
                parent[u] = v
                pw[u] = adjw[t]
                order[tail] = u
                tail += 1
    tot = np.zeros(nn, np.float64)
    mx = np.zeros(nn, np.float64)
    kids = np.zeros(nn, np.int64)
    traffic = 0.0
    servers = 0
    aggregators = 0
    for q in range(tail - 1, -1, -1):
        v = order[q]
        own = 1.0 if sender[v] else 0.0
        s = tot[v] + own
        big = mx[v] if mx[v] > own else own
        if agg[v]:
            out = big + delta * (s - big)
            big = out
        else:
            out = s
            if bundle:
                big = s
        if is_server[v]:
            servers += 1
        if v != root:
            traffic += pw[v] * out
            if agg[v] and kids[v] + (1 if sender[v] else 0) >= 2:
                aggregators += 1
            p = parent[v]
            tot[p] += out
            if big > mx[p]:
                mx[p] = big
            kids[p] += 1
    return traffic, servers, aggregators, parent, pw, seen, kids


# -- path expansion -----------------------------------------------------------------------------------

def _paths(space: LabelSpace, start: np.ndarray, goal: np.ndarray, order: str,
           rng: np.random.Generator | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hops (from, to, level) of the shortest paths ``start[e] -> goal[e]``, edge by edge in order.

    ``order="digits"`` corrects the highest differing digit first; ``"random"`` a random permutation
    of the digits per path."""
    K, n, pw = space.K, space.n, space.pow
    E = start.shape[0]
    if order == "digits":
        perm = np.tile(np.arange(K - 1, -1, -1), (E, 1))
    else:
        assert rng is not None
        perm = np.argsort(rng.random((E, K)), axis=1)
    cur = start.astype(np.int64).copy()
    frm = np.empty((E, K), np.int64)
    to = np.empty((E, K), np.int64)
    lv = np.empty((E, K), np.int64)
    ok = np.empty((E, K), bool)
    for t in range(K):
        d = perm[:, t]
        p = pw[d]
        dc = (cur // p) % n
        dg = (goal // p) % n
        ok[:, t] = dc != dg
        nxt = cur + (dg - dc) * p
        frm[:, t], to[:, t], lv[:, t] = cur, nxt, d
        cur = nxt
    return frm[ok], to[ok], lv[ok]


def _switch_ids(space: LabelSpace, x: np.ndarray, level: np.ndarray) -> np.ndarray:
    """An id for the level-``level`` switch of server ``x``, above every server label."""
    pw = space.n ** np.arange(space.K + 1, dtype=np.int64)
    key = (x // pw[level + 1]) * pw[level] + x % pw[level]
    return space.N + level * (space.N // space.n) + key


def _edges(space: LabelSpace, frm: np.ndarray, to: np.ndarray, lv: np.ndarray,
           graph: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Graph edges (as labels; switches above N) and link weights of the hops, in hop order."""
    if graph == "servers":
        return frm, to, np.full(frm.shape[0], 2.0)
    sw = _switch_ids(space, frm, lv)
    a = np.stack([frm, sw], axis=1).reshape(-1)
    b = np.stack([sw, to], axis=1).reshape(-1)
    return a, b, np.ones(a.shape[0])


@dataclass(frozen=True)
class TreeCost:
    """Per receiver: traffic, servers in its tree (receiver included), aggregating servers; with
    ``detail``, the shuffle's distinct active links and distinct aggregating servers (003 Fig. 4(b-c),
    counted like :mod:`.shuffle`: a link is a (server, switch level) pair)."""

    traffic: np.ndarray
    servers: np.ndarray
    aggregators: np.ndarray
    links: int | None = None
    aggregator_servers: int | None = None


class _Detail:
    """Collects the link and aggregator keys of every tree of one shuffle."""

    def __init__(self, space: LabelSpace) -> None:
        self.space = space
        self.links: list[np.ndarray] = []
        self.aggs: list[np.ndarray] = []

    def add(self, out: tuple, lab: np.ndarray, agg_mask: np.ndarray, sender: np.ndarray, graph: str) -> None:
        sp, N = self.space, self.space.N
        _, _, _, parent, _, alive, kids = out
        kid = np.flatnonzero(alive & (parent >= 0))
        a, b = lab[kid], lab[parent[kid]]
        if graph == "overlay":              # member-to-member edges: their hops are added by the caller
            pass
        elif graph == "servers":
            lv = sp.differing_dim(a, b)
            self.links.append(np.concatenate([a * sp.K + lv, b * sp.K + lv]))
        else:
            srv, sw = np.where(a < N, a, b), np.where(a < N, b, a)
            self.links.append(srv * sp.K + (sw - N) // (N // sp.n))
        inputs = kids[kid] + sender[kid]
        self.aggs.append(lab[kid][agg_mask[kid] & (inputs >= 2) & (lab[kid] < N)])

    def counts(self) -> tuple[int, int]:
        def distinct(xs: list[np.ndarray]) -> int:
            return int(np.unique(np.concatenate(xs)).shape[0]) if xs else 0
        return distinct(self.links), distinct(self.aggs)


def _solve(labels_a: np.ndarray, labels_b: np.ndarray, weights: np.ndarray, root: int, senders: np.ndarray,
           terminals: np.ndarray, aggregate: str, N: int, delta: float, bundle: bool = False,
           detail: _Detail | None = None, graph: str = "servers") -> tuple:
    """Compact the labels and run :func:`_tree_flows`; returns its outputs and the compact labels."""
    lab, inv = np.unique(np.concatenate([labels_a, labels_b, terminals, [root]]), return_inverse=True)
    E = labels_a.shape[0]
    ea, eb = inv[:E], inv[E:2 * E]
    nn = lab.shape[0]
    terminal = np.isin(lab, terminals) | (lab == root)
    sender = np.isin(lab, senders)
    is_server = lab < N
    agg = is_server.copy() if aggregate == "all" else (terminal & is_server)
    r = int(np.searchsorted(lab, root))
    out = _tree_flows(ea, eb, weights.astype(np.float64), nn, r, terminal, sender, agg, is_server, float(delta),
                      bool(bundle))
    if detail is not None:
        detail.add(out, lab, agg, sender, graph)
    return out, lab


def steiner_costs(space: LabelSpace, senders: np.ndarray, receivers: np.ndarray,
                  reading: SteinerReading | str = DEFAULT, delta: float = 0.0, seed: int = 0,
                  detail: bool = False) -> TreeCost:
    """Traffic of every receiver's Steiner-based tree under ``reading`` (one shuffle, ``m`` senders).

    Senders and receivers are distinct servers (as in the model); ``seed`` only matters for
    ``order="random"``; ``detail`` also counts the shuffle's distinct links and aggregators."""
    rd = check_reading(READINGS[reading] if isinstance(reading, str) else reading)
    K, n, sh, pw = engine._params(space)
    snd = np.sort(np.asarray(senders, dtype=np.int64))
    rec = np.asarray(receivers, dtype=np.int64)
    B, m = rec.shape[0], snd.shape[0]
    traffic, servers, aggs = np.zeros(B), np.zeros(B, np.int64), np.zeros(B, np.int64)
    rng = np.random.default_rng([seed, 7]) if rd.order == "random" else None
    det = _Detail(space) if detail else None
    if rd.members == "shuffle":
        _shuffle_tree(space, snd, rec, rd, delta, rng, det, traffic, servers, aggs)
    else:
        ea, eb, ew = engine._senders_mst(snd, K, n, sh, pw)
        hm = np.uint64(engine._hmask(sh))
        w = np.empty((5, m + 1), np.int64)
        for b in range(B):
            r = int(rec[b])
            got = engine._closure_mst(r, snd, ea, eb, ew, K, n, sh, pw, hm, w)
            mj, mq = w[3, :got], w[4, :got]
            recv_edge = mq < 0
            q = np.where(recv_edge, 0, mq)
            lo = np.where(recv_edge, 0, ea[q] + 1)            # member indices: 0 = receiver, 1..m = senders
            hi = np.where(recv_edge, mj, eb[q] + 1)
            members = np.concatenate([[r], snd])
            if rd.paths == "overlay":
                dist = space.hamming(members[hi], members[lo]).astype(np.float64)
                (t, s, a, *_), _ = _solve(members[hi], members[lo], 2.0 * dist, r, snd, members, "all", space.N,
                                          delta, rd.bundle, det, "overlay")
                if det is not None:      # an overlay edge's path: its hops, highest digit first
                    frm, to, lv = _paths(space, members[hi], members[lo], "digits", None)
                    det.links.append(np.concatenate([frm * space.K + lv, to * space.K + lv]))
            else:
                frm, to, lv = _paths(space, members[hi], members[lo], rd.order, rng)
                la, lb, lw = _edges(space, frm, to, lv, rd.graph)
                (t, s, a, *_), _ = _solve(la, lb, lw, r, snd, members, rd.aggregate, space.N, delta, rd.bundle,
                                          det, rd.graph)
            traffic[b], servers[b], aggs[b] = t, s, a
    if det is None:
        return TreeCost(traffic, servers, aggs)
    return TreeCost(traffic, servers, aggs, *det.counts())


def _shuffle_tree(space: LabelSpace, snd: np.ndarray, rec: np.ndarray, rd: SteinerReading, delta: float,
                  rng: np.random.Generator | None, det: _Detail | None, traffic: np.ndarray, servers: np.ndarray,
                  aggs: np.ndarray) -> None:
    """Reading (d): one KMB tree over senders and receivers; each receiver's flows use its part of it."""
    K, n, sh, pw = engine._params(space)
    allm = np.sort(np.concatenate([snd, rec]))
    ea, eb, _ = engine._senders_mst(allm, K, n, sh, pw)
    frm, to, lv = _paths(space, allm[eb], allm[ea], rd.order, rng)
    la, lb, lw = _edges(space, frm, to, lv, rd.graph)
    root = int(allm[0])
    (_, _, _, parent, pwt, alive, _), lab = _solve(la, lb, lw, root, snd, allm, "all", space.N, delta)
    kid = np.flatnonzero(alive & (parent >= 0))
    ta, tb, tw = lab[kid], lab[parent[kid]], pwt[kid]       # the shared tree's edges, as labels
    for b in range(rec.shape[0]):
        r = int(rec[b])
        (t, s, a, *_), _ = _solve(ta, tb, tw, r, snd, np.concatenate([snd, [r]]), rd.aggregate, space.N, delta,
                                  rd.bundle, det, rd.graph)
        traffic[b], servers[b], aggs[b] = t, s, a


def shuffle_traffic(space: LabelSpace, senders: np.ndarray, receivers: np.ndarray,
                    readings: Sequence[str], delta: float = 0.0, seed: int = 0) -> dict[str, float]:
    """Total Steiner-based shuffle traffic (sum over receivers) under each named reading."""
    return {name: float(steiner_costs(space, senders, receivers, name, delta, seed).traffic.sum())
            for name in readings}
