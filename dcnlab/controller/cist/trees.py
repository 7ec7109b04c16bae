"""Completely independent spanning trees from a CIST-partition (Dragonfly CISTs (Bian et al.), §3.4: Algorithm 3,
Theorem 4).

Tree t has the routers of part V_t as its only internal vertices (Hasunuma's condition) and every other router
as a leaf hung on a V_t router *of its own group* over a local link:

* **Skeleton.** A spanning tree of G[V_t]. The paper adds *all* global links of V_t, which makes cycles
  (as printed, Algorithm 3's tree is not a tree); we take the BFS tree of G[V_t] rooted at a centre of G[V_t] (smallest
  eccentricity, ties to the lowest router number), so the tree's height is the radius of G[V_t] + 1.
* **Leaves**, two rules (``rule=``):

  - ``generic`` (default; ours, works for every partition with 2 routers per part per group and
    3 in part 0): in each group, for parts s < t with P_s = [s0, s1(, s2)] and P_t = [t0, t1] (ascending),
    tree t hangs s_j on t_(j mod 2) and tree s hangs t0 on s1 and t1 on s0. The local links used by T_s and
    T_t are then disjoint.
  - ``algorithm3``: the paper's Algorithm 3 with its leaf conditions corrected, only for the pair partitions of the relative and
    circulant arrangements ((m0, m1) = (t, a-1-t)): the odd-a middle switch hangs on m0; otherwise r hangs on
    m0 if m0 < r < ⌊a/2⌋ or r > m1, and on m1 if r < m0 or ⌈a/2⌉ <= r < m1. (The printed conditions share
    edges between trees and leave router a/2 unattached for even a.)

Three steps, kept apart so that ``reproduce cist`` can time Algorithm 3 on its own (paper Theorem 7, O(N)):

1. :func:`skeleton_roots` — the root of each skeleton (a centre of G[V_t]; not in the paper, it only shortens
   the trees). Exact in every case. When the partition and the graph are invariant under the group rotation
   router (i, j) -> (i+1 mod g, j) — the pair partitions of the relative and circulant arrangements, whose
   links depend only on the group difference — that rotation is an automorphism of G[V_t], so every router
   has the eccentricity of its copy in group 0 and a BFS from the 2-3 routers of V_t in group 0 finds the
   centre (the lowest-numbered one is in group 0): O(|E(G[V_t])|) per part. Otherwise (the absolute label
   partition has no such symmetry) all-pairs shortest paths in G[V_t] (scipy), O(|V_t|·|E(G[V_t])|).
2. :func:`tree_edges` — Algorithm 3 proper: the BFS skeleton from the root plus the leaf edges, per tree
   O(|E(G[V_t])| + N). Groups with the same row of the partition get the same leaf pattern, computed once.
3. :func:`build_trees` — both, plus names and each tree's diameter (a measurement, two BFS per tree).

Trees are returned as plain data (:class:`CistTree`): edges oriented parent -> child from the skeleton root,
which for broadcast are used undirected (:mod:`dcnlab.controller.cist.forwarding`). The builders do not validate;
:func:`dcnlab.controller.cist.plan.plan_cists` runs the independent validator before returning anything.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from dcnlab.controller.cist.errors import CistError
from dcnlab.controller.cist.graph import SwitchGraph
from dcnlab.controller.cist.partition import DragonflyPartition

Rule = Literal["generic", "algorithm3"]
RULES: tuple[str, ...] = ("generic", "algorithm3")


@dataclass(frozen=True)
class CistTree:
    """One spanning tree of the switch graph, as switch names."""

    tree_id: int
    root: str
    """Root of the skeleton (a centre of G[V_t]); any switch can source a broadcast on the tree."""
    edges: tuple[tuple[str, str], ...]
    """N-1 links as (parent, child) oriented away from ``root``; the tree itself is undirected."""
    diameter: int
    """Longest path in the tree, in links."""

    def undirected_edges(self) -> list[list[str]]:
        """Edges as sorted [u, v] pairs, sorted (the JSON form)."""
        return sorted(sorted(e) for e in self.edges)

    def neighbours(self) -> dict[str, list[str]]:
        """switch -> its tree neighbours."""
        nb: dict[str, list[str]] = {}
        for u, v in self.edges:
            nb.setdefault(u, []).append(v)
            nb.setdefault(v, []).append(u)
        return nb

    def internal(self) -> frozenset[str]:
        """Switches with two or more tree neighbours (the only ones that forward a broadcast onwards)."""
        return frozenset(v for v, nb in self.neighbours().items() if len(nb) >= 2)


def _bfs(adj: Mapping[int, Sequence[int]] | Sequence[Sequence[int]], root: int) -> dict[int, int]:
    dist = {root: 0}
    queue = deque([root])
    while queue:
        u = queue.popleft()
        for v in adj[u]:
            if v not in dist:
                dist[v] = dist[u] + 1
                queue.append(v)
    return dist


def tree_diameter(edges: Sequence[tuple[int, int]] | Sequence[tuple[str, str]]) -> int:
    """Diameter of a tree (two BFS sweeps; exact for trees)."""
    if not edges:
        return 0
    adj: dict = {}
    for u, v in edges:
        adj.setdefault(u, []).append(v)
        adj.setdefault(v, []).append(u)
    start = next(iter(adj))
    d1 = _bfs(adj, start)
    far = max(d1, key=d1.__getitem__)
    return max(_bfs(adj, far).values())


def _centre(vertices: Sequence[int], adj: Sequence[Sequence[int]]) -> int:
    """A vertex of minimum eccentricity in the (connected) subgraph induced by ``vertices``."""
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import shortest_path

    local = {v: i for i, v in enumerate(vertices)}
    rows, cols = [], []
    for v in vertices:
        for w in adj[v]:
            if w in local:
                rows.append(local[v])
                cols.append(local[w])
    m = csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(len(vertices), len(vertices)))
    ecc = shortest_path(m, directed=False, unweighted=True).max(axis=1)
    return vertices[int(np.argmin(ecc))]  # argmin takes the first: lowest router number among ties


def _rotation_invariant(partition: DragonflyPartition, graph: SwitchGraph) -> bool:
    """Whether router (i, j) -> (i+1 mod g, j) maps the partition and the graph onto themselves (O(|E|))."""
    rows = partition.part_of
    if any(row != rows[0] for row in rows):
        return False
    a, n, adj = partition.a, len(graph.adj), graph.adj
    return all({(w + a) % n for w in adj[v]} == set(adj[(v + a) % n]) for v in range(n))


def _induced(part: Sequence[int], graph: SwitchGraph) -> dict[int, list[int]]:
    members = set(part)
    return {v: [w for w in graph.adj[v] if w in members] for v in part}


def _centre_by_rotation(part: Sequence[int], graph: SwitchGraph, a: int) -> int:
    """The centre :func:`_centre` finds, for a rotation-invariant part: only the routers of group 0 are tried."""
    induced = _induced(part, graph)
    best: tuple[int, int] | None = None
    for v in sorted(v for v in part if v < a):
        dist = _bfs(induced, v)
        if len(dist) != len(induced):
            raise CistError(f"part with router {graph.names[v]} induces a disconnected subgraph "
                            f"({len(dist)} of {len(induced)} routers reachable)")
        ecc = max(dist.values())
        if best is None or ecc < best[0]:
            best = (ecc, v)
    if best is None:
        raise CistError("a rotation-invariant part has no router in group 0")
    return best[1]


def skeleton_roots(partition: DragonflyPartition, graph: SwitchGraph) -> list[int]:
    """Per part t, the root of tree t's skeleton: the lowest-numbered vertex of minimum eccentricity in G[V_t]
    (exact; module docstring, step 1)."""
    parts = partition.vertex_parts()
    if _rotation_invariant(partition, graph):
        return [_centre_by_rotation(part, graph, partition.a) for part in parts]
    return [_centre(part, graph.adj) for part in parts]


def _skeleton(part: Sequence[int], graph: SwitchGraph, root: int) -> list[tuple[int, int]]:
    """BFS spanning tree of G[V_t] from ``root``, as (parent, child) vertex pairs. One set holds the part's
    routers not reached yet, so each scanned link costs one set lookup (no induced subgraph is built)."""
    adj = graph.adj
    unseen = set(part)
    unseen.discard(root)
    edges: list[tuple[int, int]] = []
    queue = deque([root])
    while queue:
        u = queue.popleft()
        for w in adj[u]:
            if w in unseen:
                unseen.remove(w)
                edges.append((u, w))
                queue.append(w)
    if unseen:
        raise CistError(f"part with root {graph.names[root]} induces a disconnected subgraph "
                        f"({len(part) - len(unseen)} of {len(part)} routers reachable)")
    return edges


def _row_members(row: Sequence[int], k: int) -> list[list[int]]:
    members: list[list[int]] = [[] for _ in range(k)]
    for j, t in enumerate(row):
        members[t].append(j)
    return members


def _generic_leaves(partition: DragonflyPartition, group: int) -> list[list[tuple[int, int]]]:
    """Per tree t, the (hub, leaf) router pairs inside ``group`` (router numbers within the group)."""
    k = partition.k
    members = _row_members(partition.part_of[group], k)
    for t, m in enumerate(members):
        if len(m) != 2 and not (t == 0 and len(m) == 3):
            raise CistError(f"leaf rule 'generic' needs 2 routers of every part in every group (3 allowed in "
                            f"part 0); part {t} has {len(m)} in group {group}")
    leaves: list[list[tuple[int, int]]] = [[] for _ in range(k)]
    for s in range(k):
        ps = members[s]
        for t in range(s + 1, k):
            pt = members[t]
            leaves[t].extend((pt[j % 2], x) for j, x in enumerate(ps))
            leaves[s].extend([(ps[1], pt[0]), (ps[0], pt[1])])
    return leaves


def _algorithm3_leaves(partition: DragonflyPartition, group: int) -> list[list[tuple[int, int]]]:
    a, k = partition.a, partition.k
    c = (a - 1) // 2 if a % 2 else None
    members = _row_members(partition.part_of[group], k)
    leaves: list[list[tuple[int, int]]] = [[] for _ in range(k)]
    for t in range(k):
        m0, m1 = t, a - 1 - t
        expected = {m0, m1} | ({c} if t == 0 and c is not None else set())
        if set(members[t]) != expected:
            raise CistError("leaf rule 'algorithm3' needs the pair partition {t, a-1-t} of the relative and "
                            "circulant arrangements; use rule 'generic'")
        for r in range(a):
            if r in expected:
                continue
            if r == c or m0 < r < a // 2 or r > m1:
                leaves[t].append((m0, r))
            elif r < m0 or (a + 1) // 2 <= r < m1:
                leaves[t].append((m1, r))
            else:
                raise CistError(f"algorithm3: router {r} of group {group} is not attached in tree {t}")
    return leaves


def _check_fits(partition: DragonflyPartition, graph: SwitchGraph, rule: str) -> None:
    if rule not in RULES:
        raise CistError(f"cist: leaf rule {rule!r} is invalid; valid: {', '.join(RULES)}")
    if len(graph.names) != partition.a * partition.g:
        raise CistError(f"partition of {partition.a * partition.g} routers does not fit a graph of "
                        f"{len(graph.names)} switches")


def tree_edges(partition: DragonflyPartition, graph: SwitchGraph, roots: Sequence[int],
               rule: Rule = "generic") -> list[list[tuple[int, int]]]:
    """Algorithm 3 (corrected): per tree t, its N-1 edges as (parent, child) vertex pairs — the BFS skeleton of
    G[V_t] from ``roots[t]`` (:func:`skeleton_roots`), then the leaves hung on their group's V_t routers."""
    _check_fits(partition, graph, rule)
    a, k = partition.a, partition.k
    leaf_fn = _generic_leaves if rule == "generic" else _algorithm3_leaves
    pattern: dict[tuple[int, ...], list[list[tuple[int, int]]]] = {}
    per_tree: list[list[tuple[int, int]]] = [[] for _ in range(k)]
    for i, row in enumerate(partition.part_of):
        if row not in pattern:
            pattern[row] = leaf_fn(partition, i)
        base = i * a
        for t, pairs in enumerate(pattern[row]):
            per_tree[t].extend((base + hub, base + leaf) for hub, leaf in pairs)
    return [_skeleton(part, graph, roots[t]) + per_tree[t] for t, part in enumerate(partition.vertex_parts())]


def build_trees(partition: DragonflyPartition, graph: SwitchGraph, rule: Rule = "generic") -> tuple[CistTree, ...]:
    """The k = partition.k trees (unvalidated; see :func:`dcnlab.controller.cist.plan.plan_cists`)."""
    _check_fits(partition, graph, rule)
    names = graph.names
    roots = skeleton_roots(partition, graph)
    return tuple(CistTree(t, names[roots[t]], tuple((names[u], names[v]) for u, v in edges), tree_diameter(edges))
                 for t, edges in enumerate(tree_edges(partition, graph, roots, rule)))
