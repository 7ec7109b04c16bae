"""Big fabrics drawn as blocks: one per pod or group and layer, each link a bundle with its count.

A fat-tree's pod becomes its agg, edge and host blocks (core switches in ``k/2`` blocks, one per agg
index they serve), a Dragonfly group its routers and hosts, a BCube's top-digit group one block
per level below the top, its servers and hosts (the top level's switches one block). One pass over
the nodes and one over the links (BCube(8,5): 720,896 nodes and 1.8 million links, a few seconds).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any

from dcnlab.topos.model import Fabric
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
    pos, width, height = (_circle if fabric.kind == "dragonfly" else _rows)(fabric, info)
    nodes = [{"id": b, "x": round(pos[b][0], 1), "y": round(pos[b][1], 1), "role": "block", "layer": info[b][1],
              "group": info[b][0], "of": info[b][2], "count": members[b]} for b in sorted(info, key=natural_key)]
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
    groups = sorted({g for g, _, _ in info.values()}, key=natural_key)
    size = max(700.0, 30.0 * len(groups))
    c, r = size / 2, size / 2 - MARGIN - 30
    pos = {}
    for b, (g, layer, _) in info.items():
        i = groups.index(g)
        ang = 2 * math.pi * i / len(groups)
        rr = r if layer == "host" else r - 45
        pos[b] = (c + rr * math.cos(ang), c + rr * math.sin(ang))
    return pos, size, size
