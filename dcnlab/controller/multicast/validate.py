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
a user's router (:mod:`dcnlab.controller.multicast.registry`) is checked before its result is used:
:func:`router_result` reads its ``trees()``, ``groups()``, ``tree_id()`` and ``refused`` no further than they can
be right (no more trees than groups), checks their types, then their routing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from dcnlab.controller.multicast.hierarchy import Hierarchy
from dcnlab.controller.multicast.tree import TreeRecord
from dcnlab.controller.registry import PluginError, a_type, at_most

_INT_FIELDS = ("tid", "color", "tnid", "x", "level", "root_key", "plane")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _shown(v: Any) -> str:
    return a_type(v) + (f" ({v!r:.40})" if isinstance(v, (str, int, float)) else "")


def router_result(router: Any, h: Hierarchy, colors: int, added: int, what: str, check: bool = True,
                  trees_per_group: int = 1) -> tuple[list[TreeRecord], dict[int, frozenset[int]], dict[int, int],
                                                     dict[int, str]]:
    """``(trees, groups, tree_of, refused)`` of a router after ``added`` groups were added, each read no further
    than it can be right (at most ``trees_per_group`` trees per group added, at most ``added`` groups and
    refusals, at most every host in a group) and of the interface's types, then, with ``check``, its routing
    checked (:func:`routing_problems`); anything wrong is one :class:`PluginError` ``"{what}: ..."``. Call it
    inside :func:`~dcnlab.controller.registry.plugin_code`: it reads the router (the user's code).
    Without ``check`` (dcnlab's own routers) the results are taken as they are."""
    if not check:
        placed = {g: frozenset(m) for g, m in router.groups().items()}
        return list(router.trees()), placed, {g: router.tree_id(g) for g in placed}, dict(router.refused)
    most = added * trees_per_group
    trees = at_most(router.trees(), most, f"{what}: trees()",
                    f"at most {trees_per_group} tree per group ({added:,} groups added), each a TreeRecord")
    seen: set[tuple[int, int]] = set()
    for t in trees:
        if not isinstance(t, TreeRecord):
            raise PluginError(f"{what}: trees() gave {_shown(t)}; valid: TreeRecord "
                              "(dcnlab.controller.multicast.tree)")
        bad = next((f for f in _INT_FIELDS if not _is_int(getattr(t, f))), None)
        if bad is not None:
            raise PluginError(f"{what}: tree {t.tid!r:.40}: its {bad} is {_shown(getattr(t, bad))}; valid: an int")
        if not isinstance(t.links, (set, frozenset)) or not all(_is_int(lk) for lk in t.links):
            raise PluginError(f"{what}: tree {t.tid}: its links are {_shown(t.links)}; valid: a frozenset of link ids")
        if not isinstance(t.groups, tuple) or not all(_is_int(g) for g in t.groups):
            raise PluginError(f"{what}: tree {t.tid}: its groups are {_shown(t.groups)}; valid: a tuple of MGIDs")
        if (t.plane, t.tid) in seen:
            raise PluginError(f"{what}: two trees have the id {t.tid}")
        seen.add((t.plane, t.tid))
    raw = router.groups()
    if not isinstance(raw, Mapping):
        raise PluginError(f"{what}: groups() gave {_shown(raw)}; valid: a mapping {{mgid: hosts}}")
    groups: dict[int, frozenset[int]] = {}
    for g, members in at_most(raw.items(), added, f"{what}: groups()", f"at most the {added:,} groups added"):
        hosts = at_most(members, h.num_hosts, f"{what}: groups()[{g!r:.40}]",
                        f"at most the fabric's {h.num_hosts:,} hosts")
        if not _is_int(g) or not all(_is_int(m) for m in hosts):
            raise PluginError(f"{what}: groups() has {_shown(g)} -> {_shown(members)}; valid: int MGID -> host "
                              "indices")
        groups[g] = frozenset(hosts)
    tree_of = {g: router.tree_id(g) for g in groups}
    bad_tree = next((g for g, tid in tree_of.items() if not _is_int(tid)), None)
    if bad_tree is not None:
        raise PluginError(f"{what}: tree_id({bad_tree}) gave {_shown(tree_of[bad_tree])}; valid: a tree's tid")
    raw = router.refused
    if not isinstance(raw, Mapping):
        raise PluginError(f"{what}: its refused is {_shown(raw)}; valid: a dict {{mgid: reason}}")
    refused = dict(at_most(raw.items(), added, f"{what}: refused", f"at most the {added:,} groups added"))
    bad_ref = next(((g, r) for g, r in refused.items() if not _is_int(g) or not isinstance(r, str)), None)
    if bad_ref is not None:
        raise PluginError(f"{what}: its refused has {_shown(bad_ref[0])} -> {_shown(bad_ref[1])}; valid: int MGID "
                          "-> reason (a str)")
    problems = routing_problems(h, trees, groups, tree_of, colors)
    if problems:
        raise PluginError(f"{what}: {'; '.join(problems)}")
    return trees, groups, tree_of, refused


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
