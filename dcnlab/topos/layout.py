"""2-D positions for drawing a fabric (pure data; rendering lives in dcnlab.figures.render)."""

from __future__ import annotations

import math
from collections import defaultdict

from dcnlab.topos.model import Fabric

# Top-to-bottom drawing order of layers per fabric kind.
_LAYERS = {
    "bcube": None,  # level k … level0, servers, hosts (computed below)
    "fattree": ["core", "agg", "edge", "host"],
    "midplane": ["L3", "L2", "L1", "L0", "host"],
}


def layered(fabric: Fabric) -> dict[str, tuple[float, float]]:
    """Rows by layer, nodes spread evenly in node order (tree-like fabrics and BCube)."""
    if fabric.kind == "bcube":
        k = int(fabric.params["k"])
        order = [f"level{l}" for l in range(k, -1, -1)] + ["server", "host"]
    else:
        order = _LAYERS.get(fabric.kind) or sorted({n.layer for n in fabric.nodes()})
    rows: dict[str, list[str]] = defaultdict(list)
    for n in fabric.nodes():
        rows[n.layer].append(n.name)
    pos: dict[str, tuple[float, float]] = {}
    for depth, layer in enumerate(order):
        names = rows.get(layer, [])
        for i, name in enumerate(names):
            pos[name] = ((i + 0.5) / max(len(names), 1), -float(depth))
    return pos


def circular_groups(fabric: Fabric) -> dict[str, tuple[float, float]]:
    """Dragonfly: groups on a big circle, routers on a small circle, hosts just outside."""
    g, a = int(fabric.params["a"]) * int(fabric.params["h"]) + 1, int(fabric.params["a"])
    pos: dict[str, tuple[float, float]] = {}
    big, small = 1.0, min(0.9 * math.pi / g, 0.25)
    for n in fabric.nodes():
        i, j = n.label[0], n.label[1]
        cx, cy = big * math.cos(2 * math.pi * i / g), big * math.sin(2 * math.pi * i / g)
        ang = 2 * math.pi * j / a + 2 * math.pi * i / g
        r = small if n.forwards else small * 1.6
        if not n.forwards:
            ang += 0.15 * (n.label[2] + 1)
        pos[n.name] = (cx + r * math.cos(ang), cy + r * math.sin(ang))
    return pos


def layout(fabric: Fabric) -> dict[str, tuple[float, float]]:
    return circular_groups(fabric) if fabric.kind == "dragonfly" else layered(fabric)
