"""Spanning trees per (color, TN): Theorem 1 and Corollary 1 of C-MR4LMS (Chen et al.).

A spanning tree (SPT) reaches every L0 switch from one root on the top level.  Theorem 1: with one color
exactly m trees can be link-disjoint — take one TN from each of the m TN groups (the p TNs reached by L1
index g) and one top switch in it.  Two such trees never share an L1 switch, so they share no link; and
together they use every link inside a CN, so no (m+1)-th tree fits.  Corollary 1: C colors give C·m.
Which TN of the group and which top switch is the root does not change the tree's identity for
conflicts; (color, TN) identifies it.  The mapping of :mod:`dcnlab.controller.multicast.mapping` picks
``tnid = g·p + color mod p`` and the first top switch.  Terminal links are not part of an SPT (the
paper's analysis ignores them); groups add their members' terminal links.

SPTs are never written to switches: a group's multicast tree is the part of its SPT that connects its
members (:mod:`dcnlab.controller.multicast.tree`).
"""

from __future__ import annotations

from dataclasses import dataclass

from dcnlab.controller.multicast.hierarchy import Hierarchy
from dcnlab.controller.multicast.mapping import SptMapping


@dataclass(frozen=True)
class SpanningTree:
    color: int
    group: int
    """TN group g = the L1 index the tree uses in every CN."""
    tnid: int
    x: int
    root: str
    links: frozenset[int]


def spt_links(h: Hierarchy, tnid: int, x: int = 0) -> frozenset[int]:
    """Every switch-to-switch link of the spanning tree rooted at top switch ``x`` of TN ``tnid``."""
    keys = sorted({h.key(0, host) for host in range(0, h.num_hosts, h.t)})
    links: set[int] = set()
    for level in range(h.top):
        links.update(h.uplink(level, k, tnid, x) for k in keys)
        if level + 1 < h.top:
            keys = sorted({k // h.divisors[level] for k in keys})
    return frozenset(links)


def spanning_trees(h: Hierarchy, mapping: SptMapping) -> list[SpanningTree]:
    """The C·m (per plane: C·m/2) conflict-free spanning trees of ``mapping``, ordered by spt_no."""
    out = []
    for s in range(mapping.num_spts):
        color, tnid = mapping.color_tnid(s)
        out.append(SpanningTree(color, mapping.color_group(s)[1], tnid, 0, h.node_name(h.top, 0, tnid, 0),
                                spt_links(h, tnid, 0)))
    return out
