"""What the page draws: nodes with positions, links with ids (``/api/topology``), one layout per family.

* fat-tree: rows core / agg / edge / host, pods side by side (a gap between pods);
* BCube: levels of switches above the servers, then their hosts (a gap per top-digit group);
* Dragonfly: :func:`dcnlab.view.dragonfly.dragonfly_layout`, each group a framed, labelled cluster on a
  circle, its hosts outside it, global links as chords (``groups`` in the object: the frames and labels);
* midplane: its layers as rows;
* anything else (a user's topology file): networkx's Kamada-Kawai layout (spring above 300 nodes).

Coordinates are drawing units (the page's SVG viewBox is ``0 0 width height``). A fabric above
:data:`MAX_DETAILED_NODES` nodes is drawn *aggregated*: one block per pod or group and layer
(:mod:`dcnlab.view.blocks`), each link a bundle with its count. ``link_index`` maps a node pair to
the drawn link id, for rates and trees.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from dcnlab.topos.model import Fabric, Node
from dcnlab.view.dragonfly import dragonfly_layout
from dcnlab.view.rows import MARGIN, ROW_STEP, group_of, natural_key, row_order

MAX_DETAILED_NODES = 1500
"""Above this many nodes (fat-tree k=16 has 1,344) the page gets pods/groups as blocks."""

HOST_STEP = 16.0      # drawing units between neighbouring hosts (their labels are vertical)
SWITCH_MIN_STEP = 56.0
GROUP_GAP = 24.0


def _layered(fabric: Fabric) -> tuple[dict[str, tuple[float, float]], float, float]:
    """Rows by layer; inside a row, nodes in natural order with a gap where the group changes; every row
    centred on the widest one."""
    group = group_of(fabric)
    rows: dict[str, list[Node]] = defaultdict(list)
    for n in fabric.nodes():
        rows[n.layer].append(n)
    order = [r for r in row_order(fabric) if r in rows] + sorted(set(rows) - set(row_order(fabric)))
    widest = max(len(rows[r]) for r in order)
    host_like = {"host"}
    xs: dict[str, list[float]] = {}
    for r in order:
        nodes = sorted(rows[r], key=lambda n: natural_key(n.name))
        step = HOST_STEP if r in host_like else max(SWITCH_MIN_STEP, HOST_STEP * widest / max(len(nodes), 1) * 0.5)
        x, prev, out = 0.0, None, []
        for n in nodes:
            g = group(n)
            if prev is not None:
                x += step + (GROUP_GAP if g != prev and r != "core" else 0.0)
            out.append(x)
            prev = g
        xs[r] = out
    width = max(v[-1] for v in xs.values()) + 2 * MARGIN
    pos: dict[str, tuple[float, float]] = {}
    for depth, r in enumerate(order):
        nodes = sorted(rows[r], key=lambda n: natural_key(n.name))
        row = xs[r]
        # spread a short row over the widest one's span (pods under their switches), centred
        span = width - 2 * MARGIN
        scale = span / row[-1] if row[-1] > 0 else 1.0
        offset = MARGIN + (span - row[-1] * scale) / 2
        for n, x in zip(nodes, row):
            pos[n.name] = (offset + x * scale, MARGIN + depth * ROW_STEP)
    return pos, width, 2 * MARGIN + (len(order) - 1) * ROW_STEP + 40.0


def _general(fabric: Fabric) -> tuple[dict[str, tuple[float, float]], float, float]:
    import networkx as nx
    g = nx.MultiGraph()
    g.add_nodes_from(n.name for n in fabric.nodes())
    g.add_edges_from((l.a, l.b) for l in fabric.links())
    raw = nx.kamada_kawai_layout(g) if len(g) <= 300 else nx.spring_layout(g, seed=1)
    size = max(600.0, 40.0 * math.sqrt(len(g)) * 4)
    return _fit({n: (float(x), float(y)) for n, (x, y) in raw.items()}, size, size * 0.75), size, size * 0.75


def _fit(raw: dict[str, tuple[float, float]], width: float, height: float) -> dict[str, tuple[float, float]]:
    """Scale positions uniformly into ``[MARGIN, width - MARGIN] x [MARGIN, height - MARGIN]``, centred (y down)."""
    if not raw:
        return {}
    xs, ys = [p[0] for p in raw.values()], [p[1] for p in raw.values()]
    dx, dy = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
    s = min((width - 2 * MARGIN) / dx, (height - 2 * MARGIN) / dy)        # one scale: circles stay round
    ox, oy = (width - s * dx) / 2, (height - s * dy) / 2
    return {n: (ox + (x - min(xs)) * s, oy + (max(ys) - y) * s) for n, (x, y) in raw.items()}


def positions(fabric: Fabric) -> tuple[dict[str, tuple[float, float]], float, float]:
    """Each node's position and the drawing's width and height, by family."""
    if fabric.kind == "dragonfly":
        d = dragonfly_layout(fabric)
        return d.pos, d.width, d.height
    if fabric.kind in ("fattree", "bcube", "midplane"):
        return _layered(fabric)
    return _general(fabric)


def detailed(fabric: Fabric) -> dict[str, Any]:
    """The ``/api/topology`` object of a fabric drawn node by node."""
    group = group_of(fabric)
    angle: dict[str, float] = {}
    frames: list[dict[str, Any]] = []
    if fabric.kind == "dragonfly":      # a host's name points away from its group's centre; groups framed
        d = dragonfly_layout(fabric)
        pos, width, height = d.pos, d.width, d.height
        angle = {n: round(a, 2) for n, a in d.ang.items()}
        frames = [{k: round(v, 1) if isinstance(v, float) else v for k, v in grp.items()} for grp in d.groups]
    else:
        pos, width, height = positions(fabric)
    nodes = [{"id": n.name, "x": round(pos[n.name][0], 1), "y": round(pos[n.name][1], 1), "role": n.role.value,
              "layer": n.layer, "group": group(n)} | ({"ang": angle[n.name]} if n.name in angle else {})
             for n in fabric.nodes()]
    links = [{"id": i, "a": l.a, "b": l.b, "a_port": l.a_port, "b_port": l.b_port}
             for i, l in enumerate(fabric.links())]
    return {"spec": fabric.spec, "kind": fabric.kind, "aggregated": False, "width": round(width, 1),
            "height": round(height, 1), "nodes": nodes, "links": links} | ({"groups": frames} if frames else {})


def topology(fabric: Fabric, max_nodes: int = MAX_DETAILED_NODES) -> dict[str, Any]:
    """Detailed up to ``max_nodes`` nodes (from the closed-form counts), else blocks by pod or group."""
    if sum(fabric.counts().values()) <= max_nodes:
        return detailed(fabric)
    from dcnlab.view.blocks import aggregated
    return aggregated(fabric)


def link_index(topo: dict[str, Any]) -> dict[frozenset[str], int]:
    """``{frozenset({a, b}): link id}`` of a detailed topology (the first of parallel links)."""
    out: dict[frozenset[str], int] = {}
    for l in topo["links"]:
        out.setdefault(frozenset((l["a"], l["b"])), l["id"])
    return out
