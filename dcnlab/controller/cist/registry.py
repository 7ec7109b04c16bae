"""The CIST constructions: dcnlab's own and a user's, in one registry (:mod:`dcnlab.controller.registry`).

**Interface.** A construction is a callable ``build(fabric, graph)`` returning the trees as a list of edge
lists: ``[[(u, v), ...], ...]``, switch names of the fabric's switch graph
(:class:`~dcnlab.controller.cist.graph.SwitchGraph`; hosts excluded). A user's constructions are found by the
entry point group ``dcnlab.cist`` or by ``--algo package.module:name``. Before anything uses them the trees
are checked with :func:`~dcnlab.controller.cist.validate.check_trees` (spanning, edge-disjoint, Hasunuma's
condition: every switch internal in at most one tree), the check the built-ins pass.

**Built-ins** (Dragonfly CISTs (Bian et al.)): ``generic`` (the paper's partition, leaves by the generic rule) and
``algorithm3`` (the paper's Algorithm 3 with its leaf conditions corrected, relative and circulant pair partitions only).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Sequence
from typing import Any

from dcnlab.controller.cist.graph import SwitchGraph
from dcnlab.controller.cist.plan import CistPlan, plan_cists
from dcnlab.controller.cist.trees import CistTree, tree_diameter
from dcnlab.controller.cist.validate import check_trees
from dcnlab.controller.registry import Algorithm, PluginError, Registry, at_most, callable_check, plugin_code
from dcnlab.topos.dragonfly import Dragonfly

INTERFACE = "build(fabric, graph: SwitchGraph) -> [[(u, v), ...], ...] switch names, one edge list per tree"
REGISTRY = Registry("cist", INTERFACE, callable_check)


def _builtin(rule: str):
    def build(fabric: Dragonfly, graph: SwitchGraph) -> list[list[tuple[str, str]]]:
        return [list(t.edges) for t in plan_cists(fabric, rule).trees]  # type: ignore[arg-type]
    return build


REGISTRY.add("generic", _builtin("generic"), "the paper's CIST-partition, leaves by the generic rule (Bian et al., §3.4)")
REGISTRY.add("algorithm3", _builtin("algorithm3"),
             "the corrected Algorithm 3 (relative and circulant pair partitions only)")


def get(name: str, what: str = "--algo") -> Algorithm:
    return REGISTRY.get(name, what)


def _oriented(edges: Sequence[tuple[str, str]], root: str) -> tuple[tuple[str, str], ...]:
    nb: dict[str, list[str]] = {}
    for u, v in edges:
        nb.setdefault(u, []).append(v)
        nb.setdefault(v, []).append(u)
    out, seen, todo = [], {root}, deque([root])
    while todo:
        u = todo.popleft()
        for v in nb.get(u, ()):
            if v not in seen:
                seen.add(v)
                out.append((u, v))
                todo.append(v)
    return tuple(out)


def own_copy(graph: SwitchGraph) -> SwitchGraph:
    """``graph`` as a plug-in gets it: its own mappings (the tuples cannot change), so that what it does to
    them changes neither the graph its trees are checked and scored on nor what the next plug-in gets."""
    return dataclasses.replace(graph, index=dict(graph.index), port=dict(graph.port))


def plugin_trees(algo: Algorithm, fabric: Dragonfly, graph: SwitchGraph | None = None) -> tuple[CistTree, ...]:
    """A user's construction run on its own copy of ``graph`` (:func:`own_copy`) and checked against ``graph``:
    its trees, rooted at their first internal switch, or one :class:`PluginError` naming it and the first
    problems (whatever ends its code: :func:`~dcnlab.controller.registry.plugin_code`; more trees than
    edge-disjoint spanning trees fit in the graph, or a tree of more edges than a spanning tree has, is refused
    before it is read whole)."""
    graph = graph or SwitchGraph.from_fabric(fabric)
    n, m = len(graph), graph.num_edges()
    most = m // max(n - 1, 1)
    what = f"cist algorithm {algo.name} on {fabric.spec}"
    with plugin_code(what):
        raw: Any = algo.obj(fabric, own_copy(graph))
        span = max(n - 1, 1)
        trees = [[(str(u), str(v)) for u, v in at_most(t, span, f"{what}: a tree it returned",
                                                        f"at most {span:,} edges (a spanning tree of {n:,} switches)")]
                 for t in at_most(raw, most, f"{what}: the trees it returned",
                                  f"at most {most:,} edge-disjoint spanning trees ({m:,} links, {n:,} switches)")]
    if not trees:
        raise PluginError(f"cist algorithm {algo.name} on {fabric.spec}: returned no tree")
    validation = check_trees(graph, trees)
    if not validation.ok:
        raise PluginError(f"cist algorithm {algo.name} on {fabric.spec}: not completely independent spanning "
                          "trees: " + "; ".join(validation.problems[:3]))
    out = []
    for i, edges in enumerate(trees):
        deg: dict[str, int] = {}
        for u, v in edges:
            deg[u], deg[v] = deg.get(u, 0) + 1, deg.get(v, 0) + 1
        root = min((v for v, d in deg.items() if d >= 2), default=edges[0][0] if edges else graph.names[0])
        out.append(CistTree(i, root, _oriented(edges, root), tree_diameter(edges)))
    return tuple(out)


def plan_with(fabric: Dragonfly, algo: str, graph: SwitchGraph | None = None) -> CistPlan:
    """The :class:`CistPlan` of ``algo``: a built-in's (partition, trees, validation) or a plug-in's (its trees
    checked, the parts taken as each tree's internal switches, ``partition`` None)."""
    from dcnlab.controller.cist.partition import cist_partition
    from dcnlab.controller.cist.plan import plan_from_partition
    from dcnlab.controller.cist.validate import check_cists

    a = get(algo)
    graph = graph or SwitchGraph.from_fabric(fabric)
    if a.builtin:
        return plan_from_partition(fabric, cist_partition(fabric, graph), a.name, graph)  # type: ignore[arg-type]
    trees = plugin_trees(a, fabric, graph)
    parts = tuple(tuple(sorted(t.internal())) for t in trees)
    validation = check_cists(graph, None, [t.edges for t in trees])
    return CistPlan(fabric.spec, graph, None, parts, trees, validation)  # type: ignore[arg-type]


def trees_for(fabric: Dragonfly, algo: str = "generic") -> tuple[CistTree, ...]:
    """The trees of ``algo`` (a built-in rule, an installed plug-in or a reference) on ``fabric``."""
    a = get(algo)
    if a.builtin:
        return plan_cists(fabric, a.name).trees  # type: ignore[arg-type]
    return plugin_trees(a, fabric)


__all__ = ["INTERFACE", "REGISTRY", "CistPlan", "get", "plan_with", "plugin_trees", "trees_for"]
