"""Readings of IRS/SRS (Guo et al.), §5.4: "aggregation ratio delta uniform on [0, 1]" for SRS-based shuffles.

§5.4: merging flows ``f_1..f_s`` gives ``max f_i + delta (sum f_i - max f_i)``;
Fig. 6 plots the traffic of SRS, unicast and no aggregation against delta on BCube(8,5) for
m = n = 250 and 1000, and the text then says: "Assume that the value of the random variable delta
follows a uniform distribution (if any). In such a case, our SRS-based method saves the resultant
network traffic by 28.78% in Fig. 6(a) and 45.05% in Fig. 6(b)". It does not say *what* is random:
one delta for the whole job, one per flow merge, or something else. Each reading here is one answer;
the SRS subgraph itself (groups, entries, IRS trees, forwarding hops) is always :mod:`.shuffle`'s.

* ``curve-mean`` (the pre-registered reading, ``dcnlab reproduce aggregation``'s): the mean of Fig. 6's saving curve
  over delta in [0, 1] (trapezoid rule on 21 points). It is the expected saving when one delta is
  drawn per job, and also when one is drawn per receiver (the traffic is a sum over receivers, so
  its expectation is the curve's mean either way); the two sampled readings below show it.
* ``per-job``: one delta drawn per shuffle (sampled).
* ``per-receiver``: one delta drawn per receiver, used by every merge of that receiver's flows.
* ``per-node``: one delta drawn per merging node of each receiver's tree (a server merging flows of
  two receivers merges two different key partitions, so draws are independent per tree too).
* ``per-server``: one delta per physical server, shared by every tree through it.
* ``once-per-tree``: delta applied once per tree, at the receiver, instead of at every merge: a
  tree's traffic is the straight line between full aggregation and none,
  ``T(delta) = (1 - delta) T(0) + delta T(1)``, averaged over uniform delta, ``(T(0) + T(1)) / 2``.

Pre-registered (:mod:`dcnlab.results.open_settings`): ``curve-mean``, because the text's "random variable
delta" is one variable, the variable of Fig. 6's curve; the other readings run as sensitivity readings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dcnlab.controller.aggregation import engine
from dcnlab.controller.aggregation.forest import Forest
from dcnlab.controller.aggregation.labels import LabelSpace
from dcnlab.controller.aggregation.shuffle import forward_hops, no_aggregation_cost, srs_groups
from dcnlab.controller.aggregation.unicast import splitmix64

READINGS: dict[str, str] = {
    "curve-mean": "mean of the saving-vs-delta curve over [0, 1] (default)",
    "per-job": "one delta per shuffle, drawn uniformly",
    "per-receiver": "one delta per receiver's tree, drawn uniformly",
    "per-node": "one delta per merging node of each tree",
    "per-server": "one delta per physical server, shared by its trees",
    "once-per-tree": "delta applied once per tree at the receiver (linear in delta)",
}
DEFAULT = "curve-mean"
CURVE = tuple(i / 20 for i in range(21))


@dataclass(frozen=True)
class SrsSubgraph:
    """An SRS shuffle as one tree per receiver: row ``b`` of ``forest`` is receiver ``b``'s copy of its
    group's entry tree; ``hops[b]`` forwarding hops (0, 1 or 2) carry the entry's output on to it."""

    forest: Forest
    hops: np.ndarray
    receivers: np.ndarray
    none: float


def srs_subgraph(space: LabelSpace, senders: np.ndarray, receivers: np.ndarray) -> SrsSubgraph:
    senders = np.asarray(senders, dtype=np.int64)
    receivers = np.asarray(receivers, dtype=np.int64)
    at_zero = engine.irs_costs(space, receivers, senders).traffic[0]
    groups = srs_groups(space, receivers, at_zero)
    entry_of = {r: g.entry for g in groups for r in g.members}
    order = np.array([r for g in groups for r in g.members], dtype=np.int64)
    entries = np.array([entry_of[int(r)] for r in order], dtype=np.int64)
    forest = engine.irs_forest(space, entries, senders)
    hops = np.minimum(space.hamming(entries, order), 2).astype(np.float64)
    assert float(hops.sum()) == float(sum(forward_hops(space, groups)))
    return SrsSubgraph(forest, hops, order, no_aggregation_cost(space, senders, receivers))


def flows(f: Forest, delta: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """:meth:`Forest.flows` with one ratio per row (``delta[row]`` is used where that row merges)."""
    own = f.sender.astype(np.float64)
    rows = f.node.shape[0]
    total = np.zeros(rows)
    top = np.zeros(rows)
    g = own.copy()
    for d in range(int(depth.max(initial=0)), 0, -1):
        at = np.flatnonzero(depth == d)
        dl = delta[at]
        g[at] = (1.0 - dl) * np.maximum(own[at], top[at]) + dl * (own[at] + total[at])
        p = f.parent[at]
        total += np.bincount(p, weights=g[at], minlength=rows)
        np.maximum.at(top, p, g[at])
    roots = f.parent < 0
    g[roots] = (1.0 - delta[roots]) * top[roots] + delta[roots] * total[roots]
    return g


def srs_traffic(sub: SrsSubgraph, delta: np.ndarray, depth: np.ndarray) -> float:
    """SRS traffic with one ratio per forest row: tree hops plus the forwarding hops (2 links each)."""
    f = sub.forest
    g = flows(f, delta, depth)
    hop = f.parent >= 0
    tree = 2.0 * float(g[hop].sum())
    return tree + 2.0 * float((sub.hops * g[: f.trees]).sum())


def saving(sub: SrsSubgraph, reading: str, rng: np.random.Generator, seed: int = 0,
           depth: np.ndarray | None = None) -> float:
    """One draw of the SRS saving (1 - traffic / no aggregation) under ``reading``."""
    if reading not in READINGS:
        raise ValueError(f"delta reading {reading!r}; valid: {', '.join(READINGS)}")
    f = sub.forest
    depth = f.depth() if depth is None else depth
    rows = f.node.shape[0]

    def at(d: float) -> float:
        return srs_traffic(sub, np.full(rows, d), depth)

    if reading == "curve-mean":
        ys = [1.0 - at(d) / sub.none for d in CURVE]
        return float(sum((CURVE[i + 1] - CURVE[i]) * (ys[i] + ys[i + 1]) / 2 for i in range(len(CURVE) - 1)))
    if reading == "once-per-tree":
        return 1.0 - (at(0.0) + at(1.0)) / 2 / sub.none
    delta: np.ndarray
    if reading == "per-job":
        delta = np.full(rows, rng.random())
    elif reading == "per-receiver":
        delta = rng.random(f.trees)[f.tree]
    elif reading == "per-node":
        delta = np.asarray(rng.random(rows))
    else:                                   # per-server: a hash of the real label, the same in every tree
        labels = f.space.unrelabel(f.node, f.receivers[f.tree])
        delta = (splitmix64(labels, seed) >> np.uint64(11)).astype(np.float64) / float(1 << 53)
    return 1.0 - srs_traffic(sub, delta, depth) / sub.none
