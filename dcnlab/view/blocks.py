"""Big fabrics drawn as blocks: one per pod or group and layer, each link a bundle with its count.

A fat-tree's pod becomes its agg, edge and host blocks (core switches in ``k/2`` blocks, one per agg
index they serve), a Dragonfly group its routers and hosts, a BCube's top-digit group one block
per level below the top, its servers and hosts (the top level's switches one block). A BCube group is
drawn as a fan: its level and host blocks on a half circle around its servers, so that every bundle
is a spoke of its own and none runs under another block; the groups in two rows around the top
level's block (:func:`_fans`). One pass over
the nodes and one over the links (BCube(8,5): 720,896 nodes and 1.8 million links, a few seconds).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any

from dcnlab.topos.model import Fabric
from dcnlab.view.labels import block_width
from dcnlab.view.rows import MARGIN, ROW_STEP, group_of, natural_key, row_order

BLOCK_STEP = 90.0


def aggregated(fabric: Fabric) -> dict[str, Any]:
    """The ``/api/topology`` object with blocks for nodes; ``_block_of`` (not sent) maps a node to its block."""
    group = group_of(fabric)
    block_of: dict[str, str] = {}
    members: Counter[str] = Counter()
    info: dict[str, tuple[str, str, str]] = {}
    for n in fabric.nodes():
        g = group(n)
        b = g if g == n.layer else f"{g}/{n.layer}"
        block_of[n.name] = b
        members[b] += 1
        info.setdefault(b, (g, n.layer, n.role.value))
    bundles: Counter[tuple[str, str]] = Counter()
    for l in fabric.links():
        a, b = block_of[l.a], block_of[l.b]
        bundles[(a, b) if natural_key(a) <= natural_key(b) else (b, a)] += 1
    draw = _circle if fabric.kind == "dragonfly" else _fans if fabric.kind == "bcube" else _rows
    pos, width, height = draw(fabric, info)
    nodes = [{"id": b, "x": round(pos[b][0], 1), "y": round(pos[b][1], 1), "role": "block", "layer": info[b][1],
              "group": info[b][0], "of": info[b][2], "count": members[b], "label": _label(fabric, b, info[b])}
             for b in sorted(info, key=natural_key)]
    links = [{"id": i, "a": a, "b": b, "count": c} for i, ((a, b), c) in enumerate(sorted(bundles.items()))]
    return {"spec": fabric.spec, "kind": fabric.kind, "aggregated": True, "width": round(width, 1),
            "height": round(height, 1), "nodes": nodes, "links": links, "nodes_total": len(block_of),
            "links_total": sum(bundles.values()), "_block_of": block_of}


def _rows(fabric: Fabric, info: dict[str, tuple[str, str, str]]) -> tuple[dict[str, tuple[float, float]], float, float]:
    rows: dict[str, list[str]] = defaultdict(list)
    for b, (_, layer, _) in info.items():
        rows[layer].append(b)
    order = [r for r in row_order(fabric) if r in rows] + sorted(set(rows) - set(row_order(fabric)))
    widest = max(len(v) for v in rows.values())
    width = 2 * MARGIN + max(widest - 1, 1) * BLOCK_STEP
    pos = {}
    for depth, r in enumerate(order):
        blocks = sorted(rows[r], key=natural_key)
        step = (width - 2 * MARGIN) / max(len(blocks), 1)
        for i, b in enumerate(blocks):
            pos[b] = (MARGIN + (i + 0.5) * step, MARGIN + depth * ROW_STEP)
    return pos, width, 2 * MARGIN + (len(order) - 1) * ROW_STEP + 40.0


def _circle(fabric: Fabric, info: dict[str, tuple[str, str, str]]) -> tuple[dict[str, tuple[float, float]], float, float]:
    """Dragonfly: each group's router block (labelled ``G<i>``) on a circle, group 0 at the top and the others
    clockwise as in the detailed drawing, its host block outside it on the same ray. Neighbouring blocks (two
    groups' on the circle, a group's two on its ray) are a block's width apart in any direction, so their
    labels never overlap."""
    groups = sorted({g for g, _, _ in info.values()}, key=natural_key)
    a, p = int(fabric.params["a"]), int(fabric.params["p"])
    widest = max(block_width(f"G{len(groups) - 1}", a), block_width("hosts", a * p) if p else 0.0)
    r = max(300.0, (widest + BLOCK_GAP) / (2 * math.sin(math.pi / max(len(groups), 2))))
    ring = widest + BLOCK_GAP                   # from a router block to its host block, apart in any direction
    c = r + ring + widest / 2 + MARGIN
    pos = {}
    for b, (g, layer, _) in info.items():
        ang = -math.pi / 2 + 2 * math.pi * groups.index(g) / len(groups)
        rr = r + ring if layer == "host" else r
        pos[b] = (c + rr * math.cos(ang), c + rr * math.sin(ang))
    return pos, 2 * c, 2 * c


BLOCK_GAP = 10.0


FAN_RADIUS = 130.0
FAN_WIDTH = 2 * FAN_RADIUS + 100.0
SPOKE = 110.0
"""From the top level's block (in the middle) to each row of server blocks."""


def _label(fabric: Fabric, block: str, info: tuple[str, str, str]) -> str:
    """Short text on a block (its id is in the tooltip): on a BCube group's fan ``L<j>`` and ``hosts``
    around the group's servers, named by the group; a Dragonfly group's routers ``G<i>``, its hosts ``hosts``."""
    group, layer, _ = info
    if fabric.kind == "dragonfly":
        return "hosts" if layer == "host" else f"G{group[len('group'):]}"
    if fabric.kind != "bcube" or block == group:
        return block
    return group if layer == "server" else "hosts" if layer == "host" else "L" + layer[len("level"):]


def _fans(fabric: Fabric, info: dict[str, tuple[str, str, str]]) -> tuple[dict[str, tuple[float, float]], float, float]:
    """The top level's block in the middle, the groups' server blocks in a row above it and one below, each
    group's other blocks (its levels, then its hosts) on a half circle facing away from the middle: the top
    level's bundles (spokes to every group's servers) and a group's own bundles never cross."""
    k = int(fabric.params["k"])
    groups = sorted({g for g, layer, _ in info.values() if g != layer}, key=natural_key)
    per_row = max(math.ceil(len(groups) / 2), 1)
    mid = MARGIN + FAN_RADIUS + 30 + SPOKE
    pos: dict[str, tuple[float, float]] = {}
    centre: dict[str, tuple[float, float, int]] = {}
    for i, g in enumerate(groups):
        row, col = divmod(i, per_row)
        centre[g] = (MARGIN + (col + 0.5) * FAN_WIDTH, mid - SPOKE if row == 0 else mid + SPOKE, -1 if row == 0 else 1)
    width = 2 * MARGIN + per_row * FAN_WIDTH
    for b, (g, layer, _) in info.items():
        if g == layer:                                       # the top level
            pos[b] = (width / 2, mid)
            continue
        cx, cy, away = centre[g]
        if layer == "server":
            pos[b] = (cx, cy)
            continue
        i = k if layer == "host" else int(layer[len("level"):])
        a = (i + 0.5) * math.pi / (k + 1)
        pos[b] = (cx - FAN_RADIUS * math.cos(a), cy + away * FAN_RADIUS * math.sin(a))
    return pos, width, 2 * mid
