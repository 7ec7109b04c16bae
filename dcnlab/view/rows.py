"""Rows and groups of a drawn fabric, shared by the detailed layout (:mod:`dcnlab.view.layout`) and the
aggregated one (:mod:`dcnlab.view.blocks`): the order of the rows per family, the pod or group of a node, and
the margins in drawing units."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from dcnlab.topos.model import Fabric, Node

ROW_STEP = 150.0
MARGIN = 40.0

_ROWS = {"fattree": ["core", "agg", "edge", "host"], "midplane": ["L3", "L2", "L1", "L0", "host"]}


def natural_key(name: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def group_of(fabric: Fabric) -> Callable[[Node], str]:
    """The pod or group a node belongs to (the unit of aggregation and of the gaps in a row)."""
    if fabric.kind == "fattree":
        return lambda n: f"core{n.label[0]}" if n.layer == "core" else f"pod{n.label[0]}"
    if fabric.kind == "dragonfly":
        return lambda n: f"group{n.label[0]}"
    if fabric.kind == "bcube":
        k = int(fabric.params["k"])

        def bcube(n: Node) -> str:
            if n.layer == f"level{k}":
                return f"level{k}"
            digits = n.label if n.layer in ("server", "host") else n.label[1:]
            return f"group{digits[0]}" if digits else "group0"
        return bcube
    return lambda n: n.layer or "all"


def row_order(fabric: Fabric) -> list[str]:
    if fabric.kind == "bcube":
        k = int(fabric.params["k"])
        return [f"level{l}" for l in range(k, -1, -1)] + ["server", "host"]
    return _ROWS.get(fabric.kind) or sorted({n.layer for n in fabric.nodes()})
