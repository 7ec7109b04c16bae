"""MGID layers for communicators on process grids: C-MR4LMS (Chen et al.), Theorem 3, formula (5).

A terminal in several groups needs a different color for each, or its terminal link conflicts; merging
such groups would move roots across spanning trees.  The paper splits the colors into intervals
("layers") so that a terminal joins at most one group per layer; each communicator direction draws its
MGIDs from its own layers.

Process placement (the paper's MGID-layer section): ranks are placed contiguously, x fastest — rank ``r = x + X·y + X·Y·z``,
terminal ``r div P`` with P processes per terminal (the paper's n-th process of a terminal is
``((a+n)%X, (b+(a+n)/X)%Y, c+(bX+a+n)/(XY))``, i.e. the next ranks).  A group is a line of the grid
(all processes that differ only in one coordinate); its members are the terminals of those processes.

Formula (5) is missing from the extraction.  **Decision** (per direction, in this order):

1. **single** — one layer if no terminal lies on two lines of the direction (e.g. x-lines when X mod P = 0);
2. **formula** — a reconstruction of (5) that meets the paper's stated constraints, used when it is valid: the line index mod P for
   x-lines (``(y + Y·z) mod P``, always valid), ``x mod P`` for y-lines (valid when X mod P = 0) and
   ``(x + X·y) mod P`` for z-lines (valid when X·Y mod P = 0);
3. **greedy** — otherwise the formula cannot work (a counterexample: X = Y = 10, P = 4: the
   y-line windows {0–3}, {4–7}, {8,9,0,1}, {2–5}, {6–9} are not 4-colorable by x mod 4), so the lines are
   colored greedily (networkx DSATUR) in the graph "two lines share a terminal".

Validity is always checked on the actual grid, so a layer assignment never puts two groups of one
terminal in the same layer.  Directions get disjoint layer ranges.

**Colors per layer** ("can follow the number of groups in that layer"): the C colors are apportioned to
the layers by the D'Hondt (Jefferson) method over their group counts, every layer at least one color,
ties to the later layer (later directions have the largest stride, so their lines span the most of
the fabric and merge first).  With C = 32 this gives 4/9/19 colors to the x/y/z lines of 64×32×16 and
10/11/11 to those of 32×32×32.  Within a layer, groups take the layer's spanning trees round-robin:
the i-th group gets ``mgid = (i div B)·C·m + c0·m + (i mod B)`` with B = (colors of the layer)·m and c0
the layer's first color, so ``color = s div m`` stays inside the layer (formula (3)).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import networkx as nx
import numpy as np

from dcnlab.controller.multicast.mapping import SptMapping
from dcnlab.topos.errors import UserError

log = logging.getLogger(__name__)

DIRS = "xyz"

MAX_MGID = 0xFFFF
"""The largest MGID: the data plane's shim carries the group in 16 bits."""


@dataclass(frozen=True)
class DirectionLayers:
    direction: int
    method: str
    """``single``, ``formula`` or ``greedy``."""
    layers: int
    line_layer: np.ndarray
    """Layer (within the direction) of every line."""


@dataclass(frozen=True)
class GridLines:
    """The lines of one direction: line id of each rank, and members (terminals) of each line."""

    direction: int
    line_of_rank: np.ndarray
    members: list[np.ndarray]


def grid_lines(dims: tuple[int, ...], ppn: int) -> list[GridLines]:
    """Lines of every direction of a grid with ``dims`` (x fastest) and ``ppn`` ranks per terminal."""
    n = int(np.prod(dims))
    ranks = np.arange(n, dtype=np.int64)
    coords = np.unravel_index(ranks, dims, order="F")
    term = ranks // ppn
    out = []
    for d in range(len(dims)):
        others = [i for i in range(len(dims)) if i != d]
        line = np.ravel_multi_index(tuple(coords[i] for i in others), tuple(dims[i] for i in others), order="F")
        pairs = np.unique(line * (term[-1] + 1) + term)
        pl, pt = np.divmod(pairs, term[-1] + 1)
        cuts = np.flatnonzero(np.diff(pl)) + 1
        out.append(GridLines(d, np.asarray(line, dtype=np.int64), np.split(pt, cuts)))
    return out


def _pairs(lines: GridLines, ppn: int) -> tuple[np.ndarray, np.ndarray]:
    """Unique (terminal, line) pairs of a direction."""
    n = lines.line_of_rank.size
    term = np.arange(n, dtype=np.int64) // ppn
    nl = int(lines.line_of_rank.max()) + 1
    pairs = np.unique(term * nl + lines.line_of_rank)
    return pairs // nl, pairs % nl


def _valid(pt: np.ndarray, pline: np.ndarray, line_layer: np.ndarray) -> bool:
    """True if no terminal lies on two lines with the same layer."""
    nlay = int(line_layer.max()) + 1
    return np.unique(pt * nlay + line_layer[pline]).size == pt.size


def _formula(dims: tuple[int, ...], d: int, ppn: int, nlines: int) -> np.ndarray:
    """Reconstructed formula (5): the mixed index of the coordinates below ``d`` (x-lines: the line index)."""
    if d == 0:
        return np.arange(nlines, dtype=np.int64) % ppn
    others = [i for i in range(len(dims)) if i != d]
    idx = np.unravel_index(np.arange(nlines), tuple(dims[i] for i in others), order="F")
    low = np.zeros(nlines, dtype=np.int64)
    stride = 1
    for pos, i in enumerate(others):
        if i < d:
            low += idx[pos] * stride
            stride *= dims[i]
    return low % ppn


def _greedy(pt: np.ndarray, pline: np.ndarray, nlines: int) -> np.ndarray:
    g = nx.Graph()
    g.add_nodes_from(range(nlines))
    cuts = np.flatnonzero(np.diff(pt)) + 1
    for block in np.split(pline, cuts):
        ls = block.tolist()
        g.add_edges_from((a, b) for i, a in enumerate(ls) for b in ls[i + 1:])
    colors = nx.coloring.greedy_color(g, strategy="DSATUR")
    return np.array([colors[i] for i in range(nlines)], dtype=np.int64)


def direction_layers(dims: tuple[int, ...], lines: GridLines, ppn: int) -> DirectionLayers:
    """Layers of one direction: single, formula (5) where valid, else greedy (module docstring)."""
    nlines = len(lines.members)
    pt, pline = _pairs(lines, ppn)
    if np.unique(pt).size == pt.size:
        return DirectionLayers(lines.direction, "single", 1, np.zeros(nlines, dtype=np.int64))
    f = _formula(dims, lines.direction, ppn, nlines)
    if _valid(pt, pline, f):
        return DirectionLayers(lines.direction, "formula", int(f.max()) + 1, f)
    log.info("MGID layers: formula (5) does not fit %s-lines of %s at P=%d; coloring greedily",
             DIRS[lines.direction], "x".join(map(str, dims)), ppn)
    gcol = _greedy(pt, pline, nlines)
    return DirectionLayers(lines.direction, "greedy", int(gcol.max()) + 1, gcol)


def apportion(counts: list[int], colors: int) -> list[int]:
    """D'Hondt apportionment of ``colors`` to layers by group count; each layer >= 1, ties to later layers."""
    if len(counts) > colors:
        raise UserError(f"multicast: the workload needs {len(counts)} MGID layers (a terminal is in that many "
                        f"groups) but only colors={colors} are available; valid: colors >= {len(counts)}")
    seats = [0] * len(counts)
    for _ in range(colors):
        i = max(range(len(counts)), key=lambda j: (counts[j] / (seats[j] + 1), j))
        seats[i] += 1
    for i in range(len(seats)):
        if seats[i] == 0:
            donor = max(range(len(seats)), key=lambda j: (seats[j], -counts[j]))
            seats[donor] -= 1
            seats[i] = 1
    return seats


def color_ranges(seats: list[int]) -> list[tuple[int, int]]:
    out, c = [], 0
    for s in seats:
        out.append((c, c + s))
        c += s
    return out


def layer_mgids(layer_of: list[int], ranges: list[tuple[int, int]], mapping: SptMapping) -> list[int]:
    """MGIDs for groups in order, each from its layer's colors, round-robin over the layer's spanning trees."""
    nxt = [0] * len(ranges)
    per = mapping.per_color
    out = []
    for layer in layer_of:
        c0, c1 = ranges[layer]
        i = nxt[layer]
        nxt[layer] += 1
        b = (c1 - c0) * per
        rnd, r = divmod(i, b)
        out.append(mapping.mgid_for(c0 + r // per, r % per, rnd))
    return out
