"""The mechanisms' trees as link sets (``/api/trees``), from the planners' own result objects.

* multicast: a :class:`~dcnlab.controller.multicast.planning.PlanResult` -> one tree per group (its
  tree's links, the root; groups merged on one tree share it; dual plans add each backup tree);
* aggregation: an :class:`~dcnlab.controller.aggregation.tree.AggregationTree` or a shuffle plan ->
  the physical links its hops cross, receiver / senders / aggregating nodes marked;
* CISTs: a :class:`~dcnlab.controller.cist.plan.CistPlan` -> one tree per CIST, its root marked;
* a running multicast data plane (:func:`dataplane_trees`): the groups it has installed, as they are now.

A :class:`ViewTree` names node pairs; :func:`resolve` turns them into the drawn link ids (or, on an
aggregated drawing, block bundles with how many of the tree's links each carries).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dcnlab.view.layout import link_index

MAX_TREES = 2000
"""Trees listed in the picker (a 5,000-group plan lists its first 2,000 and says so)."""


@dataclass(frozen=True)
class ViewTree:
    id: str
    kind: str
    """``multicast``, ``aggregation`` or ``cist``."""
    label: str
    pairs: tuple[tuple[str, str], ...]
    roles: dict[str, str] = field(default_factory=dict)
    """node -> ``root``, ``receiver``, ``sender``, ``aggregator``, ``member``."""


def multicast_trees(h: Any, result: Any, limit: int = MAX_TREES) -> list[ViewTree]:
    out: list[ViewTree] = []
    cache: dict[tuple[int, int], tuple[tuple[str, str], ...]] = {}

    def pairs(tree: Any) -> tuple[tuple[str, str], ...]:
        key = (tree.plane, tree.tid)
        if key not in cache:
            cache[key] = tuple(tree.directed_links(h))
        return cache[key]

    for g in result.groups[:limit]:
        tree = result.tree(g.tree)
        roles = {h.host_name(x): "member" for x in g.members}
        roles[tree.root(h)] = "root"
        mates = len(tree.groups) - 1
        out.append(ViewTree(f"mc{g.mgid}", "multicast", f"group {g.mgid}: color {tree.color}, root {tree.root(h)}, "
                            f"{len(tree.links)} links{f', shared with {mates} more' if mates else ''}",
                            pairs(tree), roles))
        if g.backup is not None:
            b = result.tree(g.backup, 1)
            out.append(ViewTree(f"mc{g.mgid}b", "multicast", f"group {g.mgid} backup: color {b.color}, root "
                                f"{b.root(h)}", pairs(b), {**roles, b.root(h): "root"}))
    return out


def dataplane_trees(dp: Any, limit: int = MAX_TREES) -> list[ViewTree]:
    """The groups a running :class:`~dcnlab.controller.multicast.dataplane.MulticastDataplane` has
    installed: per group its tree in each plane (the second one of dual mode is ``backup``), from the
    data plane's own planner state, so what the page highlights is what the switches replicate on."""
    h, out = dp.h, []
    for mgid in sorted(dp.groups())[:limit]:
        roles = {m: "member" for m in dp.members(mgid)}
        for k, tree in enumerate(dp.group_trees(mgid)):
            mates = len(tree.groups) - 1
            out.append(ViewTree(f"mc{mgid}" + ("b" if k else ""), "multicast",
                                f"group {mgid}{' backup' if k else ''}: color {tree.color}, root {tree.root(h)}, "
                                f"{len(tree.links)} links{f', shared with {mates} more' if mates else ''}",
                                tuple(tree.directed_links(h)), {**roles, tree.root(h): "root"}))
    return out


def aggregation_trees(plan: Any, label: str = "") -> list[ViewTree]:
    """An incast tree, or a shuffle plan's tree per receiver (``plan.trees``: receiver -> tree)."""
    trees = plan.trees if hasattr(plan, "receivers") else {plan.receiver: plan}
    out = []
    for receiver, tree in trees.items():
        roles = {s: "sender" for s in tree.senders}
        roles.update({a: "aggregator" for a in tree.aggregators})
        roles[tree.receiver] = "receiver"
        pairs = tuple(dict.fromkeys((a, b) for hop in tree.hops for a, b in zip(hop.path, hop.path[1:])))
        out.append(ViewTree(f"agg-{receiver}", "aggregation",
                            label or f"{tree.algorithm} -> {receiver}: cost {tree.cost:g}, {tree.links} links, "
                            f"{len(tree.aggregators)} aggregating", pairs, roles))
    return out


def cist_trees(plan: Any) -> list[ViewTree]:
    return [ViewTree(f"cist{t.tree_id}", "cist", f"CIST {t.tree_id}: root {t.root}, diameter {t.diameter}",
                     tuple(t.edges), {t.root: "root"}) for t in plan.trees]


def resolve(trees: Sequence[ViewTree], topo: dict[str, Any]) -> dict[str, Any]:
    """The ``/api/trees`` object: per tree its drawn link ids (``links``; on blocks ``bundles``:
    ``{id: count}``), its nodes' roles by drawn node (on blocks also ``members``: per block how many
    nodes of each role it holds), and the pairs no link joins (``missing``)."""
    block_of: dict[str, str] | None = topo.get("_block_of")
    out = []
    if block_of is None:
        index = link_index(topo)
        for t in trees:
            ids, missing = [], []
            for a, b in t.pairs:
                i = index.get(frozenset((a, b)))
                (ids.append(i) if i is not None else missing.append([a, b]))
            out.append({"id": t.id, "kind": t.kind, "label": t.label, "links": sorted(set(ids)), "roles": t.roles,
                        "missing": missing})
    else:
        bundle = {frozenset((l["a"], l["b"])): l["id"] for l in topo["links"]}
        for t in trees:
            counts: Counter[int] = Counter()
            for a, b in t.pairs:
                i = bundle.get(frozenset((block_of.get(a, a), block_of.get(b, b))))
                if i is not None:
                    counts[i] += 1
            roles: dict[str, str] = {}
            members: dict[str, Counter[str]] = {}
            for n, r in t.roles.items():
                blk = block_of.get(n)
                if blk is None:
                    continue
                members.setdefault(blk, Counter())[r] += 1
                if roles.get(blk) not in ("root", "receiver"):
                    roles[blk] = r
            out.append({"id": t.id, "kind": t.kind, "label": t.label, "links": sorted(counts),
                        "bundles": {str(k): v for k, v in counts.items()}, "roles": roles,
                        "members": {b: dict(c) for b, c in members.items()}, "missing": []})
    return {"trees": out}

