"""Shuffle aggregation on BCube: SRS-based, incast-based, unicast-based, Steiner-based, no aggregation.

A shuffle of m senders and n receivers is n incasts with the same senders (003 Def. 1).

* **Incast-based**: one IRS tree per receiver (003 §3.3); with any other incast algorithm (M2,
  KMB, ...) the union of its trees. **Unicast-based**: the union of unicast trees. **No
  aggregation** (003's "existing method"): every flow on its own unicast path.
* **SRS-based** (003 §3.3). Receivers are clustered by Algorithm 1: repeatedly take the receiver
  with the most one-hop neighbours among the receivers left (ties: smallest label), and make it
  and those neighbours a group. Every flow to a group travels the IRS tree of one *entry* member
  and is then forwarded one hop (to a neighbour of the entry) or two (entry -> head -> member).
  The entry minimises formula (1): ``C_ij = |R_i| c_j + 4 (|R_i| - beta_j - 1) + 2 beta_j`` with
  ``c_j`` the IRS cost of member ``j`` and ``beta_j`` its one-hop neighbours in the group (the head
  is the case ``beta = |R_i| - 1``). Ties go to the head, then to the earlier member.
* **Decisions.** Senders and receivers are disjoint sets of servers (a server that is both would
  send to itself). Flows for different receivers are never merged with each other (different key
  partitions). With an aggregation ratio ``delta > 0`` the entry is still chosen by formula (1),
  since the subgraph is built before the data is seen; its cost is then evaluated exactly:
  ``|R_i|`` copies of the entry tree's traffic plus the entry's fully aggregated output ``g_j``
  (1 unit at ``delta = 0``) on every forwarding hop, 2 links each. The formula's picture ignores that
  the entry tree may itself pass through a group member; so do we.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from controller.aggregation.forest import run_starts
from controller.aggregation.irs import irs_forest
from controller.aggregation.labels import LabelSpace
from controller.aggregation.steiner import ShuffleKMB
from controller.aggregation.unicast import unicast_forest


@dataclass(frozen=True)
class ReceiverGroup:
    """One SRS group: ``members[0]`` is the head; flows enter at ``entry``."""

    members: tuple[int, ...]
    entry: int
    entry_costs: tuple[float, ...]
    """Formula (1) for each member as the entry, at delta = 0."""

    @property
    def head(self) -> int:
        return self.members[0]

    def forward_path(self, space: LabelSpace, member: int) -> tuple[int, ...]:
        """Servers from the entry to ``member``: direct if neighbours, else through the head."""
        if member == self.entry:
            return (member,)
        if int(space.hamming(self.entry, member)) == 1:
            return (self.entry, member)
        return (self.entry, self.head, member)


def neighbour_pairs(space: LabelSpace, servers: np.ndarray) -> list[tuple[int, int]]:
    """Index pairs (i < j) of servers that are one-hop neighbours (differ in exactly one digit)."""
    servers = np.asarray(servers, dtype=np.int64)
    pairs: set[tuple[int, int]] = set()
    for d in range(space.K):
        key = servers - space.digit(servers, d) * space.pow[d]
        order = np.argsort(key, kind="stable")
        sk = key[order]
        starts = np.flatnonzero(run_starts(sk))
        ends = np.r_[starts[1:], sk.shape[0]]
        for s, e in zip(starts, ends):
            if e - s > 1:
                members = sorted(order[s:e].tolist())
                pairs.update((a, b) for i, a in enumerate(members) for b in members[i + 1:])
    return sorted(pairs)


def cluster_receivers(space: LabelSpace, receivers: np.ndarray) -> list[list[int]]:
    """003 Algorithm 1: disjoint groups, each a head and its one-hop neighbours (indices, head first)."""
    n = len(receivers)
    adj: list[set[int]] = [set() for _ in range(n)]
    for a, b in neighbour_pairs(space, receivers):
        adj[a].add(b)
        adj[b].add(a)
    left = set(range(n))
    groups = []
    while left:
        head = min(left, key=lambda i: (-len(adj[i] & left), int(receivers[i])))
        members = sorted(adj[head] & left, key=lambda i: int(receivers[i]))
        groups.append([head, *members])
        left -= {head, *members}
    return groups


def srs_groups(space: LabelSpace, receivers: np.ndarray, irs_cost: np.ndarray) -> list[ReceiverGroup]:
    """Groups with their entry chosen by formula (1) from the members' IRS costs at delta = 0."""
    out = []
    for grp in cluster_receivers(space, receivers):
        size = len(grp)
        costs = []
        for j in grp:
            beta = sum(1 for i in grp if i != j and int(space.hamming(receivers[i], receivers[j])) == 1)
            costs.append(size * float(irs_cost[j]) + 4 * (size - beta - 1) + 2 * beta)
        best = min(range(size), key=lambda t: (costs[t], t))
        out.append(ReceiverGroup(tuple(int(receivers[i]) for i in grp), int(receivers[grp[best]]), tuple(costs)))
    return out


def srs_cost(space: LabelSpace, groups: Sequence[ReceiverGroup], index: dict[int, int], tree_cost: np.ndarray,
             root_out: np.ndarray) -> float:
    """Total SRS traffic given each receiver's IRS tree cost and aggregated output at some delta."""
    total = 0.0
    for g in groups:
        e = index[g.entry]
        hops = sum(len(g.forward_path(space, r)) - 1 for r in g.members)
        total += len(g.members) * float(tree_cost[e]) + 2.0 * hops * float(root_out[e])
    return total


METHODS = ("srs", "incast", "kmb", "unicast", "none")


@dataclass
class ShuffleCosts:
    """Traffic of one shuffle per method and delta, plus subgraph sizes (with ``detail``)."""

    deltas: tuple[float, ...]
    traffic: dict[str, list[float]] = field(default_factory=dict)
    links: dict[str, int] = field(default_factory=dict)
    aggregators: dict[str, int] = field(default_factory=dict)
    receiver_input: dict[str, float] = field(default_factory=dict)
    kmb_fast: float = 1.0
    """Share of receivers whose KMB path union was already a tree (counted without building it)."""


def shuffle_costs(space: LabelSpace, senders: np.ndarray, receivers: np.ndarray, deltas: Sequence[float] = (0.0,),
                  methods: Sequence[str] = METHODS, seed: int = 0, chunk: int = 128,
                  detail: bool = False) -> ShuffleCosts:
    """Costs of every method for one shuffle, built in chunks of receivers (the model backend's core)."""
    senders = np.asarray(senders, dtype=np.int64)
    receivers = np.asarray(receivers, dtype=np.int64)
    n, m = receivers.shape[0], senders.shape[0]
    out = ShuffleCosts(tuple(float(d) for d in deltas))
    need_irs = "srs" in methods or "incast" in methods
    need_uni = "unicast" in methods or "none" in methods
    irs_cost = np.zeros((len(deltas), n))
    irs_root = np.zeros((len(deltas), n))
    uni_cost = np.zeros((len(deltas), n))
    none_cost = 0.0
    link_keys: dict[str, list[np.ndarray]] = {k: [] for k in ("incast", "unicast", "none")}
    agg_keys: dict[str, list[np.ndarray]] = {k: [] for k in ("incast", "unicast")}
    recv_in = {"incast": np.zeros(n), "unicast": np.zeros(n)}
    for lo in range(0, n, chunk):
        rec = receivers[lo:lo + chunk]
        B = rec.shape[0]
        pt = np.repeat(np.arange(B), m)
        ps = np.tile(senders, B)
        if need_irs:
            f, _ = irs_forest(space, rec, pt, ps)
            depth = None if all(d == 0.0 for d in deltas) else f.depth()
            for i, d in enumerate(deltas):
                irs_cost[i, lo:lo + B] = f.costs(d, depth)
                irs_root[i, lo:lo + B] = f.root_output(d, depth)
            if detail:
                link_keys["incast"].append(_link_keys(f))
                agg_keys["incast"].append(_aggregator_keys(f))
                recv_in["incast"][lo:lo + B] = f.receiver_input(0.0)
        if need_uni:
            f, steps = unicast_forest(space, rec, pt, ps, seed=seed)
            depth = None if all(d == 0.0 for d in deltas) else f.depth()
            for i, d in enumerate(deltas):
                uni_cost[i, lo:lo + B] = f.costs(d, depth)
            none_cost += float(steps.costs(B).sum())
            if detail:
                link_keys["unicast"].append(_link_keys(f))
                agg_keys["unicast"].append(_aggregator_keys(f))
                recv_in["unicast"][lo:lo + B] = f.receiver_input(0.0)
                link_keys["none"].append(step_link_keys(space, steps, rec))
    if "incast" in methods:
        out.traffic["incast"] = irs_cost.sum(axis=1).tolist()
    if "unicast" in methods:
        out.traffic["unicast"] = uni_cost.sum(axis=1).tolist()
    if "none" in methods:
        out.traffic["none"] = [none_cost] * len(deltas)
    if "srs" in methods:
        groups = srs_groups(space, receivers, irs_cost[list(deltas).index(0.0)] if 0.0 in deltas
                            else _irs_costs_at_zero(space, senders, receivers))
        index = {int(r): i for i, r in enumerate(receivers)}
        out.traffic["srs"] = [srs_cost(space, groups, index, irs_cost[i], irs_root[i]) for i in range(len(deltas))]
        if detail:
            out.links["srs"], out.aggregators["srs"], out.receiver_input["srs"] = _srs_detail(
                space, senders, receivers, groups)
    if "kmb" in methods:
        kmb = ShuffleKMB(space, senders)
        results = [kmb.cost(int(r)) for r in receivers]
        total = sum(c for c, _ in results)   # KMB is measured at delta = 0 only (NaN elsewhere)
        out.traffic["kmb"] = [total if d == 0.0 else float("nan") for d in deltas]
        out.kmb_fast = sum(fast for _, fast in results) / max(n, 1)
    if detail:
        for k, keys in link_keys.items():
            if keys and k in methods:
                out.links[k] = count_distinct(np.concatenate(keys))
        for k, keys in agg_keys.items():
            if keys and k in methods:
                out.aggregators[k] = count_distinct(np.concatenate(keys))
        for k, arr in recv_in.items():
            if k in methods:
                out.receiver_input[k] = float(arr.mean())
        if "none" in methods:
            out.aggregators["none"] = 0
            out.receiver_input["none"] = float(m)
    return out


def _irs_costs_at_zero(space: LabelSpace, senders: np.ndarray, receivers: np.ndarray) -> np.ndarray:
    n, m = receivers.shape[0], senders.shape[0]
    f, _ = irs_forest(space, receivers, np.repeat(np.arange(n), m), np.tile(senders, n))
    return f.costs(0.0)


def count_distinct(keys: np.ndarray) -> int:
    keys = np.sort(keys)
    return int(run_starts(keys).sum()) if keys.shape[0] else 0


def _link_keys(f) -> np.ndarray:
    """Physical links (server, level) of every hop, in real labels, as server * K + level."""
    space = f.space
    hop = np.flatnonzero(f.parent >= 0)
    r = f.receivers[f.tree[hop]]
    child = space.unrelabel(f.node[hop], r)
    par = space.unrelabel(f.node[f.parent[hop]], r)
    lv = f.level[hop].astype(np.int64)
    return np.concatenate([child * space.K + lv, par * space.K + lv])


def _aggregator_keys(f) -> np.ndarray:
    inputs = f.children_count() + f.sender
    agg = np.flatnonzero((inputs >= 2) & (f.parent >= 0))
    return f.space.unrelabel(f.node[agg], f.receivers[f.tree[agg]])


def step_link_keys(space: LabelSpace, steps, receivers: np.ndarray) -> np.ndarray:
    r = receivers[steps.tree]
    node = space.unrelabel(steps.node, r)
    step = space.pow[steps.level]
    nxt_rel = steps.node - ((steps.node // step) % space.n) * step
    nxt = space.unrelabel(nxt_rel, r)
    lv = steps.level.astype(np.int64)
    return np.concatenate([node * space.K + lv, nxt * space.K + lv])


def _srs_detail(space: LabelSpace, senders: np.ndarray, receivers: np.ndarray,
                groups: Sequence[ReceiverGroup]) -> tuple[int, int, float]:
    """Links, aggregators and mean receiver input of the SRS subgraph (delta = 0)."""
    entries = np.array([g.entry for g in groups], dtype=np.int64)
    E, m = entries.shape[0], senders.shape[0]
    f, _ = irs_forest(space, entries, np.repeat(np.arange(E), m), np.tile(senders, E))
    links = [_link_keys(f)]
    for g in groups:
        for r in g.members:
            path = g.forward_path(space, r)
            for a, b in zip(path, path[1:]):
                lv = int(space.differing_dim(a, b))
                links.append(np.array([a * space.K + lv, b * space.K + lv], dtype=np.int64))
    arriving = f.receiver_input(0.0)
    inputs: list[float] = []
    for i, g in enumerate(groups):
        inputs.extend(float(arriving[i]) if r == g.entry else 1.0 for r in g.members)
    return (count_distinct(np.concatenate(links)), count_distinct(_aggregator_keys(f)),
            float(np.mean(inputs)) if inputs else 0.0)
