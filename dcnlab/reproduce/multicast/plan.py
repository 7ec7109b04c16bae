"""What ``dcnlab plan multicast --json`` prints: a plan's groups with their trees, roots, colors, merges and
backups, and its metrics (:class:`dcnlab.controller.multicast.planning.PlanResult`)."""

from __future__ import annotations

from typing import Any

from dcnlab.topos.errors import UserError

MAX_JSON_LINKS = 5_000_000


def _tree_json(h: Any, tree: Any, cache: dict[tuple[int, int], Any]) -> dict[str, Any]:
    key = (tree.plane, tree.tid)
    if key not in cache:
        cache[key] = {"tree": tree.tid, "color": tree.color, "root": tree.root(h),
                      "links": [list(e) for e in tree.directed_links(h)]}
    return cache[key]


def plan_json(h: Any, result: Any, summary: bool = False) -> dict[str, Any]:
    """The ``--json`` object of a :class:`PlanResult`."""
    total = sum(len(result.tree(g.tree).links) for g in result.groups)
    if not summary and total > MAX_JSON_LINKS:
        raise UserError(f"plan multicast --json would list {total:,} tree links ({len(result.groups)} groups on "
                        f"shared trees); add --summary to leave out links and members")
    cache: dict[tuple[int, int], Any] = {}
    groups = []
    for g in result.groups:
        tree = result.tree(g.tree)
        item: dict[str, Any] = {"mgid": g.mgid, "color": tree.color, "root": tree.root(h), "tree": tree.tid}
        if not summary:
            item["links"] = _tree_json(h, tree, cache)["links"]
            item["members"] = [h.host_name(x) for x in g.members]
        item["merged_with"] = list(result.mates(g))
        if g.backup is not None:
            b = result.tree(g.backup, 1)
            back: dict[str, Any] = {"tree": b.tid, "color": b.color, "root": b.root(h),
                                    "merged_with": [m for m in b.groups if m != g.mgid]}
            if not summary:
                back["links"] = _tree_json(h, b, cache)["links"]
            item["backup"] = back
        groups.append(item)
    m = result.metrics
    return {"groups": groups, "efi_max": m.efi_max, "efi_avg": m.efi_avg, "tfi_max": m.tfi_max,
            "tfi_avg": m.tfi_avg, "groups_after_merge": m.trees, "seconds": m.seconds,
            "topo": result.spec, "algo": result.algo, "colors": result.colors, "dual": result.dual,
            "workload": result.workload, "refused": [{"mgid": k, "reason": v} for k, v in result.refused],
            "metrics": m.as_dict()}
