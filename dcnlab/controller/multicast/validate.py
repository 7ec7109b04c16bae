"""What every multicast routing must satisfy, checked independently of the algorithm that made it.

:func:`check_routing` takes a router's result (its trees and its groups) and finds, in this order:

1. a color outside the table (``0 <= color < colors``);
2. a tree that is not a tree of the fabric: a link id that does not exist, a node with two parents, or a
   node that does not reach the tree's root;
3. a group whose tree does not reach every member (the member's terminal link is not on the tree) or that
   is carried by no tree;
4. a table conflict: two trees of one plane with the same color on the same link (a switch port has one
   entry per color, so their packets would mix).

dcnlab's own planners pass it on every pattern of the reproduction (``tests/test_multicast_plugins.py``);
a user's router (:mod:`dcnlab.controller.multicast.registry`) is checked before its result is used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from dcnlab.controller.multicast.hierarchy import Hierarchy
from dcnlab.controller.multicast.tree import TreeRecord


def routing_problems(h: Hierarchy, trees: Sequence[TreeRecord], groups: Mapping[int, frozenset[int]],
                     tree_of: Mapping[int, int], colors: int, limit: int = 3) -> list[str]:
    """Up to ``limit`` problems of a routing (an empty list when it is valid)."""
    problems: list[str] = []

    def bad(text: str) -> bool:
        problems.append(text)
        return len(problems) >= limit

    by_id = {(t.plane, t.tid): t for t in trees}
    for t in trees:
        if not 0 <= t.color < colors and bad(f"tree {t.tid} has color {t.color}; valid: 0..{colors - 1}"):
            return problems
        if any(not 0 <= lk < h.num_links for lk in t.links):
            lk = next(lk for lk in t.links if not 0 <= lk < h.num_links)
            if bad(f"tree {t.tid} has link id {lk}; valid: 0..{h.num_links - 1}"):
                return problems
            continue
        problem = _tree_problem(h, t)
        if problem and bad(f"tree {t.tid}: {problem}"):
            return problems
    for mgid, members in groups.items():
        tid = tree_of.get(mgid)
        tree = by_id.get((0, tid)) if tid is not None else None
        if tree is None:
            if bad(f"group {mgid} is carried by no tree"):
                return problems
            continue
        missing = sorted(m for m in members if m not in tree.links)
        if missing and bad(f"group {mgid}: its tree {tid} does not reach member {h.host_name(missing[0])}"
                           + (f" and {len(missing) - 1} more" if len(missing) > 1 else "")):
            return problems
    if trees:
        plane = np.concatenate([np.full(len(t.links), t.plane, np.int64) for t in trees])
        link = np.concatenate([np.fromiter(t.links, np.int64, len(t.links)) for t in trees])
        color = np.concatenate([np.full(len(t.links), t.color, np.int64) for t in trees])
        base = max(colors, 1 + int(color.max(initial=0)))
        key = (plane * h.num_links + link) * base + color
        uniq, counts = np.unique(key, return_counts=True)
        if (counts > 1).any():
            k = int(uniq[counts > 1][0])
            c, lk = k % base, (k // base) % h.num_links
            u, _, d, _ = h.link_ends(lk)
            bad(f"{int((counts > 1).sum())} (link, color) table entries are used by two trees, e.g. "
                f"color {c} on {u}-{d}")
    return problems


def _tree_problem(h: Hierarchy, t: TreeRecord) -> str | None:
    parent: dict[str, str] = {}
    for lk in t.links:
        up, _, down, _ = h.link_ends(lk)
        if down in parent:
            return f"{down} has two parents ({parent[down]}, {up})"
        parent[down] = up
    root = t.root(h)
    if root in parent:
        return f"its root {root} has a parent ({parent[root]})"
    for start in parent:
        node, steps = start, 0
        while node != root:
            if node not in parent:
                return f"{start} does not reach the root {root} (stops at {node})"
            node, steps = parent[node], steps + 1
            if steps > len(parent):
                return f"a cycle through {start}"
    return None
