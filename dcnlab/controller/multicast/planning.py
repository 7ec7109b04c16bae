"""Run one multicast algorithm over a whole workload and collect typed results and metrics.

Groups are added in workload order (the order of the join requests).  The measured time is route
computation only — root selection, tree construction, coloring and merging — as in the paper (§6.4);
building the workload (MGID layers) is not part of it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from dcnlab.controller.multicast import metrics
from dcnlab.controller.multicast.dual import DualCMR4LMS
from dcnlab.controller.multicast.hierarchy import Hierarchy
from dcnlab.controller.multicast.mapping import SptMapping
from dcnlab.controller.multicast.registry import REGISTRY, get, make_router
from dcnlab.controller.multicast.router import Router
from dcnlab.controller.multicast.tree import Table, TreeRecord, port_tables
from dcnlab.controller.multicast.validate import router_result
from dcnlab.controller.multicast.workload import Workload
from dcnlab.controller.registry import plugin_code

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


def plan(h: Hierarchy, workload: Workload, algo: str, colors: int, dual: bool = False,
         scope: str | None = None, check: bool | None = None) -> PlanResult:
    """Every group of ``workload`` added in order by ``algo``. ``check``: validate the result
    (:func:`.validate.router_result`: read no further than it can be right, its types, its routing); by default a
    plug-in's result is checked, a built-in's is not (the tests check those). Whatever ends a plug-in's code
    (:func:`~dcnlab.controller.registry.plugin_code`) or an invalid result is a :class:`PluginError` naming it."""
    a = get(algo)
    planner = make_router(h, a, colors, dual, scope, record_ops=False)
    with plugin_code(f"multicast algorithm {a.name} failed on {workload.name}", a.builtin):
        start, cpu = time.perf_counter(), time.process_time()
        for g in workload.groups:
            planner.add_group(g.mgid, g.members)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        found, placed, tree_of, refused_by = router_result(
            planner, h, colors, len(workload.groups), f"multicast algorithm {a.name} on {workload.name}",
            check if check is not None else not a.builtin, 2 if dual else 1)
    trees = tuple(found)
    refused = tuple(sorted(refused_by.items()))
    routes = []
    backup = planner.backup_id if isinstance(planner, DualCMR4LMS) else None
    for mgid, members in placed.items():
        routes.append(GroupRoute(mgid, tuple(sorted(members)), tree_of[mgid],
                                 backup(mgid) if backup else None))
    m = metrics.compute(h, trees, len(refused), seconds, colors, cpu)
    return PlanResult(a.name, h.fabric.spec, colors, dual, workload.name, tuple(routes), trees, refused, m)
