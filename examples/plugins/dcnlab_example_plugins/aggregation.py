"""An aggregation tree builder: the Takahashi-Matsuyama shortest-path heuristic for Steiner trees."""

from __future__ import annotations

import networkx as nx

from dcnlab.topos.model import Role


def hop_graph(fabric) -> nx.Graph:
    """Where a tree may hop: BCube servers one switch apart (servers aggregate), or the fat-tree's links."""
    g = nx.Graph()
    if fabric.kind == "bcube":
        for link in fabric.links():
            a, b = (link.a, link.b) if fabric.node(link.a).role is Role.SWITCH else (link.b, link.a)
            g.add_edge(a, b)                             # switch - server
        servers = nx.Graph()
        for sw in (n for n in g if fabric.node(n).role is Role.SWITCH):
            members = sorted(g[sw])
            servers.add_edges_from((u, v) for i, u in enumerate(members) for v in members[i + 1:])
        return servers
    g.add_edges_from((link.a, link.b) for link in fabric.links())
    return g


def takahashi_matsuyama(fabric, receiver, senders, seed=0):
    """Takahashi-Matsuyama: start from the receiver, then join the sender nearest the tree by its shortest
    path, again and again (a 2-approximate Steiner tree; ties by name)."""
    g = hop_graph(fabric)
    parent: dict[str, str] = {}
    tree = {receiver}
    left = set(senders)
    while left:
        dist, path = nx.multi_source_dijkstra(g, tree)
        s = min(left, key=lambda v: (dist[v], v))
        p = path[s]                                      # from a tree node to s
        for child, par in zip(p[:0:-1], p[-2::-1]):
            parent[child] = par
        tree.update(p)
        left -= tree
    return parent


takahashi_matsuyama.fabrics = ("bcube", "fattree")
