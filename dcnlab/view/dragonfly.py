"""The Dragonfly drawing of the live view, as the Dragonfly papers draw it: :func:`dragonfly_layout`.

Each group is a compact cluster in a circular frame, labelled ``G<i>``, on a big circle (group 0 at the
top, the others clockwise; two groups side by side). Inside the frame its routers sit on the inner arc of
a small ring, each turned towards the groups its global links reach (the direction of the sum of the unit
vectors to those groups), so that the global links leave the cluster as chords towards their groups and
the complete graph of the group's local links stays inside the frame. The group's hosts sit outside the
frame on an arc facing away from the big circle's centre, in the order of their routers along the ring (so
that no two host links cross), each name along its ray from the group's centre; the group's label lies
beyond them.

Sizes are in drawing units and set so that no two labels overlap (:mod:`dcnlab.view.labels`): the ring's
radius grows until its router boxes are apart in every group's orientation, the hosts' arc until their
names are, and the big circle's radius is the least for which every group's boxes lie inside its own
sector of the circle (``2 pi / g`` wide, less a gap), so that two groups' labels never meet either.

Choices where the papers give no picture: routers on an arc of at most 240 degrees, hosts on one of at
most 160 degrees (100 while they are 30 degrees apart); the group label's size a third of the frame's
radius and at least 1/80 of the drawing's width, so that it stays readable when the page shows the whole
fabric.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from dcnlab.view.labels import (
    HOST_DOT,
    HOST_FONT,
    HOST_LABEL_GAP,
    HOST_LABEL_HALF,
    SWITCH_HEIGHT,
    Box,
    bounds,
    overlapping,
    ray_box,
    rect,
    switch_width,
    text_width,
)
from dcnlab.view.rows import MARGIN

GAP = 4.0
"""Least distance between two labels (drawing units)."""
FRAME_PAD = 6.0
HOST_CLEAR = 24.0
"""From the frame to the hosts' dots: room for the host links outside the frame."""
LONE_CLEAR = 64.0
"""The same for a group of one router (the BMv2 congestion experiment's fabric), whose hosts also fan out
over all of :data:`HOSTS_ARC`: room for the flows' rates along its host links."""
HOSTS_ARC = math.radians(160)
HOST_SPREAD = math.radians(30)
HOST_FAN = math.radians(100)
"""Hosts at least :data:`HOST_SPREAD` apart while their fan is under :data:`HOST_FAN`: a fan, not a bunch."""
ROUTER_ARC = math.radians(240)
"""The routers' arc on the inner side of the ring (less when ``a`` routers fill the ring evenly)."""
SEPARATION = 0.8
"""Between two groups' sectors: this share of a frame's radius."""
INNER_CLEAR = 0.45
"""The share of the big circle's radius kept free in the middle, for the global links."""
LABEL_SHARE = 1 / 80
"""A group label's least size, as a share of the drawing's width."""

Shape = Box | tuple[tuple[float, float], ...]


@dataclass
class DragonflyDrawing:
    pos: dict[str, tuple[float, float]]
    ang: dict[str, float]
    """A host's name direction (degrees in [-180, 180), y down): its ray from its group's centre."""
    groups: list[dict[str, Any]] = field(default_factory=list)
    """Per group ``{id, label, x, y, r, lx, ly, size}``: the frame's centre and radius, the label's centre
    and size."""
    width: float = 0.0
    height: float = 0.0


@dataclass
class _Group:
    """What every group shares, up to its turn on the big circle: the ring (radius, angles of its slots, its
    centre ``shift`` beyond the group's centre along the outward ray), the frame, the hosts' arc (radius and
    angles, the hosts in (router slot, host) order) and the farthest host name's reach."""
    slots: list[float]
    ring: float
    shift: float
    frame: float
    arc: float
    angles: list[float]
    reach: float


def _angles(g: int) -> list[float]:
    """The groups' directions from the big circle's centre (y down): group 0 at the top, then clockwise; two
    groups side by side (the drawing fits a wide window)."""
    start = math.pi if g == 2 else -math.pi / 2
    return [start + 2 * math.pi * i / g for i in range(g)]


def _offset(theta: float, radius: float, beta: float, shift: float = 0.0) -> tuple[float, float]:
    """From a group's centre (its outward ray at ``theta``): ``radius`` at ``beta`` from the ray (towards
    +90 degrees), around a point ``shift`` out along the ray."""
    ux, uy, c, s = math.cos(theta), math.sin(theta), math.cos(beta), math.sin(beta)
    return radius * (c * ux - s * uy) + shift * ux, radius * (c * uy + s * ux) + shift * uy


def _router_order(fabric: Any, i: int, theta: list[float]) -> list[int]:
    """Group i's routers by the direction, seen from group i, of the groups their global links reach (all
    inward: the other groups lie on the circle), from the outward ray round towards +90 degrees."""
    cx, cy = math.cos(theta[i]), math.sin(theta[i])
    key = []
    for j in range(fabric.a):
        vx = vy = 0.0
        for t in range(fabric.h):
            y = fabric.global_peer(i, j, t)[0]
            dx, dy = math.cos(theta[y]) - cx, math.sin(theta[y]) - cy
            n = math.hypot(dx, dy) or 1.0
            vx, vy = vx + dx / n, vy + dy / n
        key.append((math.atan2(vy * cx - vx * cy, vx * cx + vy * cy) % (2 * math.pi), j))
    return [j for _, j in sorted(key)]


def _routers(fabric: Any, i: int, theta: list[float], order: list[int], grp: _Group) -> list[tuple[str, Box]]:
    return [(fabric.router_name(i, j), rect(*_offset(theta[i], grp.ring, grp.slots[k], grp.shift),
                                            switch_width(fabric.router_name(i, j)), SWITCH_HEIGHT))
            for k, j in enumerate(order)]


def _host_names(fabric: Any, i: int, order: list[int]) -> list[str]:
    """Group i's hosts in the order of their places on the arc."""
    return [fabric.host_name((i * fabric.a + j) * fabric.p + x) for j in order for x in range(fabric.p)]


def _hosts(fabric: Any, i: int, theta: list[float], order: list[int], grp: _Group) -> list[tuple[str, Box]]:
    out = []
    for name, b in zip(_host_names(fabric, i, order), grp.angles):
        at = _offset(theta[i], grp.arc, b)
        out.append((name, ray_box(*at, math.degrees(theta[i] + b), HOST_LABEL_GAP, text_width(name, HOST_FONT),
                                  HOST_LABEL_HALF)))
        out.append((name, rect(*at, 2 * HOST_DOT, 2 * HOST_DOT)))
    return out


def _group(fabric: Any, theta: list[float], order: list[list[int]]) -> _Group:
    """The ring, frame and hosts' arc: each as small as keeps its boxes apart (checked in every group)."""
    g, a = fabric.g, fabric.a
    span = min(ROUTER_ARC, 2 * math.pi * (a - 1) / a)
    slots = [math.pi - span / 2 + k * span / (a - 1) if a > 1 else math.pi for k in range(a)]
    widest = max(switch_width(fabric.router_name(g - 1, a - 1)), switch_width(fabric.router_name(g - 1, 0)))
    grp = _Group(slots, 0.0 if a == 1 else (widest + GAP) / (2 * math.sin(span / (a - 1) / 2)), 0.0, 0.0, 0.0, [], 0.0)
    while a > 1 and any(overlapping(_routers(fabric, i, theta, order[i], grp), GAP) for i in range(g)):
        grp.ring *= 1.1

    def reach(shift: float) -> float:        # the frame's radius with the ring's centre at ``shift``
        grp.shift = shift
        return max(math.hypot(x, y) for i in range(g) for _, box in _routers(fabric, i, theta, order[i], grp)
                   for x, y in box)
    lo, hi = -grp.ring, grp.ring             # the least frame: ternary search along the outward ray
    while hi - lo > 0.5:
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        lo, hi = (lo, m2) if reach(m1) < reach(m2) else (m1, hi)
    grp.frame = reach((lo + hi) / 2) + FRAME_PAD
    n = a * fabric.p
    step = 2 * HOST_LABEL_HALF + GAP
    grp.arc = max(grp.frame + (LONE_CLEAR if a == 1 else HOST_CLEAR), (n - 1) * step / HOSTS_ARC)

    def spread(arc: float) -> list[float]:
        d = max(step / arc, min(HOST_SPREAD, (HOSTS_ARC if a == 1 else HOST_FAN) / max(n - 1, 1)))
        return [(n - 1) / 2 * d - k * d for k in range(n)]
    grp.angles = spread(grp.arc)
    while n and any(overlapping(_hosts(fabric, i, theta, order[i], grp), GAP) for i in (0, g // 4, g // 2)):
        grp.arc *= 1.1
        grp.angles = spread(grp.arc)
    longest = fabric.host_name(n * g - 1) if n else ""
    grp.reach = grp.arc + HOST_LABEL_GAP + text_width(longest, HOST_FONT) if n else grp.frame
    return grp


def dragonfly_layout(fabric: Any) -> DragonflyDrawing:
    """Positions of a Dragonfly's routers and hosts, its hosts' name directions and its groups' frames and
    labels, in drawing units, with the drawing's width and height (see the module's docstring)."""
    g = fabric.g
    theta = _angles(g)
    order = [_router_order(fabric, i, theta) for i in range(g)]
    grp = _group(fabric, theta, order)
    fr = grp.frame / math.cos(math.pi / 32)
    frame = tuple((fr * math.cos(2 * math.pi * q / 32), fr * math.sin(2 * math.pi * q / 32)) for q in range(32))
    size = max(14.0, round(grp.frame / 3))
    for _ in range(5):                        # the label's size, against the width it helps to set
        parts: list[list[tuple[str, Shape]]] = []
        labels: list[tuple[float, float]] = []
        for i in range(g):
            ux, uy = math.cos(theta[i]), math.sin(theta[i])
            w, hh = text_width(f"G{i}", size, True), 1.25 * size
            d = grp.reach + GAP + abs(ux) * w / 2 + abs(uy) * hh / 2      # beyond everything along the ray
            labels.append((d * ux, d * uy))
            parts.append([*_routers(fabric, i, theta, order[i], grp), *_hosts(fabric, i, theta, order[i], grp),
                          (f"G{i}", rect(d * ux, d * uy, w, hh)), ("frame", frame)])
        big = _big_radius(theta, parts, max(GAP, SEPARATION * grp.frame))
        x0, y0, x1, y1 = _extent(theta, parts, big)
        if size >= LABEL_SHARE * (x1 - x0):
            break
        size = math.ceil(LABEL_SHARE * (x1 - x0))
    dx, dy = MARGIN - x0, MARGIN - y0
    pos: dict[str, tuple[float, float]] = {}
    ang: dict[str, float] = {}
    groups: list[dict[str, Any]] = []
    for i in range(g):
        cx, cy = big * math.cos(theta[i]) + dx, big * math.sin(theta[i]) + dy
        for k, j in enumerate(order[i]):
            ox, oy = _offset(theta[i], grp.ring, grp.slots[k], grp.shift)
            pos[fabric.router_name(i, j)] = (cx + ox, cy + oy)
        for name, b in zip(_host_names(fabric, i, order[i]), grp.angles):
            ox, oy = _offset(theta[i], grp.arc, b)
            pos[name] = (cx + ox, cy + oy)
            ang[name] = (math.degrees(theta[i] + b) + 180) % 360 - 180      # the page turns |ang| > 90 round
        groups.append({"id": f"group{i}", "label": f"G{i}", "x": cx, "y": cy, "r": grp.frame,
                       "lx": cx + labels[i][0], "ly": cy + labels[i][1], "size": size})
    return DragonflyDrawing(pos, ang, groups, x1 - x0 + 2 * MARGIN, y1 - y0 + 2 * MARGIN)


def _extent(theta: list[float], parts: list[list[tuple[str, Shape]]], big: float) -> tuple[float, float, float, float]:
    x0 = y0 = math.inf
    x1 = y1 = -math.inf
    for i, mine in enumerate(parts):
        cx, cy = big * math.cos(theta[i]), big * math.sin(theta[i])
        for _, box in mine:
            bx0, by0, bx1, by1 = bounds(box)
            x0, y0, x1, y1 = min(x0, cx + bx0), min(y0, cy + by0), max(x1, cx + bx1), max(y1, cy + by1)
    return x0, y0, x1, y1


def _big_radius(theta: list[float], parts: list[list[tuple[str, Shape]]], gap: float) -> float:
    """The least radius (to 0.5 units) at which every point of every group (offsets from its centre) lies
    in its own sector, ``gap / 2`` from the sector's edges, with :data:`INNER_CLEAR` of it free inside."""
    half = math.pi / len(theta)
    points = [(i, x, y) for i, mine in enumerate(parts) for _, box in mine for x, y in box]
    inner = max(-(x * math.cos(theta[i]) + y * math.sin(theta[i])) for i, x, y in points)

    def fits(big: float) -> bool:
        for i, x, y in points:
            px, py = big * math.cos(theta[i]) + x, big * math.sin(theta[i]) + y
            off = (math.atan2(py, px) - theta[i] + math.pi) % (2 * math.pi) - math.pi
            if abs(off) >= half or math.hypot(px, py) * math.sin(half - abs(off)) < gap / 2:
                return False
        return True

    lo = (inner + gap) / (1 - INNER_CLEAR)
    if fits(lo):
        return lo
    hi = 2 * lo
    while not fits(hi):
        hi *= 2
    while hi - lo > 0.5:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return hi
