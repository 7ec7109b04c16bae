"""Independent checks of CIST-partitions and completely independent spanning trees (Dragonfly CISTs (Bian et al.),
§2.1: Araki's Lemma 1 and Hasunuma's condition).

Nothing here knows how the partitions or trees were built: inputs are switch names and undirected edges,
checked against the fabric's switch graph (hosts excluded, as the paper's graph D(p,a,h) has switches only). Checks:

* :func:`check_partition` — Araki (2014), Lemma 1 of the paper: the parts partition V(G), every induced
  subgraph G[V_t] is connected, and for s != t no component H of the bipartite graph B(V_s, V_t) is a tree
  (|E(H)| >= |V(H)|). The paper writes the partition as V_0..V_k; k parts is meant (its Lemma 1 has k).
* :func:`check_trees` — every tree spans G with N-1 edges of G and is connected; the trees are pairwise
  edge-disjoint; and Hasunuma's (2001) characterisation: every vertex is internal (degree >= 2) in at most one
  tree. Edge-disjoint spanning trees meeting that condition are completely independent, i.e. for every pair
  u != v the u–v paths in different trees share no vertex but u, v and no edge.
* :func:`check_paths` — the definition itself, pair by pair (tree paths internally vertex- and
  edge-disjoint). O(N²·k·N); for small graphs and samples, as a cross-check of Hasunuma's condition.

Everything is O(|E|) with networkx except :func:`check_paths`.
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import networkx as nx

from dcnlab.controller.cist.graph import SwitchGraph

Edge = tuple[str, str]
MAX_PROBLEMS = 20


@dataclass(frozen=True)
class Validation:
    """Outcome of a check: ``problems`` is empty iff everything holds (at most 20 are listed)."""

    checks: tuple[str, ...]
    problems: tuple[str, ...] = ()
    truncated: bool = field(default=False)

    @property
    def ok(self) -> bool:
        return not self.problems

    def __add__(self, other: Validation) -> Validation:
        problems = (self.problems + other.problems)[:MAX_PROBLEMS]
        return Validation(self.checks + other.checks, problems,
                          self.truncated or other.truncated or len(self.problems) + len(other.problems) > MAX_PROBLEMS)


class _Problems:
    def __init__(self) -> None:
        self.items: list[str] = []
        self.truncated = False

    def add(self, msg: str) -> None:
        if len(self.items) < MAX_PROBLEMS:
            self.items.append(msg)
        else:
            self.truncated = True

    def result(self, checks: Sequence[str]) -> Validation:
        return Validation(tuple(checks), tuple(self.items), self.truncated)


def _nx_graph(graph: SwitchGraph | nx.Graph) -> nx.Graph:
    return graph.to_networkx() if isinstance(graph, SwitchGraph) else graph


class _Components:
    """Union-find over the edges added, counting vertices and edges per component."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}
        self.edges: Counter[str] = Counter()

    def _find(self, x: str) -> str:
        parent = self.parent
        root = parent.setdefault(x, x)
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def add_edge(self, u: str, v: str) -> None:
        ru, rv = self._find(u), self._find(v)
        if ru != rv:
            self.parent[rv] = ru
            self.edges[ru] += self.edges.pop(rv, 0)
        self.edges[ru] += 1

    def num_vertices(self) -> int:
        return len(self.parent)

    def components(self) -> list[tuple[int, int]]:
        """(vertices, edges) of every component with at least one edge."""
        nv: Counter[str] = Counter(self._find(x) for x in list(self.parent))
        return [(nv[r], self.edges[r]) for r in nv]


def check_partition(graph: SwitchGraph | nx.Graph, parts: Sequence[Iterable[str]]) -> Validation:
    """Araki's CIST-partition conditions for ``parts`` (lists of switch names) on ``graph``."""
    G = _nx_graph(graph)
    out = _Problems()
    part_of: dict[str, int] = {}
    for t, part in enumerate(parts):
        for v in part:
            if v not in G:
                out.add(f"part {t}: {v!r} is not a switch of the graph")
            elif v in part_of:
                out.add(f"switch {v} is in parts {part_of[v]} and {t}")
            else:
                part_of[v] = t
    missing = [v for v in G if v not in part_of]
    if missing:
        out.add(f"{len(missing)} switch(es) in no part, e.g. {', '.join(map(str, missing[:5]))}")
    if not parts:
        out.add("no parts")
    if out.items:
        return out.result(["partition"])
    # One union-find per induced subgraph G[V_t] and per bipartite graph B(V_s, V_t), counting the
    # vertices and edges of every component.
    inner = {t: _Components() for t in range(len(parts))}
    cross: dict[tuple[int, int], _Components] = defaultdict(_Components)
    for u, v in G.edges():
        s, t = part_of[u], part_of[v]
        if s == t:
            inner[s].add_edge(u, v)
        else:
            cross[(min(s, t), max(s, t))].add_edge(u, v)
    sizes = Counter(part_of.values())
    for t in range(len(parts)):
        if not sizes[t]:
            out.add(f"part {t} is empty")
            continue
        comps = inner[t].components()
        n_comps = len(comps) + sizes[t] - inner[t].num_vertices()  # + isolated vertices
        if n_comps > 1:
            big = sorted((nv for nv, _ in comps), reverse=True)
            out.add(f"G[V_{t}] is disconnected: {n_comps} components, largest {big[:5] or [1]}")
    for s, t in combinations(range(len(parts)), 2):
        B = cross.get((s, t), _Components())
        # Vertices of V_s ∪ V_t without an edge to the other part are isolated vertices of B: tree components.
        isolated = sizes[s] + sizes[t] - B.num_vertices()
        if isolated:
            out.add(f"B(V_{s}, V_{t}) has {isolated} isolated vertex(es) (tree components)")
        trees = [(nv, ne) for nv, ne in B.components() if ne < nv]
        if trees:
            out.add(f"B(V_{s}, V_{t}) has {len(trees)} tree component(s), e.g. of {trees[0][0]} vertices")
    return out.result(["partition", "G[V_t] connected", "B(V_s,V_t) has no tree component"])


def check_trees(graph: SwitchGraph | nx.Graph, trees: Sequence[Iterable[Edge]]) -> Validation:
    """Spanning, pairwise edge-disjoint, and each vertex internal in at most one tree (Hasunuma)."""
    G = _nx_graph(graph)
    n = G.number_of_nodes()
    out = _Problems()
    owner: dict[frozenset[str], int] = {}
    internal_in: dict[str, int] = {}
    for t, edges in enumerate(trees):
        T = nx.Graph()
        for u, v in edges:
            if not G.has_edge(u, v):
                out.add(f"tree {t}: ({u}, {v}) is not a link of the fabric")
                continue
            e = frozenset((u, v))
            if T.has_edge(u, v):
                out.add(f"tree {t}: edge ({u}, {v}) listed twice")
                continue
            if e in owner:
                out.add(f"trees {owner[e]} and {t} share edge ({u}, {v})")
            else:
                owner[e] = t
            T.add_edge(u, v)
        if T.number_of_nodes() != n:
            missing = [v for v in G if v not in T]
            out.add(f"tree {t} does not span: misses {len(missing)} switch(es), e.g. {', '.join(missing[:5])}")
        elif T.number_of_edges() != n - 1 or not nx.is_connected(T):
            out.add(f"tree {t} is not a spanning tree: {T.number_of_edges()} edges on {n} switches, "
                    f"{nx.number_connected_components(T)} component(s)")
        for v, d in T.degree():
            if d >= 2:
                if v in internal_in:
                    out.add(f"switch {v} is internal in trees {internal_in[v]} and {t}")
                else:
                    internal_in[v] = t
    return out.result(["spanning trees", "edge-disjoint", "internal in at most one tree (Hasunuma)"])


def check_cists(graph: SwitchGraph | nx.Graph, parts: Sequence[Iterable[str]] | None,
                trees: Sequence[Iterable[Edge]]) -> Validation:
    """Both checks; with ``parts``, also that tree t's internal switches lie in part t and k = #parts."""
    G = _nx_graph(graph)
    result = check_trees(G, trees)
    if parts is None:
        return result
    result = result + check_partition(G, parts)
    out = _Problems()
    if len(parts) != len(trees):
        out.add(f"{len(parts)} parts but {len(trees)} trees")
    for t, (part, edges) in enumerate(zip(parts, trees)):
        members = set(part)
        deg = Counter(x for e in edges for x in e)
        stray = sorted(v for v, d in deg.items() if d >= 2 and v not in members)
        if stray:
            out.add(f"tree {t}: {len(stray)} internal switch(es) outside part {t}, e.g. {', '.join(stray[:5])}")
    return result + out.result(["internal switches of tree t in part t"])


def _tree_adjacency(edges: Iterable[Edge]) -> dict[str, list[str]]:
    adj: dict[str, list[str]] = defaultdict(list)
    for u, v in edges:
        adj[u].append(v)
        adj[v].append(u)
    return adj


def _tree_paths(adj: dict[str, list[str]], root: str) -> dict[str, str | None]:
    """Parent of every switch reachable from ``root`` in a tree given by its adjacency (BFS)."""
    parent: dict[str, str | None] = {root: None}
    queue = deque([root])
    while queue:
        u = queue.popleft()
        for w in adj.get(u, ()):
            if w not in parent:
                parent[w] = u
                queue.append(w)
    return parent


def check_paths(graph: SwitchGraph | nx.Graph, trees: Sequence[Iterable[Edge]],
                pairs: Iterable[tuple[str, str]] | None = None) -> Validation:
    """The CIST definition pair by pair: for every pair (all pairs by default) the paths in the different
    trees share no vertex other than the endpoints and no edge. Slow; for small graphs and samples."""
    G = _nx_graph(graph)
    adjacency = [_tree_adjacency(e) for e in trees]
    out = _Problems()
    wanted: dict[str, list[str]] = defaultdict(list)
    for u, v in (combinations(sorted(G.nodes), 2) if pairs is None else pairs):
        wanted[u].append(v)
    for u, vs in wanted.items():
        parents = [_tree_paths(adj, u) for adj in adjacency]
        for v in vs:
            seen_vertices: dict[str, int] = {}
            seen_edges: dict[frozenset[str], int] = {}
            for t, parent in enumerate(parents):
                if v not in parent:
                    out.add(f"tree {t}: no path {u}–{v}")
                    continue
                x: str | None = v
                while x is not None and parent[x] is not None:
                    y = parent[x]
                    assert y is not None
                    e = frozenset((x, y))
                    if e in seen_edges:
                        out.add(f"{u}–{v}: trees {seen_edges[e]} and {t} both use edge ({x}, {y})")
                    seen_edges[e] = t
                    if y != u:
                        if y in seen_vertices:
                            out.add(f"{u}–{v}: trees {seen_vertices[y]} and {t} both pass through {y}")
                        seen_vertices[y] = t
                    x = y
    return out.result(["tree paths internally disjoint (definition)"])
