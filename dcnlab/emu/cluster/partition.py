"""Placement of a fabric on machines: switches balanced, few links cut between machines.

Every forwarding node (a BMv2 process: each switch, and each BCube server) is placed on one
machine; a host goes with the forwarding node it hangs off, so host links are never cut. What is
left is balanced graph partitioning of the forwarding nodes with unit weights: minimise the links
whose ends are on different machines (each becomes a tunnel, and each frame over it costs both
machines a system call and the wire between them) while every machine gets ``S // N`` or
``S // N + 1`` of the ``S`` switches (memory and bring-up time grow with the switches; a
machine with more of them finishes last).

The problem is NP-hard; the standard heuristics are Kernighan and Lin's pairwise-swap refinement
(B. W. Kernighan, S. Lin, "An efficient heuristic procedure for partitioning graphs", Bell System
Technical Journal 49(2), 1970) and METIS's multilevel scheme (G. Karypis, V. Kumar, "A fast and high
quality multilevel scheme for partitioning irregular graphs", SIAM J. Sci. Comput. 20(1), 1998).
dcnlab does what METIS's recursive mode (``pmetis``) does at one level: recursive bisection, each
bisection grown greedily from a pseudo-peripheral node (METIS's "greedy graph growing") and then
refined with networkx's :func:`~networkx.algorithms.community.kernighan_lin_bisection`, which swaps
pairs and so keeps the sizes it starts from. A few starts are tried; the smallest cut wins.
Machines are split ``ceil(N/2)`` / ``floor(N/2)`` and switches in the same proportion, so any ``N``
works, not only powers of two.

Decision: networkx rather than METIS (``pymetis``): networkx is already a dependency, its result is
deterministic for a given seed, and at these sizes (at most a few thousand switches) the
refinement takes well under a second. On fat-trees it finds the structure's natural cut
(whole pods together, core switches spread): fat-tree k=4 over two machines cuts 8 of 32
switch-to-switch links, the optimum, where round-robin placement cuts 16.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import networkx as nx
from networkx.algorithms.community import kernighan_lin_bisection

from dcnlab.topos.errors import UserError
from dcnlab.topos.model import Fabric, Link

__all__ = ["MachinePart", "Placement", "balanced_sizes", "from_groups", "partition_graph", "place", "round_robin",
           "switch_graph", "total_cut"]

TRIES = 4
"""Starting nodes tried per bisection (the smallest cut is kept)."""
KL_ITERATIONS = 10


def switch_graph(fabric: Fabric) -> nx.Graph:
    """The forwarding nodes and the links between them (edge weight: parallel links)."""
    g = nx.Graph()
    g.add_nodes_from((n.name, {"hosts": 0}) for n in fabric.forwarding_nodes())
    for h in fabric.hosts():
        g.nodes[h.node]["hosts"] += 1
    for link in fabric.links():
        if link.a in g and link.b in g:
            w = g.get_edge_data(link.a, link.b, {"weight": 0})["weight"]
            g.add_edge(link.a, link.b, weight=w + 1)
    return g


def _induced(g: nx.Graph, nodes: Iterable[Hashable]) -> nx.Graph:
    """The subgraph on ``nodes``, in ``g``'s node order (a networkx subgraph *view* of fewer than half the
    nodes iterates over the node set, whose order changes with the process's hash seed; the result of
    Kernighan–Lin depends on that order)."""
    keep = set(nodes)
    h = nx.Graph()
    h.add_nodes_from((n, g.nodes[n]) for n in g if n in keep)
    h.add_edges_from((u, v, d) for u, v, d in g.edges(data=True) if u in keep and v in keep)
    return h


def balanced_sizes(total: int, parts: int) -> list[int]:
    """``total`` items over ``parts``: ``total // parts`` each, one more for the first ``total % parts``."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def _cut_weight(g: nx.Graph, a: set[Hashable]) -> int:
    return sum(d.get("weight", 1) for u, v, d in g.edges(data=True) if (u in a) != (v in a))


def _pseudo_peripheral(g: nx.Graph, start: Hashable) -> Hashable:
    """A node far from ``start`` (two BFS sweeps), where greedy growing starts well."""
    node = start
    for _ in range(2):
        dist = nx.single_source_shortest_path_length(g, node)
        node = max(dist, key=lambda n: (dist[n], str(n)))
    return node


def _grow(g: nx.Graph, size: int, start: Hashable, order: Sequence[Hashable]) -> set[Hashable]:
    """Greedy graph growing: from ``start``, add ``size`` nodes, each time the frontier node with the
    most links into the grown set (ties: fewest links out). A disconnected graph continues at the
    next node of ``order`` not yet taken."""
    grown: set[Hashable] = set()
    inside: dict[Hashable, int] = {}
    heap: list[tuple[int, int, int, Hashable]] = []
    seq = 0
    rest = iter(order)

    def push(n: Hashable) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(heap, (-inside.get(n, 0), g.degree(n, weight="weight"), seq, n))

    push(start)
    while len(grown) < size:
        while heap and heap[0][3] in grown:
            heapq.heappop(heap)
        if not heap:
            nxt = next(n for n in rest if n not in grown)
            push(nxt)
            continue
        _, _, _, n = heapq.heappop(heap)   # a node's newest entry has its largest count: it pops first
        grown.add(n)
        for m, d in g[n].items():
            if m not in grown:
                inside[m] = inside.get(m, 0) + d.get("weight", 1)
                push(m)                 # stale entries of m stay in the heap and are skipped above
    return grown


def _spread(nodes: Sequence[Hashable], size: int) -> set[Hashable]:
    """``size`` of ``nodes`` spread evenly over their order (every other node for a half)."""
    n = len(nodes)
    return {v for i, v in enumerate(nodes) if (i + 1) * size // n > i * size // n}


def _hosts(g: nx.Graph, nodes: Iterable[Hashable]) -> int:
    return sum(g.nodes[n].get("hosts", 0) for n in nodes)


def _bisect(g: nx.Graph, size_a: int, rng: random.Random, tries: int, share_a: float = 0.5
            ) -> tuple[set[Hashable], set[Hashable]]:
    """Split ``g`` into parts of ``size_a`` and ``len(g) - size_a`` nodes with few edges between them.

    Starting partitions: greedy growing from a pseudo-peripheral node and from ``tries - 1`` random
    ones, and two from the fabric's own order (its first ``size_a`` nodes, and nodes spread over the
    order, which is round-robin placement); each is refined by Kernighan–Lin and the smallest cut
    wins; among equal cuts, the one whose ``hosts`` (node attribute) are closest to ``share_a`` of
    them. The order-based starts matter where the builder's numbering already follows the structure
    (BCube: server addresses), so the result is never worse than refined round-robin."""
    nodes = list(g.nodes)           # the fabric's order (_induced keeps it)
    if size_a <= 0:
        return set(), set(nodes)
    if size_a >= len(nodes):
        return set(nodes), set()
    first = nodes[0]
    starts = [_pseudo_peripheral(_induced(g, nx.node_connected_component(g, first)), first)]
    starts += rng.sample(nodes, min(tries - 1, len(nodes)))
    initial = [_grow(g, size_a, start, nodes) for start in dict.fromkeys(starts)]
    initial += [set(nodes[:size_a]), _spread(nodes, size_a)]
    target = _hosts(g, nodes) * share_a
    best: tuple[tuple[int, float], set[Hashable], set[Hashable]] | None = None
    for a0 in initial:
        b0 = set(nodes) - a0
        a, b = kernighan_lin_bisection(g, partition=(a0, b0), max_iter=KL_ITERATIONS, weight="weight",
                                       seed=rng.randrange(2**31))
        a, b = (set(a), set(b)) if len(a) == len(a0) else (set(b), set(a))   # it may return them swapped
        score = (_cut_weight(g, a), abs(_hosts(g, a) - target))
        if best is None or score < best[0]:
            best = (score, a, b)
    assert best is not None
    return best[1], best[2]


def _refine_pairs(g: nx.Graph, groups: list[set[Hashable]], rng: random.Random) -> list[set[Hashable]]:
    """Kernighan–Lin on every pair of parts in turn. A swap between parts i and j changes only the
    i–j cut (a link to a third part is cut either way), so each step can only lower the total."""
    groups = [set(x) for x in groups]
    for i in range(len(groups)):
        for j in range(i + 1, len(groups)):
            if not groups[i] or not groups[j]:
                continue
            sub = _induced(g, groups[i] | groups[j])
            before = _cut_weight(sub, groups[i])
            a, b = kernighan_lin_bisection(sub, partition=(groups[i], groups[j]), max_iter=KL_ITERATIONS,
                                           weight="weight", seed=rng.randrange(2**31))
            a, b = (set(a), set(b)) if len(a) == len(groups[i]) else (set(b), set(a))
            if _cut_weight(sub, a) < before:
                groups[i], groups[j] = a, b
    return groups


def total_cut(g: nx.Graph, groups: Sequence[set[Hashable]]) -> int:
    """Weight of the edges whose ends are in different groups."""
    of = {n: i for i, grp in enumerate(groups) for n in grp}
    return sum(d.get("weight", 1) for u, v, d in g.edges(data=True) if of[u] != of[v])


def partition_graph(g: nx.Graph, parts: int, seed: int = 0, tries: int = TRIES) -> list[set[Hashable]]:
    """``g``'s nodes in ``parts`` sets of balanced sizes (:func:`balanced_sizes`) with few edges between
    them: recursive bisection (greedy growing, then Kernighan–Lin), then Kernighan–Lin between every
    pair of parts; round-robin over the graph's node order, refined the same way, is the other
    candidate, and the smaller cut wins."""
    if parts < 1:
        raise UserError(f"partition: parts={parts} is out of range; valid: parts >= 1")
    rng = random.Random(seed)
    sizes = balanced_sizes(g.number_of_nodes(), parts)

    def split(nodes: set[Hashable], sizes: list[int]) -> list[set[Hashable]]:
        if len(sizes) == 1:
            return [nodes]
        half = (len(sizes) + 1) // 2
        a, b = _bisect(_induced(g, nodes), sum(sizes[:half]), rng, tries, half / len(sizes))
        return split(a, sizes[:half]) + split(b, sizes[half:])

    recursive = split(set(g.nodes), sizes)
    if parts == 1:
        return recursive
    rr: list[set[Hashable]] = [set() for _ in range(parts)]
    for i, n in enumerate(g.nodes):
        rr[i % parts].add(n)
    candidates = [_refine_pairs(g, recursive, rng), _refine_pairs(g, rr, rng)]
    return min(candidates, key=lambda c: (total_cut(g, c), max(_hosts(g, x) for x in c) - min(_hosts(g, x) for x in c)))


@dataclass(frozen=True)
class MachinePart:
    """What one machine runs."""

    machine: str
    switches: tuple[str, ...]
    """Forwarding nodes (BMv2 processes), in the fabric's order."""
    hosts: tuple[str, ...]
    cut_links: tuple[Link, ...]
    """Links with one end here and the other on another machine (tunnels)."""


@dataclass(frozen=True)
class Placement:
    """Which machine runs each forwarding node and host, and the links cut between machines."""

    machines: tuple[str, ...]
    machine_of: dict[str, int]
    """Every forwarding node and host -> index into ``machines``."""
    parts: tuple[MachinePart, ...]
    cut: tuple[Link, ...]
    """Every link whose ends are on different machines, in the fabric's order."""
    method: str = "kernighan-lin"

    def machine(self, node: str) -> str:
        return self.machines[self.machine_of[node]]

    def is_cut(self, link: Link) -> bool:
        return self.machine_of[link.a] != self.machine_of[link.b]

    def imbalance(self) -> int:
        """Most switches on one machine minus fewest."""
        counts = [len(p.switches) for p in self.parts]
        return max(counts) - min(counts)

    def pairs(self) -> dict[tuple[int, int], int]:
        """Cut links per machine pair (lower index first)."""
        out: dict[tuple[int, int], int] = {}
        for link in self.cut:
            i, j = sorted((self.machine_of[link.a], self.machine_of[link.b]))
            out[(i, j)] = out.get((i, j), 0) + 1
        return out

    def table(self, names: int = 10) -> str:
        """The placement as text: switches, hosts and cut links per machine, then cut links per machine
        pair, then each machine's switches (the first ``names`` of them) and cut links."""
        w = max(7, *(len(m) for m in self.machines))
        lines = [f"placement ({self.method}): {sum(len(p.switches) for p in self.parts)} switches, "
                 f"{sum(len(p.hosts) for p in self.parts)} hosts, {len(self.cut)} cut links over "
                 f"{len(self.machines)} machines",
                 f"  {'machine':<{w}}  switches  hosts  cut links"]
        for p in self.parts:
            lines.append(f"  {p.machine:<{w}}  {len(p.switches):>8}  {len(p.hosts):>5}  {len(p.cut_links):>9}")
        if len(self.machines) > 2:
            lines.append("  cut links per machine pair: " + ", ".join(
                f"{self.machines[i]}-{self.machines[j]} {n}" for (i, j), n in sorted(self.pairs().items())))
        for p in self.parts:
            shown = ", ".join(p.switches[:names]) + (f", ... ({len(p.switches) - names} more)"
                                                    if len(p.switches) > names else "")
            lines.append(f"  {p.machine}: {shown or '(no switch)'}")
        if len(self.cut) <= 2 * names:
            for link in self.cut:
                lines.append(f"    cut {link.a}:{link.a_port} ({self.machine(link.a)}) -- {link.b}:{link.b_port} "
                             f"({self.machine(link.b)})")
        return "\n".join(lines)


def from_groups(fabric: Fabric, machines: Sequence[str], groups: Sequence[Iterable[str]],
                method: str = "given") -> Placement:
    """The placement that runs ``groups[i]`` (forwarding node names) on ``machines[i]``, hosts with their switch."""
    _check_machines(fabric, machines)
    given = [set(g) for g in groups]
    names = {n.name for n in fabric.forwarding_nodes()}
    if len(given) != len(machines) or sum(map(len, given)) != len(names) or set().union(*given) != names:
        raise UserError(f"placement: the groups must hold every forwarding node of {fabric.spec} once, one group "
                        f"per machine")
    return _placement(fabric, machines, given, method)


def _placement(fabric: Fabric, machines: Sequence[str], groups: Sequence[Iterable[str]], method: str) -> Placement:
    of: dict[str, int] = {}
    for i, group in enumerate(groups):
        for n in group:
            of[n] = i
    hosts: list[list[str]] = [[] for _ in machines]
    for h in fabric.hosts():
        of[h.name] = of[h.node]
        hosts[of[h.node]].append(h.name)
    switches: list[list[str]] = [[] for _ in machines]
    for node in fabric.forwarding_nodes():
        switches[of[node.name]].append(node.name)
    links = list(fabric.links())
    cut = tuple(link for link in links if of[link.a] != of[link.b])
    parts = tuple(MachinePart(m, tuple(switches[i]), tuple(hosts[i]),
                              tuple(link for link in cut if i in (of[link.a], of[link.b])))
                  for i, m in enumerate(machines))
    return Placement(tuple(machines), of, parts, cut, method)


def _check_machines(fabric: Fabric, machines: Sequence[str]) -> None:
    if not machines:
        raise UserError("placement: no machine given; valid: one or more machines")
    if len(set(machines)) != len(machines):
        raise UserError(f"placement: machine names repeat ({', '.join(machines)}); valid: distinct names")


def place(fabric: Fabric, machines: Sequence[str], seed: int = 0, tries: int = TRIES) -> Placement:
    """Place ``fabric`` on ``machines`` (the first is this machine): balanced switches, few cut links."""
    _check_machines(fabric, machines)
    groups = partition_graph(switch_graph(fabric), len(machines), seed, tries)
    return _placement(fabric, machines, [{str(n) for n in g} for g in groups], "kernighan-lin")


def round_robin(fabric: Fabric, machines: Sequence[str]) -> Placement:
    """Switch ``i`` on machine ``i mod N``, hosts with their switch (Mininet's ``RoundRobinPlacer`` over the
    switches, with ``SwitchBinPlacer``'s host rule): the baseline :func:`place` is measured against."""
    _check_machines(fabric, machines)
    groups: list[list[str]] = [[] for _ in machines]
    for i, n in enumerate(fabric.forwarding_nodes()):
        groups[i % len(machines)].append(n.name)
    return _placement(fabric, machines, groups, "round-robin")
