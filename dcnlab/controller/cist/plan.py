"""One call from a Dragonfly fabric to validated CISTs: partition, trees, diameters, validation.

:func:`plan_cists` never returns invalid trees: it runs the independent validator
(:func:`dcnlab.controller.cist.validate.check_cists`) on the result and raises :class:`CistError` if anything fails.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from dcnlab.controller.cist.errors import CistError
from dcnlab.controller.cist.graph import SwitchGraph
from dcnlab.controller.cist.partition import DragonflyPartition, cist_partition
from dcnlab.controller.cist.trees import CistTree, Rule, build_trees
from dcnlab.controller.cist.validate import Validation, check_cists
from dcnlab.topos.dragonfly import Dragonfly

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CistPlan:
    """k completely independent spanning trees of a fabric's switch graph, with the partition behind them."""

    spec: str
    graph: SwitchGraph
    partition: DragonflyPartition | None
    """None for a plug-in's trees (:mod:`.registry`): ``parts`` are then each tree's internal switches."""
    parts: tuple[tuple[str, ...], ...]
    trees: tuple[CistTree, ...]
    validation: Validation

    @property
    def k(self) -> int:
        return len(self.trees)

    @property
    def diameters(self) -> list[int]:
        return [t.diameter for t in self.trees]

    def to_json(self) -> dict[str, Any]:
        """``{"parts": [[names]...], "trees": [[[u, v]...]...], "diameters": [...], "valid": bool}``."""
        return {"parts": [list(p) for p in self.parts], "trees": [t.undirected_edges() for t in self.trees],
                "diameters": self.diameters, "valid": self.validation.ok}


def plan_from_partition(fabric: Dragonfly, partition: DragonflyPartition, rule: Rule = "generic",
                        graph: SwitchGraph | None = None) -> CistPlan:
    """Trees from a given partition, validated (raises :class:`CistError` if they are not CISTs)."""
    graph = graph or SwitchGraph.from_fabric(fabric)
    trees = build_trees(partition, graph, rule)
    parts = partition.names()
    validation = check_cists(graph.to_networkx(), parts, [t.edges for t in trees])
    if not validation.ok:
        raise CistError(f"cist: the {rule} trees for {fabric.spec} are not completely independent: "
                        + "; ".join(validation.problems[:3]))
    log.info("%s: %d CISTs, diameters %s", fabric.spec, len(trees), [t.diameter for t in trees])
    return CistPlan(fabric.spec, graph, partition, parts, trees, validation)


def plan_cists(fabric: Dragonfly, rule: Rule = "generic") -> CistPlan:
    """⌊a/2⌋ validated CISTs of ``fabric`` (relative, absolute or circulant arrangement)."""
    graph = SwitchGraph.from_fabric(fabric) if isinstance(fabric, Dragonfly) else None
    partition = cist_partition(fabric, graph)
    return plan_from_partition(fabric, partition, rule, graph)
