"""Aggregation trees on a k-ary fat-tree whose switches aggregate (switch-centric).

The papers leave switch-centric fabrics to future work (Guo et al., §2.1; Fang et al., §4.1): traditional switches cannot
buffer and merge flows. A P4 switch can, so here the roles flip: hosts are the senders and the
receiver, every switch may aggregate, and hosts never relay.

Definition used throughout dcnlab:

* A tree is rooted at the receiver host. Every flow climbs from its host's edge switch to the
  lowest switch from which the receiver is reachable downwards (the edge switch itself, an
  aggregation switch of the pod, or a core switch), then descends: an up/down shortest path, the
  only paths fat-tree routing uses.
* Where flows meet at a switch they are merged (the cost model's ``max + delta (sum - max)``), and
  the merged flow follows one next hop: aggregation happens at the switch where paths merge.
* The cost counts switch-level links: every hop is one link carrying the child's output, so at
  ``delta = 0`` a tree of ``V`` nodes costs ``V - 1`` (hosts included).

Algorithms:

* ``updown``: the minimum tree. All uplinks of the job use one aggregation position ``j`` and one
  core ``c`` above it, so every pod's flows meet at ``a<pod>_<j>`` and all pods meet at ``c``; flows
  from the receiver's own pod meet at the same ``a<pod>_<j>`` on the way down. Any tree needs every
  sender's edge switch, one aggregation switch per other pod with senders, one core and one
  aggregation switch in the receiver's pod when senders are outside it: this tree has exactly those,
  so it is optimal at ``delta = 0`` (the tests check it against the MILP). ``c`` is
  ``receiver index mod (k/2)^2``, which spreads concurrent jobs over the cores.
* ``unicast``: each sender's primary up/down route of the unicast routing
  (:class:`dcnlab.controller.routing.fattree.FatTreeRouter`), merged where routes meet; at a shared switch
  the merged flow follows the route of the lowest-indexed sender through it.
* ``kmb``: networkx ``steiner_tree(..., method="kou")`` on the fabric graph, oriented to the receiver.
* ``optimal``: :mod:`dcnlab.controller.aggregation.optimal` on the fabric graph (:func:`hop_graph`), switches
  as relays.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
from networkx.algorithms.approximation import steiner_tree

from dcnlab.controller.aggregation import optimal
from dcnlab.controller.routing.fattree import FatTreeRouter
from dcnlab.topos.errors import UserError
from dcnlab.topos.fattree import FatTree
from dcnlab.topos.model import Role

ALGORITHMS = ("updown", "unicast", "kmb", "optimal")


def _host_index(fabric: FatTree, name: str) -> int:
    _, (pod, e, x) = fabric._parse(name)
    return pod * fabric.half ** 2 + e * fabric.half + x


def updown_tree(fabric: FatTree, receiver: str, senders: list[str]) -> dict[str, str]:
    h = fabric.half
    r = _host_index(fabric, receiver)
    core = r % (h * h)
    j = core // h
    r_pod, r_edge = divmod(r // h, h)
    parent: dict[str, str] = {}
    r_edge_name = f"e{r_pod}_{r_edge}"
    r_agg = f"a{r_pod}_{j}"
    for s in senders:
        i = _host_index(fabric, s)
        pod, edge = divmod(i // h, h)
        edge_name = f"e{pod}_{edge}"
        parent[s] = edge_name
        if edge_name == r_edge_name:
            continue
        agg = f"a{pod}_{j}"
        parent[edge_name] = agg
        if pod == r_pod:
            parent[agg] = r_edge_name
        else:
            parent[agg] = f"c{core}"
            parent[f"c{core}"] = r_agg
            parent[r_agg] = r_edge_name
    parent[r_edge_name] = receiver
    return _reaching(parent, receiver, senders)


def unicast_tree(fabric: FatTree, receiver: str, senders: list[str]) -> dict[str, str]:
    router = FatTreeRouter(fabric)
    dst = _host_index(fabric, receiver)
    nxt: dict[str, tuple[int, str]] = {}
    for s in senders:
        i = _host_index(fabric, s)
        path = router.trace(i, dst)
        for a, b in zip(path, path[1:]):
            if a not in nxt or i < nxt[a][0]:
                nxt[a] = (i, b)
    return _reaching({a: b for a, (_, b) in nxt.items()}, receiver, senders)


def graph(fabric: FatTree) -> nx.Graph:
    g = nx.Graph()
    for link in fabric.links():
        g.add_edge(link.a, link.b, weight=1)
    return g


def kmb_tree(fabric: FatTree, receiver: str, senders: list[str]) -> dict[str, str]:
    t = steiner_tree(graph(fabric), [receiver, *senders], weight="weight", method="kou")
    return _orient(t, receiver)


def hop_graph(fabric: FatTree) -> tuple[optimal.HopGraph, np.ndarray, list[str]]:
    """The fabric as the MILP's hop graph (every link both ways, weight 1), switches as the relays."""
    nodes = sum(fabric.counts().values())      # the bound first, from the counts: k=400 has 16 million nodes
    if nodes > optimal.MAX_NODES:
        raise UserError(f"optimal: {fabric.spec} has {nodes:,} nodes; valid: at most {optimal.MAX_NODES:,} "
                        f"(e.g. fattree:k=16)")
    names = [n.name for n in fabric.nodes()]
    index = {v: i for i, v in enumerate(names)}
    tails, heads = [], []
    for link in fabric.links():
        tails += [index[link.a], index[link.b]]
        heads += [index[link.b], index[link.a]]
    hg = optimal.HopGraph(len(names), np.array(tails), np.array(heads), np.ones(len(tails)))
    relays = np.array([fabric.node(v).role is Role.SWITCH for v in names])
    return hg, relays, names


def _orient(tree: nx.Graph, root: str) -> dict[str, str]:
    return {child: par for par, child in nx.bfs_edges(tree, root)}


def _reaching(parent: dict[str, str], receiver: str, senders: list[str]) -> dict[str, str]:
    """Only the hops on some sender's way to the receiver."""
    keep: dict[str, str] = {}
    for s in senders:
        v = s
        while v != receiver and v not in keep:
            keep[v] = parent[v]
            v = parent[v]
    return keep
