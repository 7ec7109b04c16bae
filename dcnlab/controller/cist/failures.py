"""Failure model of broadcast over CISTs (the model half; the paper, Bian et al., has no experiments).

**Model.** A broadcast from switch s sends one copy on every tree; a copy travels along the tree's links and
is forwarded by every tree switch it reaches. A failed switch neither delivers nor forwards; a failed link
carries nothing. So a copy on tree T reaches d iff the s–d path of T avoids every failed switch and link,
i.e. s and d are in the same component of T minus the failures. A pair (s, d) is *delivered* if at least
one tree reaches d. Broadcast is the same in both directions, so the counts are over ordered pairs of
distinct *working* switches; pairs with a failed endpoint are not counted (what CISTs guarantee is about failures other
than the endpoints). Hosts hang off switches (single-homed), so host-level delivery follows: hosts x, y on
switches s != d are delivered iff (s, d) is.

**Guarantee checked by the tests.** A failed switch is internal in at most one tree and only internal
switches forward, and a failed link belongs to at most one tree; so f failures (not at the endpoints) leave
every pair at least k-f intact tree paths, and with f <= k-1 nothing is lost. :func:`adversarial_failures`
shows that k well-chosen failures do lose pairs.

**Baseline.** :func:`single_tree` is one BFS broadcast tree of the whole switch graph (depth <= 3 on a
Dragonfly), the usual spanning-tree flood, evaluated under the same failures.

**Adversary** (a heuristic, not in the paper). For a candidate pair (s, d) it fails, in each tree, one element
of that tree's s–d path: the internal switch (or link) whose removal cuts that tree into the pieces with the
most pairs between them. The k failures disconnect (s, d) in every tree; among the candidate pairs (all pairs
on small graphs, a seeded sample otherwise) it keeps the set that loses the most pairs overall.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from itertools import combinations
from typing import Literal

import numpy as np

from dcnlab.controller.cist.errors import CistError
from dcnlab.controller.cist.graph import SwitchGraph
from dcnlab.controller.cist.trees import CistTree, tree_diameter

log = logging.getLogger(__name__)

Kind = Literal["switch", "link", "mixed"]
KINDS: tuple[str, ...] = ("switch", "link", "mixed")
TreeLike = CistTree | Iterable[tuple[str, str]]
ROW_BLOCK = 1024
LOST_LISTED = 100


@dataclass(frozen=True)
class Failures:
    """Failed switches and failed links (links as sorted name pairs)."""

    switches: frozenset[str] = frozenset()
    links: frozenset[tuple[str, str]] = frozenset()

    @classmethod
    def of(cls, switches: Iterable[str] = (), links: Iterable[tuple[str, str]] = ()) -> Failures:
        return cls(frozenset(switches), frozenset(tuple(sorted(link)) for link in links))  # type: ignore[misc]

    def __len__(self) -> int:
        return len(self.switches) + len(self.links)

    def __str__(self) -> str:
        items = sorted(self.switches) + [f"{u}-{v}" for u, v in sorted(self.links)]
        return ",".join(items) or "none"

    def check(self, graph: SwitchGraph) -> None:
        """Raise :class:`CistError` unless every failed element exists in ``graph``."""
        for s in self.switches:
            if s not in graph.index:
                raise CistError(f"failure {s!r}: no such switch (switch names look like {graph.names[0]})")
        for u, v in self.links:
            if u not in graph.index or v not in graph.index or (graph.index[u], graph.index[v]) not in graph.port:
                raise CistError(f"failure {u}-{v}: no link between these switches")


def parse_failures(text: str, graph: SwitchGraph) -> Failures:
    """``"s0_1,s3_2-s4_1"``: switches, and links as ``u-v``; checked against ``graph``."""
    switches, links = [], []
    for item in filter(None, (x.strip() for x in text.split(","))):
        u, dash, v = item.partition("-")
        if dash:
            links.append((u.strip(), v.strip()))
        else:
            switches.append(item)
    f = Failures.of(switches, links)
    f.check(graph)
    return f


@dataclass(frozen=True)
class Delivery:
    """Which (source, destination) pairs of working switches still get a broadcast copy."""

    trees: int
    pairs: int
    """Ordered pairs of distinct working switches."""
    delivered: int
    """Pairs reached through at least one tree."""
    min_intact: int
    """Fewest intact tree paths over all counted pairs (k - f or more for f non-endpoint failures)."""
    lost_pairs: tuple[tuple[str, str], ...] = field(default=())
    """Up to 100 lost (source, destination) pairs."""

    @property
    def lost(self) -> int:
        return self.pairs - self.delivered

    @property
    def fraction(self) -> float:
        return self.delivered / self.pairs if self.pairs else 1.0


def _edges(tree: TreeLike) -> list[tuple[str, str]]:
    return list(tree.edges if isinstance(tree, CistTree) else tree)


def _labels(graph: SwitchGraph, edges: Sequence[tuple[str, str]], failures: Failures,
            failed: np.ndarray) -> np.ndarray:
    """Component number of every switch in the tree minus the failures (failed switches: -1)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    n = len(graph)
    rows, cols = [], []
    for u_name, v_name in edges:
        u, v = graph.index[u_name], graph.index[v_name]
        if failed[u] or failed[v] or (min(u_name, v_name), max(u_name, v_name)) in failures.links:
            continue
        rows.append(u)
        cols.append(v)
    m = csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n, n))
    _, labels = connected_components(m, directed=False)
    labels = labels.astype(np.int64)
    labels[failed] = -1
    return labels


def _failed_mask(graph: SwitchGraph, failures: Failures) -> np.ndarray:
    failures.check(graph)
    failed = np.zeros(len(graph), dtype=bool)
    for s in failures.switches:
        failed[graph.index[s]] = True
    return failed


def _blocks(graph: SwitchGraph, trees: Sequence[TreeLike], failures: Failures,
            failed: np.ndarray) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Yield (first row, intact tree counts, counted mask) for blocks of source rows."""
    n = len(graph)
    labels = [_labels(graph, _edges(t), failures, failed) for t in trees]
    alive = ~failed
    for lo in range(0, n, ROW_BLOCK):
        hi = min(n, lo + ROW_BLOCK)
        intact = np.zeros((hi - lo, n), dtype=np.int16)
        for lab in labels:
            intact += (lab[lo:hi, None] == lab[None, :]) & (lab[lo:hi, None] >= 0)
        counted = alive[lo:hi, None] & alive[None, :]
        counted[np.arange(hi - lo), np.arange(lo, hi)] = False
        yield lo, intact, counted


def intact_matrix(graph: SwitchGraph, trees: Sequence[TreeLike], failures: Failures = Failures()) -> np.ndarray:
    """N×N int16: entry [s, d] is the number of trees whose s–d path survives, or -1 where the pair is not
    counted (s == d or a failed endpoint). Rows and columns follow ``graph.names``. O(N²) memory."""
    failed = _failed_mask(graph, failures)
    out = np.empty((len(graph), len(graph)), dtype=np.int16)
    for lo, intact, counted in _blocks(graph, trees, failures, failed):
        out[lo:lo + len(intact)] = np.where(counted, intact, -1)
    return out


def delivery(graph: SwitchGraph, trees: Sequence[TreeLike], failures: Failures = Failures()) -> Delivery:
    """Delivery of a broadcast from every working switch to every other one over ``trees`` (O(N) memory per
    block of sources; :func:`intact_matrix` gives the full pair-by-pair answer)."""
    failed = _failed_mask(graph, failures)
    alive = int((~failed).sum())
    pairs = alive * (alive - 1)
    delivered, min_intact = 0, len(trees)
    lost: list[tuple[str, str]] = []
    for lo, intact, counted in _blocks(graph, trees, failures, failed):
        if counted.any():
            min_intact = min(min_intact, int(intact[counted].min()))
        ok = (intact > 0) & counted
        delivered += int(ok.sum())
        if len(lost) < LOST_LISTED:
            for r, c in np.argwhere(counted & ~ok)[:LOST_LISTED - len(lost)]:
                lost.append((graph.names[lo + int(r)], graph.names[int(c)]))
    return Delivery(len(trees), pairs, delivered, min_intact if pairs else 0, tuple(lost))


# -- baseline -------------------------------------------------------------------------------------------
def single_tree(graph: SwitchGraph, root: str | None = None) -> CistTree:
    """One BFS broadcast tree of the whole switch graph, rooted at ``root`` (default: the first switch)."""
    r = graph.vertex(root) if root is not None else 0
    seen = {r}
    order = [r]
    edges: list[tuple[int, int]] = []
    for u in order:
        for v in graph.adj[u]:
            if v not in seen:
                seen.add(v)
                edges.append((u, v))
                order.append(v)
    if len(seen) != len(graph):
        raise CistError(f"the switch graph is disconnected ({len(seen)} of {len(graph)} switches reachable)")
    names = graph.names
    return CistTree(0, names[r], tuple((names[u], names[v]) for u, v in edges), tree_diameter(edges))


# -- adversary ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Rooted:
    parent: list[int]
    depth: list[int]
    size: list[int]
    children: list[list[int]]


def _rooted(n: int, edges: Sequence[tuple[int, int]], root: int) -> _Rooted:
    adj: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
        adj[u].append(v)
        adj[v].append(u)
    parent, depth = [-1] * n, [0] * n
    order, seen = [root], [False] * n
    seen[root] = True
    for u in order:
        for v in adj[u]:
            if not seen[v]:
                seen[v] = True
                parent[v], depth[v] = u, depth[u] + 1
                order.append(v)
    size = [1] * n
    children: list[list[int]] = [[] for _ in range(n)]
    for v in reversed(order[1:]):
        size[parent[v]] += size[v]
        children[parent[v]].append(v)
    return _Rooted(parent, depth, size, children)


def _path(t: _Rooted, s: int, d: int) -> list[int]:
    left, right = [s], [d]
    while left[-1] != right[-1]:
        if t.depth[left[-1]] >= t.depth[right[-1]]:
            left.append(t.parent[left[-1]])
        else:
            right.append(t.parent[right[-1]])
    return left + right[-2::-1]


def _vertex_cut(t: _Rooted, n: int, v: int) -> int:
    """Pairs of other switches that removing v disconnects in this tree."""
    parts = [t.size[c] for c in t.children[v]]
    if t.parent[v] >= 0:
        parts.append(n - t.size[v])
    m = n - 1
    return (m * m - sum(p * p for p in parts)) // 2


def _edge_cut(t: _Rooted, n: int, u: int, v: int) -> int:
    child = v if t.parent[v] == u else u
    return t.size[child] * (n - t.size[child])


def _attack_on_pair(graph: SwitchGraph, rooted: Sequence[_Rooted], s: int, d: int, kind: str) -> Failures | None:
    n, names = len(graph), graph.names
    switches, links = [], []
    for t in rooted:
        path = _path(t, s, d)
        options: list[tuple[int, str, tuple[int, ...]]] = []
        if kind in ("switch", "mixed"):
            options += [(_vertex_cut(t, n, v), "s", (v,)) for v in path[1:-1]]
        if kind in ("link", "mixed"):
            options += [(_edge_cut(t, n, u, v), "l", (u, v)) for u, v in zip(path, path[1:])]
        if not options:
            return None  # adjacent on this tree: no switch to fail between them
        _, what, item = max(options, key=lambda o: o[0])
        if what == "s":
            switches.append(names[item[0]])
        else:
            links.append((names[item[0]], names[item[1]]))
    return Failures.of(switches, links)


@dataclass(frozen=True)
class Attack:
    """k failures chosen to cut a pair in every tree, and what they cost."""

    pair: tuple[str, str]
    failures: Failures
    delivery: Delivery


def adversarial_failures(graph: SwitchGraph, trees: Sequence[TreeLike], kind: Kind = "switch",
                         candidates: int = 64, seed: int = 0) -> Attack:
    """One failure per tree that disconnects at least one pair in every tree (see the module docstring)."""
    if kind not in KINDS:
        raise CistError(f"failure kind {kind!r} is invalid; valid: {', '.join(KINDS)}")
    n = len(graph)
    int_trees = [[(graph.index[u], graph.index[v]) for u, v in _edges(t)] for t in trees]
    rooted = [_rooted(n, edges, 0) for edges in int_trees]
    total = n * (n - 1) // 2
    if total <= candidates:
        pairs: Iterable[tuple[int, int]] = combinations(range(n), 2)
    else:
        rng = np.random.default_rng(seed)
        picked: set[tuple[int, int]] = set()
        while len(picked) < candidates:
            s, d = (int(x) for x in rng.choice(n, size=2, replace=False))
            picked.add((min(s, d), max(s, d)))
        pairs = sorted(picked)
    best: Attack | None = None
    for s, d in pairs:
        fails = _attack_on_pair(graph, rooted, s, d, kind)
        if fails is None:
            continue
        result = delivery(graph, trees, fails)
        if best is None or result.lost > best.delivery.lost:
            best = Attack((graph.names[s], graph.names[d]), fails, result)
    if best is None:
        raise CistError(f"no pair can be cut with {kind} failures only (every candidate pair is adjacent on a "
                        "tree); try kind 'link' or 'mixed'")
    log.info("adversary: %d %s failures %s lose %d of %d pairs", len(best.failures), kind, best.failures,
             best.delivery.lost, best.delivery.pairs)
    return best


# -- random failures and sweeps -------------------------------------------------------------------------
def random_failures(graph: SwitchGraph, count: int, kind: Kind, rng: np.random.Generator) -> Failures:
    """``count`` distinct failed elements drawn uniformly (``mixed``: from switches and links together)."""
    if kind not in KINDS:
        raise CistError(f"failure kind {kind!r} is invalid; valid: {', '.join(KINDS)}")
    n, m = len(graph), graph.num_edges()
    pool = (n if kind != "link" else 0) + (m if kind != "switch" else 0)
    if not 0 <= count <= pool:
        raise CistError(f"failures={count} is out of range; valid: 0..{pool} {kind} failures")
    picks = rng.choice(pool, size=count, replace=False)
    edges = list(graph.edges()) if kind != "switch" else []
    switches, links = [], []
    for x in sorted(int(p) for p in picks):
        if kind != "link" and x < n:
            switches.append(graph.names[x])
        else:
            u, v = edges[x - (n if kind != "link" else 0)]
            links.append((graph.names[u], graph.names[v]))
    return Failures.of(switches, links)


@dataclass(frozen=True)
class SweepPoint:
    """Delivered fraction under ``failures`` random failures, over ``rounds`` draws."""

    failures: int
    kind: str
    rounds: int
    cist_mean: float
    cist_min: float
    single_mean: float
    single_min: float


_WORKER: dict[str, object] = {}


def _init_worker(graph: SwitchGraph, cists: list[list[tuple[str, str]]], single: list[tuple[str, str]]) -> None:
    _WORKER.update(graph=graph, cists=cists, single=single)


def _round(args: tuple[int, int, str, int]) -> tuple[int, float, float]:
    f, r, kind, seed = args
    graph = _WORKER["graph"]
    assert isinstance(graph, SwitchGraph)
    fails = random_failures(graph, f, kind, np.random.default_rng([seed, f, r]))  # type: ignore[arg-type]
    cist = delivery(graph, _WORKER["cists"], fails).fraction  # type: ignore[arg-type]
    one = delivery(graph, [_WORKER["single"]], fails).fraction  # type: ignore[list-item]
    return f, cist, one


def failure_sweep(graph: SwitchGraph, trees: Sequence[TreeLike], baseline: TreeLike, max_failures: int,
                  rounds: int = 20, kind: Kind = "mixed", seed: int = 0, workers: int | None = None,
                  progress: Callable[[int, int], None] | None = None) -> list[SweepPoint]:
    """Delivered fraction vs number of random failures (0..max_failures), CISTs against ``baseline``.

    Round r with f failures draws from ``default_rng([seed, f, r])``, so results do not depend on
    ``workers`` (default: every core). ``progress(done, total)`` is called after every round."""
    cists, single = [_edges(t) for t in trees], _edges(baseline)
    tasks = [(f, r, kind, seed) for f in range(max_failures + 1) for r in range(rounds)]
    results: dict[int, list[tuple[float, float]]] = {f: [] for f in range(max_failures + 1)}
    workers = workers or os.cpu_count() or 1
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, len(tasks))

    if workers == 1:
        _init_worker(graph, cists, single)
        for task in tasks:
            f, c, o = _round(task)
            results[f].append((c, o))
            tick()
    else:
        with ProcessPoolExecutor(workers, initializer=_init_worker, initargs=(graph, cists, single)) as pool:
            for f, c, o in pool.map(_round, tasks, chunksize=max(1, len(tasks) // (4 * workers))):
                results[f].append((c, o))
                tick()
    points = []
    for f, vals in results.items():
        cist_fr = [v[0] for v in vals]
        single_fr = [v[1] for v in vals]
        points.append(SweepPoint(f, kind, rounds, float(np.mean(cist_fr)), min(cist_fr),
                                 float(np.mean(single_fr)), min(single_fr)))
    return points
