"""Unicast routing for every fabric: per-node destination -> output ports tables."""

from __future__ import annotations

from dcnlab.controller.routing.base import ForwardingState, Router, RoutingError, Table, compute_forwarding
from dcnlab.controller.routing.bcube import BCubeRouter
from dcnlab.controller.routing.dragonfly import DragonflyRouter
from dcnlab.controller.routing.fattree import FatTreeRouter
from dcnlab.controller.routing.midplane import MidplaneRouter
from dcnlab.topos.model import Fabric

ROUTERS: dict[str, type[Router]] = {"bcube": BCubeRouter, "fattree": FatTreeRouter,
                                    "midplane": MidplaneRouter, "dragonfly": DragonflyRouter}


def router_for(fabric: Fabric) -> Router:
    try:
        return ROUTERS[fabric.kind](fabric)  # type: ignore[arg-type]
    except KeyError:
        raise ValueError(f"no router for fabric kind {fabric.kind!r}; known: {', '.join(ROUTERS)}") from None


__all__ = ["ForwardingState", "Router", "RoutingError", "Table", "compute_forwarding", "router_for",
           "BCubeRouter", "DragonflyRouter", "FatTreeRouter", "MidplaneRouter"]
