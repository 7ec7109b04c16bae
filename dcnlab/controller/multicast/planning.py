"""Run one multicast algorithm over a whole workload and collect typed results and metrics.

Groups are added in workload order (the order of the join requests).  The measured time is route
computation only — root selection, tree construction, coloring and merging — as in the paper (§6.4);
building the workload (MGID layers) is not part of it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from dcnlab.controller.multicast import metrics
from dcnlab.controller.multicast.baselines import GlobalTree, MR4LMSLike, OpenSMLike
from dcnlab.controller.multicast.cmr4lms import CMR4LMS
from dcnlab.controller.multicast.dual import DualCMR4LMS
from dcnlab.controller.multicast.hierarchy import Hierarchy
from dcnlab.controller.multicast.mapping import SptMapping
from dcnlab.controller.multicast.tree import Table, TreeRecord, port_tables
from dcnlab.controller.multicast.workload import Workload
from dcnlab.topos.errors import UserError

ALGOS = ("cmr4lms-fixed", "cmr4lms-dynamic", "opensm", "global", "mr4lms", "mr4lms-strict")
"""``mr4lms-strict``: MR4LMS-like with ``merge="same-color"`` and ``scope="switch"`` (:class:`.baselines.MR4LMSLike`)."""


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
                 track_entries: bool = False,
                 record_ops: bool = True) -> CMR4LMS | DualCMR4LMS | OpenSMLike | GlobalTree | MR4LMSLike:
    if algo not in ALGOS:
        raise UserError(f"multicast: algorithm {algo!r} is unknown; valid: {', '.join(ALGOS)}")
    if colors < 1:
        raise UserError(f"multicast: colors={colors} is out of range; valid: colors >= 1")
    if dual and not algo.startswith("cmr4lms"):
        raise UserError(f"multicast: --dual applies to cmr4lms-fixed and cmr4lms-dynamic, not {algo}")
    if algo.startswith("cmr4lms"):
        variant = algo.split("-", 1)[1]
        if dual:
            return DualCMR4LMS(h, colors, variant, scope, track_entries, record_ops)
        return CMR4LMS(h, colors, variant, scope, track_entries=track_entries, record_ops=record_ops)
    if algo == "opensm":
        return OpenSMLike(h, colors)
    if algo == "global":
        return GlobalTree(h)
    if algo == "mr4lms-strict":
        return MR4LMSLike(h, colors, merge="same-color", scope="switch")
    return MR4LMSLike(h, colors)


def mapping_for(h: Hierarchy, colors: int, dual: bool = False) -> SptMapping:
    """The MGID mapping patterns should be laid out for (plane 0's in dual mode)."""
    return SptMapping(colors, h.m, h.p, 0 if dual else None)


def plan(h: Hierarchy, workload: Workload, algo: str, colors: int, dual: bool = False,
         scope: str | None = None) -> PlanResult:
    planner = make_planner(h, algo, colors, dual, scope, record_ops=False)
    start, cpu = time.perf_counter(), time.process_time()
    for g in workload.groups:
        planner.add_group(g.mgid, g.members)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    trees = tuple(planner.trees())
    refused = tuple(sorted(planner.refused.items()))
    routes = []
    backup = planner.backup_id if isinstance(planner, DualCMR4LMS) else None
    for mgid, members in planner.groups().items():
        routes.append(GroupRoute(mgid, tuple(sorted(members)), planner.tree_id(mgid),
                                 backup(mgid) if backup else None))
    m = metrics.compute(h, trees, len(refused), seconds, colors, cpu)
    return PlanResult(algo, h.fabric.spec, colors, dual, workload.name, tuple(routes), trees, refused, m)
