"""The multicast routing algorithms: dcnlab's own and a user's, in one registry (:mod:`dcnlab.controller.registry`).

**Interface.** An algorithm is a callable ``make(h, colors)`` returning a router: an object with
``add_group(mgid, hosts)``, ``trees()``, ``groups()``, ``tree_id(mgid)`` and ``refused``
(:class:`~dcnlab.controller.multicast.router.Router`); subclassing
:class:`~dcnlab.controller.multicast.router.TreeRouter` and writing ``place`` is the short way. ``h`` is
the fabric's level model (:class:`~dcnlab.controller.multicast.hierarchy.Hierarchy`), ``colors`` the
multicast table entries per port (C). A user's routers are found by the entry point group
``dcnlab.multicast`` or by ``--algo package.module:name``; their results are checked by
:func:`~dcnlab.controller.multicast.validate.routing_problems` before use.

**Built-ins** (C-MR4LMS (Chen et al.) and its baselines): ``cmr4lms-fixed``, ``cmr4lms-dynamic`` (roots among the TN's top switches, as the
paper says), ``cmr4lms-dynamic/group`` (our extension: every TN of the TN group), ``mr4lms`` and
``mr4lms-same-color`` and ``mr4lms-strict`` (:mod:`.baselines`), ``opensm``, ``global``. Only C-MR4LMS has dual trees
(``dual=True``) and incremental entry tracking.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dcnlab.controller.multicast.baselines import GlobalTree, MR4LMSLike, OpenSMLike
from dcnlab.controller.multicast.cmr4lms import CMR4LMS, Change
from dcnlab.controller.multicast.dual import DualCMR4LMS
from dcnlab.controller.multicast.hierarchy import Hierarchy
from dcnlab.controller.multicast.router import Router
from dcnlab.controller.multicast.tree import TreeRecord
from dcnlab.controller.registry import Algorithm, PluginError, Registry, callable_check, plugin_code
from dcnlab.topos.errors import UserError

INTERFACE = ("make(h: Hierarchy, colors: int) -> a router with add_group(mgid, hosts), trees(), groups(), "
             "tree_id(mgid), refused (subclass dcnlab.multicast.TreeRouter and write place())")

REGISTRY = Registry("multicast", INTERFACE, callable_check)


def _cmr4lms(variant: str):
    def make(h: Hierarchy, colors: int, *, dual: bool = False, scope: str | None = None,
             track_entries: bool = False, record_ops: bool = True) -> CMR4LMS | DualCMR4LMS:
        if dual:
            return DualCMR4LMS(h, colors, variant, scope, track_entries, record_ops)
        return CMR4LMS(h, colors, variant, scope, track_entries=track_entries, record_ops=record_ops)
    return make


REGISTRY.add("cmr4lms-fixed", _cmr4lms("fixed"), "C-MR4LMS, fixed roots (formulas (1)-(4))")
REGISTRY.add("cmr4lms-dynamic", _cmr4lms("dynamic"), "C-MR4LMS, dynamic roots among the TN's top switches")
REGISTRY.add("cmr4lms-dynamic/group", _cmr4lms("dynamic"),
             "C-MR4LMS, dynamic roots among every TN of the TN group (our extension)", scope="group")
REGISTRY.add("mr4lms", lambda h, colors: MR4LMSLike(h, colors), "MR4LMS-like: load-ordered roots, merging")
REGISTRY.add("mr4lms-same-color", lambda h, colors: MR4LMSLike(h, colors, merge="same-color"),
             "MR4LMS-like, a merged group keeps its color (001's sensitivity reading of its merge)")
REGISTRY.add("mr4lms-strict", lambda h, colors: MR4LMSLike(h, colors, merge="same-color", scope="switch"),
             "MR4LMS-like, same-color merges and one table per switch")
REGISTRY.add("opensm", OpenSMLike, "OpenSM-like: one table entry (MLID) per group, refusal when full")
REGISTRY.add("global", lambda h, colors: GlobalTree(h), "one global broadcast tree for every group")

DUAL = ("cmr4lms-fixed", "cmr4lms-dynamic", "cmr4lms-dynamic/group")


def get(name: str, what: str = "--algo") -> Algorithm:
    return REGISTRY.get(name, what)


def make_router(h: Hierarchy, algo: str | Algorithm, colors: int, dual: bool = False, scope: str | None = None,
                track_entries: bool = False, record_ops: bool = True) -> Any:
    """A fresh router of ``algo`` (a name, a reference or an :class:`Algorithm`) on ``h``."""
    a = algo if isinstance(algo, Algorithm) else get(algo)
    if colors < 1:
        raise UserError(f"multicast: colors={colors} is out of range; valid: colors >= 1")
    if dual and a.name not in DUAL:
        raise UserError(f"multicast: --dual applies to {', '.join(DUAL)}, not {a.name}")
    if not a.builtin:
        with plugin_code(f"multicast algorithm {a.name}: making its router failed"):
            router = a.obj(h, colors)
            missing = [m for m in ("add_group", "trees", "groups", "tree_id") if not callable(getattr(router, m, None))]
            if missing or not isinstance(getattr(router, "refused", None), dict):
                raise PluginError(f"multicast algorithm {a.name}: its router lacks "
                                  f"{', '.join(missing) or 'refused (a dict)'}; the interface: {INTERFACE}")
        return router
    options = dict(a.options)
    if a.name.startswith("cmr4lms"):
        if scope is not None:
            options["scope"] = scope
        return a.obj(h, colors, dual=dual, track_entries=track_entries, record_ops=record_ops, **options)
    return a.obj(h, colors)


class _Colors:
    """The part of an MGID mapping :class:`~.dataplane.MulticastDataplane` asks for: a placed group's color."""

    def __init__(self, planner: RouterPlanner) -> None:
        self._planner = planner

    def color_tnid(self, mgid: int) -> tuple[int, int]:
        t = self._planner.group_tree(mgid)
        return t.color, t.tnid


class RouterPlanner:
    """Any router of the registry as the one-plane planner :class:`~.dataplane.MulticastDataplane` drives
    (``MulticastDataplane(..., planner=RouterPlanner(...))``): groups are added (no join, leave or failover: those
    are C-MR4LMS's), and after every add the router's whole routing is checked
    (:func:`~.validate.routing_problems`: trees, members covered, colors within C, one tree per (link, color)),
    so that what reaches the switches is valid; a problem or an exception of a plug-in is one
    :class:`PluginError` naming it. :meth:`clear` forgets every group (then ``sync()`` deletes their state)."""

    def __init__(self, h: Hierarchy, algo: str | Algorithm, colors: int) -> None:
        self.algo = algo if isinstance(algo, Algorithm) else get(algo)
        self.h, self.colors = h, colors
        self.mapping = _Colors(self)
        self.clear()

    def clear(self) -> None:
        self.router = make_router(self.h, self.algo, self.colors)
        self._added = 0
        self._refused: dict[int, str] = {}
        self._trees: dict[int, TreeRecord] = {}
        self._groups: dict[int, frozenset[int]] = {}
        self._tree_of: dict[int, int] = {}
        self._owner: dict[tuple[int, int], int] = {}

    @property
    def refused(self) -> dict[int, str]:
        return dict(self._refused)

    def add_group(self, mgid: int, hosts: Iterable[int]) -> Change:
        from dcnlab.controller.multicast.validate import router_result

        name = self.algo.name
        with plugin_code(f"multicast algorithm {name}: adding group {mgid} failed", self.algo.builtin):
            self.router.add_group(mgid, list(hosts))
            self._added += 1
            trees, groups, tree_of, refused = router_result(self.router, self.h, self.colors, self._added,
                                                            f"multicast algorithm {name}")
        owner = {(lk, t.color): t.tid for t in trees for lk in t.links}
        ops = tuple((lk, c, self._owner.get((lk, c)), owner.get((lk, c)))
                    for lk, c in sorted(set(owner) | set(self._owner)) if owner.get((lk, c)) != self._owner.get((lk, c)))
        self._trees, self._groups, self._tree_of, self._owner = {t.tid: t for t in trees}, groups, tree_of, owner
        self._refused = refused
        accepted = mgid in groups
        return Change("add", mgid, None, accepted, "" if accepted else refused.get(mgid, "refused"),
                      tuple(g for g in self._trees[tree_of[mgid]].groups if g != mgid) if accepted else (),
                      (), tree_of.get(mgid), 0, ops)

    def owner(self, link: int, color: int) -> int | None:
        return self._owner.get((link, color))

    def tree(self, tid: int) -> TreeRecord:
        return self._trees[tid]

    def group_tree(self, mgid: int) -> TreeRecord:
        return self._trees[self._tree_of[mgid]]

    def tree_id(self, mgid: int) -> int:
        return self._tree_of[mgid]

    def trees(self) -> list[TreeRecord]:
        return list(self._trees.values())

    def groups(self) -> dict[int, frozenset[int]]:
        return dict(self._groups)

    def members(self, mgid: int) -> frozenset[int]:
        return self._groups[mgid]


__all__ = ["DUAL", "INTERFACE", "REGISTRY", "Router", "RouterPlanner", "get", "make_router"]
