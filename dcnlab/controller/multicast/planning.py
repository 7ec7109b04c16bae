"""Run one multicast algorithm over a whole workload and collect typed results and metrics.

Groups are added in workload order (the order of the join requests).  The measured time is route
computation only — root selection, tree construction, coloring and merging — as in the paper (§6.4);
building the workload (MGID layers) is not part of it.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from dcnlab.controller.multicast import metrics
from dcnlab.controller.multicast.dual import DualCMR4LMS
from dcnlab.controller.multicast.hierarchy import Hierarchy
from dcnlab.controller.multicast.mapping import SptMapping
from dcnlab.controller.multicast.registry import REGISTRY, get, make_router
from dcnlab.controller.multicast.router import Router
from dcnlab.controller.multicast.tree import Table, TreeRecord, port_tables
from dcnlab.controller.multicast.validate import router_result
from dcnlab.controller.multicast.workload import Workload
from dcnlab.controller.registry import Algorithm, plugin_code

ALGOS = REGISTRY.builtins()
"""dcnlab's own algorithms (:mod:`.registry`); ``mr4lms-strict``: MR4LMS-like with ``merge="same-color"`` and
``scope="switch"`` (:class:`.baselines.MR4LMSLike`)."""


@dataclass(frozen=True)
class GroupRoute:
    mgid: int
    members: tuple[int, ...]
    tree: int
    backup: int | None = None


@dataclass(frozen=True)
class PlanResult:
    algo: str
    spec: str
    colors: int
    dual: bool
    workload: str
    groups: tuple[GroupRoute, ...]
    trees: tuple[TreeRecord, ...]
    refused: tuple[tuple[int, str], ...]
    metrics: metrics.Metrics
    _by_id: dict[tuple[int, int], TreeRecord] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_id.update({(t.plane, t.tid): t for t in self.trees})

    def tree(self, tid: int, plane: int = 0) -> TreeRecord:
        return self._by_id[(plane, tid)]

    def mates(self, route: GroupRoute) -> tuple[int, ...]:
        """Other groups on the same (primary) tree."""
        return tuple(g for g in self.tree(route.tree).groups if g != route.mgid)

    def tables(self, h: Hierarchy) -> dict[str, Table]:
        """Per switch ``(ingress port, color) -> out-ports`` for every tree (both planes in dual mode)."""
        return port_tables(h, self.trees)


def make_planner(h: Hierarchy, algo: str, colors: int, dual: bool = False, scope: str | None = None,
                 track_entries: bool = False, record_ops: bool = True) -> Router:
    """A fresh router of ``algo`` (see :mod:`.registry`: a built-in, an installed plug-in or a reference)."""
    return make_router(h, algo, colors, dual, scope, track_entries, record_ops)


def mapping_for(h: Hierarchy, colors: int, dual: bool = False) -> SptMapping:
    """The MGID mapping patterns should be laid out for (plane 0's in dual mode)."""
    return SptMapping(colors, h.m, h.p, 0 if dual else None)


@contextmanager
def gc_paused(pause: bool = True) -> Iterator[None]:
    """The cyclic garbage collector off inside (when ``pause``), as it was after: planning a workload allocates
    millions of small sets, dicts and tuples and no cycles, so its collections only walked live objects (about
    a fifth of a built-in's CPU time); whatever it frees, reference counting frees."""
    was = gc.isenabled()
    if pause:
        gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _route(h: Hierarchy, workload: Workload, algo: str, colors: int, dual: bool, scope: str | None,
           check: bool | None, what: str = "all") -> tuple[Algorithm, Any, tuple[Any, ...], float, float]:
    """Every group of ``workload`` added in order by ``algo``: ``(algorithm, router, router_result, wall s, CPU s)``;
    ``what="trees"`` reads a built-in's trees and refusals only (``router_result``'s groups and tree ids empty)."""
    a = get(algo)
    planner = make_router(h, a, colors, dual, scope, record_ops=False)
    with gc_paused(a.builtin), plugin_code(f"multicast algorithm {a.name} failed on {workload.name}", a.builtin):
        start, cpu = time.perf_counter(), time.process_time()
        for g in workload.groups:
            planner.add_group(g.mgid, g.members)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        check = check if check is not None else not a.builtin
        if what == "trees" and not check:
            out: tuple[Any, ...] = (list(planner.trees()), {}, {}, dict(planner.refused))
        else:
            out = router_result(planner, h, colors, len(workload.groups),
                                f"multicast algorithm {a.name} on {workload.name}", check, 2 if dual else 1)
    return a, planner, out, seconds, cpu


def plan(h: Hierarchy, workload: Workload, algo: str, colors: int, dual: bool = False,
         scope: str | None = None, check: bool | None = None) -> PlanResult:
    """Every group of ``workload`` added in order by ``algo``. ``check``: validate the result
    (:func:`.validate.router_result`: read no further than it can be right, its types, its routing); by default a
    plug-in's result is checked, a built-in's is not (the tests check those). Whatever ends a plug-in's code
    (:func:`~dcnlab.controller.registry.plugin_code`) or an invalid result is a :class:`PluginError` naming it."""
    a, planner, (found, placed, tree_of, refused_by), seconds, cpu = _route(h, workload, algo, colors, dual, scope,
                                                                             check)
    trees = tuple(found)
    refused = tuple(sorted(refused_by.items()))
    routes = []
    backup = planner.backup_id if isinstance(planner, DualCMR4LMS) else None
    for mgid, members in placed.items():
        routes.append(GroupRoute(mgid, tuple(sorted(members)), tree_of[mgid],
                                 backup(mgid) if backup else None))
    m = metrics.compute(h, trees, len(refused), seconds, colors, cpu)
    return PlanResult(a.name, h.fabric.spec, colors, dual, workload.name, tuple(routes), trees, refused, m)


def plan_metrics(h: Hierarchy, workload: Workload, algo: str, colors: int, dual: bool = False,
                 scope: str | None = None, check: bool | None = None) -> metrics.Metrics:
    """``plan(...).metrics`` without the routes of every group (what a reproduction's row needs)."""
    _, _, (found, _, _, refused_by), seconds, cpu = _route(h, workload, algo, colors, dual, scope, check, "trees")
    with gc_paused():
        return metrics.compute(h, found, len(refused_by), seconds, colors, cpu)
