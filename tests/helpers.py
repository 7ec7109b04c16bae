"""Test helpers: ground-truth graph algorithms independent of the code under test."""

from __future__ import annotations

from collections import deque

from dcnlab.topos.model import Fabric


def adjacency(fabric: Fabric) -> dict[str, list[str]]:
    adj: dict[str, list[str]] = {n.name: [] for n in fabric.nodes()}
    for l in fabric.links():
        adj[l.a].append(l.b)
        adj[l.b].append(l.a)
    return adj


def bfs_dist(adj: dict[str, list[str]], src: str) -> dict[str, int]:
    dist = {src: 0}
    q = deque([src])
    while q:
        u = q.popleft()
        for v in adj[u]:
            if v not in dist:
                dist[v] = dist[u] + 1
                q.append(v)
    return dist
