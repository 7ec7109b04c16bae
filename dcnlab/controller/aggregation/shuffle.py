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

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from dcnlab.controller.aggregation import engine
from dcnlab.controller.aggregation.forest import Forest, run_starts
from dcnlab.controller.aggregation.labels import LabelSpace
from dcnlab.controller.aggregation.steiner import kmb_shuffle_costs
from dcnlab.controller.aggregation.unicast import PathSteps


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
        big = np.flatnonzero(ends - starts > 1)          # only runs of two or more: usually few
        for s, e in zip(starts[big].tolist(), ends[big].tolist()):
            members = sorted(order[s:e].tolist())
            pairs.update((a, b) for i, a in enumerate(members) for b in members[i + 1:])
    return sorted(pairs)


def _adjacency(space: LabelSpace, receivers: np.ndarray) -> list[set[int]]:
    adj: list[set[int]] = [set() for _ in range(len(receivers))]
    for a, b in neighbour_pairs(space, receivers):
        adj[a].add(b)
        adj[b].add(a)
    return adj


def cluster_receivers(space: LabelSpace, receivers: np.ndarray,
                      adj: list[set[int]] | None = None) -> list[list[int]]:
    """003 Algorithm 1: disjoint groups, each a head and its one-hop neighbours (indices, head first).

    The head is the receiver with the most neighbours among those left (ties: smallest label); a
    lazy max-heap keeps this O((n + edges) log n) instead of a scan per group."""
    adj = _adjacency(space, receivers) if adj is None else adj
    degree = [len(a) for a in adj]
    label = [int(r) for r in receivers]
    heap = [(-degree[i], label[i], i) for i in range(len(label))]
    heapq.heapify(heap)
    left = set(range(len(label)))
    groups = []
    while heap:
        neg, _, head = heapq.heappop(heap)
        if head not in left:
            continue
        if -neg != degree[head]:             # degrees only fall: re-queue with the current one
            heapq.heappush(heap, (-degree[head], label[head], head))
            continue
        members = sorted((i for i in adj[head] if i in left), key=lambda i: label[i])
        group = [head, *members]
        groups.append(group)
        left.difference_update(group)
        for v in group:
            for u in adj[v]:
                if u in left:
                    degree[u] -= 1
    return groups


def srs_groups(space: LabelSpace, receivers: np.ndarray, irs_cost: np.ndarray) -> list[ReceiverGroup]:
    """Groups with their entry chosen by formula (1) from the members' IRS costs at delta = 0."""
    adj = _adjacency(space, receivers)
    out = []
    for grp in cluster_receivers(space, receivers, adj):
        size = len(grp)
        if size == 1:                     # formula (1) with |R_i| = 1, beta = 0: the member's own cost
            r = int(receivers[grp[0]])
            out.append(ReceiverGroup((r,), r, (float(irs_cost[grp[0]]),)))
            continue
        costs = []
        for j in grp:
            beta = sum(1 for i in grp if i != j and i in adj[j])
            costs.append(size * float(irs_cost[j]) + 4 * (size - beta - 1) + 2 * beta)
        best = min(range(size), key=lambda t: (costs[t], t))
        out.append(ReceiverGroup(tuple(int(receivers[i]) for i in grp), int(receivers[grp[best]]), tuple(costs)))
    return out


def forward_hops(space: LabelSpace, groups: Sequence[ReceiverGroup]) -> list[int]:
    """Per group, the forwarding hops from its entry to every member (:meth:`ReceiverGroup.forward_path`):
    0 to the entry, 1 to a neighbour of the entry, else 2 (through the head), in one vectorised pass."""
    sizes = np.array([len(g.members) for g in groups], dtype=np.int64)
    if sizes.shape[0] == 0:
        return []
    entries = np.repeat(np.array([g.entry for g in groups], dtype=np.int64), sizes)
    members = np.array([r for g in groups for r in g.members], dtype=np.int64)
    hops = np.minimum(space.hamming(entries, members), 2)
    return np.add.reduceat(hops, np.r_[0, np.cumsum(sizes)[:-1]]).tolist()


def srs_cost(groups: Sequence[ReceiverGroup], hops: Sequence[int], index: dict[int, int], tree_cost: np.ndarray,
             root_out: np.ndarray) -> float:
    """Total SRS traffic given each receiver's IRS tree cost and aggregated output at some delta
    (``hops``: :func:`forward_hops`)."""
    total = 0.0
    for g, h in zip(groups, hops):
        e = index[g.entry]
        if len(g.members) == 1:
            total += float(tree_cost[e])
            continue
        total += len(g.members) * float(tree_cost[e]) + 2.0 * h * float(root_out[e])
    return total


METHODS = ("srs", "incast", "kmb", "unicast", "none")


@dataclass(frozen=True)
class ShuffleCosts:
    """Traffic of one shuffle per method and delta, plus subgraph sizes (with ``detail``)."""

    deltas: tuple[float, ...]
    traffic: dict[str, list[float]]
    links: dict[str, int] = field(default_factory=dict)
    aggregators: dict[str, int] = field(default_factory=dict)
    receiver_input: dict[str, float] = field(default_factory=dict)
    aggregators_summed: dict[str, int] = field(default_factory=dict)
    """Aggregating servers counted once per tree they aggregate in (``aggregators`` counts each server once):
    003 does not say which it counts (Fig. 4(c), Fig. 5(c))."""


def no_aggregation_cost(space: LabelSpace, senders: np.ndarray, receivers: np.ndarray) -> float:
    """Every flow on its own shortest path: 2 links x the Hamming distance, summed over all pairs.

    Per digit, the pairs that differ there are all pairs minus those with equal digits."""
    ds, dr = space.digits(senders), space.digits(receivers)
    pairs = senders.shape[0] * receivers.shape[0]
    differ = 0
    for d in range(space.K):
        same = np.bincount(ds[:, d], minlength=space.n) @ np.bincount(dr[:, d], minlength=space.n)
        differ += pairs - int(same)
    return 2.0 * differ


def shuffle_costs(space: LabelSpace, senders: np.ndarray, receivers: np.ndarray, deltas: Sequence[float] = (0.0,),
                  methods: Sequence[str] = METHODS, seed: int = 0, detail: bool = False,
                  forests: Mapping[str, Forest] | None = None) -> ShuffleCosts:
    """Costs of every method for one shuffle (the model backend's core; trees from :mod:`.engine`).

    KMB is measured at ``delta = 0`` only (NaN at other ratios): 003 compares it only there. ``forests``: more
    methods given by their trees, one per receiver in the order of ``receivers`` (a user's incast builder, as
    ``plan aggregation --shuffle --algo A`` unites them); each is measured as the built-ins' forests are
    (:func:`forest_traffic`, :func:`forest_detail`)."""
    senders = np.asarray(senders, dtype=np.int64)
    receivers = np.asarray(receivers, dtype=np.int64)
    m = senders.shape[0]
    deltas = tuple(float(d) for d in deltas)
    traffic: dict[str, list[float]] = {}
    links: dict[str, int] = {}
    aggregators: dict[str, int] = {}
    receiver_input: dict[str, float] = {}
    summed: dict[str, int] = {}

    def measure(name: str, f: Forest) -> None:
        real = real_labels(f)
        links[name], aggregators[name], receiver_input[name] = forest_detail(f, real)
        summed[name] = int(_aggregator_keys(f, real).shape[0])

    if "srs" in methods or "incast" in methods:
        if detail:      # the trees themselves, built once: their costs, the incast subgraph and SRS's entry trees
            irs_trees, irs = engine.forest_costs(space, receivers, senders, "irs", deltas)
        else:
            irs = engine.irs_costs(space, receivers, senders, deltas)
        if "incast" in methods:
            traffic["incast"] = irs.traffic.sum(axis=1).tolist()
        if "srs" in methods:
            at_zero = (irs.traffic[deltas.index(0.0)] if 0.0 in deltas
                       else engine.irs_costs(space, receivers, senders).traffic[0])
            groups = srs_groups(space, receivers, at_zero)
            index = {int(r): i for i, r in enumerate(receivers)}
            hops = forward_hops(space, groups)
            traffic["srs"] = [srs_cost(groups, hops, index, irs.traffic[i], irs.root_output[i])
                              for i in range(len(deltas))]
            if detail:
                links["srs"], aggregators["srs"], receiver_input["srs"], summed["srs"] = _srs_detail(
                    space, groups, irs_trees.select(np.array([index[g.entry] for g in groups], dtype=np.int64)))
        if detail and "incast" in methods:
            measure("incast", irs_trees)
    if "unicast" in methods:
        if detail:
            uni_trees, uni = engine.forest_costs(space, receivers, senders, "unicast", deltas, seed=seed)
            measure("unicast", uni_trees)
        else:
            uni = engine.unicast_costs(space, receivers, senders, deltas, seed=seed)
        traffic["unicast"] = uni.traffic.sum(axis=1).tolist()
    if "kmb" in methods:
        if detail:
            kmb_trees, kmb = engine.forest_costs(space, receivers, senders, "kmb")
            total = float((2.0 * (kmb.nodes - 1)).sum())
            measure("kmb", kmb_trees)
        else:
            total = float(kmb_shuffle_costs(space, senders, receivers).sum())
        traffic["kmb"] = [total if d == 0.0 else float("nan") for d in deltas]
    if "none" in methods:
        traffic["none"] = [no_aggregation_cost(space, senders, receivers)] * len(deltas)
        if detail:      # every flow on its own drawn path (:func:`step_link_keys` of :func:`.unicast.unicast_forest`)
            links["none"] = engine.path_links(space, receivers, senders, seed=seed)
            aggregators["none"] = summed["none"] = 0
            receiver_input["none"] = float(m)
    for name, f in (forests or {}).items():
        if not np.array_equal(f.receivers, receivers):
            raise ValueError(f"{name}: its forest's trees are not one per receiver, in the receivers' order")
        traffic[name] = forest_traffic(f, deltas)
        if detail:
            measure(name, f)
    return ShuffleCosts(deltas, traffic, links, aggregators, receiver_input, summed)


def forest_traffic(f: Forest, deltas: Sequence[float]) -> list[float]:
    """A shuffle's traffic at each delta: the sum of its per-receiver trees' costs (:meth:`Forest.costs`; the
    engine's ``*_costs`` kernels give the same figures for the built-ins' trees without building them)."""
    return [float(f.costs(d).sum()) for d in deltas]


def forest_detail(f: Forest, real: np.ndarray | None = None) -> tuple[int, int, float]:
    """Links and aggregating servers of a shuffle's trees (distinct over all of them) and the mean data
    arriving at a receiver, at delta = 0: how every tree-per-receiver method's subgraph is measured
    (``real``: :func:`real_labels` of ``f``, if known)."""
    real = real_labels(f) if real is None else real
    return (count_distinct(_link_keys(f, real)), count_distinct(_aggregator_keys(f, real)),
            float(f.receiver_input(0.0).mean()))


def real_labels(f: Forest) -> np.ndarray:
    """Every row's server in real labels (a tree's rows are relative to its receiver)."""
    return engine.unrelabel(f.space, f.node, f.receivers[f.tree])


def count_distinct(keys: np.ndarray) -> int:
    return engine.distinct(keys)


def _link_keys(f: Forest, real: np.ndarray | None = None) -> np.ndarray:
    """Physical links (server, level) of every hop, in real labels, as server * K + level."""
    real = real_labels(f) if real is None else real
    hop = np.flatnonzero(f.parent >= 0)
    lv = f.level[hop].astype(np.int64)
    return np.concatenate([real[hop] * f.space.K + lv, real[f.parent[hop]] * f.space.K + lv])


def _aggregator_keys(f: Forest, real: np.ndarray | None = None) -> np.ndarray:
    inputs = f.children_count() + f.sender
    agg = np.flatnonzero((inputs >= 2) & (f.parent >= 0))
    if real is None:
        return engine.unrelabel(f.space, f.node[agg], f.receivers[f.tree[agg]])
    return real[agg]


def step_link_keys(space: LabelSpace, steps: PathSteps, receivers: np.ndarray) -> np.ndarray:
    r = receivers[steps.tree]
    node = engine.unrelabel(space, steps.node, r)
    step = space.pow[steps.level]
    nxt_rel = steps.node - ((steps.node // step) % space.n) * step
    nxt = engine.unrelabel(space, nxt_rel, r)
    lv = steps.level.astype(np.int64)
    return np.concatenate([node * space.K + lv, nxt * space.K + lv])


def _srs_detail(space: LabelSpace, groups: Sequence[ReceiverGroup], f: Forest) -> tuple[int, int, float, int]:
    """Links, aggregators, mean receiver input and aggregators summed over the entry trees of the SRS subgraph
    (delta = 0); ``f``: the IRS trees of the groups' entries, in the groups' order."""
    real = real_labels(f)
    links = [_link_keys(f, real)]
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
    agg = _aggregator_keys(f, real)
    return (count_distinct(np.concatenate(links)), count_distinct(agg),
            float(np.mean(inputs)) if inputs else 0.0, int(agg.shape[0]))
