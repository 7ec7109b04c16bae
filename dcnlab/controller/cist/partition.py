"""CIST-partitions of Dragonfly(p,a,h) router graphs: Dragonfly CISTs (Bian et al., Computer Science 2022), §3.1-3.3.

By Araki's Lemma 1, a connected graph has k completely independent spanning trees iff its vertex set has a
*CIST-partition* V_0..V_{k-1}: every G[V_t] connected, and no B(V_s, V_t) with a tree component. Part t
becomes the set of internal vertices of tree t (:mod:`dcnlab.controller.cist.trees`).

Constructions (all give k = ⌊a/2⌋ parts):

* **relative and circulant** (paper Algorithms 1 and 1', §3.1 and §3.3, in a corrected closed form that reproduces
  the paper's worked examples): part t holds
  switches {t, a-1-t} of every group; for odd a the middle switch (a-1)/2 of every group joins part 0.
* **absolute** (the paper's Algorithm 2, §3.2, cannot be recovered from its printed text): our *label
  construction*, not in the paper. Switch r of group x gets a label (u, v) naming the component of the global-links-only graph
  it belongs to; labels (u, u) are cliques K_{h+1}, labels (u, v), u < v, are K_{h,h}. Label (u, v) goes to
  "step class" min(v-u, a+1-(v-u)) - 1 of K_{a+1}, diagonal labels (u, u) to min(u, a-1-u), and for odd a the
  left-over class (a-1)/2 to part 0. Every group then gets exactly 2 switches of each part (3 of part 0 for
  odd a).

Decisions on the paper's ambiguities (its pseudo-code's bounds and indices):

1. Parts are V[0..⌊a/2⌋-1]; the paper's loop bound ⌊a/2⌋ would give one part too many.
2. The odd-a middle switch is index (a-1)/2 (0-based), not ⌊a/2⌋+1.
4. The BFS of Algorithm 1 is replaced by its closed form (Lemma 4 states the result), which is O(N).
7. Parameter conditions the paper omits, checked *before* building so the error names them:

   - relative, h = 1: G[V_t] contracts to the circulant graph on Z_{a+1} with jumps ±(t+1), so it is
     connected iff gcd(a+1, t+1) = 1 for every t < ⌊a/2⌋; for a >= 4 that means a+1 prime.
   - absolute, h = 1: the label construction fails for some a (e.g. 6, 9, 12, 13, 15); there is no closed
     condition, so the partition validator decides and the error says which part is disconnected.
   - a = 1: ⌊a/2⌋ = 0 trees; a >= 2 is required.

Whatever the construction, :func:`cist_partition` runs the independent validator
(:func:`dcnlab.controller.cist.validate.check_partition`) before returning and raises :class:`CistError` otherwise.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from math import gcd

from dcnlab.controller.cist.errors import CistError
from dcnlab.controller.cist.graph import SwitchGraph
from dcnlab.topos.dragonfly import Dragonfly

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DragonflyPartition:
    """A partition of the routers of a Dragonfly into k parts, stored per group.

    ``part_of[i][j]`` is the part of router ``s<i>_<j>``."""

    a: int
    part_of: tuple[tuple[int, ...], ...]
    method: str
    """How it was built: ``pairs`` (relative/circulant), ``labels`` (absolute) or ``given``."""

    @property
    def g(self) -> int:
        return len(self.part_of)

    @cached_property
    def k(self) -> int:
        """Number of parts (computed once: it reads every router, and the tree builders ask per group)."""
        return 1 + max(max(row) for row in self.part_of)

    def members(self, t: int, group: int) -> tuple[int, ...]:
        """Router numbers (ascending) of part t in ``group``."""
        return tuple(j for j, s in enumerate(self.part_of[group]) if s == t)

    def vertex_parts(self) -> list[list[int]]:
        """Part t as vertex numbers of the :class:`SwitchGraph` (router s<i>_<j> is vertex i·a + j)."""
        parts: list[list[int]] = [[] for _ in range(self.k)]
        for i, row in enumerate(self.part_of):
            for j, t in enumerate(row):
                parts[t].append(i * self.a + j)
        return parts

    def names(self) -> tuple[tuple[str, ...], ...]:
        """Part t as router names ``s<group>_<j>``, in router order."""
        return tuple(tuple(f"s{v // self.a}_{v % self.a}" for v in part) for part in self.vertex_parts())


def num_trees(a: int) -> int:
    """⌊a/2⌋: the number of CISTs every construction gives (paper Theorem 4)."""
    return a // 2


def pair_partition(a: int, g: int) -> DragonflyPartition:
    """Relative/circulant: part t = switches {t, a-1-t} of every group, the odd-a middle switch in part 0."""
    row = tuple(min(j, a - 1 - j) if not (a % 2 and j == (a - 1) // 2) else 0 for j in range(a))
    return DragonflyPartition(a, (row,) * g, "pairs")


def absolute_label(x: int, r: int, h: int) -> tuple[int, int]:
    """Label (u, v), u <= v, of router r in group x under the absolute arrangement (our label construction).

    Routers with the same label form one component of the global-links-only graph."""
    if r * h <= x <= r * h + h:
        return r, r
    if x < r * h:
        return x // h, r
    return r, (x - 1) // h


def absolute_partition(a: int, h: int) -> DragonflyPartition:
    """Our label construction for the absolute arrangement (not in the paper, whose Algorithm 2 is unreadable)."""
    rows = []
    for x in range(a * h + 1):
        row = []
        for r in range(a):
            u, v = absolute_label(x, r, h)
            if u == v:
                t = min(u, a - 1 - u)
            else:
                d = v - u
                t = min(d, a + 1 - d) - 1
            if a % 2 and t == (a - 1) // 2:
                t = 0
            row.append(t)
        rows.append(tuple(row))
    return DragonflyPartition(a, tuple(rows), "labels")


def partition_from_names(fabric: Dragonfly, parts: Sequence[Sequence[str]]) -> DragonflyPartition:
    """A partition given as lists of router names (e.g. a paper example). Raises :class:`CistError` unless
    every router is named exactly once."""
    a, g = fabric.a, fabric.g
    part_of: dict[tuple[int, int], int] = {}
    for t, part in enumerate(parts):
        if not part:
            raise CistError(f"partition: part {t} is empty")
        for name in part:
            try:
                _, (i, j) = fabric._parse(name)
            except KeyError:
                raise CistError(f"partition: {name!r} is not a router of {fabric.spec}") from None
            if (i, j) in part_of:
                raise CistError(f"partition: router {name} is in parts {part_of[(i, j)]} and {t}")
            part_of[(i, j)] = t
    missing = [f"s{i}_{j}" for i in range(g) for j in range(a) if (i, j) not in part_of]
    if missing:
        raise CistError(f"partition: {len(missing)} router(s) in no part, e.g. {', '.join(missing[:5])}")
    return DragonflyPartition(a, tuple(tuple(part_of[(i, j)] for j in range(a)) for i in range(g)), "given")


def relative_h1_obstruction(a: int) -> int | None:
    """For relative h = 1: the first t < ⌊a/2⌋ with gcd(a+1, t+1) > 1 (part t disconnected), else None."""
    for t in range(1, num_trees(a)):
        if gcd(a + 1, t + 1) > 1:
            return t
    return None


def cist_partition(fabric: Dragonfly, graph: SwitchGraph | None = None) -> DragonflyPartition:
    """A validated CIST-partition of ``fabric``'s router graph into ⌊a/2⌋ parts.

    Raises :class:`CistError` naming the parameters when the construction does not apply."""
    if not isinstance(fabric, Dragonfly):
        raise CistError(f"cist: needs a dragonfly fabric, got {fabric.kind!r} (e.g. dragonfly:p=1,a=4,h=2)")
    a, h, arr = fabric.a, fabric.h, fabric.arrangement
    if a < 2:
        raise CistError(f"cist: dragonfly parameter a={a} gives ⌊a/2⌋ = 0 trees; valid: a >= 2")
    if arr == "relative" and h == 1:
        t = relative_h1_obstruction(a)
        if t is not None:
            raise CistError(
                f"cist: relative arrangement with h=1 and a={a}: part {t} (routers {t} and {a - 1 - t} of every "
                f"group) is disconnected because gcd(a+1, {t + 1}) = {gcd(a + 1, t + 1)}; valid: h >= 2, or h=1 "
                f"with a+1 prime (or a <= 3)")
    part = absolute_partition(a, h) if arr == "absolute" else pair_partition(a, fabric.g)
    from dcnlab.controller.cist.validate import check_partition
    graph = graph or SwitchGraph.from_fabric(fabric)
    result = check_partition(graph, part.names())
    if not result.ok:
        hint = "; valid: h >= 2 (the label construction fails for some a with h=1)" if arr == "absolute" else ""
        raise CistError(f"cist: no CIST-partition from the {arr} construction for a={a}, h={h}: "
                        f"{result.problems[0]}{hint}")
    log.debug("CIST-partition of %s: %d parts (%s)", fabric.spec, part.k, part.method)
    return part
