"""The multicast routing algorithms: dcnlab's own and a user's, in one registry (:mod:`dcnlab.controller.registry`).

**Interface.** An algorithm is a callable ``make(h, colors)`` returning a router: an object with
``add_group(mgid, hosts)``, ``trees()``, ``groups()``, ``tree_id(mgid)`` and ``refused``
(:class:`~dcnlab.controller.multicast.router.Router`); subclassing
:class:`~dcnlab.controller.multicast.router.TreeRouter` and writing ``place`` is the short way. ``h`` is
the fabric's level model (:class:`~dcnlab.controller.multicast.hierarchy.Hierarchy`), ``colors`` the
multicast table entries per port (C). A user's routers are found by the entry point group
``dcnlab.multicast`` or by ``--algo package.module:name``; their results are checked by
:func:`~dcnlab.controller.multicast.validate.routing_problems` before use.

**Built-ins** (report 001): ``cmr4lms-fixed``, ``cmr4lms-dynamic`` (roots among the TN's top switches, as the
paper says), ``cmr4lms-dynamic/group`` (our extension: every TN of the TN group), ``mr4lms`` and
``mr4lms-strict`` (:mod:`.baselines`), ``opensm``, ``global``. Only C-MR4LMS has dual trees
(``dual=True``) and incremental entry tracking.
"""

from __future__ import annotations

from typing import Any

from dcnlab.controller.multicast.baselines import GlobalTree, MR4LMSLike, OpenSMLike
from dcnlab.controller.multicast.cmr4lms import CMR4LMS
from dcnlab.controller.multicast.dual import DualCMR4LMS
from dcnlab.controller.multicast.hierarchy import Hierarchy
from dcnlab.controller.multicast.router import Router
from dcnlab.controller.registry import Algorithm, PluginError, Registry, callable_check
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
        try:
            router = a.obj(h, colors)
        except UserError:
            raise
        except Exception as e:
            raise PluginError(f"multicast algorithm {a.name}: making its router failed: "
                              f"{type(e).__name__}: {e}") from None
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


__all__ = ["DUAL", "INTERFACE", "REGISTRY", "Router", "get", "make_router"]
