"""The aggregation tree builders: dcnlab's own and a user's, in one registry (:mod:`dcnlab.controller.registry`).

**Interface.** A builder is a callable ``build(fabric, receiver, senders, seed)`` returning the tree as a
mapping ``{child: parent}`` of node names, every sender reaching ``receiver``:

* on **BCube** the nodes are servers (``v<i>``), and a child and its parent differ in exactly one digit of
  their addresses (one hop through one switch): servers aggregate, switches only forward;
* on a **fat-tree** the nodes are the hosts and the switches, a child and its parent are linked, and the
  switches aggregate.

It may set the attribute ``fabrics = ("bcube",)`` (or ``("fattree",)``) when it applies to one kind only.
A user's builders are found by the entry point group ``dcnlab.aggregation`` or by
``--algo package.module:name``. dcnlab measures the tree (cost at the given δ, links, aggregators) and
validates it with :class:`~dcnlab.controller.aggregation.tree.AggregationTree` before use: a mapping that is not
a tree, a sender left out, a hop that is not a link is one error naming the builder.

**Built-ins** (M2 (Fang et al.) and IRS/SRS (Guo et al.)): BCube ``irs``, ``mib``, ``mc``, ``m2``, ``unicast``, ``kmb``, ``optimal``;
fat-tree ``updown``, ``unicast``, ``kmb``, ``optimal``. They build through :func:`dcnlab.controller.aggregation.incast_tree`
(batch engines, not this interface), so the registry lists them for ``--algo list`` and name checks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dcnlab.controller.registry import Algorithm, PluginError, Registry, at_most, callable_check, plugin_code
from dcnlab.topos.model import Fabric

INTERFACE = ("build(fabric, receiver: str, senders: list[str], seed: int) -> {child: parent} node names "
             "(BCube: servers one hop apart; fat-tree: linked nodes); optional attribute fabrics=('bcube',)")

KINDS = ("bcube", "fattree")
REGISTRY = Registry("aggregation", INTERFACE, callable_check)

_BUILTINS = {
    "irs": (("bcube",), "IRS: stage by stage, one routing symbol per stage (Guo et al., §3.2)"),
    "mib": (("bcube",), "MIB-based: senders hang on their nearest related sender (Fang et al., §3.2, Algorithm 1)"),
    "mc": (("bcube",), "MC-based: top-down minimal clustering (Fang et al., §3.3, Algorithm 2)"),
    "m2": (("bcube",), "M2: the cheaper of the MIB- and MC-based trees (Fang et al., §3.4)"),
    "updown": (("fattree",), "up/down minimum tree: one aggregation position for all uplinks"),
    "unicast": (KINDS, "no aggregation tree: every sender on its own shortest path"),
    "kmb": (KINDS, "KMB Steiner tree (the 2-approximation) on the hop graph"),
    "optimal": (KINDS, "the MILP's minimal-cost tree (HiGHS), ended by --time-limit"),
}


BUILTINS = {name: kinds for name, (kinds, _) in _BUILTINS.items()}
"""dcnlab's own builders and the fabric kinds each applies to. The package registers them
(:mod:`dcnlab.controller.aggregation` builds them with :func:`~dcnlab.controller.aggregation.incast_tree`, this
module imports nothing of the package: no circle)."""


def add_builtin(name: str, build: Callable[..., Mapping[str, str]]) -> None:
    """Register dcnlab's own builder ``name`` (its summary and fabric kinds are this module's)."""
    build.fabrics = _BUILTINS[name][0]  # type: ignore[attr-defined]
    REGISTRY.add(name, build, _BUILTINS[name][1])


def get(name: str, what: str = "--algo") -> Algorithm:
    return REGISTRY.get(name, what)


def fabrics_of(algo: Algorithm) -> tuple[str, ...]:
    with plugin_code(f"aggregation algorithm {algo.name}: its attribute fabrics", algo.builtin):
        kinds = getattr(algo.obj, "fabrics", KINDS)
        if isinstance(kinds, str):
            kinds = (kinds,)
        return tuple(k for k in kinds if k in KINDS)


def plugin_parent(algo: Algorithm, fabric: Fabric, receiver: str, senders: Sequence[str],
                  seed: int) -> dict[str, str]:
    """Run a user's builder; whatever ends it (:func:`~dcnlab.controller.registry.plugin_code`), a result that
    is not a mapping of names, or one with more entries than the fabric has nodes, is one :class:`PluginError`
    naming it."""
    with plugin_code(f"aggregation algorithm {algo.name} failed on {fabric.spec}"):
        out: Any = algo.obj(fabric, receiver, list(senders), seed)
        if not isinstance(out, Mapping):
            raise PluginError(f"aggregation algorithm {algo.name} returned a {type(out).__name__}; valid: a mapping "
                              "{child: parent} of node names")
        nodes = sum(fabric.counts().values())
        items = at_most(out.items(), nodes, f"aggregation algorithm {algo.name}: the mapping it returned",
                        f"at most one parent for each of the {nodes:,} nodes of {fabric.spec}")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in items):
            raise PluginError(f"aggregation algorithm {algo.name} returned a mapping that is not of node names; "
                              "valid: a mapping {child: parent} of node names")
        return dict(items)


__all__ = ["INTERFACE", "KINDS", "REGISTRY", "fabrics_of", "get", "plugin_parent"]
