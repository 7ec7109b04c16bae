"""The switch graph that CISTs live on: forwarding nodes and the links between them, with port numbers.

Dragonfly CISTs (Bian et al.), §2.2: the paper's graph D(p,a,h) has the *switches* as vertices and the switch-to-switch links
as edges; terminals (hosts) are single-homed leaves and are left out. :class:`SwitchGraph` extracts exactly
that graph from any :class:`~dcnlab.topos.model.Fabric` (it only reads ``nodes()`` and ``links()``), and keeps the
port numbers of both ends of every link plus each switch's host ports, so that trees can later be compiled
into per-port forwarding state (:mod:`dcnlab.controller.cist.forwarding`).

Vertices are numbered in the fabric's node order; for Dragonfly that makes router ``s<i>_<j>`` vertex
``i·a + j``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from dcnlab.topos.model import Fabric


@dataclass(frozen=True)
class SwitchGraph:
    """Undirected simple graph of the forwarding nodes of a fabric (hosts excluded).

    The mappings are plain dicts (so that the graph pickles to worker processes); treat them as read-only."""

    names: tuple[str, ...]
    """vertex number -> switch name (fabric node order)."""
    index: Mapping[str, int]
    """switch name -> vertex number."""
    adj: tuple[tuple[int, ...], ...]
    """vertex -> neighbour vertices, ascending."""
    port: Mapping[tuple[int, int], int]
    """(u, v) -> the port of u whose link leads to v."""
    host_ports: tuple[tuple[int, ...], ...]
    """vertex -> its ports that lead to hosts, ascending."""

    @classmethod
    def from_fabric(cls, fabric: Fabric) -> SwitchGraph:
        names = tuple(n.name for n in fabric.forwarding_nodes())
        index = {name: i for i, name in enumerate(names)}
        nbrs: list[set[int]] = [set() for _ in names]
        hosts: list[list[int]] = [[] for _ in names]
        port: dict[tuple[int, int], int] = {}
        for link in fabric.links():
            u, v = index.get(link.a), index.get(link.b)
            if u is not None and v is not None:
                if u == v or v in nbrs[u]:
                    raise ValueError(f"{fabric.spec}: parallel link or loop between {link.a} and {link.b}; "
                                     "CISTs need a simple graph")
                nbrs[u].add(v)
                nbrs[v].add(u)
                port[(u, v)] = link.a_port
                port[(v, u)] = link.b_port
            elif u is not None:
                hosts[u].append(link.a_port)
            elif v is not None:
                hosts[v].append(link.b_port)
        return cls(names, index, tuple(tuple(sorted(s)) for s in nbrs), port, tuple(tuple(sorted(h)) for h in hosts))

    def __len__(self) -> int:
        return len(self.names)

    def edges(self) -> Iterator[tuple[int, int]]:
        """Every edge once, as (u, v) with u < v."""
        for u, vs in enumerate(self.adj):
            for v in vs:
                if u < v:
                    yield u, v

    def num_edges(self) -> int:
        return sum(len(vs) for vs in self.adj) // 2

    def vertex(self, name: str) -> int:
        """Vertex number of switch ``name``; ``KeyError`` naming it if the fabric has no such switch."""
        try:
            return self.index[name]
        except KeyError:
            raise KeyError(f"no switch named {name!r}") from None

    def to_networkx(self):  # -> networkx.Graph (imported lazily: the CLI must start fast)
        import networkx as nx
        g = nx.Graph()
        g.add_nodes_from(self.names)
        g.add_edges_from((self.names[u], self.names[v]) for u, v in self.edges())
        return g
