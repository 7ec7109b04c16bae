"""The page's labels as boxes in drawing units, and whether any two overlap.

The page (``static/view.js``) draws a switch as a rectangle around its name (10 px text), a host as a dot
with its name beside it (8 px text, along the ray ``ang`` when the node has one, else vertical), a
Dragonfly group's name in bold (``size`` px), a block of a big fabric as a rectangle around its label. Drawing units are the SVG's user units, so a box here is the
box on screen at any zoom, times the zoom. Text widths are estimated from the widest common sans font
(DejaVu Sans, chromium's ``system-ui`` on Debian, averages 0.6 em on names like ``h24_5_1``): the estimates
are upper bounds of what the browser draws (the browser tests read the drawn boxes back).

A box is a convex quadrilateral (its four corners in order); :func:`overlapping` finds every pair of
boxes that overlap, by the separating-axis test, with a grid so that it is linear in the usual case.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

Point = tuple[float, float]
Box = tuple[Point, Point, Point, Point]

HOST_FONT = 8.0
SWITCH_FONT = 10.0
HOST_DOT = 3.5
"""A host's dot radius."""
HOST_LABEL_GAP = 6.0
"""From a host's centre to where its name starts, along ``ang``."""
HOST_LABEL_HALF = 5.6
"""Half the height of a host's name across its ray (the page puts its baseline 3 units off the ray)."""
SWITCH_HEIGHT = 16.0
BLOCK_HEIGHT = 24.0


def text_width(text: str, font: float, bold: bool = False) -> float:
    """An upper bound of ``text``'s width at ``font`` px (0.65 em a character, 0.8 bold: DejaVu Sans Bold's ``G``
    is 0.82 em, its digits 0.70)."""
    return len(text) * font * (0.8 if bold else 0.65)


def switch_width(name: str) -> float:
    """The width of a switch's rectangle, as the page draws it: ``max(24, 6.2 * len + 6)``."""
    return max(24.0, 6.2 * len(name) + 6.0)


def block_width(label: str, count: int) -> float:
    """The width of a block's rectangle as the page draws it (``label (count)``, 5.6 units a character + 8;
    its 10 px text fits inside)."""
    return 5.6 * len(f"{label} ({count})") + 8


def rect(cx: float, cy: float, w: float, h: float) -> Box:
    """An axis-aligned box centred at (cx, cy)."""
    return ((cx - w / 2, cy - h / 2), (cx + w / 2, cy - h / 2), (cx + w / 2, cy + h / 2), (cx - w / 2, cy + h / 2))


def ray_box(x: float, y: float, ang: float, start: float, length: float, half: float) -> Box:
    """The box of a text along the ray from (x, y) at ``ang`` degrees (y down): from ``start`` to
    ``start + length`` along it, ``half`` either side."""
    c, s = math.cos(math.radians(ang)), math.sin(math.radians(ang))
    def at(a: float, b: float) -> Point:
        return (x + a * c - b * s, y + a * s + b * c)
    return (at(start, -half), at(start + length, -half), at(start + length, half), at(start, half))


def node_boxes(node: dict[str, Any]) -> list[Box]:
    """The boxes a node of ``/api/topology`` takes on the page: a switch's or a block's rectangle; a host's
    dot and its name (along ``ang``, else rotated 90 degrees below the dot)."""
    x, y = node["x"], node["y"]
    if node["role"] == "host":
        dot = rect(x, y, 2 * HOST_DOT, 2 * HOST_DOT)
        length = text_width(node["id"], HOST_FONT)
        ang = node.get("ang", 90.0)
        return [dot, ray_box(x, y, ang, HOST_LABEL_GAP, length, HOST_LABEL_HALF)]
    if node["role"] == "block":
        return [rect(x, y, block_width(node.get("label") or node["id"], node["count"]), BLOCK_HEIGHT)]
    return [rect(x, y, switch_width(node["id"]), SWITCH_HEIGHT)]


def group_box(group: dict[str, Any]) -> Box:
    """A Dragonfly group's name, centred at (lx, ly), ``size`` px bold."""
    size = group["size"]
    return rect(group["lx"], group["ly"], text_width(group["label"], size, True), 1.25 * size)


def topology_boxes(topo: dict[str, Any]) -> list[tuple[str, Box]]:
    """Every label box of a detailed ``/api/topology`` object, each with its owner's id."""
    out = [(n["id"], b) for n in topo["nodes"] for b in node_boxes(n)]
    out += [(g["id"], group_box(g)) for g in topo.get("groups", ())]
    return out


def _axes(box: Box) -> list[Point]:
    return [(box[1][1] - box[0][1], box[0][0] - box[1][0]), (box[2][1] - box[1][1], box[1][0] - box[2][0])]


def overlap(a: Box, b: Box, gap: float = 0.0) -> bool:
    """Whether two boxes overlap (come closer than ``gap`` along some separating axis: a margin)."""
    for ax, ay in _axes(a) + _axes(b):
        n = math.hypot(ax, ay) or 1.0
        pa = [(p[0] * ax + p[1] * ay) / n for p in a]
        pb = [(p[0] * ax + p[1] * ay) / n for p in b]
        if max(pa) + gap <= min(pb) or max(pb) + gap <= min(pa):
            return False
    return True


def bounds(box: Sequence[Point]) -> tuple[float, float, float, float]:
    xs, ys = [p[0] for p in box], [p[1] for p in box]
    return min(xs), min(ys), max(xs), max(ys)


def overlapping(boxes: Sequence[tuple[str, Box]], gap: float = 0.0,
                same_owner: bool = False) -> list[tuple[str, str]]:
    """Pairs of owners whose boxes overlap (a host's dot and its own name do not count unless
    ``same_owner``); boxes are put in a grid of cells as big as the biggest box, so only neighbours meet."""
    if not boxes:
        return []
    bb = [bounds(b) for _, b in boxes]
    cell = max(max(x1 - x0, y1 - y0) for x0, y0, x1, y1 in bb) + gap + 1.0
    grid: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i, (x0, y0, x1, y1) in enumerate(bb):
        for cx in range(math.floor((x0 - gap) / cell), math.floor((x1 + gap) / cell) + 1):
            for cy in range(math.floor((y0 - gap) / cell), math.floor((y1 + gap) / cell) + 1):
                grid[(cx, cy)].append(i)
    seen: set[tuple[int, int]] = set()
    out: list[tuple[str, str]] = []
    for members in grid.values():
        for k, i in enumerate(members):
            for j in members[k + 1:]:
                pair = (min(i, j), max(i, j))
                if pair in seen:
                    continue
                seen.add(pair)
                if not same_owner and boxes[i][0] == boxes[j][0]:
                    continue
                if overlap(boxes[i][1], boxes[j][1], gap):
                    out.append((boxes[i][0], boxes[j][0]))
    return out
